//! Corrections never change meaning, on cases generated from the lexicon itself
//! (`disco_runtime::resolve::lexicon`: SCOWL's words, WordNet's lemmas and antonyms, the API
//! families and role nouns), not from a list of cases anybody wrote:
//!
//! - every opposed pair (curated, API families, WordNet's antonyms, `-ee`/`-er` role nouns),
//!   crossed with the datasets' verbs and objects, in every spelling (snake, camel, kebab,
//!   fused, behind `mcp__<label>__` and `server.`), and with single-letter typos of the
//!   opposite at every position that are at least as close to it as to the declared side:
//!   never corrected into the declared side, never suggested for it, for names; never repaired
//!   into it and never advised, for keys. With both sides declared, a typo strictly closer to
//!   one side never lands on the other.
//! - every word of English within two edits of a word of a real catalog (BFCL, MetaTool),
//!   written in that word's place: never resolved to the tool, unless the two share a lemma
//!   or a synonym class.
//! - the positive side: a single-letter typo of a catalog word at every position, that no
//!   competing word is as close to, is recovered on read-only tools.
//!
//! The pairs and words are sampled with a fixed seed (`SAMPLE`, `WORDS`: about 190,000 cases);
//! `DISCO_MEANING_FULL=1` runs every pair and word (the full sweep: minutes in a release build,
//! `cargo test --release --test it meaning_corpus`). `cargo test --test it meaning_corpus -- --nocapture` prints
//! the counts.

use std::collections::BTreeSet;
use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::resolve::lexicon;
use disco_runtime::{Caller, Catalog};
use serde_json::{json, Map, Value};

use crate::common::Rng;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Opposed pairs sampled in a plain `cargo test` run, beside `ALWAYS`: half from the curated
/// pairs and role nouns, half from WordNet's antonyms; with the catalog words below, about
/// 200,000 cases in all (the full sweep, `DISCO_MEANING_FULL=1`, has every pair).
const SAMPLE: usize = 160;
/// The pairs every run has: the opposites that are one or two letters apart in real APIs.
const ALWAYS: &[(&str, &str)] = &[
    ("payee", "payer"),
    ("lt", "gt"),
    ("lte", "gte"),
    ("rx", "tx"),
    ("dl", "ul"),
    ("egress", "ingress"),
    ("local", "remote"),
    ("ltr", "rtl"),
    ("fwd", "bwd"),
    ("req", "res"),
    ("lhs", "rhs"),
    ("lo", "hi"),
    ("asc", "dsc"),
    ("asc", "desc"),
    ("minor", "major"),
    ("min", "max"),
    ("on", "off"),
    ("include", "exclude"),
    ("enable", "disable"),
    ("increment", "decrement"),
    ("ascending", "descending"),
    ("northbound", "southbound"),
    ("eastbound", "westbound"),
    ("followee", "follower"),
    ("callee", "caller"),
    ("employee", "employer"),
    ("lessee", "lessor"),
    ("grantee", "grantor"),
    ("upload", "download"),
];
/// Catalog words sampled per catalog for the known-word property.
const WORDS: usize = 700;

fn full() -> bool {
    std::env::var_os("DISCO_MEANING_FULL").is_some()
}

/// `n` of `items` drawn without repeats, in their order; every item in the full sweep.
fn sample<T: Clone>(rng: &mut Rng, items: &[T], n: usize) -> Vec<T> {
    if full() || items.len() <= n {
        return items.to_vec();
    }
    let mut picked = BTreeSet::new();
    while picked.len() < n {
        picked.insert(rng.below(items.len()));
    }
    picked.into_iter().map(|i| items[i].clone()).collect()
}

fn read_catalog(names: &[String]) -> Catalog {
    Catalog::builder()
        .provider(crate::common::read_only_tools(names))
        .from_specs([])
        .unwrap()
}

/// The opposed pairs: every pair of the tables and WordNet, and the role nouns of the lexicon
/// (`payee`/`payer`), lowercase letters only.
fn pairs() -> Vec<(String, String)> {
    let plain = |w: &str| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_lowercase());
    let mut out: BTreeSet<(String, String)> = lexicon::opposed_pairs()
        .filter(|(a, b)| plain(a) && plain(b) && a != b)
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    for word in lexicon::english_words() {
        let Some(stem) = word.strip_suffix("ee").filter(|s| s.len() >= 3) else {
            continue;
        };
        for agent in ["er", "or"] {
            let partner = format!("{stem}{agent}");
            if lexicon::is_known_word(&partner) {
                out.insert((word.to_string(), partner));
            }
        }
    }
    out.into_iter().collect()
}

/// `ALWAYS`, then `SAMPLE` pairs: half curated (tables, families, role nouns), half WordNet's.
fn sample_pairs(rng: &mut Rng, all: &[(String, String)]) -> Vec<(String, String)> {
    let curated: BTreeSet<(String, String)> = lexicon::curated_pairs()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let is_curated = |p: &(String, String)| {
        curated.contains(p)
            || curated.contains(&(p.1.clone(), p.0.clone()))
            || p.0.ends_with("ee")
            || p.1.ends_with("ee")
    };
    let (ours, wordnet): (Vec<_>, Vec<_>) = all.iter().cloned().partition(|p| is_curated(p));
    let mut out: Vec<(String, String)> = ALWAYS
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    out.extend(sample(rng, &ours, SAMPLE / 2));
    out.extend(sample(rng, &wordnet, SAMPLE / 2));
    out
}

fn words_json() -> Value {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("tests/corpus/polarity/words.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn list(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

/// `words` joined in spelling `style`.
fn spell(words: &[&str], style: usize) -> String {
    let camel = |first_upper: bool| {
        words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == 0 && !first_upper {
                    w.to_string()
                } else {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                }
            })
            .collect::<String>()
    };
    match style {
        0 => words.join("_"),
        1 => camel(false),
        2 => camel(true),
        3 => words.join("-"),
        4 => words.concat(),
        5 => format!("mcp__tools__{}", words.join("_")),
        _ => format!("server.{}", words.join("_")),
    }
}
const STYLES: usize = 7;

/// Single-letter typos of `word` at every position: a letter dropped, doubled, replaced by its
/// neighbour in the alphabet, and two neighbours swapped.
fn typos(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = BTreeSet::new();
    for i in 0..chars.len() {
        let mut v = chars.clone();
        v.remove(i);
        out.insert(v.iter().collect::<String>());
        let mut v = chars.clone();
        v.insert(i, chars[i]);
        out.insert(v.iter().collect());
        let mut v = chars.clone();
        v[i] = if chars[i] == 'z' {
            'a'
        } else {
            (chars[i] as u8 + 1) as char
        };
        out.insert(v.iter().collect());
        if i + 1 < chars.len() {
            let mut v = chars.clone();
            v.swap(i, i + 1);
            out.insert(v.iter().collect());
        }
    }
    out.remove(word);
    out.into_iter().filter(|t| t.len() >= 2).collect()
}

fn osa(a: &str, b: &str) -> usize {
    // The same measure as the runtime's (optimal string alignment), without a dependency on
    // strsim from the tests: the classic three-row table.
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// The variants of opposite word `o` that must never reach declared word `d`: `o` itself, and
/// its typos that are no word and are at least as close to `o` as to `d`.
fn variants(o: &str, d: &str) -> Vec<String> {
    let mut out = vec![o.to_string()];
    for t in typos(o) {
        // A prefix before the word (`aaccompanied` is `a` + `accompanied`) makes another word,
        // not a typo of it.
        if t != d && !lexicon::is_known_word(&t) && !affix_change(&t, o) && osa(&t, o) <= osa(&t, d)
        {
            out.push(t);
        }
    }
    out
}

#[derive(Default, Debug)]
struct Count {
    cases: usize,
    corrected: Vec<String>,
    suggested: Vec<String>,
    advised: Vec<String>,
}

impl Count {
    fn check(&self, what: &str) {
        println!(
            "{what}: {} cases, {} corrected, {} suggested, {} advised",
            self.cases,
            self.corrected.len(),
            self.suggested.len(),
            self.advised.len()
        );
        for (kind, list) in [
            ("corrected", &self.corrected),
            ("suggested", &self.suggested),
            ("advised", &self.advised),
        ] {
            assert!(
                list.is_empty(),
                "{what}: {} {kind} across an opposite: {:#?}",
                list.len(),
                &list[..list.len().min(40)]
            );
        }
    }
}

#[test]
fn opposite_names_and_their_typos_never_cross() {
    let words = words_json();
    let (verbs, objects) = (list(&words, "verbs"), list(&words, "objects"));
    let mut rng = Rng(0x6d65_616e_696e_6731);
    let all = pairs();
    let sample = sample_pairs(&mut rng, &all);
    let caller = Caller::anonymous();
    let (mut one, mut both) = (Count::default(), Count::default());
    for (a, b) in &sample {
        for (d, o) in [(a, b), (b, a)] {
            let verb = &verbs[rng.below(verbs.len())];
            let object = &objects[rng.below(objects.len())];
            // The pair word as the verb's object or as the object's modifier.
            let shape: Vec<&str> = if rng.below(2) == 0 {
                vec![verb, d]
            } else {
                vec![verb, d, object]
            };
            let declared = shape.join("_");
            let other = shape
                .iter()
                .map(|w| if *w == d.as_str() { o.as_str() } else { w })
                .collect::<Vec<_>>()
                .join("_");
            let filler = vec!["track_parcel".to_string(), "convert_units".to_string()];
            let single = read_catalog(&[vec![declared.clone()], filler.clone()].concat());
            let paired = read_catalog(&[vec![declared.clone(), other.clone()], filler].concat());
            for v in variants(o, d) {
                let words: Vec<&str> = shape
                    .iter()
                    .map(|w| if *w == d.as_str() { v.as_str() } else { w })
                    .collect();
                for style in 0..STYLES {
                    let request = spell(&words, style);
                    one.cases += 1;
                    let r = single.resolve(&request, &caller);
                    if r.tool.as_ref().is_some_and(|t| t.name() == declared) {
                        one.corrected.push(format!("{request} -> {declared}"));
                    } else if r.suggestions.contains(&declared) {
                        one.suggested
                            .push(format!("{request}: suggests {declared}"));
                    }
                }
            }
            // Both sides declared: a typo strictly closer to `o` never lands on `d`.
            for t in typos(o) {
                if lexicon::is_known_word(&t) || affix_change(&t, o) || osa(&t, o) >= osa(&t, d) {
                    continue;
                }
                let words: Vec<&str> = shape
                    .iter()
                    .map(|w| if *w == d.as_str() { t.as_str() } else { w })
                    .collect();
                let request = spell(&words, rng.below(STYLES));
                both.cases += 1;
                let r = paired.resolve(&request, &caller);
                if r.tool.as_ref().is_some_and(|x| x.name() == declared) {
                    both.corrected
                        .push(format!("{request} -> {declared} (beside {other})"));
                } else if r.suggestions.contains(&declared) {
                    both.suggested
                        .push(format!("{request}: suggests {declared} (beside {other})"));
                }
            }
        }
    }
    println!("{} opposed pairs, {} in this run", all.len(), sample.len());
    one.check("names, one side declared");
    both.check("names, both sides declared");
    assert!(one.cases > 20_000, "only {} cases", one.cases);
}

/// The problems of a refusal, without the list of expected parameters that follows them.
fn problems(message: &str) -> &str {
    message
        .split(" Expected parameters")
        .next()
        .unwrap_or(message)
}

#[test]
fn opposite_keys_and_their_typos_are_never_repaired_nor_advised() {
    let words = words_json();
    let objects = list(&words, "objects");
    let mut rng = Rng(0x6b65_7973_2d6d_6561);
    let all = pairs();
    let sample = sample_pairs(&mut rng, &all);
    let (mut one, mut both) = (Count::default(), Count::default());
    for (a, b) in &sample {
        for (d, o) in [(a, b), (b, a)] {
            let object = &objects[rng.below(objects.len())];
            let declared = spell(&[d, object], rng.below(2));
            let other = spell(&[o, object], 0);
            let tool_with = |names: &[&str]| {
                let properties: Map<String, Value> = names
                    .iter()
                    .map(|n| (n.to_string(), json!({"type": "string"})))
                    .chain([("query".to_string(), json!({"type": "string"}))])
                    .collect();
                let schema = json!({"type": "object", "properties": properties});
                let value = json!({"tools": [{"name": "t", "description": "",
                    "inputSchema": schema, "annotations": {"readOnlyHint": true}}]});
                Catalog::builder()
                    .provider(JsonCatalogProvider::from_value(&value).unwrap())
                    .from_specs([])
                    .unwrap()
            };
            let single = tool_with(&[&declared]);
            let paired = tool_with(&[&declared, &other]);
            let run = |catalog: &Catalog, key: &str, count: &mut Count| {
                count.cases += 1;
                let tool = catalog.get("t").unwrap();
                let args: Map<String, Value> =
                    [(key.to_string(), json!("x"))].into_iter().collect();
                match prepare(tool, args, Repair::Safe) {
                    Ok(p) if p.arguments.contains_key(&declared) => {
                        count.corrected.push(format!("{key} -> {declared}"));
                    }
                    Ok(_) => {}
                    Err(message) => {
                        // Advice is "send `...`" or "send the one you mean" naming the
                        // parameter (the key itself may hold `send`: `sender_cases`).
                        let problems = problems(&message);
                        let advice = problems.contains("send `") || problems.contains("send the");
                        if advice && problems.contains(&format!("`{declared}`")) {
                            count.advised.push(format!("{key}: {problems}"));
                        }
                    }
                }
            };
            for v in variants(o, d) {
                for style in 0..5 {
                    run(&single, &spell(&[&v, object], style), &mut one);
                }
            }
            for t in typos(o) {
                if lexicon::is_known_word(&t) || affix_change(&t, o) || osa(&t, o) >= osa(&t, d) {
                    continue;
                }
                run(&paired, &spell(&[&t, object], rng.below(5)), &mut both);
            }
        }
    }
    one.check("keys, one side declared");
    both.check("keys, both sides declared");
    assert!(one.cases > 20_000, "only {} cases", one.cases);
}

/// The words of a names corpus catalog, each with the tools whose names hold it.
fn catalog_words(file: &str) -> (Vec<String>, Vec<(String, Vec<usize>)>) {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("tests/corpus/names").join(file)).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let tools = match &value {
        Value::Object(o) => o["tools"].as_array().unwrap().clone(),
        Value::Array(a) => a.clone(),
        _ => unreachable!(),
    };
    let names: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let mut by_word: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, n) in names.iter().enumerate() {
        for w in name_words(n) {
            by_word.entry(w).or_default().push(i);
        }
    }
    (names, by_word.into_iter().collect())
}

/// Whether `typo` is `word` with a prefix put in front or taken off, before a known word: an
/// affix change, another word (`aable` is `a` + `able`).
fn affix_change(typo: &str, word: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "a", "anti", "counter", "de", "dis", "down", "em", "en", "ex", "il", "im", "in", "ir",
        "mis", "no", "non", "not", "out", "over", "post", "pre", "re", "un", "under", "up",
    ];
    PREFIXES.iter().any(|p| {
        (typo.strip_prefix(p) == Some(word) && lexicon::is_known_word(word))
            || (word.strip_prefix(p) == Some(typo) && lexicon::is_known_word(typo))
    })
}

/// Lowercase words of a name: split at separators and case changes, an acronym ending where a
/// capitalised word starts (`XAxis` is `x` and `axis`, `HTTPServer` `http` and `server`), as
/// the runtime reads names.
fn name_words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    let mut prev_upper = false;
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            (prev_lower, prev_upper) = (false, false);
            continue;
        }
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
        let starts_word = c.is_ascii_uppercase() && (prev_lower || (prev_upper && next_lower));
        if starts_word && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        prev_upper = c.is_ascii_uppercase();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every word of English within two edits of `word` (symmetric deletion of one letter: shared
/// one-letter deletions find every pair within two edits but for two substitutions, which the
/// second pass below adds).
struct Neighbours {
    by_deletion: std::collections::HashMap<String, Vec<&'static str>>,
}

impl Neighbours {
    fn new() -> Neighbours {
        let mut by_deletion: std::collections::HashMap<String, Vec<&'static str>> =
            Default::default();
        for w in lexicon::english_words() {
            for d in deletions(w) {
                by_deletion.entry(d).or_default().push(w);
            }
        }
        Neighbours { by_deletion }
    }

    fn of(&self, word: &str) -> BTreeSet<&'static str> {
        let mut out = BTreeSet::new();
        for d in deletions(word) {
            for &w in self.by_deletion.get(&d).map_or(&[][..], Vec::as_slice) {
                if w != word && osa(w, word) <= 2 {
                    out.insert(w);
                }
            }
        }
        out
    }
}

/// `word` and every string one letter shorter.
fn deletions(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = vec![word.to_string()];
    for i in 0..chars.len() {
        let mut v = chars.clone();
        v.remove(i);
        out.push(v.into_iter().collect());
    }
    out
}

#[test]
fn known_words_near_catalog_words_never_resolve_to_them() {
    let neighbours = Neighbours::new();
    let caller = Caller::anonymous();
    let mut rng = Rng(0x6b6e_6f77_6e77_6f72);
    let mut count = Count::default();
    for file in [
        "metatool-readonly.catalog.json",
        "bfcl-readonly.catalog.json",
    ] {
        let (names, words) = catalog_words(file);
        let catalog = read_catalog(&names);
        let words: Vec<(String, Vec<usize>)> = words
            .into_iter()
            .filter(|(w, _)| w.len() >= 3 && w.bytes().all(|b| b.is_ascii_lowercase()))
            .collect();
        for (word, tools) in sample(&mut rng, &words, WORDS) {
            for k in neighbours.of(&word) {
                if lexicon::same_lemma(k, &word)
                    || lexicon::same_singular(k, &word)
                    || lexicon::synonyms(k, &word)
                {
                    continue;
                }
                let tool = &names[tools[rng.below(tools.len())]];
                let replaced: Vec<String> = name_words(tool)
                    .into_iter()
                    .map(|w| if w == word { k.to_string() } else { w })
                    .collect();
                let request = replaced.join("_");
                // Another tool may be spelled that way: then it is that tool.
                if names.iter().any(|n| name_words(n) == replaced) {
                    continue;
                }
                count.cases += 1;
                let r = catalog.resolve(&request, &caller);
                if r.tool.as_ref().is_some_and(|t| t.name() == tool) {
                    count
                        .corrected
                        .push(format!("{request} -> {tool} ({:?})", r.rule));
                }
            }
        }
    }
    count.check("known words near catalog words");
    assert!(count.cases > 5_000, "only {} cases", count.cases);
}

#[test]
fn typos_no_rival_is_as_close_to_are_recovered_at_every_position() {
    let caller = Caller::anonymous();
    let (mut cases, mut recovered, mut missed, mut margin) = (0usize, 0usize, Vec::new(), 0usize);
    for file in [
        "metatool-readonly.catalog.json",
        "conformance-reference-server-readonly.catalog.json",
    ] {
        let (names, words) = catalog_words(file);
        let catalog = read_catalog(&names);
        let vocabulary: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
        for (word, tools) in &words {
            if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            let rivals = lexicon::opposed_rivals(word);
            for t in typos(word) {
                // The rule's competitors: a word, an opposed rival, another catalog word or a
                // word of APIs as close.
                let d = osa(&t, word);
                let contested = lexicon::is_known_word(&t)
                    || affix_change(&t, word)
                    || vocabulary.iter().any(|w| t.strip_prefix('a') == Some(*w))
                    || rivals.iter().any(|r| osa(&t, r) <= d)
                    || vocabulary.iter().any(|w| *w != word && osa(&t, w) <= d)
                    || lexicon::api_words().any(|a| osa(&t, a) <= d);
                if contested || d > 1 {
                    continue;
                }
                for &i in tools {
                    let tool = &names[i];
                    let spelled: Vec<String> = name_words(tool)
                        .into_iter()
                        .map(|w| if w == *word { t.clone() } else { w })
                        .collect();
                    // The tool must be the only one within a typo of the request, and no other
                    // tool may hold all of its words but one: the name tier's margin between
                    // tools is a guard of its own (`trip_addvice_tool` is as close to
                    // `TripTool` with a word left over), counted apart.
                    let request = spelled.join("_");
                    let own = name_words(tool);
                    let alone = names.iter().filter(|n| *n != tool).all(|n| {
                        let other = name_words(n);
                        let shared = own.iter().filter(|w| other.contains(w)).count();
                        osa(&other.join("_"), &request) > 2 && shared + 1 < own.len().max(2)
                    });
                    if own.len() != spelled.len() {
                        continue;
                    }
                    if !alone {
                        margin += 1;
                        continue;
                    }
                    cases += 1;
                    let r = catalog.resolve(&request, &caller);
                    if r.tool.as_ref().is_some_and(|x| x.name() == tool) {
                        recovered += 1;
                    } else {
                        missed.push(format!("{request} for {tool}: {:?}", r.suggestions));
                    }
                }
            }
        }
    }
    println!(
        "typos with no rival: {recovered} of {cases} recovered ({margin} left to the margin \
         between tools)"
    );
    assert!(cases > 1_000, "only {cases} cases");
    // What is left are letters that the prefix model reads as a prefix before what it takes for
    // a stem: fused names before a word of the catalog (`aspeed_cameras` beside
    // `SASpeedCameras`), and a prefix before letters that are no word (`noetable` against
    // `noteable`, read as `no` + a misspelled `teable`). The model cannot tell there which side
    // is the catalog's, and errs on the side of no correction.
    // They are listed, and held to 0.5% of the cases.
    println!("not recovered: {missed:#?}");
    assert!(
        missed.len() * 200 <= cases,
        "{} of {cases} not recovered: {:#?}",
        missed.len(),
        &missed[..missed.len().min(40)]
    );
}
