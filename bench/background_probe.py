#!/usr/bin/env python3
"""The background-sentence abstention signal on any model `eval` has run, from the vectors
`eval` keeps (`eval-texts-<model>.bin`, see examples/eval.rs). A probe, not part of disco.

A query abstains, on top of disco's own decision, when the nearest of a few sentences that
describe what a language model does by itself beats the nearest candidate tool by more than a
margin. Hit@5 losses are against the run without abstention.

    E=target/release/examples/eval   # cargo build --release --features semantic --example eval
    python3 bench/background_probe.py --write-sentences /tmp/bg.jsonl
    $E search --catalog C --queries /tmp/bg.jsonl --semantic DIR --quiet   # embeds them
    $E search --catalog C --queries Q --category CATS --parity even --semantic DIR > /tmp/default.jsonl
    $E search --catalog C --queries Q --category CATS --parity even --semantic DIR \\
        --threshold 0 --semantic-threshold 0 > /tmp/open.jsonl
    python3 bench/background_probe.py --texts target/release/disco-vectors/eval-texts-<model>.bin \\
        --catalog C --queries Q --default /tmp/default.jsonl --open /tmp/open.jsonl

`<model>` is the start of the model's id: the file eval wrote for DIR (one per model).
Needs numpy.
"""
import argparse
import hashlib
import json
import struct

import numpy as np

from probe_text import BACKGROUND, name_words

MARGINS = [0.15, 0.1, 0.05, 0.0, -0.03, -0.06, -0.1]


def read_texts(path):
    """`eval`'s kept vectors (the tools' cache format, disco-runtime/src/search/semantic/
    cache.rs): the 16-byte key of a text -> its vector. Use `key` to look a text up."""
    b = open(path, "rb").read()
    assert b[:8] == b"DISCOVEC", f"{path}: not a file of kept vectors"
    body, digest = b[:-32], b[-32:]
    assert hashlib.sha256(body).digest() == digest, f"{path}: its checksum does not match"
    at = 12
    (id_len,) = struct.unpack_from("<I", b, at)
    at += 4 + id_len
    (dim,) = struct.unpack_from("<I", b, at)
    (count,) = struct.unpack_from("<Q", b, at + 4)
    at += 12
    texts = {}
    for _ in range(count):
        k = bytes(b[at:at + 16])
        texts[k] = np.frombuffer(b, dtype="<f4", count=dim, offset=at + 16)
        at += 16 + 4 * dim
    return texts


def key(text):
    """A text's key in the file: the first 16 bytes of its sha256."""
    return hashlib.sha256(text.encode()).digest()[:16]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write-sentences")
    ap.add_argument("--texts")
    ap.add_argument("--catalog")
    ap.add_argument("--queries")
    ap.add_argument("--default")
    ap.add_argument("--open")
    a = ap.parse_args()
    if a.write_sentences:
        with open(a.write_sentences, "w") as f:
            for i, s in enumerate(BACKGROUND):
                f.write(json.dumps({"id": f"background{i}", "query": s, "gold": []}) + "\n")
        return
    texts = read_texts(a.texts)
    background = np.stack([texts[key(s)] for s in BACKGROUND])
    catalog = json.load(open(a.catalog))
    catalog = catalog["tools"] if isinstance(catalog, dict) else catalog
    names, vectors = [], []
    for t in catalog:
        # As disco's semantic text: the name's words, the title (else the annotations'), the
        # description.
        title = t.get("title") or (t.get("annotations") or {}).get("title") or ""
        text = f"{name_words(t['name'])}. {title}. {t.get('description') or ''}"
        if texts.get(key(text)) is None:
            raise SystemExit(f"{t['name']}: no kept vector for its text; run eval on this "
                             "catalog with this model first")
        names.append(t["name"])
        vectors.append(texts[key(text)])
    tools = np.stack(vectors)
    index = {n: i for i, n in enumerate(names)}
    rows = {}
    for line in open(a.queries):
        r = json.loads(line)
        rows[r["id"]] = r
    default = [json.loads(l) for l in open(a.default)][:-1]
    opened = [json.loads(l) for l in open(a.open)][:-1]
    cases = []
    for d, o in zip(default, opened):
        r = rows[d["id"]]
        # The index embeds a query's first 1,000 characters (MAX_QUERY_CHARS).
        q = texts.get(key(r.get("query", "")[:1000]))
        allowed = [index[c] for c in r["candidates"] if c in index] if r.get("candidates") \
            else list(range(len(names)))
        tool_cos = float((tools[allowed] @ q).max()) if q is not None and allowed else 0.0
        back_cos = float((background @ q).max()) if q is not None else 0.0
        cases.append((r.get("gold") or [], d["results"], o["results"], back_cos - tool_cos))

    def score(margin):
        n = hits = open_hits = negatives = abstained = 0
        for gold, results, open_results, lead in cases:
            if margin is not None and lead > margin:
                results = []
            if not gold:
                negatives += 1
                abstained += not results
                continue
            n += 1
            hits += any(g in results[:5] for g in gold)
            open_hits += any(g in open_results[:5] for g in gold)
        return hits / max(n, 1), open_hits / max(n, 1), abstained / max(negatives, 1)

    h, h0, ab = score(None)
    print(f"defaults: Hit@5 {h:.3f} (without abstention {h0:.3f}), abstention {ab:.3f}")
    for m in MARGINS:
        h, h0, ab = score(m)
        print(f"margin {m:+.2f}: Hit@5 {h:.3f}, loss {100 * (h0 - h):.1f} points, abstention {ab:.3f}")


if __name__ == "__main__":
    main()
