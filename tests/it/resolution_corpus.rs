//! The tool-name resolution corpus (tests/corpus/names) through the catalog, as a server
//! resolves names: zero wrong corrections anywhere, every spelling-equivalent name recovered,
//! and at least 90% of typos and plurals recovered on tools that are not destructive.
//! `cargo run --release --example eval -- resolve ...` prints the same figures per category.

use std::collections::BTreeMap;
use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::lexicon;
use disco_runtime::{Caller, Catalog, NameRule};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/names");

/// A names-only catalog; `strip_annotations` makes every tool destructive (the MCP default).
fn catalog(file: &str, strip_annotations: bool) -> Catalog {
    catalog_named(file, strip_annotations, None)
}

/// The same, for a server of that name if any.
fn catalog_named(file: &str, strip_annotations: bool, server: Option<&str>) -> Catalog {
    let text = std::fs::read_to_string(Path::new(DIR).join(file)).unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    let tools = match &mut value {
        Value::Object(o) => o.get_mut("tools").unwrap(),
        other => other,
    };
    for t in tools.as_array_mut().unwrap() {
        let obj = t.as_object_mut().unwrap();
        obj.entry("description")
            .or_insert(Value::String(String::new()));
        if strip_annotations {
            obj.remove("annotations");
        }
    }
    let mut builder = Catalog::builder().provider(JsonCatalogProvider::from_value(&value).unwrap());
    if let Some(name) = server {
        builder = builder.server_name(name);
    }
    builder.from_specs([]).unwrap()
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    passed: usize,
}

/// Per category: cases and passes. Panics on any wrong correction.
fn run(catalog: &Catalog, cases: &str) -> BTreeMap<String, Tally> {
    let text = std::fs::read_to_string(Path::new(DIR).join(cases)).unwrap();
    let caller = Caller::anonymous();
    let mut out: BTreeMap<String, Tally> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut kept = Tally::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let name = case["name"].as_str().unwrap();
        let expected = case["expected"].as_str().unwrap();
        let expected_tool = case["expected_tool"].as_str();
        let r = catalog.resolve(name, &caller);
        let resolved = r.tool.as_ref().map(|t| t.name());
        if resolved.is_some() && resolved != expected_tool {
            wrong.push(format!(
                "{name} -> {resolved:?} (expected {expected_tool:?})"
            ));
        }
        // A variant whose words are words the intended name lacks (`uk_politic` for
        // `uk_politics`: `politic` is a word of its own) is another name, only suggested
        // since the rule "a word that is a word is not a typo"; counted apart.
        let another_word = expected_tool.is_some_and(|t| holds_another_word(name, t));
        let pass = match expected {
            "exact" => r.rule == Some(NameRule::Exact),
            "corrected" if another_word && resolved.is_none() => {
                kept.cases += 1;
                kept.passed += usize::from(
                    expected_tool.is_some_and(|t| r.suggestions.iter().any(|s| s == t)),
                );
                true
            }
            "corrected" => resolved.is_some() && resolved == expected_tool,
            // Declining is what matters; the intended tool, when one is meant, is suggested.
            "suggested" => {
                resolved == expected_tool
                    || (resolved.is_none()
                        && expected_tool.is_none_or(|t| r.suggestions.iter().any(|s| s == t)))
            }
            _ => resolved.is_none(),
        };
        let tally = out
            .entry(case["category"].as_str().unwrap().to_string())
            .or_default();
        tally.cases += 1;
        tally.passed += usize::from(pass);
    }
    assert!(wrong.is_empty(), "{cases}: wrong corrections: {wrong:#?}");
    // Variants kept as other words are suggested, never dropped: the intended tool is offered.
    assert_eq!(
        kept.passed, kept.cases,
        "{cases}: words kept but not suggested"
    );
    eprintln!(
        "{cases}: {} variants are other words, suggested",
        kept.cases
    );
    out.insert("words_kept".to_string(), kept);
    out
}

/// Whether `name` holds a known word (English, APIs) that no word of `tool` shares a lemma
/// with: the request then names another word, which is never corrected.
fn holds_another_word(name: &str, tool: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .flat_map(split_case)
            .map(|w| w.to_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let tool_words = words(tool);
    words(name).iter().any(|w| {
        !tool_words.contains(w)
            && lexicon::is_known_word(w)
            && !tool_words.iter().any(|t| lexicon::same_lemma(w, t))
    })
}

/// `getDetails` -> `get`, `Details`.
fn split_case(word: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in word.chars() {
        if c.is_ascii_uppercase() && !out.last().is_some_and(String::is_empty) {
            out.push(String::new());
        }
        out.last_mut().unwrap().push(c);
    }
    out
}

fn rate(t: &BTreeMap<String, Tally>, category: &str) -> f64 {
    t.get(category)
        .map_or(1.0, |t| t.passed as f64 / t.cases as f64)
}

const EQUIVALENT: &[&str] = &[
    "exact",
    "case",
    "separators",
    "plural_singular",
    "word_order",
    "namespace_prefix",
];
const MUST_NOT: &[&str] = &[
    "opposite",
    "other_object",
    "foreign_tool",
    "relational_swap",
];

fn check(catalog_file: &str, strip: bool, cases: &str, fuzzy_target: Option<f64>) {
    let c = catalog(catalog_file, strip);
    let tallies = run(&c, cases);
    for cat in EQUIVALENT.iter().chain(MUST_NOT) {
        assert_eq!(
            rate(&tallies, cat),
            1.0,
            "{cases}: {cat}: {:?}",
            tallies.get(*cat)
        );
    }
    // A destructive tool is never corrected by a fuzzy match (wrong corrections are already
    // excluded above), and it is offered as a suggestion.
    let d = rate(&tallies, "destructive_fuzzy");
    assert!(d >= 0.99, "{cases}: destructive_fuzzy {d}");
    if let Some(target) = fuzzy_target {
        for cat in ["typo", "plural_singular"] {
            let r = rate(&tallies, cat);
            assert!(r >= target, "{cases}: {cat} recovered {r} < {target}");
        }
    }
}

#[test]
fn official_servers() {
    check(
        "server-filesystem.names.json",
        false,
        "server-filesystem.cases.jsonl",
        Some(0.9),
    );
    check(
        "server-memory.names.json",
        false,
        "server-memory.cases.jsonl",
        Some(0.9),
    );
    check(
        "server-everything.names.json",
        false,
        "server-everything.cases.jsonl",
        Some(0.9),
    );
}

#[test]
fn conformance_reference_server() {
    check(
        "conformance-reference-server.names.json",
        false,
        "conformance-reference-server.cases.jsonl",
        None,
    );
    check(
        "conformance-reference-server-readonly.catalog.json",
        false,
        "conformance-reference-server-readonly.cases.jsonl",
        Some(0.9),
    );
}

#[test]
fn metatool() {
    check(
        "metatool-readonly.catalog.json",
        true,
        "metatool.cases.jsonl",
        None,
    );
    check(
        "metatool-readonly.catalog.json",
        false,
        "metatool-readonly.cases.jsonl",
        Some(0.9),
    );
}

#[test]
fn bfcl() {
    check("bfcl-readonly.catalog.json", true, "bfcl.cases.jsonl", None);
    check(
        "bfcl-readonly.catalog.json",
        false,
        "bfcl-readonly.cases.jsonl",
        Some(0.9),
    );
}

/// Claude Code calls a tool `mcp__<label>__<tool>`, with the label the user gave to `claude mcp
/// add`. For every tool of real catalogs and a label the server cannot know: every spelling of
/// the tool resolves behind it (as `namespace_prefix`), and a typo of the tool is never
/// corrected through it (it is, without the label or behind the server's own name). With and
/// without a known server name.
#[test]
fn user_labels_behind_mcp() {
    const LABELS: &[&str] = &[
        "tracker",
        "work",
        "fs",
        "My-Files",
        "prod_db",
        "localServer",
        "gh2",
        "kb",
        "x",
    ];
    const SERVER: &str = "disco-test-server";
    let mut seed = 0x2545_f491_u32;
    let mut next_label = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        LABELS[seed as usize % LABELS.len()]
    };
    let (mut spelled, mut typos, mut typos_fuzzy_bare) = (0usize, 0usize, 0usize);
    for file in READ_ONLY_CATALOGS {
        for server in [None, Some(SERVER)] {
            let c = catalog_named(file, false, server);
            let caller = Caller::anonymous();
            let tools: Vec<String> = c.list(&caller).iter().map(|t| t.name.to_string()).collect();
            for tool in tools.iter().filter(|t| !is_meta(t)) {
                let words = words(tool);
                for variant in spellings(&words) {
                    // A spelling that is another tool's, or shared, is not this tool's.
                    let bare = c.resolve(&variant, &caller);
                    if bare.tool.as_ref().map(|t| t.name()) != Some(tool.as_str())
                        || bare.rule.is_none_or(|r| r.is_fuzzy())
                    {
                        continue;
                    }
                    let name = format!("mcp__{}__{variant}", next_label());
                    let r = c.resolve(&name, &caller);
                    assert_eq!(
                        (r.tool.as_ref().map(|t| t.name()), r.rule),
                        (Some(tool.as_str()), Some(NameRule::NamespacePrefix)),
                        "{file} ({server:?}): {name}"
                    );
                    spelled += 1;
                }
                for typo in typos_of(&words) {
                    let bare = c.resolve(&typo, &caller);
                    if bare.rule.is_some_and(|r| !r.is_fuzzy()) {
                        // The "typo" spells some tool: not a typo.
                        continue;
                    }
                    let name = format!("mcp__{}__{typo}", next_label());
                    let r = c.resolve(&name, &caller);
                    assert!(
                        r.tool.is_none(),
                        "{file} ({server:?}): {name} -> {:?} by {:?}",
                        r.tool.map(|t| t.name().to_string()),
                        r.rule
                    );
                    typos += 1;
                    if bare.tool.as_ref().map(|t| t.name()) == Some(tool.as_str()) {
                        typos_fuzzy_bare += 1;
                        // Behind the server's own name the same typo is corrected.
                        if let Some(own) = server {
                            let r = c.resolve(&format!("mcp__{own}__{typo}"), &caller);
                            assert_eq!(
                                r.tool.map(|t| t.name().to_string()).as_ref(),
                                Some(tool),
                                "{file}: mcp__{own}__{typo}"
                            );
                        }
                    }
                }
            }
        }
    }
    // The rule was exercised: most spellings are the tool's own, most typos are corrected
    // without a label.
    assert!(spelled >= 3_000, "{spelled} spellings");
    assert!(
        typos >= 1_200 && typos_fuzzy_bare * 10 >= typos * 9,
        "{typos_fuzzy_bare} of {typos} typos corrected without a label"
    );
}

/// The corpus catalogs whose tools may be corrected fuzzily (annotated as read-only, or the
/// read-only copies), but the largest.
const READ_ONLY_CATALOGS: &[&str] = &[
    "server-filesystem.names.json",
    "server-memory.names.json",
    "server-everything.names.json",
    "conformance-reference-server-readonly.catalog.json",
    "metatool-readonly.catalog.json",
];

fn is_meta(name: &str) -> bool {
    matches!(name, "tool_search" | "execute_tool")
}

/// A name's words, lower case: split at `_ - . /`, spaces and case changes.
fn words(name: &str) -> Vec<String> {
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    spaced.split_whitespace().map(str::to_lowercase).collect()
}

fn capitalised(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The spellings of a name that tiers 1-3 must recover: cases, separators, camelCase and
/// PascalCase, the last word's other number, the words reversed.
fn spellings(words: &[String]) -> Vec<String> {
    let snake = words.join("_");
    let mut out = vec![
        snake.clone(),
        snake.to_uppercase(),
        words.join("-"),
        words.join(""),
        words.iter().map(|w| capitalised(w)).collect(),
        words[..1]
            .iter()
            .cloned()
            .chain(words[1..].iter().map(|w| capitalised(w)))
            .collect(),
    ];
    if let Some(last) = words.last() {
        let mut other = words.to_vec();
        *other.last_mut().unwrap() = match last.strip_suffix('s') {
            Some(one) if !last.ends_with("ss") => one.to_string(),
            _ => format!("{last}s"),
        };
        out.push(other.join("_"));
    }
    if words.len() > 1 {
        let reversed: Vec<&str> = words.iter().rev().map(String::as_str).collect();
        out.push(reversed.join("_"));
    }
    out.sort();
    out.dedup();
    out
}

/// A swap, a dropped letter and a substituted letter in the longest word (of 5+ letters).
fn typos_of(words: &[String]) -> Vec<String> {
    let Some((at, longest)) = words
        .iter()
        .enumerate()
        .max_by_key(|(i, w)| (w.len(), std::cmp::Reverse(*i)))
    else {
        return Vec::new();
    };
    let letters: Vec<char> = longest.chars().collect();
    if letters.len() < 5 || !longest.is_ascii() {
        return Vec::new();
    }
    let mid = letters.len() / 2;
    let mut swapped = letters.clone();
    swapped.swap(mid - 1, mid);
    let mut dropped = letters.clone();
    dropped.remove(mid);
    let mut substituted = letters.clone();
    substituted[mid] = if letters[mid] == 'x' { 'q' } else { 'x' };
    [swapped, dropped, substituted]
        .into_iter()
        .filter(|w| *w != letters)
        .map(|w| {
            let mut all = words.to_vec();
            all[at] = w.into_iter().collect();
            all.join("_")
        })
        .collect()
}

/// Word order is meaning where a relational word stands between. For every name of the name
/// corpora that holds a relational word, its words in other orders (every order for names of up
/// to five words; for longer ones every word moved to every other place, every two words
/// swapped, the words reversed), each in several spellings: an order that gives a relational
/// word another neighbour, or lets two words trade its sides, never resolves to the name and
/// is never suggested for it; an order that does neither resolves to it (or, where another
/// tool reads the same, is suggested with it). An order whose verdict depends on which copy of
/// a repeated word is which is read both ways by the rule and is not asserted.
#[test]
fn relational_words_keep_their_neighbours() {
    let caller = Caller::anonymous();
    let (mut moved, mut kept, mut names) = (0usize, 0usize, 0usize);
    for &file in READ_ONLY_CATALOGS
        .iter()
        .chain(&["bfcl-readonly.catalog.json"])
    {
        let c = catalog(file, false);
        let tools: Vec<String> = c.list(&caller).iter().map(|t| t.name.to_string()).collect();
        let bags: Vec<Vec<String>> = tools.iter().map(|t| bag(&words(t))).collect();
        for tool in &tools {
            let w = words(tool);
            // This file's `words` splits `XAxis` and `v2` as the runtime does not: such names
            // are left out rather than read differently.
            let plain = |s: &str| {
                let b = s.as_bytes();
                !b.windows(2).any(|p| {
                    (p[0].is_ascii_uppercase() && p[1].is_ascii_uppercase())
                        || (p[0].is_ascii_digit() != p[1].is_ascii_digit()
                            && p[0].is_ascii_alphanumeric()
                            && p[1].is_ascii_alphanumeric())
                })
            };
            if !plain(tool) || !w.iter().any(|x| RELATIONAL.contains(&x.as_str())) {
                continue;
            }
            names += 1;
            let own_bag = bag(&w);
            for (n, order) in orders(w.len()).into_iter().enumerate() {
                let request: Vec<String> = order.iter().map(|&k| w[k].clone()).collect();
                if request == w || tools.iter().any(|t| words(t) == request) {
                    continue;
                }
                let Some(verdict) = verdict(&w, &request) else {
                    continue;
                };
                let spelled = spell(&request, n);
                for name in spelled.iter().filter(|s| words(s) == request) {
                    let r = c.resolve(name, &caller);
                    let to = r.tool.as_ref().map(|t| t.name().to_string());
                    if verdict == Verdict::Moved {
                        assert_ne!(to.as_ref(), Some(tool), "{file}: {name} -> {tool}");
                        assert!(
                            !r.suggestions.iter().any(|s| s == tool),
                            "{file}: {name} suggests {tool}: {:?}",
                            r.suggestions
                        );
                        moved += 1;
                    } else {
                        // Another tool of the same words, in an order the request keeps too,
                        // makes it ambiguous: then both are suggested.
                        let shared = bags.iter().zip(&tools).any(|(b, t)| {
                            t != tool
                                && *b == own_bag
                                && verdict_of(t, &request) == Some(Verdict::Kept)
                        });
                        let ok = to.as_ref() == Some(tool)
                            || (shared && to.is_none() && r.suggestions.iter().any(|s| s == tool));
                        assert!(
                            ok,
                            "{file}: {name} -> {to:?} {:?}, not {tool}",
                            r.suggestions
                        );
                        kept += 1;
                    }
                }
                // Joined into one word, the relational word is no word: a moved order is
                // still never corrected nor suggested.
                if verdict == Verdict::Moved {
                    let joined = request.concat();
                    let r = c.resolve(&joined, &caller);
                    assert!(
                        r.tool.as_ref().is_none_or(|t| t.name() != tool),
                        "{file}: {joined} -> {tool}"
                    );
                    assert!(
                        !r.suggestions.iter().any(|s| s == tool),
                        "{file}: {joined} suggests {tool}: {:?}",
                        r.suggestions
                    );
                }
            }
        }
    }
    println!("{names} names: {moved} moved orders refused, {kept} kept orders resolved");
    assert!(
        names >= 70 && moved >= 5_000 && kept >= 1_000,
        "{names} {moved} {kept}"
    );
}

const RELATIONAL: &[&str] = &[
    "to", "from", "into", "onto", "by", "per", "vs", "than", "before", "after",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Kept,
    Moved,
}

fn verdict_of(tool: &str, request: &[String]) -> Option<Verdict> {
    let w = words(tool);
    if bag(&w) != bag(request) {
        return None;
    }
    verdict(&w, request)
}

/// The rule on a request that holds a tool's words in another order: `Moved` when every way of
/// reading the request's words as the tool's (copies of a repeated word may be either copy)
/// gives some relational word another neighbour (by singular) or has words cross it both
/// ways; `Kept` when no way does; `None` when that depends on the reading.
fn verdict(tool: &[String], request: &[String]) -> Option<Verdict> {
    let stem = |w: &str| singular(w);
    // Every reading: for request position r, the tool position it is.
    let mut readings: Vec<Vec<usize>> = vec![vec![usize::MAX; request.len()]];
    let mut groups: Vec<(String, Vec<usize>, Vec<usize>)> = Vec::new();
    for (j, w) in tool.iter().enumerate() {
        match groups.iter_mut().find(|g| g.0 == stem(w)) {
            Some(g) => g.2.push(j),
            None => groups.push((stem(w), Vec::new(), vec![j])),
        }
    }
    for (r, w) in request.iter().enumerate() {
        groups.iter_mut().find(|g| g.0 == stem(w))?.1.push(r);
    }
    for (_, at, of) in &groups {
        if at.len() != of.len() {
            return None;
        }
        let mut next = Vec::new();
        for reading in &readings {
            for p in permutations(of.len()) {
                let mut r = reading.clone();
                for (k, &pos) in at.iter().enumerate() {
                    r[pos] = of[p[k]];
                }
                next.push(r);
            }
        }
        if next.len() > 5_000 {
            return None;
        }
        readings = next;
    }
    let moved = |p: &[usize]| {
        let word = |k: Option<usize>| k.map(|k| stem(&tool[k]));
        (0..p.len())
            .filter(|&r| RELATIONAL.contains(&tool[p[r]].as_str()))
            .any(|r| {
                let j = p[r];
                let left = (word(r.checked_sub(1).map(|q| p[q])), word(j.checked_sub(1)));
                let right = (
                    word(p.get(r + 1).copied()),
                    word(Some(j + 1).filter(|&k| k < tool.len())),
                );
                let went_right = (0..r).any(|q| p[q] > j);
                let went_left = (r + 1..p.len()).any(|q| p[q] < j);
                left.0 != left.1 || right.0 != right.1 || (went_right && went_left)
            })
    };
    let verdicts: Vec<bool> = readings.iter().map(|p| moved(p)).collect();
    if verdicts.iter().all(|&m| m) {
        Some(Verdict::Moved)
    } else if verdicts.iter().all(|&m| !m) {
        Some(Verdict::Kept)
    } else {
        None
    }
}

/// The regular English singular (`entities` -> `entity`, `matches` -> `match`).
fn singular(w: &str) -> String {
    let keep =
        w.len() < 3 || !w.ends_with('s') || ["ss", "us", "is", "as"].iter().any(|e| w.ends_with(e));
    if keep {
        w.to_string()
    } else if let Some(stem) = w.strip_suffix("ies").filter(|_| w.len() > 4) {
        format!("{stem}y")
    } else if ["sses", "xes", "ches", "shes", "zzes"]
        .iter()
        .any(|e| w.ends_with(e))
    {
        w[..w.len() - 2].to_string()
    } else {
        w[..w.len() - 1].to_string()
    }
}

fn bag(words: &[String]) -> Vec<String> {
    let mut b: Vec<String> = words.iter().map(|w| singular(w)).collect();
    b.sort();
    b
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..n {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// Orders of `n` words: every one up to five words; beyond, every word moved to every other
/// place, every two words swapped, and the words reversed.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n <= 5 {
        return permutations(n);
    }
    let identity: Vec<usize> = (0..n).collect();
    let mut out = vec![identity.iter().rev().copied().collect()];
    for from in 0..n {
        for to in 0..n {
            let mut o = identity.clone();
            let w = o.remove(from);
            o.insert(to, w);
            out.push(o);
            if from < to {
                let mut s = identity.clone();
                s.swap(from, to);
                out.push(s);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The `n`-th order's spellings: snake case and one more, in turn: kebab, camelCase,
/// PascalCase, upper snake case, spaced.
fn spell(words: &[String], n: usize) -> Vec<String> {
    let snake = words.join("_");
    let other = match n % 5 {
        0 => words.join("-"),
        1 => words[..1]
            .iter()
            .cloned()
            .chain(words[1..].iter().map(|w| capitalised(w)))
            .collect(),
        2 => words.iter().map(|w| capitalised(w)).collect(),
        3 => snake.to_uppercase(),
        _ => words.join(" "),
    };
    vec![snake, other]
}
