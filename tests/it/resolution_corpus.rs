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
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&value).unwrap())
        .from_specs([])
        .unwrap()
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
        let resolved = r.tool.as_ref().map(|t| t.name.as_str());
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
const MUST_NOT: &[&str] = &["opposite", "other_object", "foreign_tool"];

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
