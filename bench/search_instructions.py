#!/usr/bin/env python3
"""Instructions per keyword search (`tool_search`'s ranking), by kind of query, counted by
valgrind's callgrind: a figure the machine's load cannot move. Two or more `eval` builds side
by side.

    cargo build --release --example eval          # once per tree to compare; copy the binary
    python3 bench/search_instructions.py BEFORE_EVAL AFTER_EVAL [--catalog C --queries Q]
        [--stride N]

The queries (by default MetaTool's, against its 199 tools) are split by category, and every
N-th row of each category is kept (`--stride`, default 10: the same rows every time). Each
build searches each group under callgrind, and once with no query at all; per query = (the
group's run - the empty run) / queries, which includes the eval loop's own JSON and scoring per
query. The empty run is the catalog and index build of the whole process. Keyword search only:
the builds need no `semantic` feature and no model.
"""
import os

import eval_callgrind

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
METATOOL = os.path.join(ROOT, "..", "shared", "datasets", "metatool", "mcp")

if __name__ == "__main__":
    eval_callgrind.main(__doc__, "search", os.path.join(METATOOL, "catalog.json"), "--queries",
                        os.path.join(METATOOL, "queries.jsonl"), 10, "row", "queries")
