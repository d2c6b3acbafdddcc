#!/usr/bin/env python3
"""Instructions per exact tools/call, disco versus plain rmcp, counted by valgrind's callgrind:
a figure the machine's noise cannot move, to read beside rmcp_compare.py's calls per second.

    CARGO_TARGET_DIR=/work/target-bench cargo build --release -p loadgen -p disco-tools -p rmcp-tools
    python3 bench/rmcp_instructions.py [--transports stdio,http,http-stateless] [--out FILE]

Each server runs under callgrind twice, driven by loadgen with the same warm-up and two request
counts; the difference of the two instruction totals divided by the difference of the counts
is the cost of one call, with start-up, catalog build and warm-up subtracted out. Callgrind
counts user-space instructions of every thread; time in the kernel (syscalls, wake-ups) is
not in it, which is why the throughput comparison stays the target's measure.

loadgen stops its server with SIGKILL, which would lose callgrind's output: the server runs
behind a small shell wrapper that turns the wrapper's death into SIGINT (both servers shut
down gracefully on it) and waits for callgrind to write its file.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "target"))
BIN = os.path.join(TARGET, "release")
SERVERS = ["disco-tools", "rmcp-tools"]
TRANSPORTS = {"stdio": [], "http": [], "http-stateless": ["--stateless"]}

WRAPPER = """#!/bin/bash
setsid valgrind --tool=callgrind --callgrind-out-file={out}/%p.cg {binary} "$@" <&0 &
VP=$!
( while kill -0 $$ 2>/dev/null; do sleep 0.2; done; kill -INT $VP 2>/dev/null ) &
wait $VP
"""


def instructions(out_dir, binary, transport, extra, conc, requests, warmup):
    """Total instructions of one server run of `requests` calls."""
    for old in glob.glob(os.path.join(out_dir, "*.cg")):
        os.remove(old)
    wrapper = os.path.join(out_dir, "server.sh")
    with open(wrapper, "w") as f:
        f.write(WRAPPER.format(out=out_dir, binary=os.path.join(BIN, binary)))
    os.chmod(wrapper, 0o755)
    cmd = [os.path.join(BIN, "loadgen"), "--server", wrapper, "--transport", transport, *extra,
           "--concurrency", str(conc), "--requests", str(requests), "--warmup", str(warmup),
           "--max-seconds", "600"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        sys.exit(f"loadgen failed: {' '.join(cmd)}\n{run.stderr}")
    if json.loads(run.stdout).get("errors"):
        sys.exit(f"calls failed: {run.stdout}")
    # callgrind writes its file when the server has shut down.
    for _ in range(300):
        files = glob.glob(os.path.join(out_dir, "*.cg"))
        if files and not subprocess.run(["pgrep", "-f", f"callgrind-out-file={out_dir}"],
                                        capture_output=True).stdout:
            break
        time.sleep(0.1)
    else:
        sys.exit("callgrind wrote no output")
    total = None
    with open(files[0]) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    if total is None:
        sys.exit(f"no totals in {files[0]}")
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transports", default="stdio,http,http-stateless")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--requests", default="1000,3000", help="the two request counts")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--out", default=None)
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="binaries under the target's release dir, disco's first: the ratio "
                         "is the first over the second")
    a = ap.parse_args()
    servers = a.servers.split(",")
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode != 0:
        sys.exit("valgrind is not installed")
    low, high = (int(n) for n in a.requests.split(","))
    results = []
    with tempfile.TemporaryDirectory() as out_dir:
        for transport in a.transports.split(","):
            kind, extra = transport.split("-")[0], TRANSPORTS[transport]
            row = {"transport": transport, "concurrency": a.concurrency}
            for server in servers:
                lo = instructions(out_dir, server, kind, extra, a.concurrency, low, a.warmup)
                hi = instructions(out_dir, server, kind, extra, a.concurrency, high, a.warmup)
                row[server] = (hi - lo) / (high - low)
            row["ratio"] = row[servers[0]] / row[servers[1]]
            print(f"{transport:15} c={a.concurrency:<3} " + " ".join(
                f"{s} {row[s]:,.0f}" for s in servers) + f" instructions/call, "
                f"{servers[0]}/{servers[1]} {row['ratio']:.3f}", file=sys.stderr)
            results.append(row)
    print("| transport | in flight | " + " | ".join(f"{s} instructions/call" for s in servers)
          + f" | {servers[0]}/{servers[1]} |")
    print("|---|---|" + "---|" * (len(servers) + 1))
    for r in results:
        print(f"| {r['transport']} | {r['concurrency']} | "
              + " | ".join(f"{r[s]:,.0f}" for s in servers) + f" | {r['ratio']:.3f} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"command": " ".join(sys.argv), "requests": [low, high],
                       "warmup": a.warmup, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
