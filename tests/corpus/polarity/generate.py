#!/usr/bin/env python3
"""Generates the polarity corpus (see README.md beside this file).

Deterministic, standard library only:

    python3 tests/corpus/polarity/generate.py [--datasets ../shared/datasets]

Every case is built from the morphology of negation, not from a list of pairs: each negating
affix and each negating word is applied to verbs and objects taken from the BFCL and MetaTool
catalogs, in every spelling a model writes. Writes beside this script:

- `names.cases.jsonl`: one line per positive tool, with its catalog (the tool and two unrelated
  dataset tools, all read-only when the test loads them, so that fuzzy correction would be
  allowed: the hardest setting) and the requested names of opposite polarity, plus one ordinary
  typo of the tool (the control);
- `keys.catalog.json`: the BFCL tools that have a boolean parameter, with their schemas;
- `keys.cases.jsonl`: negated forms of each boolean parameter, sent as `true`;
- `words.json`: the verbs and objects, for the property test.
"""

import argparse
import hashlib
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# Prefixes that negate the word they stand before. `in`/`im`/`il`/`ir` and `a` also begin many
# plain words, so they negate only a stem of four letters or more (`async`, `inactive`).
NEG_AFFIXES = ["un", "de", "dis", "non", "in", "im", "il", "ir", "anti", "counter", "mis", "no", "not", "a"]
WEAK_AFFIXES = {"in", "im", "il", "ir", "a"}
WEAK_MIN_STEM = 4
# The negating affixes that are also read as a word of their own (`un_lock_door`).
WORD_AFFIXES = ["un", "de", "dis", "non", "anti"]
# Words that negate, reverse or cancel what they stand beside.
PARTICLES = ["no", "not", "never", "dont", "without", "skip", "disable", "off", "undo", "revert",
             "cancel", "unset", "stop", "non"]
# `re` repeats; it is the opposite of the negating prefixes that reverse (`reactivate` /
# `deactivate`, `relock` / `unlock`), and another word than the bare verb (`relock` / `lock`).
REVERSING = ["de", "un", "dis"]
NAMESPACES = ["mcp__bfcl__", "functions.", "default_api."]

# Found cases (pairs the engine once crossed), kept as they were reported: the positive tool,
# then the request.
FOUND = [
    ("deactivate_account", "reactivate_account"), ("uninstall_package", "reinstall_package"),
    ("deinstall_app", "reinstall_app"), ("unsubscribe_newsletter", "resubscribe_newsletter"),
    ("deregister_device", "reregister_device"), ("decompress_archive", "recompress_archive"),
    ("dequeue_job", "requeue_job"), ("deselect_item", "reselect_item"),
    ("unarchive_project", "rearchive_project"), ("unlock_door", "undo_unlock_door"),
    ("unlock_door", "revert_unlock_door"), ("unlock_door", "cancel_unlock_door"),
    ("unlock_door", "unlock_door_undo"), ("enable_feature", "enable_feature_off"),
    ("grant_access", "undo_grant_access"), ("enqueue_vehicle", "dequeuevehicle"),
    ("sync_files", "async_files"), ("async_files", "sync_files"), ("sync_files", "asyncFiles"),
    ("unlock_door", "relock_door"), ("start_server", "halt_server"),
    ("start_server", "shutdown_server"), ("lock_door", "unlock_door"), ("lock_door", "lockDoorOff"),
    ("lock_door", "undo_lock_door"),
]

NUM_VERBS = 40
NUM_OBJECTS = 40
OBJECTS_PER_VERB = 2


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
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt is not None and nxt.islower()):
                words.append(cur)
                cur = ""
        cur += c.lower()
    if cur:
        words.append(cur)
    return words


def plural(w):
    if w.endswith("y") and len(w) > 2 and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w + "s"


def seed_of(text):
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def typo(word):
    """An ordinary typo: two letters swapped after the first three, so no prefix is touched."""
    i = max(3, len(word) - 3)
    if i + 1 >= len(word) or word[i] == word[i + 1]:
        return None
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def affixed(affix, word):
    if affix == "in" and word[:1] in "bmp":
        return None  # written `im`
    return affix + word


def spellings(words, negated):
    """The request in every spelling: (spelling, name). `negated`: index of the word that
    carries the polarity, so that the typo goes elsewhere."""
    out = [
        ("snake", "_".join(words)),
        ("camel", words[0] + "".join(w.capitalize() for w in words[1:])),
        ("pascal", "".join(w.capitalize() for w in words)),
        ("fused", "".join(words)),
    ]
    ns = NAMESPACES[seed_of("_".join(words)) % len(NAMESPACES)]
    out.append(("prefixed", ns + "_".join(words)))
    last = len(words) - 1
    if last != negated and words[last].isalpha():
        out.append(("plural", "_".join(words[:last] + [plural(words[last])])))
    # The typo goes in the longest word that does not carry the polarity.
    others = [i for i in range(len(words)) if i != negated and len(words[i]) >= 5]
    if others:
        i = max(others, key=lambda k: (len(words[k]), -k))
        t = typo(words[i])
        if t:
            out.append(("typo", "_".join(words[:i] + [t] + words[i + 1:])))
    return out


def load_tools(path):
    with open(path) as f:
        data = json.load(f)
    return data["tools"] if isinstance(data, dict) else data


def rust_pairs(path, table):
    """The (a, b) string pairs of a `const TABLE: &[(&str, &str)]` in a Rust source file."""
    with open(path) as f:
        text = f.read()
    body = text.split(f"const {table}:", 1)[1].split("];", 1)[0]
    return re.findall(r'\("([a-z]+)",\s*"([a-z]+)"\)', body)


def vocabulary(tools):
    """Verbs and objects of the datasets, by rule. A verb is a word that starts a tool
    description both as it is and in its third person (`retrieve`, `retrieves`), or that starts
    a tool name and a description; an object is the last word of a name of two words or more."""
    first_desc, first_name, last_name = {}, {}, {}
    for t in tools:
        d = re.findall(r"[A-Za-z]+", t.get("description", ""))
        if d:
            w = d[0].lower()
            first_desc[w] = first_desc.get(w, 0) + 1
        ws = split_words(t["name"])
        if len(ws) >= 2:
            first_name[ws[0]] = first_name.get(ws[0], 0) + 1
            last_name[ws[-1]] = last_name.get(ws[-1], 0) + 1

    def third_person(w):
        return w + "s" in first_desc or w + "es" in first_desc or (w.endswith("y") and w[:-1] + "ies" in first_desc)

    verbs = {}
    for w, n in first_desc.items():
        if len(w) >= 3 and w.isalpha() and (third_person(w) or w in first_name):
            verbs[w] = n + first_name.get(w, 0)
    verb_list = sorted(verbs, key=lambda w: (-verbs[w], w))
    # Verbs that already carry a polarity prefix are covered by the swap cases, not negated again.
    verb_list = [v for v in verb_list if not any(v.startswith(a) and len(v) - len(a) >= 3 for a in ["un", "dis", "non", "anti", "counter", "mis"])]
    objects = {w: n for w, n in last_name.items() if len(w) >= 4 and w.isalpha() and w not in verbs}
    object_list = sorted(objects, key=lambda w: (-objects[w], w))
    return verb_list[:NUM_VERBS], object_list[:NUM_OBJECTS]


class Writer:
    def __init__(self, distractors):
        self.catalogs = {}
        self.cases = []
        self.distractors = distractors

    def catalog(self, positive):
        if positive not in self.catalogs:
            words = set(split_words(positive))
            pool = [d for d in self.distractors if not words & set(split_words(d))]
            s = seed_of(positive)
            picked = [pool[s % len(pool)], pool[(s // 7 + 1) % len(pool)]]
            self.catalogs[positive] = [positive] + sorted(set(picked) - {positive})
        return positive

    def add(self, category, op, positive, name, spelling, expect):
        self.catalog(positive)
        self.cases.append((positive, [category, op, spelling, name, expect]))

    def all_spellings(self, category, op, positive, words, negated, expect):
        for spelling, name in spellings(words, negated):
            if name != positive:
                self.add(category, op, positive, name, spelling, expect)


def affix_expect(affix, stem):
    return "changed" if affix in WEAK_AFFIXES and len(stem) < WEAK_MIN_STEM else "opposed"


def name_cases(w, verbs, objects, opposites, synonyms):
    bases = []
    for i, v in enumerate(verbs):
        for k in range(OBJECTS_PER_VERB):
            bases.append((v, objects[(i * OBJECTS_PER_VERB + k * 7) % len(objects)]))
    for v, o in bases:
        pos = f"{v}_{o}"
        # A negating affix glued to the verb, and to the object.
        for a in NEG_AFFIXES:
            nv = affixed(a, v)
            if nv:
                w.all_spellings("affix", a, pos, [nv, o], 0, affix_expect(a, v))
                # The other way round: the negated tool is the one the catalog has.
                w.add("affix_reverse", a, f"{nv}_{o}", pos, "snake", affix_expect(a, v))
            no = affixed(a, o)
            if no:
                w.all_spellings("affix_object", a, pos, [v, no], 1, affix_expect(a, o))
        # The affix written as a word of its own.
        for a in WORD_AFFIXES:
            w.all_spellings("affix_word", a, pos, [a, v, o], 0, "opposed")
        # A negating word before, after, and between.
        for p in PARTICLES:
            w.all_spellings("particle_before", p, pos, [p, v, o], 0, "opposed")
            w.all_spellings("particle_after", p, pos, [v, o, p], 2, "opposed")
            w.add("particle_between", p, pos, f"{v}_{p}_{o}", "snake", "opposed")
        # `re` against the reversing prefixes (opposed), and against the bare verb (another
        # word: never corrected, a suggestion allowed).
        for d in REVERSING:
            w.all_spellings("re_vs_reversing", d, f"{d}{v}_{o}", [f"re{v}", o], 0, "opposed")
            w.all_spellings("reversing_vs_re", d, f"re{v}_{o}", [f"{d}{v}", o], 0, "opposed")
        w.all_spellings("re_vs_bare", "re", pos, [f"re{v}", o], 0, "changed")
        w.add("bare_vs_re", "re", f"re{v}_{o}", pos, "snake", "changed")
        # `en` against the reversing prefixes (enqueue / dequeue).
        en = "em" if v[0] in "bmp" else "en"
        for d in REVERSING:
            w.all_spellings("en_vs_reversing", d, f"{en}{v}_{o}", [f"{d}{v}", o], 0, "opposed")
            w.add("reversing_vs_en", d, f"{d}{v}_{o}", f"{en}{v}_{o}", "snake", "opposed")
    # The opposites table, each word and each synonym of its class, against the other side.
    classes = {}
    for word, head in synonyms:
        classes.setdefault(head, []).append(word)
    for n, (a, b) in enumerate(opposites):
        o = objects[n % len(objects)]
        for x, y in [(a, b), (b, a)]:
            for z in sorted(set([y] + classes.get(y, []))):
                if z == x:
                    continue
                w.all_spellings("table", f"{x}/{z}", f"{x}_{o}", [z, o], 0, "opposed")
    # Found cases.
    for pos, req in FOUND:
        expect = "changed" if (pos, req) == ("lock_door", "relock_door") else "opposed"
        w.add("found", "found", pos, req, "as_found", expect)
    # The control: an ordinary typo in a long word of each positive tool still resolves.
    for pos in sorted(w.catalogs):
        ws = split_words(pos)
        i = max(range(len(ws)), key=lambda k: (len(ws[k]), -k))
        t = typo(ws[i]) if len(ws[i]) >= 5 else None
        if t:
            w.add("control", "typo", pos, "_".join(ws[:i] + [t] + ws[i + 1:]), "snake", "corrected")


def key_forms(param):
    """Negated forms of a parameter name: (form, key)."""
    ws = split_words(param)
    snake = "_".join(ws)
    camel = ws[0] + "".join(x.capitalize() for x in ws[1:])
    pascal = "".join(x.capitalize() for x in ws)
    fused = "".join(ws)
    out = []
    for p in PARTICLES:
        out += [
            (f"{p}_X", f"{p}_{snake}"), (f"{p}X", f"{p}{fused}"), (f"{p}Camel", f"{p}{pascal}"),
            (f"{p.capitalize()}X", f"{p.capitalize()}{pascal}"), (f"{p}-X", f"{p}-{'-'.join(ws)}"),
            (f"X_{p}", f"{snake}_{p}"), (f"X{p.capitalize()}", f"{camel}{p.capitalize()}"),
            (f"X{p}", f"{fused}{p}"),
        ]
    for a in NEG_AFFIXES:
        if a in WEAK_AFFIXES and len(ws[0]) < WEAK_MIN_STEM:
            continue
        head = affixed(a, ws[0])
        if not head:
            continue
        out += [
            (f"{a}X", a + fused), (f"{a}X_snake", "_".join([head] + ws[1:])),
            (f"{a}_X", f"{a}_{snake}"), (f"{a.capitalize()}X", a.capitalize() + pascal),
        ]
    seen, unique = set(), []
    for form, key in out:
        if key not in seen:
            seen.add(key)
            unique.append((form, key))
    return unique


def value_for(schema):
    t = schema.get("type")
    if isinstance(t, list):
        t = t[0] if t else None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if t == "string":
        return "x"
    if t == "integer":
        return schema.get("minimum", 1)
    if t == "number":
        return schema.get("minimum", 1.5)
    if t == "boolean":
        return False
    if t == "array":
        item = value_for(schema.get("items", {"type": "string"}))
        return [item] * max(1, schema.get("minItems", 1))
    if t == "object":
        props = schema.get("properties", {})
        return {k: value_for(props[k]) for k in schema.get("required", []) if k in props}
    return "x"


def norm(key):
    return re.sub(r"[_\-. ]", "", key).lower()


def key_cases(bfcl):
    tools, cases = [], []
    for t in bfcl:
        props = t.get("inputSchema", {}).get("properties", {})
        booleans = [k for k, s in props.items() if s.get("type") == "boolean"]
        if not booleans:
            continue
        tools.append(t)
        required = t["inputSchema"].get("required", [])
        taken = {norm(k) for k in props}
        for x in booleans:
            base = {k: value_for(props[k]) for k in required if k in props and k != x}
            # A key the tool has as a parameter of its own is not a negated key.
            keys = [[form, key] for form, key in key_forms(x) if norm(key) not in taken]
            cases.append({"tool": t["name"], "param": x, "base": base, "value": True, "keys": keys})
    return tools, cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=os.path.join(REPO, "..", "shared", "datasets"))
    args = ap.parse_args()
    bfcl = load_tools(os.path.join(args.datasets, "bfcl/mcp/catalog.json"))
    metatool = load_tools(os.path.join(args.datasets, "metatool/mcp/catalog.json"))
    verbs, objects = vocabulary(bfcl + metatool)
    resolve = os.path.join(REPO, "disco-runtime/src/resolve")
    opposites = rust_pairs(os.path.join(resolve, "polarity.rs"), "OPPOSITES")
    synonyms = rust_pairs(os.path.join(resolve, "vocab.rs"), "SYNONYMS")
    distractors = sorted({t["name"] for t in bfcl + metatool if re.fullmatch(r"[a-z]+(_[a-z]+)+", t["name"])})

    w = Writer(distractors)
    name_cases(w, verbs, objects, opposites, synonyms)
    by_tool = {}
    for positive, case in w.cases:
        by_tool.setdefault(positive, []).append(case)
    with open(os.path.join(HERE, "names.cases.jsonl"), "w") as f:
        for positive in sorted(by_tool):
            line = {"tool": positive, "catalog": w.catalogs[positive], "cases": by_tool[positive]}
            f.write(json.dumps(line, separators=(",", ":")) + "\n")

    tools, cases = key_cases(bfcl)
    with open(os.path.join(HERE, "keys.catalog.json"), "w") as f:
        json.dump({"tools": tools}, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    with open(os.path.join(HERE, "keys.cases.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")

    # Words for the property test: the verbs, the objects, every other word of a BFCL or
    # MetaTool name of four letters or more, and the opposites table.
    more = sorted({x for t in bfcl + metatool for x in split_words(t["name"])
                   if len(x) >= 4 and x.isalpha() and x not in verbs and x not in objects})
    with open(os.path.join(HERE, "words.json"), "w") as f:
        json.dump({"verbs": verbs, "objects": objects, "words": more, "opposites": opposites}, f, indent=0)
        f.write("\n")
    print(f"{len(w.catalogs)} catalogs, {len(w.cases)} name cases, {len(tools)} tools with booleans, "
          f"{sum(len(c['keys']) for c in cases)} key cases on {len(cases)} parameters")


if __name__ == "__main__":
    main()
