#!/usr/bin/env python3
"""Where disco-gateway spends its instructions on one exact tools/call forwarded to an upstream.

    cargo build --release -p loadgen -p disco-tools -p disco-gateway
    python3 bench/gateway_profile.py [--transport stdio|http] [--requests 1000,3000] [--top 40]

The gateway runs under callgrind (its one upstream, bench/disco-tools over stdio, runs
natively), driven by loadgen's exact calls of the ten tools, one in flight, twice: for the two
request counts. A function's cost per call is the difference of its inclusive counts over the
difference of the counts, so start-up and the upstream's tools/list cancel out; the total, all
threads, is callgrind's program total taken the same way. A build with line-table debug info
reads the same as one without (see `call_profile.inclusive`). The table puts the call path's
frames in groups (the serving side, the forwarding client, the runtime) and lists the largest
functions of the gateway's own code and of the libraries it calls.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import call_profile as cp  # noqa: E402  (the same callgrind runner and annotation reader)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ONE_UPSTREAM = os.path.join(ROOT, "bench", "gateway", "one-upstream.json")

# Frames whose inclusive cost tells where a forwarded call goes.
GROUPS = [
    ("serving: the gateway's disco server (tools/call handling, inclusive)",
     "disco_runtime::call::"),
    ("forwarding: the gateway's provider and upstream client",
     "disco_gateway::"),
    ("rmcp client: sending the request and reading the upstream's answer",
     "rmcp::service::client"),
    ("JSON: serde_json, all of it", "serde_json::"),
    ("schema validation (jsonschema)", "jsonschema::"),
    ("tracing", "tracing"),
    ("allocation (malloc, free, realloc)", "malloc"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transport", default="stdio")
    ap.add_argument("--requests", default="1000,3000", help="the two request counts")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    low, high = (int(n) for n in a.requests.split(","))
    os.environ["DISCO_BENCH_UPSTREAM"] = os.path.join(cp.BIN, "disco-tools")
    os.environ.setdefault("RUST_LOG", "error")
    # The wrapper runs `valgrind TOOL BINARY "$@"`: the gateway's own arguments go with it.
    binary = f"disco-gateway --config {ONE_UPSTREAM}"
    with tempfile.TemporaryDirectory() as out_dir:
        # The gateway approves its upstream's tools on first use and keeps that in its state
        # directory: a run of its own, so that no approval of the user's holds a call back.
        os.environ["XDG_STATE_HOME"] = os.path.join(out_dir, "state")
        tool = f"--tool=callgrind --callgrind-out-file={out_dir}/%p.cg"
        lo = cp.inclusive(cp.run_under(out_dir, tool, binary, a.transport, low, a.warmup, "*.cg"))
        hi = cp.inclusive(cp.run_under(out_dir, tool, binary, a.transport, high, a.warmup, "*.cg"))
    per = {f: (hi.get(f, 0) - lo.get(f, 0)) / (high - low) for f in set(hi) | set(lo)}
    total = per.pop(cp.TOTAL)
    print(f"### disco-gateway: instructions per forwarded exact call ({a.transport}, one in "
          f"flight)\n\nAll threads: {total:,.0f} instructions per call.\n")
    print("| group | largest inclusive frame | per call | of all |")
    print("|---|---|---:|---:|")
    for label, needle in GROUPS:
        frames = [(c, f) for f, c in per.items() if needle in f]
        if not frames:
            continue
        # Frames nest (serialize inside serialize, a call inside the handler), so a group's
        # frames cannot be summed from inclusive counts: its largest frame stands for it.
        c, f = max(frames)
        print(f"| {label} | `{cp.short(f, 70)}` | {c:,.0f} | {100 * c / total:.1f}% |")
    print(f"\n| function (inclusive) | per call | of all |\n|---|---:|---:|")
    own = ("disco_runtime", "disco_gateway", "rmcp::", "jsonschema", "serde_json", "tracing")
    shown = 0
    for f, c in sorted(per.items(), key=lambda kv: -kv[1]):
        if c < total * 0.003 or not any(o in f for o in own):
            continue
        print(f"| `{cp.short(f)}` | {c:,.0f} | {100 * c / total:.1f}% |")
        shown += 1
        if shown >= a.top:
            break


if __name__ == "__main__":
    main()
