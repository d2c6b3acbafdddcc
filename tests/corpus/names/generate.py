#!/usr/bin/env python3
"""Generates the tool-name resolution corpus (see README.md beside this file).

Deterministic, standard library only:

    python3 tests/corpus/names/generate.py [--datasets ../shared/datasets]

Reads the tools/list catalogs under the datasets folder and writes, beside this script,
`<catalog>.cases.jsonl` for each, plus `<catalog>-readonly.catalog.json` (the same names, all
marked read-only) and its cases for the catalogs that carry no annotations, so that fuzzy
recovery can be measured on them too.
"""

import argparse
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# (catalog id, path under datasets, server name as a client would label it, sample step)
CATALOGS = [
    ("server-filesystem", "catalogs/server-filesystem.json", "filesystem", 1),
    ("server-memory", "catalogs/server-memory.json", "memory", 1),
    ("server-everything", "catalogs/server-everything.json", "everything", 1),
    ("conformance-reference-server", "catalogs/conformance-reference-server.json", "conformance", 1),
    ("metatool", "metatool/mcp/catalog.json", "metatool", 1),
    ("bfcl", "bfcl/mcp/catalog.json", "bfcl", 7),
]

# Tools of servers that are not among the catalogs, for the foreign_tool category.
OTHER_SERVERS = [
    "create_issue", "list_commits", "create_pull_request", "search_repositories", "merge_pull_request",
    "send_slack_message", "list_channels", "post_message", "get_weather_forecast", "query_database",
    "run_sql", "list_tables", "take_screenshot", "navigate_browser", "click_element", "translate_text",
    "get_stock_price", "book_flight", "charge_credit_card", "create_calendar_event",
]

# Must match the synonym classes of disco-runtime/src/resolve/name.rs (verbs a model swaps).
SYNONYM_CLASSES = [
    ["search", "find", "lookup", "query", "locate"],
    ["get", "fetch", "read", "retrieve", "show", "obtain", "view"],
    ["create", "add", "new", "make", "insert"],
    ["update", "edit", "modify", "change", "alter"],
    ["delete", "remove", "erase", "destroy"],
    ["list", "enumerate"],
    ["send", "post", "publish"],
    ["run", "execute", "invoke"],
    ["calculate", "compute"],
]

CANON = {w: cls[0] for cls in SYNONYM_CLASSES for w in cls}

# Opposites used to build must-not-correct cases.
OPPOSITES = [
    ("lock", "unlock"), ("create", "delete"), ("add", "remove"), ("enable", "disable"),
    ("subscribe", "unsubscribe"), ("grant", "revoke"), ("import", "export"), ("start", "stop"),
    ("open", "close"), ("show", "hide"), ("allow", "deny"), ("upload", "download"),
    ("encrypt", "decrypt"), ("attach", "detach"), ("mount", "unmount"), ("follow", "unfollow"),
    ("increase", "decrease"), ("read", "write"), ("get", "set"), ("insert", "delete"),
    ("push", "pull"), ("encode", "decode"), ("connect", "disconnect"), ("buy", "sell"),
    ("send", "receive"), ("input", "output"), ("min", "max"), ("first", "last"),
    ("compress", "decompress"), ("in", "out"), ("on", "off"), ("to", "from"),
]
OPPOSITE_OF = {}
for a, b in OPPOSITES:
    OPPOSITE_OF.setdefault(a, b)
    OPPOSITE_OF.setdefault(b, a)

OBJECTS = ["invoice", "user", "calendar", "ticket", "payment", "contact", "order", "photo", "account", "report"]
EXTRA_WORDS = ["tool", "data", "details", "request", "now"]


def split_words(name):
    """Lowercase words at separators and camelCase boundaries (mirrors the Rust tokenizer)."""
    words, cur = [], ""
    chars = list(name)
    for i, c in enumerate(chars):
        if not c.isalnum():
            if cur:
                words.append(cur)
                cur = ""
            continue
        if c.isupper() and cur:
            prev = chars[i - 1]
            nxt = chars[i + 1] if i + 1 < len(chars) else None
            after = chars[i + 2] if i + 2 < len(chars) else None
            plural_acronym = nxt == "s" and not (after is not None and after.isalnum() and not after.isupper())
            if prev.islower() or prev.isdigit() or (
                prev.isupper() and nxt is not None and nxt.islower() and not plural_acronym
            ):
                words.append(cur)
                cur = ""
        cur += c.lower()
    if cur:
        words.append(cur)
    return words


def singular(w):
    if len(w) < 3 or not w.endswith("s") or w.endswith(("ss", "us", "is", "as")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return w[:-2]
    return w[:-1]


def plural(w):
    if w.endswith("y") and len(w) > 2 and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w + "s"


def compact(name):
    return "".join(split_words(name))


def stem_key(name):
    return "".join(singular(w) for w in split_words(name))


def bag_key(name):
    return " ".join(sorted(singular(w) for w in split_words(name)))


def osa(a, b, limit):
    """Optimal string alignment distance, or limit + 1 when it is larger than limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


# Words that relate the words on their two sides (disco-runtime/src/resolve/name/relation.rs).
RELATIONAL = {"to", "from", "into", "onto", "by", "per", "vs", "than", "before", "after"}


def relation_moved(variant, name):
    """Whether a permutation of a name's words moves a relational word: gives it another
    neighbour on either side (by stem), or lets words trade its sides both ways. Equal stems
    are paired as many as can be in order (a longest common subsequence), then each other word
    with the first free copy of it (mirrors `relation.rs` on a permutation)."""
    a, b = split_words(variant), split_words(name)
    sa, sb = [singular(w) for w in a], [singular(w) for w in b]
    n, m = len(sa), len(sb)
    longest = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if sa[i] == sb[j]:
                longest[i][j] = longest[i + 1][j + 1] + 1
            else:
                longest[i][j] = max(longest[i + 1][j], longest[i][j + 1])
    used, done, pairs = [False] * m, [False] * n, []
    i = j = 0
    while i < n and j < m:
        if sa[i] == sb[j]:
            pairs.append((i, j))
            used[j] = done[i] = True
            i, j = i + 1, j + 1
        elif longest[i + 1][j] >= longest[i][j + 1]:
            i += 1
        else:
            j += 1
    for i in range(n):
        if not done[i]:
            j = next((j for j in range(m) if not used[j] and sb[j] == sa[i]), None)
            if j is not None:
                used[j] = True
                pairs.append((i, j))
    for ri, rj in pairs:
        if b[rj] not in RELATIONAL or a[ri] not in RELATIONAL:
            continue
        others = [(i, j) for i, j in pairs if (i, j) != (ri, rj)]
        left_q = max((p for p in others if p[0] < ri), default=None, key=lambda p: p[0])
        left_f = max((p for p in others if p[1] < rj), default=None, key=lambda p: p[1])
        right_q = min((p for p in others if p[0] > ri), default=None, key=lambda p: p[0])
        right_f = min((p for p in others if p[1] > rj), default=None, key=lambda p: p[1])

        def same(x, y):
            return (x is None and y is None) or (x is not None and y is not None and sb[x[1]] == sb[y[1]])

        went_right = any(i < ri and j > rj for i, j in others)
        went_left = any(i > ri and j < rj for i, j in others)
        if (went_right and went_left) or not same(left_q, left_f) or not same(right_q, right_f):
            return True
    return False


def destructive(tool):
    """MCP defaults: destructive unless readOnlyHint is true or destructiveHint is false."""
    ann = tool.get("annotations") or {}
    if ann.get("readOnlyHint") is True:
        return False
    return ann.get("destructiveHint", True) is not False


def seed_of(text):
    h = 2166136261
    for ch in text.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def typos(word, seed):
    """Three deterministic typos of a word of at least 4 letters: swap, drop, substitute."""
    n = len(word)
    out = []
    i = 1 + seed % (n - 2) if n > 3 else 1
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:] if i + 1 < n else None
    if swapped and swapped != word:
        out.append(swapped)
    j = 1 + (seed // 7) % (n - 1)
    out.append(word[:j] + word[j + 1:])
    k = (seed // 13) % n
    sub = "abcdefghijklmnopqrstuvwxyz"
    c = word[k]
    repl = sub[(sub.index(c) + 1) % 26] if c in sub else "x"
    out.append(word[:k] + repl + word[k + 1:])
    return [t for t in dict.fromkeys(out) if t != word]


class Catalog:
    def __init__(self, tools):
        self.tools = tools
        self.names = [t["name"] for t in tools]
        self.name_set = set(self.names)
        self.words = [split_words(n) for n in self.names]
        self.vocab = {w for ws in self.words for w in ws}
        self.keys = {}
        for i, n in enumerate(self.names):
            for key in (("c", compact(n)), ("s", stem_key(n)), ("b", bag_key(n))):
                self.keys.setdefault(key, set()).add(i)
        self.compacts = [compact(n) for n in self.names]
        self.stem_sets = [frozenset(singular(w) for w in ws) for ws in self.words]
        self.canon_sets = [frozenset(CANON.get(w, w) for w in s) for s in self.stem_sets]

    def equivalent_tools(self, name):
        """Tools a name is spelling-equivalent to (same keys)."""
        hits = set()
        for kind, key in (("c", compact(name)), ("s", stem_key(name)), ("b", bag_key(name))):
            if (kind, key) in self.keys:
                hits |= self.keys[(kind, key)]
                break
        return hits

    def near_tools(self, name, exclude):
        """Tools other than `exclude` a fuzzy variant could equally be about: one typo away, or
        one word away (a dropped or extra word)."""
        c = compact(name)
        stems = frozenset(singular(w) for w in split_words(name))
        canon = frozenset(CANON.get(w, w) for w in stems)
        near = set()
        for i, other in enumerate(self.compacts):
            if i == exclude:
                continue
            if (
                osa(c, other, 1) <= 1
                or len(stems ^ self.stem_sets[i]) <= 1
                or len(canon ^ self.canon_sets[i]) <= 1
            ):
                near.add(i)
        return near


def write_catalog_cases(cat_id, cat, server, step, all_foreign, readonly):
    cases = []

    def add(category, tool_index, name, expected, expected_tool):
        cases.append(
            {
                "id": f"{cat_id}/{category}/{len(cases)}",
                "name": name,
                "category": category,
                "expected": expected,
                "expected_tool": expected_tool,
            }
        )

    def equivalence(category, i, variant):
        if variant == cat.names[i] or variant in cat.name_set:
            return
        hits = cat.equivalent_tools(variant)
        if category == "word_order":
            # Words moved across a relational word state another relation: an opposite.
            hits = {t for t in hits if not relation_moved(variant, cat.names[t])}
            if i not in hits and not hits:
                add("relational_swap", i, variant, "unknown", None)
                return
        if i not in hits:
            return  # the generator's own keys disagree: not an equivalent spelling
        if len(hits) == 1:
            add(category, i, variant, "corrected", cat.names[i])
        else:
            add(category, i, variant, "suggested", cat.names[i])

    def fuzzy(category, i, variant, destructive_tool):
        if variant in cat.name_set or cat.equivalent_tools(variant):
            return
        if destructive_tool:
            add("destructive_fuzzy", i, variant, "suggested", cat.names[i])
        elif cat.near_tools(variant, i):
            add(category, i, variant, "suggested", cat.names[i])
        else:
            add(category, i, variant, "corrected", cat.names[i])

    def must_not(category, i, variant):
        if variant in cat.name_set or cat.equivalent_tools(variant):
            return
        # A variant that is one typo, one word or one synonym away from some tool is a
        # plausible mistake for that tool, not a clean must-not case.
        if cat.near_tools(variant, i):
            return
        add(category, i, variant, "unknown", None)

    for i in range(0, len(cat.tools), step):
        name = cat.names[i]
        words = cat.words[i]
        is_destructive = False if readonly else destructive(cat.tools[i])
        seed = seed_of(name)

        add("exact", i, name, "exact", name)

        for variant in dict.fromkeys([name.upper(), name.lower()]):
            equivalence("case", i, variant)

        if len(words) >= 2:
            variants = [
                "_".join(words),
                "-".join(words),
                ".".join(words),
                " ".join(words),
                "".join(words),
                words[0] + "".join(w.capitalize() for w in words[1:]),
                "".join(w.capitalize() for w in words),
            ]
            for variant in dict.fromkeys(variants):
                equivalence("separators", i, variant)

        for pos in sorted({len(words) - 1, 1 if len(words) >= 3 else len(words) - 1}):
            w = words[pos]
            if len(w) < 3 or not w.isalpha() or w.endswith(("ss", "us", "is", "as")):
                continue
            other = singular(w) if w.endswith("s") and singular(w) != w else plural(w)
            if singular(other) != singular(w):
                continue
            equivalence("plural_singular", i, "_".join(words[:pos] + [other] + words[pos + 1:]))

        if len(words) >= 2:
            equivalence("word_order", i, "_".join(reversed(words)))
            if len(words) >= 3:
                equivalence("word_order", i, "_".join(words[1:] + words[:1]))

        for variant in [
            f"mcp__{server}__{name}",
            f"{server}__{name}",
            f"{server}.{name}",
            f"{server}/{name}",
            f"functions.{name}",
            f"default_api.{name}",
        ]:
            add("namespace_prefix", i, variant, "corrected", name)

        longest = max(range(len(words)), key=lambda k: (len(words[k]), -k))
        if len(words[longest]) >= 4 and words[longest].isalpha():
            for t in typos(words[longest], seed):
                fuzzy("typo", i, "_".join(words[:longest] + [t] + words[longest + 1:]), is_destructive)

        if len(words) >= 3:
            pos = 1 + seed % (len(words) - 1)
            fuzzy("dropped_word", i, "_".join(words[:pos] + words[pos + 1:]), is_destructive)

        extra = [w for w in EXTRA_WORDS if w not in words]
        if extra:
            fuzzy("extra_word", i, "_".join(words + [extra[0]]), is_destructive)
        if len(words) >= 2 and len(extra) > 1:
            word = extra[1 + seed % (len(extra) - 1)]
            fuzzy("extra_word", i, "_".join(words + [word]), is_destructive)

        for pos, w in enumerate(words):
            for cls in SYNONYM_CLASSES:
                if w in cls:
                    other = cls[(cls.index(w) + 1 + seed % (len(cls) - 1)) % len(cls)]
                    fuzzy("synonym", i, "_".join(words[:pos] + [other] + words[pos + 1:]), is_destructive)

        for pos, w in enumerate(words):
            if w in OPPOSITE_OF:
                must_not("opposite", i, "_".join(words[:pos] + [OPPOSITE_OF[w]] + words[pos + 1:]))
        if not words[0].startswith("un"):
            must_not("opposite", i, "_".join(["un" + words[0]] + words[1:]))
        must_not("opposite", i, "not_" + "_".join(words))

        if len(words) >= 2:
            obj = next(o for o in OBJECTS[seed % len(OBJECTS):] + OBJECTS if o not in cat.vocab)
            variant = "_".join(words[:-1] + [obj])
            # Skip when dropping the new object leaves another tool: that is an extra word.
            stems = frozenset(singular(w) for w in split_words(variant))
            if not any(s <= stems and len(stems - s) <= 1 for s in cat.stem_sets):
                must_not("other_object", i, variant)

    foreign = [f for f in all_foreign if f not in cat.name_set]
    picked = 0
    for f in foreign:
        if picked >= 40:
            break
        if cat.equivalent_tools(f) or cat.near_tools(f, -1):
            continue  # indistinguishable from a mistaken local name
        add("foreign_tool", -1, f, "unknown", None)
        picked += 1
    return cases


def load_tools(path):
    with open(path) as f:
        data = json.load(f)
    return data["tools"] if isinstance(data, dict) else data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=os.path.join(REPO, "..", "shared", "datasets"))
    args = ap.parse_args()

    loaded = [(cid, load_tools(os.path.join(args.datasets, rel)), server, step) for cid, rel, server, step in CATALOGS]
    # Foreign names: every other catalog's tools (the small official servers first), then
    # well-known tools of servers not in the data.
    small = [t["name"] for cid, tools, _, _ in loaded if cid not in ("bfcl", "metatool") for t in tools]

    for cid, tools, server, step in loaded:
        others = [n for n in small if n not in {t["name"] for t in tools}] + OTHER_SERVERS
        others += [t["name"] for ocid, otools, _, _ in loaded if ocid in ("bfcl", "metatool") and ocid != cid for t in otools[:60]]
        cat = Catalog(tools)
        has_annotations = any(t.get("annotations") for t in tools)
        variants = [(cid, False)]
        if not has_annotations:
            variants.append((cid + "-readonly", True))
        for out_id, readonly in variants:
            cases = write_catalog_cases(out_id, cat, server, step, others, readonly)
            with open(os.path.join(HERE, out_id + ".cases.jsonl"), "w") as f:
                for case in cases:
                    f.write(json.dumps(case, ensure_ascii=False) + "\n")
            if readonly:
                slim = {"tools": [{"name": t["name"], "annotations": {"readOnlyHint": True}} for t in tools]}
                with open(os.path.join(HERE, out_id + ".catalog.json"), "w") as f:
                    json.dump(slim, f, ensure_ascii=False, indent=0)
                    f.write("\n")
            counts = {}
            for case in cases:
                counts[case["category"]] = counts.get(case["category"], 0) + 1
            print(out_id, len(cases), counts)


if __name__ == "__main__":
    main()
