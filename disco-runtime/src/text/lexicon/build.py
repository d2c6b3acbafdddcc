#!/usr/bin/env python3
"""Compiles the lexicon that name and key resolution read (disco-runtime/src/text/lexicon/mod.rs)
from two Debian packages:

  scowl        2020.12.07-2  SCOWL word lists (size 50 and smaller; English, American, British,
                             Canadian and Australian spellings, since models write `analyse` too;
                             lowercase entries only): what counts as a word of English.
  wordnet-base 1:3.0-37      WordNet 3.0: the lemmas of inflected words (its morphology:
                             exception lists and detachment rules, a base counted only when
                             WordNet has it for that part of speech) and its antonym relation.

  apt-get install scowl wordnet-base && python3 disco-runtime/src/text/lexicon/build.py

Writes, beside this script:
  words.txt     the known words, one a line, sorted.
  lemmas.txt    `form lemma [lemma...]` for each known word whose lemmas are not just itself
                (`created create`, `mice mouse`, `better better good well`), and for each
                one ending in `s` that WordNet has as its own only lemma (`news news`).
  antonyms.txt  `a b` (a < b): the antonym pairs of WordNet between single-word lemmas.
The output is deterministic: a second run on the same packages writes the same bytes.
"""
import pathlib
import subprocess
import sys

SCOWL = pathlib.Path("/usr/share/dict/scowl")
WORDNET = pathlib.Path("/usr/share/wordnet")
OUT = pathlib.Path(__file__).resolve().parent
SIZES = (10, 20, 35, 40, 50)
SPELLINGS = ("english", "american", "british", "british_z", "canadian", "australian")
PACKAGES = {"scowl": "2020.12.07-2", "wordnet-base": "1:3.0-37"}
POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# WordNet's detachment rules (morphy), per part of speech.
RULES = {
    "n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


def check_packages():
    for name, want in PACKAGES.items():
        try:
            have = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name],
                                  capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            sys.exit(f"{name} is not installed: apt-get install {name}")
        if have != want:
            sys.exit(f"{name} is {have}, this script was written for {want}")


def plain(word):
    return word.isascii() and word.isalpha() and word.islower()


def scowl_words():
    words = set()
    for size in SIZES:
        for spelling in SPELLINGS:
            path = SCOWL / f"{spelling}-words.{size}"
            for line in path.read_bytes().decode("latin-1").splitlines():
                if plain(line):
                    words.add(line)
    return words


def wordnet_index():
    index = {}
    for p, name in POS.items():
        lemmas = set()
        for line in (WORDNET / f"index.{name}").read_text().splitlines():
            if line.startswith(" "):
                continue
            lemmas.add(line.split(" ", 1)[0])
        index[p] = lemmas
    exceptions = {}
    for p, name in POS.items():
        table = {}
        for line in (WORDNET / f"{name}.exc").read_text().splitlines():
            form, *bases = line.split()
            table.setdefault(form, []).extend(bases)
        exceptions[p] = table
    return index, exceptions


def lemmas(word, index, exceptions):
    """WordNet's morphology: the word itself where WordNet has it, its exceptions, and each
    detachment rule whose base WordNet has for that part of speech."""
    out = set()
    for p in POS:
        if word in index[p]:
            out.add(word)
        # As morphy does: a word in a part of speech's exception list takes its bases from
        # there and no rule applies (`liver liver` in adj.exc keeps `liver` from `live`).
        if word in exceptions[p]:
            for base in exceptions[p][word]:
                if base in index[p]:
                    out.add(base)
            continue
        for suffix, ending in RULES[p]:
            if word.endswith(suffix) and len(word) > len(suffix):
                base = word[: -len(suffix)] + ending
                if base in index[p]:
                    out.add(base)
    return out


def antonyms():
    pairs = set()
    for name in POS.values():
        for line in (WORDNET / f"data.{name}").read_text().splitlines():
            if line.startswith(" "):
                continue
            fields = line.split(" | ", 1)[0].split()
            count = int(fields[3], 16)
            words = [fields[4 + 2 * i] for i in range(count)]
            at = 4 + 2 * count
            pointers = int(fields[at])
            for k in range(pointers):
                symbol, offset, pos, source_target = fields[at + 1 + 4 * k: at + 5 + 4 * k]
                if symbol != "!":
                    continue
                source = int(source_target[:2], 16)
                target = int(source_target[2:], 16)
                if source == 0:
                    continue
                target_word = target_words(name, pos, offset, target)
                a = strip_marker(words[source - 1]).lower()
                b = target_word.lower() if target_word else None
                if b and a != b and plain(a) and plain(b):
                    pairs.add(tuple(sorted((a, b))))
    return pairs


_DATA = {}


def target_words(_name, pos, offset, number):
    name = POS["a" if pos == "s" else pos]
    if name not in _DATA:
        _DATA[name] = (WORDNET / f"data.{name}").read_bytes()
    data = _DATA[name]
    start = int(offset)
    line = data[start: data.index(b"\n", start)].decode()
    fields = line.split()
    count = int(fields[3], 16)
    words = [fields[4 + 2 * i] for i in range(count)]
    return strip_marker(words[number - 1]) if 0 < number <= count else None


def strip_marker(word):
    # Adjectives may carry a syntactic marker: `galore(ip)`.
    return word.split("(", 1)[0]


def main():
    check_packages()
    words = scowl_words()
    index, exceptions = wordnet_index()
    lemma_lines = []
    for word in sorted(words):
        found = lemmas(word, index, exceptions)
        # A word that ends in `s` and is its own only lemma is written too (`news news`), so
        # that no rule strips it into another word (`new`).
        if found and (found != {word} or word.endswith("s")):
            lemma_lines.append(" ".join([word] + sorted(found)))
    pairs = sorted(antonyms())
    (OUT / "words.txt").write_text("".join(w + "\n" for w in sorted(words)))
    (OUT / "lemmas.txt").write_text("".join(l + "\n" for l in lemma_lines))
    (OUT / "antonyms.txt").write_text("".join(f"{a} {b}\n" for a, b in pairs))
    print(f"words {len(words)}, lemma lines {len(lemma_lines)}, antonym pairs {len(pairs)}")


if __name__ == "__main__":
    main()
