//! The tool-name resolution corpus (tests/corpus/names) through the catalog, as a server
//! resolves names: zero wrong corrections anywhere, every spelling-equivalent name recovered,
//! and at least 90% of typos and plurals recovered on tools that are not destructive.
//! `cargo run --release --example eval -- resolve ...` prints the same figures per category.

use std::collections::BTreeMap;
use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
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
        let pass = match expected {
            "exact" => r.rule == Some(NameRule::Exact),
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
    for file in [
        "server-filesystem.names.json",
        "server-memory.names.json",
        "server-everything.names.json",
        "conformance-reference-server-readonly.catalog.json",
        "metatool-readonly.catalog.json",
    ] {
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
