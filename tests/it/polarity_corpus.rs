//! Never across opposites (tests/corpus/polarity, built by its generate.py from the morphology
//! of negation and the BFCL and MetaTool vocabularies):
//!
//! - a requested name of opposite polarity to a tool is never resolved to it, under every name
//!   policy, and is never suggested for it when the polarity is opposed (`re` against a bare
//!   verb is another word: only never corrected);
//! - a negated boolean key (`no_force`, `forceOff`, `unforce`, ...) sent as `true` is refused,
//!   never repaired into the parameter it negates;
//! - the control: an ordinary typo of each tool still resolves to it (at least 90%);
//! - a property: random names from the datasets' words, each polarity operation applied in a
//!   random spelling, never resolve to the name they negate.
//!
//! `cargo test --test it polarity_corpus -- --nocapture` prints the counts per category.

use std::collections::BTreeMap;
use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::{Caller, Catalog, NamePolicy};
use serde_json::{Map, Value};

use crate::common::Rng;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/polarity");
const POLICIES: [NamePolicy; 3] = [NamePolicy::Off, NamePolicy::Strict, NamePolicy::Safe];

fn read(file: &str) -> String {
    std::fs::read_to_string(Path::new(DIR).join(file)).unwrap()
}

/// A catalog of these names, every tool read-only: fuzzy correction is allowed on all of
/// them, so nothing but the polarity guard stands between a request and its opposite.
fn catalog(names: &[String], policy: NamePolicy) -> Catalog {
    Catalog::builder()
        .provider(crate::common::read_only_tools(names))
        .name_policy(policy)
        .from_specs([])
        .unwrap()
}

#[derive(Default)]
struct Tally {
    cases: usize,
    /// Resolved to the tool of opposite polarity (under any policy).
    corrected: usize,
    /// The tool of opposite polarity among the suggestions, when opposed.
    suggested: usize,
}

/// What went wrong for one request against one tool, under one policy, if anything.
fn crossing(
    c: &Catalog,
    policy: NamePolicy,
    name: &str,
    tool: &str,
    opposed: bool,
) -> Option<String> {
    let r = c.resolve(name, &Caller::anonymous());
    if r.tool.as_ref().is_some_and(|t| t.name() == tool) {
        let rule = r.rule.map_or("?", |r| r.as_str());
        return Some(format!("{name} -> {tool} ({policy:?}, {rule})"));
    }
    if opposed && r.suggestions.iter().any(|s| s == tool) {
        return Some(format!(
            "{name}: suggests {tool} ({policy:?}, {:?})",
            r.suggestions
        ));
    }
    None
}

#[test]
fn opposite_names_are_never_corrected_nor_suggested() {
    let text = read("names.cases.jsonl");
    let caller = Caller::anonymous();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let (mut controls, mut recovered) = (0usize, 0usize);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line).unwrap();
        let tool = entry["tool"].as_str().unwrap();
        let names: Vec<String> = entry["catalog"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert!(names.iter().any(|n| n == tool));
        let catalogs: Vec<(NamePolicy, Catalog)> =
            POLICIES.iter().map(|&p| (p, catalog(&names, p))).collect();
        for case in entry["cases"].as_array().unwrap() {
            let field = |i: usize| case[i].as_str().unwrap();
            let (category, name, expect) = (field(0), field(3), field(4));
            if expect == "corrected" {
                controls += 1;
                let safe = &catalogs[2].1;
                let r = safe.resolve(name, &caller);
                recovered += usize::from(r.tool.as_ref().is_some_and(|t| t.name() == tool));
                continue;
            }
            assert!(matches!(expect, "opposed" | "changed"), "{expect}");
            let tally = tallies.entry(category.to_string()).or_default();
            tally.cases += 1;
            let mut corrected = false;
            let mut suggested = false;
            for (policy, c) in &catalogs {
                if let Some(what) = crossing(c, *policy, name, tool, expect == "opposed") {
                    if what.contains(" -> ") {
                        corrected = true;
                    } else {
                        suggested = true;
                    }
                    failures.push(format!(
                        "[{category} {}] {what}; catalog {names:?}",
                        field(1)
                    ));
                }
            }
            tally.corrected += usize::from(corrected);
            tally.suggested += usize::from(suggested);
        }
    }
    println!(
        "{:<18} {:>7} {:>10} {:>10}",
        "category", "cases", "corrected", "suggested"
    );
    for (category, t) in &tallies {
        println!(
            "{category:<18} {:>7} {:>10} {:>10}",
            t.cases, t.corrected, t.suggested
        );
    }
    let rate = recovered as f64 / controls as f64;
    println!("control: ordinary typo recovered {recovered}/{controls} = {rate:.4}");
    assert!(
        failures.is_empty(),
        "{} crossings of polarity: {:#?}",
        failures.len(),
        &failures[..failures.len().min(200)]
    );
    assert!(controls > 1000, "only {controls} control cases");
    assert!(rate >= 0.9, "control: typos recovered {rate}");
}

#[test]
fn negated_boolean_keys_are_refused() {
    let provider =
        JsonCatalogProvider::from_file(&Path::new(DIR).join("keys.catalog.json")).unwrap();
    let catalog = Catalog::builder()
        .provider(provider)
        .from_specs([])
        .unwrap();
    let text = read("keys.cases.jsonl");
    let (mut params, mut excluded, mut cases, mut named) = (0usize, 0usize, 0usize, 0usize);
    let mut by_form: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut positive = Vec::new();
    let mut accepted = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line).unwrap();
        let tool = catalog.get(entry["tool"].as_str().unwrap()).unwrap();
        let param = entry["param"].as_str().unwrap();
        let base = entry["base"].as_object().unwrap().clone();
        let value = entry["value"].clone();
        // The control: the parameter itself, with the same value, is a call the tool accepts,
        // so a negated key repaired into it would be accepted too and the case can fail.
        let mut control = base.clone();
        control.insert(param.to_string(), value.clone());
        if !matches!(prepare(tool, control.clone(), Repair::Safe), Ok(p) if p.arguments == control)
        {
            excluded += 1;
            continue;
        }
        params += 1;
        for pair in entry["keys"].as_array().unwrap() {
            let (form, key) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
            let mut args: Map<String, Value> = base.clone();
            args.insert(key.to_string(), value.clone());
            cases += 1;
            let tally = by_form
                .entry(form.replace(|c: char| c.is_ascii_punctuation(), "_"))
                .or_default();
            tally.0 += 1;
            for repair in [Repair::Safe, Repair::Strict] {
                match prepare(tool, args.clone(), repair) {
                    Err(message) => {
                        if repair == Repair::Safe && message.contains(&format!("`{param}`")) {
                            named += 1;
                        }
                    }
                    Ok(p) => {
                        tally.1 += 1;
                        let line = format!(
                            "{}: {{{key:?}: {value}}} ({repair:?}) -> {}",
                            tool.name(),
                            Value::Object(p.arguments.clone())
                        );
                        if p.arguments.get(param) == Some(&value) {
                            positive.push(line);
                        } else {
                            accepted.push(line);
                        }
                    }
                }
            }
        }
    }
    let forms: Vec<String> = by_form
        .iter()
        .filter(|(_, t)| t.1 > 0)
        .map(|(f, t)| format!("{f} {}/{}", t.1, t.0))
        .collect();
    println!(
        "negated keys: {cases} on {params} boolean parameters ({excluded} excluded: the tool \
         refuses the positive call); refused with the parameter named: {named}; turned \
         positive: {}; accepted otherwise: {}; forms not refused: {forms:?}",
        positive.len(),
        accepted.len()
    );
    assert!(
        params > 300,
        "only {params} parameters ({excluded} excluded)"
    );
    assert!(
        positive.is_empty(),
        "{} negated keys turned positive: {:#?}",
        positive.len(),
        &positive[..positive.len().min(200)]
    );
    assert!(
        accepted.is_empty(),
        "{} negated keys accepted: {:#?}",
        accepted.len(),
        &accepted[..accepted.len().min(200)]
    );
    assert_eq!(named, cases, "every refusal names the parameter it negates");
}

// The morphology, as generate.py states it.
const NEG_AFFIXES: &[&str] = &[
    "un", "de", "dis", "non", "in", "im", "il", "ir", "anti", "counter", "mis", "no", "not", "a",
];
const WEAK_AFFIXES: &[&str] = &["in", "im", "il", "ir", "a"];
const WORD_AFFIXES: &[&str] = &["un", "de", "dis", "non", "anti"];
const PARTICLES: &[&str] = &[
    "no", "not", "never", "dont", "without", "skip", "disable", "off", "undo", "revert", "cancel",
    "unset", "stop", "non",
];
const REVERSING: &[&str] = &["de", "un", "dis"];

fn capitalize(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The request's words in one of the spellings a model writes; `keep` is the index of the
/// word that carries the polarity (the typo goes in another one).
fn spell(words: &[String], keep: usize, rng: &mut Rng) -> String {
    match rng.below(7) {
        0 => words.join("_"),
        1 => {
            let mut s = words[0].clone();
            words[1..].iter().for_each(|w| s.push_str(&capitalize(w)));
            s
        }
        2 => words.iter().map(|w| capitalize(w)).collect(),
        3 => words.concat(),
        4 => format!("mcp__x__{}", words.join("_")),
        5 if keep + 1 != words.len() => {
            let mut w = words.to_vec();
            let last = w.last_mut().unwrap();
            last.push('s');
            w.join("_")
        }
        _ => {
            // Two letters swapped after the third, in the longest other word.
            let mut w = words.to_vec();
            let best = (0..w.len())
                .filter(|&i| i != keep && w[i].len() >= 6)
                .max_by_key(|&i| w[i].len());
            if let Some(i) = best {
                let mut chars: Vec<char> = w[i].chars().collect();
                let at = chars.len() - 3;
                chars.swap(at, at + 1);
                w[i] = chars.into_iter().collect();
            }
            w.join("_")
        }
    }
}

/// One polarity operation on a tool's words: the tool the catalog holds, the request's words,
/// the index of the word that carries the polarity, and whether the two are opposed (or only
/// different words, like `relock` and `lock`).
fn operation(
    words: &[String],
    opposites: &[(String, String)],
    rng: &mut Rng,
) -> Option<(Vec<String>, Vec<String>, usize, bool)> {
    let tool = words.to_vec();
    let mut request = words.to_vec();
    let at = rng.below(words.len());
    let stem = &words[at];
    match rng.below(6) {
        0 => {
            let a = *rng.pick(NEG_AFFIXES);
            request[at] = format!("{a}{stem}");
            let weak = WEAK_AFFIXES.contains(&a) && stem.len() < 4;
            Some((tool, request, at, !weak))
        }
        1 => {
            let p = *rng.pick(PARTICLES);
            let i = if rng.below(2) == 0 { 0 } else { words.len() };
            request.insert(i, p.to_string());
            Some((tool, request, i, true))
        }
        2 => {
            request.insert(0, rng.pick(WORD_AFFIXES).to_string());
            Some((tool, request, 0, true))
        }
        3 => {
            // `re` against a reversing prefix, either way round; or `en` against one.
            let d = *rng.pick(REVERSING);
            let other = match rng.below(3) {
                0 => "re",
                1 => "en",
                _ => {
                    let mut t = tool;
                    t[at] = format!("re{stem}");
                    request[at] = format!("{d}{stem}");
                    return Some((t, request, at, true));
                }
            };
            let mut t = tool;
            t[at] = format!("{d}{stem}");
            request[at] = format!("{other}{stem}");
            Some((t, request, at, true))
        }
        4 => {
            request[at] = format!("re{stem}");
            Some((tool, request, at, false))
        }
        _ => {
            let (a, b) = rng.pick(opposites);
            if words[1..].iter().any(|w| w == a || w == b) {
                // `play_settlement_pause` against `pause_settlement_pause`: the name already
                // holds one side of the pair, so the request is not a clean opposite.
                return None;
            }
            let mut t = tool;
            t[0] = a.clone();
            request[0] = b.clone();
            Some((t, request, 0, true))
        }
    }
}

#[test]
fn property_no_polarity_operation_lands_on_the_name_it_negates() {
    let words: Value = serde_json::from_str(&read("words.json")).unwrap();
    let list = |k: &str| -> Vec<String> {
        words[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let (verbs, objects, others) = (list("verbs"), list("objects"), list("words"));
    let opposites: Vec<(String, String)> = words["opposites"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            let (a, b) = (p[0].as_str().unwrap(), p[1].as_str().unwrap());
            [
                (a.to_string(), b.to_string()),
                (b.to_string(), a.to_string()),
            ]
        })
        .collect();
    let nouns: Vec<String> = objects.iter().chain(&others).cloned().collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let (mut checked, mut opposed_checked) = (0usize, 0usize);
    const NAMES: usize = 1500;
    const OPS_PER_NAME: usize = 2;
    for _ in 0..NAMES {
        let mut tool_words = vec![rng.pick(&verbs).clone(), rng.pick(&nouns).clone()];
        if rng.below(3) == 0 {
            tool_words.push(rng.pick(&nouns).clone());
        }
        for _ in 0..OPS_PER_NAME {
            let Some((tool, request, keep, opposed)) = operation(&tool_words, &opposites, &mut rng)
            else {
                continue;
            };
            let tool_name = tool.join("_");
            let name = spell(&request, keep, &mut rng);
            if name.replace('_', "") == tool_name.replace('_', "") {
                continue;
            }
            let mut names = vec![tool_name.clone()];
            for _ in 0..rng.below(3) {
                names.push(format!("{}_{}", rng.pick(&verbs), rng.pick(&nouns)));
            }
            names.sort();
            names.dedup();
            checked += 1;
            opposed_checked += usize::from(opposed);
            for policy in POLICIES {
                let c = catalog(&names, policy);
                if let Some(what) = crossing(&c, policy, &name, &tool_name, opposed) {
                    failures.push(format!("{what}; catalog {names:?}"));
                }
            }
        }
    }
    println!(
        "property: {checked} opposite forms ({opposed_checked} opposed), {} crossings",
        failures.len()
    );
    assert!(checked > 2500, "only {checked} forms");
    assert!(
        failures.is_empty(),
        "{} crossings: {:#?}",
        failures.len(),
        &failures[..failures.len().min(100)]
    );
}
