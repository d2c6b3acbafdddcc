#!/usr/bin/env bash
# The figures a ranking change is judged by (README.md, "Protocol"): `eval search` on every
# data set, one half (`even`, the tuning half; `odd`, the held-out half) or `all`, one summary
# line per data set and one for the official catalogs pooled.
#
#   tests/corpus/search/protocol.sh odd [EVAL_ARGS...]      e.g. --semantic target/ci-tools/semantic-model
#
# EVAL is the eval binary (default: target/release/examples/eval, from
# `cargo build --release --example eval`, with `--features semantic` for --semantic); DATASETS
# the shared datasets folder (default ../shared/datasets).
set -euo pipefail
cd "$(dirname "$0")/../../.."
half=${1:?usage: protocol.sh even|odd|all [eval args...]}
shift
EVAL=${EVAL:-${CARGO_TARGET_DIR:-target}/release/examples/eval}
D=${DATASETS:-../shared/datasets}
C=tests/corpus/search
parity=()
[ "$half" = all ] || parity=(--parity "$half")
run() {
  local name=$1
  shift
  printf '%s ' "$name"
  "$EVAL" search "$@" "${parity[@]}" --quiet "${EXTRA[@]}" | tail -n1
}
EXTRA=("$@")
{
  run metatool-single+negatives --catalog "$D/metatool/mcp/catalog.json" \
    --queries "$D/metatool/mcp/queries.jsonl" --category single,awareness_negative
  run metatool-multi --catalog "$D/metatool/mcp/catalog.json" \
    --queries "$D/metatool/mcp/queries.jsonl" --category multi
  run bfcl-live_multiple+irrelevance --catalog "$D/bfcl/mcp/catalog.json" \
    --queries "$D/bfcl/mcp/queries.jsonl" --category live_multiple,irrelevance,live_irrelevance
  run bfcl-multiple --catalog "$D/bfcl/mcp/catalog.json" \
    --queries "$D/bfcl/mcp/queries.jsonl" --category multiple
  for c in server-filesystem server-memory server-everything conformance-reference-server; do
    run "$c" --catalog "$D/catalogs/$c.json" --queries "$C/$c.jsonl"
  done
} | python3 -c '
import json, sys
pool = {"n": 0, "neg": 0, "hit@1": 0.0, "hit@5": 0.0, "recall@5": 0.0, "abstained": 0.0}
def show(name, n, h1, h5, r5, neg, ab, extra=""):
    print(f"{name:32s} n={n:5d} hit@1={h1:.3f} hit@5={h5:.3f} recall@5={r5:.3f} "
          f"abstention={ab:.3f} of {neg}{extra}")
for line in sys.stdin:
    name, summary = line.split(" ", 1)
    s = json.loads(summary)["summary"]
    n, neg = s["queries"], s["no_tool_queries"]
    extra = ""
    multi, steps = s["multi_gold_queries"], s["step_queries"]
    if multi:
        extra += " multi-gold recall@5=%.3f of %d" % (s["multi_recall@5"], multi)
    if steps:
        extra += " steps recall@5=%.3f (one query %.3f) of %d" % (
            s["steps_recall@5"], s["steps_query_recall@5"], steps)
    show(name, n, s["hit@1"], s["hit@5"], s["recall@5"], neg, s["abstention"], extra)
    if name.startswith(("server-", "conformance-")):
        pool["n"] += n
        pool["neg"] += neg
        for k in ("hit@1", "hit@5", "recall@5"):
            pool[k] += s[k] * n
        pool["abstained"] += s["abstention"] * neg
n = max(pool["n"], 1)
show("official catalogs (pooled)", pool["n"], pool["hit@1"] / n, pool["hit@5"] / n,
     pool["recall@5"] / n, pool["neg"], pool["abstained"] / max(pool["neg"], 1))
'
