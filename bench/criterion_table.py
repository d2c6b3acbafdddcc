#!/usr/bin/env python3
"""Markdown table of criterion results: per benchmark the median time per iteration (criterion's
estimate) and the fastest and slowest sample's time per iteration.

    python3 bench/criterion_table.py $CARGO_TARGET_DIR/criterion
"""
import json
import os
import sys


def fmt(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} us"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "target/criterion"
    rows = []
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "estimates.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        with open(os.path.join(dirpath, "sample.json")) as f:
            sample = json.load(f)
        per = [t / i for t, i in zip(sample["times"], sample["iters"])]
        rows.append((bench["full_id"], est["median"]["point_estimate"], min(per), max(per)))

    def key(r):
        parts = r[0].split("/")
        return [int(p) if p.isdigit() else p for p in parts]

    rows.sort(key=key)
    print("| benchmark | median | min | max |")
    print("|---|---|---|---|")
    for name, med, lo, hi in rows:
        print(f"| {name} | {fmt(med)} | {fmt(lo)} | {fmt(hi)} |")


if __name__ == "__main__":
    main()
