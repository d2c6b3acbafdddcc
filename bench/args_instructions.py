#!/usr/bin/env python3
"""Instructions per argument repair (`prepare` with `Repair::Safe`), by kind of mistake,
counted by valgrind's callgrind. Two or more `eval` builds side by side.

    cargo build --release --example eval          # once per tree to compare; copy the binary
    python3 bench/args_instructions.py BEFORE_EVAL AFTER_EVAL [--catalog C --cases CASES]
        [--stride N]

The cases (by default tests/corpus/args, BFCL's tools with one mistake each) are split by
category, every N-th of each kept (default 1: all). Per case = (the group's run - the empty
run) / cases, as in bench/search_instructions.py; a case runs `prepare` twice (once on the gold
arguments, to check that the schema accepts them, once on the mistaken ones) plus the eval
loop's JSON.
"""
import os

import eval_callgrind

ARGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "corpus", "args")

if __name__ == "__main__":
    eval_callgrind.main(__doc__, "args", os.path.join(ARGS, "bfcl.catalog.json"), "--cases",
                        os.path.join(ARGS, "bfcl.cases.jsonl"), 1, "case", "cases")
