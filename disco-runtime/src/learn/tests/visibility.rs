//! Hidden stays hidden, for everything learned at once: for generated catalogs, callers each
//! with a generated set of visible tools, and generated learned aliases and keywords, every
//! caller's name resolution and search on a server holding everything learned equal those on
//! a server holding only what was learned of the tools that caller sees.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::tool;
use crate::catalog::{Catalog, CatalogTool, JsonCatalogProvider, SearchOptions};
use crate::tool::Caller;

const WORDS: [&str; 14] = [
    "get", "list", "ticket", "report", "file", "user", "issue", "note", "open", "weather",
    "invoice", "budget", "photo", "order",
];

type Aliases = Vec<(String, String)>;
type Keywords = Vec<(String, String, f32)>;

fn build(
    tools: &[Value],
    masks: &BTreeMap<String, BTreeSet<String>>,
    aliases: Aliases,
    keywords: Keywords,
) -> Catalog {
    let masks = masks.clone();
    let catalog = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&Value::Array(tools.to_vec())).unwrap())
        .search(SearchOptions::default().enabled(true))
        .visibility(move |caller: &Caller, t: &CatalogTool| {
            caller
                .id()
                .and_then(|id| masks.get(id))
                .is_none_or(|visible| visible.contains(&t.name))
        })
        .from_specs([])
        .unwrap();
    catalog.set_learned_aliases(aliases);
    catalog.set_learned_keywords(keywords);
    catalog
}

#[test]
fn nothing_learned_reveals_a_tool_a_caller_cannot_see() {
    let mut rng = fastrand::Rng::with_seed(41);
    let word = |rng: &mut fastrand::Rng| WORDS[rng.usize(..WORDS.len())];
    for round in 0..40 {
        let n = rng.usize(2..10);
        let tools: Vec<Value> = (0..n)
            .map(|i| {
                let (a, b) = (word(&mut rng), word(&mut rng));
                tool(
                    &format!("{a}_{b}_{i}"),
                    &format!("Work with the {a} of a {b}"),
                    rng.f32() < 0.8,
                )
            })
            .collect();
        let names: Vec<String> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_string())
            .collect();
        // Three callers, each seeing a random part of the catalog (maybe none, maybe all).
        let masks: BTreeMap<String, BTreeSet<String>> = (0..3)
            .map(|c| {
                let share = rng.f32();
                let visible = names
                    .iter()
                    .filter(|_| rng.f32() < share)
                    .cloned()
                    .collect();
                (format!("caller{c}"), visible)
            })
            .collect();
        let requests: Vec<String> = (0..8)
            .map(|_| format!("{}_{}", word(&mut rng), word(&mut rng)))
            .collect();
        let aliases: Aliases = (0..rng.usize(1..12))
            .map(|_| {
                let name = requests[rng.usize(..requests.len())].clone();
                (name, names[rng.usize(..n)].clone())
            })
            .collect();
        let keywords: Keywords = (0..rng.usize(1..20))
            .map(|_| {
                let tool = names[rng.usize(..n)].clone();
                (tool, word(&mut rng).to_string(), rng.f32() * 0.6)
            })
            .collect();
        let everything = build(&tools, &masks, aliases.clone(), keywords.clone());
        for (id, visible) in &masks {
            let restricted = build(
                &tools,
                &masks,
                aliases
                    .iter()
                    .filter(|(_, t)| visible.contains(t))
                    .cloned()
                    .collect(),
                keywords
                    .iter()
                    .filter(|(t, _, _)| visible.contains(t))
                    .cloned()
                    .collect(),
            );
            let caller = Caller::new(id.clone());
            // The learned names, the tools' own (hidden ones too) and a misspelling of each.
            let mut asked: Vec<String> = requests.clone();
            asked.extend(names.iter().cloned());
            asked.extend(names.iter().map(|n| n.replacen('_', "", 1)));
            for name in &asked {
                let seen = |c: &Catalog| {
                    let r = c.resolve(name, &caller);
                    (r.tool.map(|t| t.name.clone()), r.rule, r.suggestions)
                };
                let got = seen(&everything);
                assert_eq!(got, seen(&restricted), "round {round}, {id}: {name}");
                assert!(got.0.as_ref().is_none_or(|t| visible.contains(t)));
                assert!(got.2.iter().all(|t| visible.contains(t)), "{got:?}");
            }
            for _ in 0..8 {
                let query = (0..rng.usize(1..4))
                    .map(|_| word(&mut rng))
                    .collect::<Vec<_>>()
                    .join(" ");
                let found = |c: &Catalog| {
                    c.search(&query, 5, &caller)
                        .into_iter()
                        .map(|(t, score)| (t.name.clone(), score))
                        .collect::<Vec<_>>()
                };
                let got = found(&everything);
                assert_eq!(got, found(&restricted), "round {round}, {id}: {query}");
                assert!(got.iter().all(|(t, _)| visible.contains(t)));
            }
        }
    }
}
