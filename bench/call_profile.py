#!/usr/bin/env python3
"""Where one exact tools/call spends its instructions and a server its heap: disco versus the
same ten tools on plain rmcp, side by side in one run.

    CARGO_TARGET_DIR=/work/target-bench cargo build --release -p loadgen -p disco-tools -p rmcp-tools
    python3 bench/call_profile.py [--transport stdio|http] [--requests 1000,3000] [--top 25]

Instructions: each server runs under callgrind twice (the two request counts, loadgen's calls
of the ten tools with valid arguments, one in flight); `callgrind_annotate --inclusive=yes`
gives every function's inclusive count in both runs, and the difference divided by the
difference of the counts is that function's cost per call, with start-up and the catalog
build subtracted out; the total, all threads, is callgrind's program total taken the same way.
The table lists the functions of the call path, largest first.

Heap: each server runs under massif for the higher count; the peak and the end-of-run heap
are read from massif's snapshots, with the largest allocation sites at the peak, and the
binaries' code size (the other part of the resident set) from `size`.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "target"))
BIN = os.path.join(TARGET, "release")
SERVERS = ["disco-tools", "rmcp-tools"]

WRAPPER = """#!/bin/bash
setsid valgrind {tool} {binary} "$@" <&0 &
VP=$!
( while kill -0 $$ 2>/dev/null; do sleep 0.2; done; kill -INT $VP 2>/dev/null ) &
wait $VP
"""


def run_under(out_dir, tool_args, binary, transport, requests, warmup, pattern):
    """Runs one server under valgrind for `requests` calls; returns the output file."""
    for old in glob.glob(os.path.join(out_dir, pattern)):
        os.remove(old)
    wrapper = os.path.join(out_dir, "server.sh")
    with open(wrapper, "w") as f:
        f.write(WRAPPER.format(tool=tool_args, binary=os.path.join(BIN, binary)))
    os.chmod(wrapper, 0o755)
    extra = ["--transport", transport]
    cmd = [os.path.join(BIN, "loadgen"), "--server", wrapper, *extra, "--concurrency", "1",
           "--requests", str(requests), "--warmup", str(warmup), "--max-seconds", "900"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    if run.returncode != 0:
        sys.exit(f"loadgen failed: {' '.join(cmd)}\n{run.stderr}")
    for _ in range(600):
        files = glob.glob(os.path.join(out_dir, pattern))
        # The output is complete once no process of this run is left (valgrind writes it as
        # the server exits).
        if files and not subprocess.run(["pgrep", "-f", out_dir],
                                        capture_output=True).stdout:
            return files[0]
        time.sleep(0.1)
    sys.exit("valgrind wrote no output")


# A line of callgrind_annotate's function table: count, percentage, `file:function [object]`.
LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")
OBJECT = re.compile(r"^(.*) \[[^\]]*\]$")

# The key of the whole run's count (every thread) in what `inclusive` returns.
TOTAL = "PROGRAM TOTALS"


def inclusive(cg_file):
    """function -> inclusive instructions, from callgrind_annotate, and TOTAL -> the run's.

    A function's own line in the table names its object, `file:function [object]`, and with
    `--inclusive=yes` holds all it cost. A build with line tables adds, for each other source
    file whose code was inlined into a function, a line `file:function` with no object: the
    part of the function's cost on that file's lines, already in the function's own line. Only
    the lines naming an object are read, so that a build with debug info counts each function
    once, as a build without does (system libraries with line tables have such lines in both).
    Source annotation is off: its lines have the same shape as the table's. It runs in `/`:
    callgrind_annotate cuts the working directory off the files a function is in but not off
    the files of the functions called, so a function under the working directory would get
    its calls' costs under another name than its own line's.
    """
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                          "--threshold=100", os.path.abspath(cg_file)],
                         capture_output=True, text=True, check=True, cwd="/").stdout
    costs = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        if m.group(2) == TOTAL:
            costs[TOTAL] = count
            continue
        own = OBJECT.match(m.group(2))
        if not own:
            continue
        name = own.group(1)
        name = name.split(":", 1)[1] if ":" in name and not name.startswith("<") else name
        costs[name] = costs.get(name, 0) + count
    if TOTAL not in costs:
        sys.exit(f"callgrind_annotate gave no program total for {cg_file}")
    return costs


def short(name, width=100):
    # Drop generic arguments and crate hashes: the table is for reading.
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    depth, out = 0, []
    for c in name:
        if c == "<":
            depth += 1
            if depth == 1:
                out.append("<..>")
        elif c == ">":
            depth -= 1
        elif depth == 0:
            out.append(c)
    s = "".join(out)
    return s if len(s) <= width else s[: width - 1] + "…"


def massif_figures(ms_file, top):
    """(peak heap, heap at the last snapshot, the largest first-level sites of the peak)."""
    snaps, sites = [], []
    with open(ms_file) as f:
        lines = f.read().splitlines()
    cur = {}
    for n, line in enumerate(lines):
        if line.startswith("mem_heap_B="):
            cur = {"heap": int(line.split("=")[1])}
        elif line.startswith("mem_heap_extra_B="):
            cur["heap"] += int(line.split("=")[1])
            snaps.append(cur["heap"])
        elif line == "heap_tree=peak":
            # The root, then its children one space in.
            for child in lines[n + 2:]:
                if not child.startswith(" ") or child.startswith("#"):
                    break
                m = re.match(r"^ n\d+: (\d+) (?:0x[0-9A-F]+: )?(.*)$", child)
                if m:
                    sites.append((int(m.group(1)), short(m.group(2), 90)))
    sites.sort(key=lambda s: -s[0])
    return max(snaps), snaps[-1], sites[:top]


def code_size(binary):
    out = subprocess.run(["size", os.path.join(BIN, binary)], capture_output=True, text=True,
                         check=True).stdout.splitlines()[1].split()
    return int(out[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", default="stdio")
    ap.add_argument("--requests", default="1000,3000", help="the two request counts")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    low, high = (int(n) for n in a.requests.split(","))
    per_call = {}
    heap = {}
    with tempfile.TemporaryDirectory() as out_dir:
        for server in SERVERS:
            tool = f"--tool=callgrind --callgrind-out-file={out_dir}/%p.cg"
            lo = inclusive(run_under(out_dir, tool, server, a.transport, low, a.warmup, "*.cg"))
            hi = inclusive(run_under(out_dir, tool, server, a.transport, high, a.warmup, "*.cg"))
            per_call[server] = {f: (hi.get(f, 0) - lo.get(f, 0)) / (high - low)
                                for f in set(hi) | set(lo)}
            tool = f"--tool=massif --massif-out-file={out_dir}/%p.ms"
            heap[server] = massif_figures(
                run_under(out_dir, tool, server, a.transport, high, a.warmup, "*.ms"), 12)

    for server in SERVERS:
        costs = per_call[server]
        total = costs[TOTAL]
        print(f"\n### {server}: instructions per exact call ({a.transport}, one in flight), "
              f"inclusive, the largest {a.top} of its own functions\n")
        print(f"All threads: {total:,.0f} instructions per call.\n")
        print("| function | per call | of all |")
        print("|---|---:|---:|")
        shown = 0
        # The functions of the call path that the two servers do not share: disco's own, and
        # what only disco calls (schema validation, tracing). The runtime, rmcp and serde_json
        # frames above and beside them are the same in both.
        own = ("disco_runtime", "disco_tools", "rmcp_tools", "jsonschema", "tracing")
        for f, c in sorted(costs.items(), key=lambda kv: -kv[1]):
            if f == TOTAL or c < total * 0.002 or not any(o in f for o in own):
                continue
            print(f"| `{short(f)}` | {c:,.0f} | {100 * c / total:.1f}% |")
            shown += 1
            if shown >= a.top:
                break
    print("\n### Heap and code\n")
    print("| server | heap at peak | heap at the end | code (text) |")
    print("|---|---:|---:|---:|")
    for server in SERVERS:
        peak, end, _ = heap[server]
        print(f"| {server} | {peak / 1e6:.2f} MB | {end / 1e6:.2f} MB | "
              f"{code_size(server) / 1e6:.2f} MB |")
    for server in SERVERS:
        print(f"\n#### {server}: largest heap sites at the peak\n")
        print("| bytes | site |")
        print("|---:|---|")
        for size, site in heap[server][2]:
            print(f"| {size:,} | `{site}` |")


if __name__ == "__main__":
    main()
