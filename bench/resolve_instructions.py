#!/usr/bin/env python3
"""Instructions per name resolution, by kind of request, counted by valgrind's callgrind: a
figure the machine's load cannot move. Two or more `eval` builds side by side.

    cargo build --release --example eval          # once per tree to compare; copy the binary
    python3 bench/resolve_instructions.py BEFORE_EVAL AFTER_EVAL [--catalog C --cases CASES]

The cases (by default the 1,694-tool BFCL catalog with every tool read-only, so that the fuzzy
tier runs in full, and its 6,538 cases) are split by category into four groups. Each build
resolves each group under callgrind, and once with no cases at all; per case = (the group's
run - the empty run) / cases, which includes the eval loop's own JSON per case. The empty run
is the catalog and index build of the whole process.
"""
import argparse
import json
import os
import tempfile

from eval_callgrind import instructions

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
NAMES = os.path.join(ROOT, "tests", "corpus", "names")
GROUPS = {
    "exact": ["exact"],
    "spelling-equivalent: case, separators, plural, word order, namespace": [
        "case", "separators", "plural_singular", "word_order", "namespace_prefix"],
    "fuzzy: typo, dropped, extra word, synonym": [
        "typo", "dropped_word", "extra_word", "synonym"],
    "must not be corrected: opposite, other object, foreign tool, relational swap": [
        "opposite", "other_object", "foreign_tool", "relational_swap"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("evals", nargs="+", help="eval binaries, the first is the reference")
    ap.add_argument("--catalog", default=os.path.join(NAMES, "bfcl-readonly.catalog.json"))
    ap.add_argument("--cases", default=os.path.join(NAMES, "bfcl-readonly.cases.jsonl"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {"": os.path.join(tmp, "empty.jsonl")}
        open(files[""], "w").close()
        counts = {}
        lines = {g: [] for g in GROUPS}
        with open(a.cases) as f:
            for line in f:
                category = json.loads(line)["category"]
                for g, members in GROUPS.items():
                    if category in members:
                        lines[g].append(line)
        for g, rows in lines.items():
            files[g] = os.path.join(tmp, f"{len(files)}.jsonl")
            with open(files[g], "w") as f:
                f.writelines(rows)
            counts[g] = len(rows)
        totals = {e: {g: instructions(e, "resolve", a.catalog, p) for g, p in files.items()}
                  for e in a.evals}
    names = [os.path.basename(e) for e in a.evals]
    print("| cases | " + " | ".join(names) + " | " +
          " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for g in GROUPS:
        if counts[g] == 0:
            continue
        per = [(totals[e][g] - totals[e][""]) / counts[g] for e in a.evals]
        print(f"| {g} ({counts[g]:,}) | " + " | ".join(f"{p:,.0f}" for p in per) + " | " +
              " | ".join(f"{p / per[0]:.2f}" for p in per[1:]) + " |")
    build = [totals[e][""] for e in a.evals]
    print("| catalog and index build (the empty run, whole process) | " +
          " | ".join(f"{b / 1e6:.1f} M" for b in build) + " | " +
          " | ".join(f"{b / build[0]:.2f}" for b in build[1:]) + " |")


if __name__ == "__main__":
    main()
