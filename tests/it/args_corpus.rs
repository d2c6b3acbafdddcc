//! The argument-repair corpus (tests/corpus/args, from BFCL rows with gold arguments): keys
//! renamed the ways models get them wrong and values of the wrong JSON type are repaired to
//! exactly the gold call at least 95% of the time, and never into a different call.
//! `cargo run --release --example eval -- args ...` prints the same figures per category.

use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::Catalog;
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/args");

#[test]
fn bfcl_gold_calls_are_recovered_and_never_changed_into_others() {
    let provider =
        JsonCatalogProvider::from_file(&Path::new(DIR).join("bfcl.catalog.json")).unwrap();
    let catalog = Catalog::builder()
        .provider(provider)
        .from_specs([])
        .unwrap();
    let text = std::fs::read_to_string(Path::new(DIR).join("bfcl.cases.jsonl")).unwrap();
    let (mut cases, mut repaired, mut excluded) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let tool = catalog.get(case["tool"].as_str().unwrap()).unwrap();
        let gold = case["gold"].as_object().unwrap().clone();
        // Rows whose gold call the dataset's own schema refuses cannot be a repair target.
        if !matches!(prepare(tool, gold.clone(), Repair::Safe), Ok(p) if p.arguments == gold) {
            excluded += 1;
            continue;
        }
        cases += 1;
        let sent = case["arguments"].as_object().unwrap().clone();
        match prepare(tool, sent, Repair::Safe) {
            Ok(p) if p.arguments == gold => repaired += 1,
            Ok(p) => wrong.push(format!("{} -> {}", case["id"], Value::Object(p.arguments))),
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "repaired into another call: {wrong:#?}");
    let rate = repaired as f64 / cases as f64;
    assert!(
        cases > 7000,
        "only {cases} usable cases ({excluded} excluded)"
    );
    assert!(rate >= 0.95, "repaired {repaired}/{cases} = {rate}");
}
