"""Plain BM25 as FastMCP's BM25SearchTransform ranks (NFKC-casefolded tokens of two or more
letters or digits over name, description, parameter names and descriptions; Okapi k1 1.5,
b 0.75), without a server: for per-query comparisons with `eval search` on large query sets.

    python3 bench/fastmcp/bm25_offline.py --catalog CATALOG --queries QUERIES.jsonl \
        [--stride N] [--out RESULTS.jsonl]

Only labelled rows (non-empty `gold`) are ranked, every `stride`-th as compare.py takes them.
Prints a summary (Hit@1, Hit@5, MRR@5; a hit is any gold tool) to stderr; with --out, one
`{"id", "results"}` line per query, in the format of `eval search`.
"""

import argparse
import json
import math
import re
import sys
import unicodedata
from collections import Counter, defaultdict

from scoring import load_queries, quality


def tokens(text):
    return re.findall(r"[^\W_]{2,}", unicodedata.normalize("NFKC", text).casefold())


def searchable(tool):
    parts = [tool["name"]]
    if tool.get("description"):
        parts.append(tool["description"])
    for name, info in ((tool.get("inputSchema") or {}).get("properties") or {}).items():
        parts.append(name)
        if isinstance(info, dict) and info.get("description"):
            parts.append(info["description"])
    return " ".join(parts)


class Bm25:
    def __init__(self, docs, k1=1.5, b=0.75):
        self.k1, self.b = k1, b
        self.lengths = [len(d) for d in docs]
        self.avg = sum(self.lengths) / max(1, len(docs))
        df = Counter()
        self.postings = defaultdict(list)
        for i, doc in enumerate(docs):
            for word, tf in Counter(doc).items():
                self.postings[word].append((i, tf))
                df[word] += 1
        n = len(docs)
        self.idf = {w: math.log((n - k + 0.5) / (k + 0.5) + 1) for w, k in df.items()}

    def rank(self, query, k):
        scores = defaultdict(float)
        for word in tokens(query):
            for i, tf in self.postings.get(word, ()):
                norm = tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
                scores[i] += self.idf[word] * tf * (self.k1 + 1) / norm
        return sorted(scores, key=lambda i: -scores[i])[:k]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()
    with open(a.catalog) as f:
        catalog = json.load(f)
    tools = catalog["tools"] if isinstance(catalog, dict) else catalog
    index = Bm25([tokens(searchable(t)) for t in tools])
    rows = load_queries(a.queries, a.stride)
    ranked = [[tools[i]["name"] for i in index.rank(row["query"], 5)] for row in rows]
    if a.out:
        with open(a.out, "w") as out:
            for row, names in zip(rows, ranked):
                out.write(json.dumps({"id": row["id"], "results": names}) + "\n")
    q = quality(rows, ranked) if rows else {"hit1": 0.0, "hit5": 0.0, "mrr": 0.0}
    summary = {"queries": len(rows), "hit@1": round(q["hit1"], 3), "hit@5": round(q["hit5"], 3),
               "mrr": round(q["mrr"], 3)}
    print(json.dumps({"summary": summary}), file=sys.stderr)


if __name__ == "__main__":
    main()
