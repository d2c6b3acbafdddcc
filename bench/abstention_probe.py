#!/usr/bin/env python3
"""How far can the semantic model's vectors take abstention? A probe, not part of disco.

tool_search should return nothing for a query no tool serves. The target is 80% of the
evaluation's no-tool queries at a cost of at most 2 points of Hit@5. This probe measures two
signals beyond the index's own thresholds, on the vectors of the model disco uses (the same
tokens, mean and unit length as `SemanticModel::embed`):

`background`: a few sentences describing what a language model does by itself (write, explain,
advise, rewrite, solve, chat, code) compete with the tools; a query abstains, on top of
disco's own decision, when the nearest of them beats the nearest visible tool by more than a
margin.

`classifier`: a logistic regression over the query's vector and its best tool cosine, trained
on the `even` half of each data set on its own, its threshold then chosen on the `odd` half
itself (an optimistic ceiling: an in-domain classifier with an oracle threshold).

Hit@5 losses are against disco's ranking without abstention (`--threshold 0
--semantic-threshold 0`); the halves are eval's `--parity` halves. Needs numpy, tokenizers and
safetensors (the `wordllama` wheel's dependencies).

    E="cargo run --release --features semantic --example eval -- search"
    $E --catalog C --queries Q --category CATS --semantic DIR > /tmp/default.jsonl
    $E --catalog C --queries Q --category CATS --semantic DIR --threshold 0 \\
        --semantic-threshold 0 > /tmp/open.jsonl
    python3 bench/abstention_probe.py --model DIR --catalog C --queries Q --category CATS \\
        --default /tmp/default.jsonl --open /tmp/open.jsonl
"""
import argparse
import glob
import json
import os

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from probe_text import BACKGROUND, name_words

MARGINS = [0.1, 0.05, 0.02, 0.0, -0.02, -0.04]


class Model:
    def __init__(self, directory):
        [weights] = glob.glob(os.path.join(directory, "*.safetensors"))
        [tokenizer] = [p for p in glob.glob(os.path.join(directory, "*.json"))
                       if "tokenizer" in os.path.basename(p).lower()]
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.no_padding()
        self.tok.no_truncation()
        [table] = load_file(weights).values()
        self.table = table.astype(np.float32)

    def embed(self, texts):
        out = np.zeros((len(texts), self.table.shape[1]), np.float32)
        for i, enc in enumerate(self.tok.encode_batch([t[:2000] for t in texts],
                                                      add_special_tokens=False)):
            if enc.ids:
                v = self.table[enc.ids].mean(0)
                n = np.linalg.norm(v)
                if n > 0:
                    out[i] = v / n
        return out


def parity(row_id):
    h = 0xCBF29CE484222325
    for b in json.dumps(row_id, ensure_ascii=False).encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return (h >> 32) % 2


def results(path):
    out = {}
    for line in open(path):
        o = json.loads(line)
        if "id" in o:
            out[o["id"]] = o["results"]
    return out


def logistic(x, y, l2=1e-3, steps=3000, rate=0.5):
    w, b = np.zeros(x.shape[1]), 0.0
    weight = np.where(y == 1, (y == 0).sum() / max((y == 1).sum(), 1), 1.0)
    weight /= weight.mean()
    for _ in range(steps):
        g = (1 / (1 + np.exp(-(x @ w + b))) - y) * weight
        w -= rate * (x.T @ g / len(y) + l2 * w)
        b -= rate * g.mean()
    return w, b


def main():
    ap = argparse.ArgumentParser()
    for a in ("--model", "--catalog", "--queries", "--default", "--open"):
        ap.add_argument(a, required=True)
    ap.add_argument("--category", default="")
    args = ap.parse_args()
    cats = set(filter(None, args.category.split(",")))
    model = Model(args.model)
    tools = json.load(open(args.catalog))
    tools = tools["tools"] if isinstance(tools, dict) else tools
    index = {t["name"]: i for i, t in enumerate(tools)}
    tool_vecs = model.embed([f"{name_words(t['name'])}. {t.get('title') or ''}. "
                             f"{t.get('description') or ''}" for t in tools])
    background = model.embed(BACKGROUND)
    rows = [r for r in map(json.loads, open(args.queries))
            if not cats or r.get("category") in cats]
    default, opened = results(args.default), results(args.open)
    q = model.embed([r["query"] for r in rows])
    best = np.array([
        float((tool_vecs[[index[c] for c in r.get("candidates") or index if c in index]]
               @ v).max(initial=-1.0)) for r, v in zip(rows, q)])
    near_background = (q @ background.T).max(1)
    gold = [r.get("gold") or [] for r in rows]
    tool = np.array([bool(g) for g in gold])
    half = np.array([parity(r["id"]) for r in rows])

    def hit5(res, g):
        return any(x in res[:5] for x in g)

    open_hit = np.array([hit5(opened[r["id"]], g) for r, g in zip(rows, gold)])
    default_hit = np.array([hit5(default[r["id"]], g) for r, g in zip(rows, gold)])
    default_abstains = np.array([not default[r["id"]] for r in rows])

    def measure(abstains, sel):
        pos, neg = sel & tool, sel & ~tool
        loss = open_hit[pos].mean() - (default_hit & ~abstains)[pos].mean()
        return 100 * loss, 100 * abstains[neg].mean()

    parts = [("even", half == 0), ("odd", half == 1), ("all", half >= 0)]
    print("background sentences (margin: abstain when background beats the best tool by more)")
    for m in [None] + MARGINS:
        abstains = default_abstains | (m is not None and (near_background - best > m))
        cells = [f"{name} loss {l:.1f} abst {a:.1f}" for name, sel in parts
                 for l, a in [measure(abstains, sel)]]
        print(f"  margin {'off' if m is None else f'{m:+.2f}':>5}: " + " | ".join(cells))

    x = np.hstack([q, best[:, None]])
    w, b = logistic(x[half == 0], (~tool[half == 0]).astype(float))
    score = x @ w + b
    print("classifier trained on even: most abstention within 2 points of Hit@5")
    for name, sel in parts[:2]:
        found = None
        for t in np.quantile(score[sel], np.linspace(0, 1, 401)):
            abstains = default_abstains | (score > t)
            loss, abst = measure(abstains, sel)
            if loss <= 2.0 and (found is None or abst > found[1]):
                found = (loss, abst)
        print(f"  {name}: loss {found[0]:.1f} abst {found[1]:.1f}")


if __name__ == "__main__":
    main()
