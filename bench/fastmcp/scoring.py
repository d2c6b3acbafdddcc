"""Query selection and ranking quality shared by compare.py and bm25_offline.py."""
import json


def load_queries(path, stride):
    """The rows with a non-empty `gold`, every `stride`-th in file order."""
    with open(path) as f:
        rows = [r for r in map(json.loads, f) if r.get("gold")]
    return rows[::stride]


def quality(queries, ranked):
    """Hit@1, Hit@5 and MRR over the top 5; a hit is any gold tool."""
    h1 = h5 = rr = 0.0
    for q, names in zip(queries, ranked):
        gold = set(q["gold"])
        rank = next((i for i, n in enumerate(names) if n in gold), None)
        if rank is not None:
            h1 += rank == 0
            h5 += rank < 5
            rr += 1.0 / (rank + 1)
    n = len(queries)
    return {"hit1": h1 / n, "hit5": h5 / n, "mrr": rr / n}
