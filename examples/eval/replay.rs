//! `eval replay`: discovery that learns from its own traffic, measured. Traffic is simulated
//! from a search corpus's `even` half (and, with `--names`, a name corpus's mistakes), the
//! learner (`disco_runtime::learn`) turns it into keywords and aliases, and the figures are
//! taken on the `odd` half after 0, 100, 1,000 and 10,000 sessions.
//!
//! A session is one caller's: a search session runs `tool_search` on one `even` query (the
//! tools shown are the catalog's ranking at that point, with what was learned so far) and
//! then calls each gold tool; a name session asks for a mistaken name of the name corpus
//! (with the suggestions the resolver gives it) and then calls the tool meant. 30% of sessions
//! end in a random tool the session could see instead (noise); 5% come from one adversarial
//! caller who always calls a random tool; the others are spread over `--callers` callers (at
//! least 50). BFCL rows are searched among their own tools (`candidates`), and the evidence
//! is keyed by the tool's name, which in the MCP form of BFCL is one definition (the names
//! were made unique per definition). The learner's thresholds are its defaults.
//!
//! Figures: on `odd` queries Hit@1, Hit@5, Recall@5 (and Recall@5 of the rows with two gold
//! tools or more); on the name corpus, the mistakes recovered: on the `even` half (the
//! mistakes the traffic made, made again) and on the `odd` half (mistakes never seen), each as
//! ready online (read-only tools) and after the operator's approval (any tool), and the
//! aliases learned that point at another tool than the one meant (wrong). With `--other`,
//! every other corpus's `odd` half is searched in the union of its catalog and this one, with
//! and without what was learned here.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use disco_runtime::catalog::{Discovery, JsonCatalogProvider};
use disco_runtime::learn::{self, Lesson, Status, StoredEvent};
use disco_runtime::{Caller, Catalog};
use serde_json::{json, Value};

use super::{names, recall_at_5, round, str_field, Opts};

/// The figures are taken after this many sessions.
const CURVE: [usize; 4] = [0, 100, 1_000, 10_000];

/// One other corpus: its name, catalog, queries and categories.
struct Other {
    name: String,
    catalog: String,
    queries: String,
    categories: Option<Vec<String>>,
}

/// `NAME=CATALOG:QUERIES[:CATEGORY,CATEGORY]`.
fn other(spec: &str) -> Result<Other, String> {
    let (name, rest) = spec
        .split_once('=')
        .ok_or_else(|| format!("--other {spec}: want NAME=CATALOG:QUERIES[:CATEGORIES]"))?;
    let mut parts = rest.split(':');
    let catalog = parts.next().unwrap_or_default().to_string();
    let queries = parts.next().unwrap_or_default().to_string();
    if catalog.is_empty() || queries.is_empty() {
        return Err(format!(
            "--other {spec}: want NAME=CATALOG:QUERIES[:CATEGORIES]"
        ));
    }
    let categories = parts
        .next()
        .map(|c| c.split(',').map(str::to_string).collect());
    Ok(Other {
        name: name.to_string(),
        catalog,
        queries,
        categories,
    })
}

pub(super) fn replay(o: &Opts, args: &ReplayArgs) -> Result<(), String> {
    let catalog = o.catalog()?;
    let half = |parity: u64| {
        let mut o2 = o.clone_inputs();
        o2.parity = Some(parity);
        o2.rows()
    };
    let (even, odd) = (half(0)?, half(1)?);
    let cases = match &args.names {
        Some(path) => {
            let read = |parity| {
                let mut o2 = o.clone_inputs();
                o2.input = path.clone();
                o2.categories = None;
                o2.parity = Some(parity);
                o2.rows()
            };
            (read(0)?, read(1)?)
        }
        None => (Vec::new(), Vec::new()),
    };
    let all_tools: Vec<String> = catalog
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let mut rng = fastrand::Rng::with_seed(args.seed);
    let callers: Vec<String> = (0..args.callers).map(|c| format!("caller-{c}")).collect();
    let mut events: Vec<StoredEvent> = Vec::new();
    let options = learn::LearnOptions::default();
    let facts = learn::facts_of(&catalog);
    let mut sessions = 0usize;
    let mut curve = Vec::new();
    let mut others_out = Vec::new();
    let others: Vec<Other> = args
        .others
        .iter()
        .map(|s| other(s))
        .collect::<Result<_, _>>()?;
    let mut learned: Vec<learn::Candidate> = Vec::new();
    for &target in &CURVE {
        while sessions < target {
            sessions += 1;
            let adversary = rng.f32() < 0.05;
            let caller = if adversary {
                "adversary".to_string()
            } else {
                callers[rng.usize(..callers.len())].clone()
            };
            let session = format!("s{sessions}");
            let noise = adversary || rng.f32() < 0.30;
            let name_session = !cases.0.is_empty() && rng.f32() < args.name_share;
            let mut push = |event: Discovery| {
                events.push(StoredEvent {
                    at: sessions as u64,
                    caller: caller.clone(),
                    session: Some(session.clone()),
                    event,
                })
            };
            if name_session {
                let case = &cases.0[rng.usize(..cases.0.len())];
                let name = str_field(case, "name");
                let meant = str_field(case, "expected_tool");
                let r = catalog.resolve(name, &Caller::anonymous());
                match &r.tool {
                    Some(t) => push(Discovery::Corrected {
                        requested: name.to_string(),
                        resolved: t.name().to_string(),
                        rule: r.rule.map(|r| r.as_str()).unwrap_or_default().to_string(),
                    }),
                    None => push(Discovery::Unknown {
                        requested: name.to_string(),
                        suggested: r.suggestions.clone(),
                    }),
                }
                let called = if noise || meant.is_empty() {
                    all_tools[rng.usize(..all_tools.len())].clone()
                } else {
                    meant.to_string()
                };
                push(Discovery::Call {
                    tool: called,
                    ok: true,
                });
            } else {
                let row = &even[rng.usize(..even.len())];
                let query = str_field(row, "query");
                let pool: Vec<String> = names(row.get("candidates")).unwrap_or(all_tools.clone());
                let allowed: HashSet<&str> = pool.iter().map(String::as_str).collect();
                let shown: Vec<String> = catalog
                    .search_where(query, 5, &|t| allowed.contains(t.name()))
                    .into_iter()
                    .map(|(t, _)| t.name().to_string())
                    .collect();
                push(Discovery::Search {
                    query: query.to_string(),
                    shown,
                });
                let gold = names(row.get("gold")).unwrap_or_default();
                if noise || gold.is_empty() {
                    if !pool.is_empty() {
                        push(Discovery::Call {
                            tool: pool[rng.usize(..pool.len())].clone(),
                            ok: true,
                        });
                    }
                } else {
                    for g in gold {
                        push(Discovery::Call { tool: g, ok: true });
                    }
                }
            }
            // What was learned is applied every 100 sessions, as a server would reread it.
            if sessions.is_multiple_of(100) {
                learned = learn::judge(&learn::gather(&events, options.window), &facts, &options);
                catalog.set_learned_keywords(learn::learned_keywords(&learned));
            }
        }
        let search = figures(&catalog, &odd, o.k);
        let names_figures = recovered(&catalog, &learned, &cases);
        let ready_keywords = learned
            .iter()
            .filter(|c| c.status == Status::Ready && matches!(c.lesson, Lesson::Keyword { .. }))
            .count();
        curve.push(
            json!({"sessions": target, "search_odd": search, "names": names_figures,
                          "keywords_ready": ready_keywords}),
        );
        for other in &others {
            let union = union_catalog(o, &catalog, other)?;
            let before = figures(&union, &other_rows(o, other)?, o.k);
            union.set_learned_keywords(learn::learned_keywords(&learned));
            let after = figures(&union, &other_rows(o, other)?, o.k);
            others_out.push(json!({"sessions": target, "dataset": other.name,
                                   "odd_without": before, "odd_with": after}));
        }
    }
    let out = json!({"replay": {"catalog": o.catalog, "queries": o.input, "names": args.names,
                     "callers": args.callers, "seed": args.seed, "curve": curve,
                     "others": others_out}});
    println!("{out}");
    Ok(())
}

/// Hit@1, Hit@5, Recall@5 (and of rows with two gold tools or more) over `rows` with gold.
fn figures(catalog: &Catalog, rows: &[Value], k: usize) -> Value {
    let (mut n, mut hit1, mut hit5, mut recall5) = (0usize, 0usize, 0usize, 0f64);
    let (mut multi, mut multi_recall5) = (0usize, 0f64);
    let (mut single, mut single_hit1, mut single_hit5) = (0usize, 0usize, 0usize);
    for row in rows {
        let gold = names(row.get("gold")).unwrap_or_default();
        if gold.is_empty() {
            continue;
        }
        let candidates: Option<HashSet<String>> =
            names(row.get("candidates")).map(|c| c.into_iter().collect());
        let allowed = |t: &disco_runtime::CatalogTool| {
            candidates.as_ref().is_none_or(|set| set.contains(t.name()))
        };
        let hits = catalog.search_where(str_field(row, "query"), k.max(5), &allowed);
        let results: Vec<&str> = hits.iter().map(|(t, _)| t.name()).collect();
        n += 1;
        single += usize::from(gold.len() == 1);
        if let Some(r) = results.iter().position(|r| gold.iter().any(|g| g == r)) {
            hit1 += usize::from(r < 1);
            hit5 += usize::from(r < 5);
            if gold.len() == 1 {
                single_hit1 += usize::from(r < 1);
                single_hit5 += usize::from(r < 5);
            }
        }
        let recall = recall_at_5(&gold, &results);
        recall5 += recall;
        if gold.len() > 1 {
            multi += 1;
            multi_recall5 += recall;
        }
    }
    let nf = n.max(1) as f64;
    json!({"queries": n, "hit@1": round(hit1 as f64 / nf), "hit@5": round(hit5 as f64 / nf),
           "recall@5": round(recall5 / nf), "single_gold": single,
           "single_hit@1": round(single_hit1 as f64 / single.max(1) as f64),
           "single_hit@5": round(single_hit5 as f64 / single.max(1) as f64), "multi_gold": multi,
           "multi_recall@5": round(multi_recall5 / multi.max(1) as f64)})
}

/// The name corpus's mistakes the resolver does not resolve to the tool meant, and how many of
/// them a learned alias recovers: ready (online) or waiting for approval; and the learned
/// aliases (ready or waiting) that point elsewhere than the tool meant.
fn recovered(
    catalog: &Catalog,
    learned: &[learn::Candidate],
    cases: &(Vec<Value>, Vec<Value>),
) -> Value {
    let mut aliases: BTreeMap<&str, Vec<(&str, &Status)>> = BTreeMap::new();
    for c in learned {
        if let Lesson::Alias { name, tool } = &c.lesson {
            aliases.entry(name).or_default().push((tool, &c.status));
        }
    }
    let half = |rows: &[Value]| {
        let (mut mistakes, mut ready, mut approved, mut wrong) = (0usize, 0usize, 0usize, 0usize);
        let mut seen = HashSet::new();
        for case in rows {
            let name = str_field(case, "name");
            let meant = str_field(case, "expected_tool");
            if meant.is_empty() || !seen.insert(name) {
                continue;
            }
            let r = catalog.resolve(name, &Caller::anonymous());
            let correct_today = r.tool.as_ref().is_some_and(|t| t.name() == meant);
            // The corpus's must-not categories: a learned alias there is a wrong one.
            let must_not = matches!(
                str_field(case, "category"),
                "opposite" | "other_object" | "foreign_tool" | "relational_swap"
            );
            for (tool, status) in aliases.get(name).into_iter().flatten() {
                let usable = matches!(status, Status::Ready | Status::NeedsApproval);
                if usable && (*tool != meant || must_not) {
                    wrong += 1;
                }
            }
            if correct_today || must_not {
                continue;
            }
            mistakes += 1;
            let to_meant = aliases
                .get(name)
                .into_iter()
                .flatten()
                .find(|(t, _)| *t == meant);
            match to_meant.map(|(_, s)| *s) {
                Some(Status::Ready) => {
                    ready += 1;
                    approved += 1;
                }
                Some(Status::NeedsApproval) => approved += 1,
                _ => {}
            }
        }
        json!({"mistakes": mistakes, "recovered_online": ready, "recovered_with_approval": approved,
               "wrong_aliases": wrong})
    };
    json!({"even": half(&cases.0), "odd": half(&cases.1)})
}

/// The other corpus's catalog with this one's tools added (names it already has left out).
fn union_catalog(o: &Opts, this: &Catalog, other: &Other) -> Result<Catalog, String> {
    let read = |path: &str| -> Result<Vec<Value>, String> {
        let text = std::fs::read_to_string(Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        Ok(match v {
            Value::Array(a) => a,
            mut v => v["tools"].take().as_array().cloned().unwrap_or_default(),
        })
    };
    let mut tools = read(&other.catalog)?;
    let have: HashSet<String> = tools
        .iter()
        .map(|t| str_field(t, "name").to_string())
        .collect();
    for t in read(&o.catalog)? {
        if !have.contains(str_field(&t, "name")) {
            tools.push(t);
        }
    }
    let _ = this;
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&Value::Array(tools))?)
        .search(o.search_options()?)
        .from_specs([])
        .map_err(|e| e.to_string())
}

fn other_rows(o: &Opts, other: &Other) -> Result<Vec<Value>, String> {
    let mut o2 = o.clone_inputs();
    o2.input = other.queries.clone();
    o2.categories = other.categories.clone();
    o2.parity = Some(1);
    o2.rows()
}

/// `replay`'s own arguments.
pub(super) struct ReplayArgs {
    pub(super) names: Option<String>,
    pub(super) callers: usize,
    pub(super) seed: u64,
    pub(super) name_share: f32,
    pub(super) others: Vec<String>,
}

impl Default for ReplayArgs {
    fn default() -> Self {
        ReplayArgs {
            names: None,
            callers: 60,
            seed: 31,
            name_share: 0.3,
            others: Vec::new(),
        }
    }
}
