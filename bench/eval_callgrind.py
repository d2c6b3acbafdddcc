"""What `eval` costs in instructions, counted by valgrind's callgrind: the run of one `eval`
subcommand, and a table of the cost per row, by category, of two or more builds side by side.
Used by bench/resolve_instructions.py, bench/search_instructions.py and
bench/args_instructions.py.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def instructions(binary, command, catalog, rows):
    """The callgrind total of `eval COMMAND --catalog CATALOG --cases ROWS --quiet`."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, command,
         "--catalog", catalog, "--cases", rows, "--quiet"],
        capture_output=True, text=True, check=False)
    m = re.search(r"Collected : (\d+)", out.stderr)
    # callgrind prints a total for a run that failed too: that would measure the error path.
    if out.returncode != 0 or not m:
        sys.exit(f"{binary}: no callgrind total (exit {out.returncode}):\n{out.stderr[-2000:]}")
    return int(m.group(1))


def table(command, evals, catalog, rows_file, stride, unit):
    """Groups `rows_file`'s rows by category (every `stride`-th of each), runs each build on
    each group and on nothing, and prints the per-row instructions as a Markdown table."""
    groups = {}
    with open(rows_file) as f:
        for line in f:
            if line.strip():
                groups.setdefault(json.loads(line).get("category", ""), []).append(line)
    groups = {g: rows[::stride] for g, rows in sorted(groups.items())}
    with tempfile.TemporaryDirectory() as tmp:
        files = {"": os.path.join(tmp, "empty.jsonl")}
        open(files[""], "w").close()
        for g, rows in groups.items():
            files[g] = os.path.join(tmp, f"{len(files)}.jsonl")
            with open(files[g], "w") as f:
                f.writelines(rows)
        totals = {e: {g: instructions(e, command, catalog, p) for g, p in files.items()}
                  for e in evals}
    names = [os.path.basename(e) for e in evals]
    print(f"| {unit} | " + " | ".join(names) + " | " +
          " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for g, rows in groups.items():
        per = [(totals[e][g] - totals[e][""]) / len(rows) for e in evals]
        print(f"| {g or '(none)'} ({len(rows):,}) | " + " | ".join(f"{p:,.0f}" for p in per) +
              " | " + " | ".join(f"{p / per[0]:.4f}" for p in per[1:]) + " |")
    build = [totals[e][""] for e in evals]
    print("| catalog and index build (the empty run, whole process) | " +
          " | ".join(f"{b / 1e6:.1f} M" for b in build) + " | " +
          " | ".join(f"{b / build[0]:.4f}" for b in build[1:]) + " |")


def main(doc, command, catalog, rows_flag, rows, stride, row, unit):
    """The command line both per-row scripts take: the `eval` builds, `--catalog`, the rows
    file under `rows_flag` (`--cases`, `--queries`), and `--stride` (every N-th row of a
    category, `stride` by default; `row` names one in the help); then their table."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("evals", nargs="+", help="eval binaries, the first is the reference")
    ap.add_argument("--catalog", default=catalog)
    ap.add_argument(rows_flag, dest="rows", metavar=rows_flag[2:].upper(), default=rows)
    ap.add_argument("--stride", type=int, default=stride,
                    help=f"keep every N-th {row} of a category")
    a = ap.parse_args()
    table(command, a.evals, a.catalog, a.rows, a.stride, unit)
