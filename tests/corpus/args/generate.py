#!/usr/bin/env python3
"""Argument-repair corpus from BFCL rows with gold arguments (deterministic, stdlib only).

For each single-call row whose gold call fits the catalog's definition of the tool, the gold
call (first allowed value of each parameter; optional ones left out when omission is allowed)
is written once unchanged and once per mistake a model makes with parameter names and types.
Every mutated call must be repaired to exactly the gold call, or refused; never repaired into
something else.

    python3 tests/corpus/args/generate.py [DATASETS_DIR]

Writes bfcl.cases.jsonl ({"id","category","tool","arguments","gold"}) and bfcl.catalog.json
(the tools the cases use, as in the dataset's MCP catalog).
"""
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../../shared/datasets")
CATEGORIES = {"simple_python", "multiple", "live_simple", "live_multiple"}


def camel(s):
    parts = re.split(r"[_\-\s]+", s)
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]) if len(parts) > 1 else None


def snake_from_camel(s):
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()
    return out if out != s else None


def typo(s, rng):
    letters = [i for i, c in enumerate(s) if c.isalpha()]
    if len(s) < 5 or len(letters) < 4:
        return None
    i = rng.choice(letters[1:-1])
    kind = rng.choice(["swap", "drop"])
    if kind == "swap" and i + 1 < len(s) and s[i] != s[i + 1]:
        return s[:i] + s[i + 1] + s[i] + s[i + 2:]
    return s[:i] + s[i + 1:]


def number(s):
    if s.endswith(("species", "series", "news")):
        return None  # the same in both numbers
    if s.endswith("ies") and len(s) > 4:
        return s[:-3] + "y"
    if s.endswith("s") and not s.endswith("ss") and len(s) > 3:
        return s[:-1]
    if s.endswith("y") and len(s) > 3 and s[-2] not in "aeiou":
        return s[:-1] + "ies"
    return s + "s"


def first_value(allowed):
    for v in allowed:
        if v != "" and v is not None:
            return v, True
    return None, False


def main():
    rng = random.Random(20261129)
    with open(os.path.join(DATA, "bfcl/mcp/catalog.json")) as f:
        catalog = json.load(f)
    tools = {t["name"]: t for t in (catalog["tools"] if isinstance(catalog, dict) else catalog)}
    used = {}
    cases = []
    with open(os.path.join(DATA, "bfcl/mcp/queries.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        if row.get("category") not in CATEGORIES or len(row.get("gold_args") or []) != 1:
            continue
        ((name, args),) = row["gold_args"][0].items()
        tool = tools.get(name)
        if tool is None:
            continue
        props = tool.get("inputSchema", {}).get("properties", {})
        if not set(args) <= set(props):
            continue  # the catalog keeps another definition of this name
        gold = {}
        for key, allowed in args.items():
            value, present = first_value(allowed)
            if present:
                gold[key] = value
        if not gold:
            continue
        used[name] = tool
        base = f"{row['id']}"
        cases.append({"id": f"{base}/gold", "category": "gold", "tool": name, "arguments": gold, "gold": gold})

        def add(category, arguments):
            cases.append({"id": f"{base}/{category}", "category": category, "tool": name,
                          "arguments": arguments, "gold": gold})

        keys = sorted(gold)
        key = rng.choice(keys)
        others = [k for k in props if k != key]

        def renamed(new):
            if new is None or new == key or new in props:
                return None
            return {(new if k == key else k): v for k, v in gold.items()}

        for category, new in [
            ("case", key.upper() if key.upper() != key else None),
            ("camel_case", camel(key)),
            ("snake_case", snake_from_camel(key)),
            ("kebab", key.replace("_", "-") if "_" in key else None),
            ("typo", typo(key, rng)),
            ("plural_singular", number(key)),
        ]:
            args2 = renamed(new)
            if args2 is not None:
                add(category, args2)
        # Types a model gets wrong: numbers and booleans as strings, a lone value for an
        # array, an object as a JSON string.
        for k in keys:
            v = gold[k]
            t = props[k].get("type")
            if isinstance(v, bool) and t == "boolean":
                add("bool_as_string", {**gold, k: "true" if v else "false"})
                break
        for k in keys:
            v = gold[k]
            t = props[k].get("type")
            if isinstance(v, (int, float)) and not isinstance(v, bool) and t in ("integer", "number"):
                add("number_as_string", {**gold, k: json.dumps(v)})
                break
        for k in keys:
            v = gold[k]
            if isinstance(v, list) and len(v) == 1 and props[k].get("type") == "array" and not isinstance(v[0], (list, dict)):
                add("lone_value_for_array", {**gold, k: v[0]})
                break
        for k in keys:
            v = gold[k]
            if isinstance(v, dict) and props[k].get("type") == "object":
                add("object_as_json_string", {**gold, k: json.dumps(v)})
                break
        del others
    with open(os.path.join(HERE, "bfcl.cases.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c, sort_keys=True) + "\n")
    with open(os.path.join(HERE, "bfcl.catalog.json"), "w") as f:
        json.dump({"tools": [used[n] for n in sorted(used)]}, f, indent=None, sort_keys=True)
    print(f"{len(cases)} cases over {len(used)} tools")


if __name__ == "__main__":
    main()
