#!/usr/bin/env python3
"""Resolution's time in two or more builds, side by side in paired rounds.

    cargo build --release -p disco-runtime --example resolve_loop   # in each tree
    python3 bench/resolve_pairs.py A=path/to/resolve_loop B=path/to/resolve_loop \\
        [--kinds spelling,typo,unknown] [--tools 1000] [--rounds 7] [--cpu 1]
    python3 bench/resolve_pairs.py A=... B=... \\
        --corpus tests/corpus/names/bfcl-readonly.catalog.json:tests/corpus/names/bfcl.cases.jsonl

Each round runs every build once per kind, in turn (the order reversed every other round),
pinned to one CPU (`taskset`), each resolving the 256 probes of the micro benchmark 100 times
(`disco-runtime/examples/resolve_loop.rs`); with `--corpus CATALOG:CASES` (repeatable), the
names of a corpus's cases in its real catalog, 5 times, instead of the kinds. It prints the
median time of one resolution per build and its ratio to the first build, with the load
average: on a shared machine, read ratios, not times.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+", help="NAME=PATH of a resolve_loop binary")
    ap.add_argument("--kinds", default="spelling,typo,unknown")
    ap.add_argument("--tools", default="1000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--corpus", action="append", default=[], help="CATALOG:CASES")
    a = ap.parse_args()
    builds = []
    for b in a.builds:
        name, sep, path = b.partition("=")
        if not sep:
            sys.exit(f"error: `{b}` is not NAME=PATH")
        builds.append((name, path))
    if shutil.which("taskset") is None:
        sys.exit("error: taskset (util-linux) is needed to pin the runs to one CPU")
    kinds = a.kinds.split(",")
    runs = {k: [a.tools, k, "100"] for k in kinds}
    if a.corpus:
        runs = {}
        for c in a.corpus:
            catalog, sep, cases = c.partition(":")
            if not sep:
                sys.exit(f"error: `{c}` is not CATALOG:CASES")
            runs[os.path.basename(cases)] = ["--catalog", catalog, "--cases", cases, "5"]
        kinds = list(runs)
    times = {}
    load = [open("/proc/loadavg").read().split()[0]]
    for r in range(a.rounds):
        for kind in kinds:
            for name, path in builds if r % 2 == 0 else builds[::-1]:
                run = subprocess.run(
                    ["taskset", "-c", a.cpu, path] + runs[kind],
                    capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit(f"error: {name} {kind}: {run.stderr.strip()}")
                line = next((l for l in run.stderr.splitlines() if "us per resolution" in l), None)
                if line is None:
                    sys.exit(f"error: {name} {kind}: no timing in its output: {run.stderr.strip()}")
                times.setdefault((kind, name), []).append(float(line.split()[0]))
    load.append(open("/proc/loadavg").read().split()[0])
    what = "corpora" if a.corpus else f"{a.tools} tools"
    print(f"{a.rounds} paired rounds, {what}, load {load[0]} -> {load[1]}")
    print("| kind | " + " | ".join(f"{n} us" for n, _ in builds) + " | ratios to "
          + builds[0][0] + " |")
    print("|---" * (len(builds) + 2) + "|")
    for kind in kinds:
        med = [statistics.median(times[(kind, n)]) for n, _ in builds]
        ratios = ", ".join(f"{m / med[0]:.2f}" for m in med[1:])
        print(f"| {kind} | " + " | ".join(f"{m:.3f}" for m in med) + f" | {ratios} |")


if __name__ == "__main__":
    main()
