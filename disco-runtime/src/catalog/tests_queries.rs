//! `tool_search` queries and the model (feature `semantic`): embedded a bounded number at a
//! time, a call's steps in one batch, and an encoder that fails answered by keywords.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{json, Value};

use super::tests_embedding::with_model;
use super::{Catalog, JsonCatalogProvider, SearchOptions};
use crate::search::semantic::testing::{within, Probe};
use crate::search::steps::tests::lookups;
use crate::search::steps::Step;
use crate::search::{SemanticModel, MAX_QUERY_STEPS};
use crate::tool::Caller;

fn tools() -> Value {
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object"}});
    json!([
        tool("StrologyTool", "Provides astrology services"),
        tool("ExchangeTool", "Convert currency"),
        tool("get_forecast", "Weather for a city"),
        tool("send_email", "Send an email to a friend"),
        tool("read_file", "Read a file from the disk"),
        tool("create_event", "Create a calendar event"),
    ])
}

/// A catalog of `tools` ranked with `model` (its vectors made before it is returned), or by
/// keywords alone.
fn catalog_of(tools: &Value, model: Option<SemanticModel>) -> Catalog {
    let search = match model {
        Some(m) => with_model(m, false),
        None => SearchOptions::default().enabled(true),
    };
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(tools).unwrap())
        .search(search)
        .from_specs([])
        .unwrap()
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The tools a `tool_search` result lists: name, score and step.
fn listed(result: &CallToolResult) -> Vec<(String, f64, Option<u64>)> {
    let s = result.structured_content.as_ref().expect("structured");
    s["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["score"].as_f64().unwrap(),
                t.get("step").and_then(Value::as_u64),
            )
        })
        .collect()
}

/// A query encoder that panics: `tool_search` answers all the same, as a catalog without a
/// model answers (keywords alone), for one query and for steps; and the runtime, of one
/// thread, goes on to serve the next call.
#[test]
fn a_panicking_query_encoder_is_answered_by_keywords() {
    let armed = Arc::new(AtomicBool::new(false));
    let probe = Probe::new({
        let armed = armed.clone();
        move |_, _| {
            if armed.load(Ordering::SeqCst) {
                std::panic::resume_unwind(Box::new("the encoder panicked"));
            }
        }
    });
    let with = catalog_of(&tools(), Some(probe.model("panics")));
    armed.store(true, Ordering::SeqCst);
    let without = catalog_of(&tools(), None);
    let mut shapes = vec![
        json!({"query": "weather for a city"}),
        json!({"queries": ["convert currency", "weather", "my horoscope"]}),
        json!({"query": "my horoscope"}),
        json!({"query": "send email"}),
    ];
    // More panicking searches than the model has permits, whatever the machine's cores: a
    // permit the panic did not give back would leave the last ones waiting (a hang, failed by
    // `within`).
    let searches = shapes
        .len()
        .max(crate::search::semantic::queries_at_once() + 1);
    for i in shapes.len()..searches {
        shapes.push(json!({"query": format!("weather report {i}")}));
    }
    let asked = shapes.len();
    let answers = within("the searches", move || {
        current_thread().block_on(async {
            let mut out = Vec::new();
            for args in shapes {
                let a = with.call("tool_search", args.clone()).await.unwrap();
                let b = without.call("tool_search", args.clone()).await.unwrap();
                out.push((args, a.structured_content, b.structured_content));
            }
            out
        })
    });
    for (args, with, without) in answers {
        assert_eq!(with, without, "{args}");
    }
    // Every search asked the encoder (and it panicked each time).
    assert!(probe.calls.load(Ordering::SeqCst) >= asked);
}

/// A burst of searches runs no more query embeddings at once than the model's bound (one
/// per core): the others wait their turn, and every search answers, its query embedded once.
#[test]
fn query_embeddings_at_once_are_bounded() {
    let bound = crate::search::semantic::queries_at_once();
    let armed = Arc::new(AtomicBool::new(false));
    // (embeddings running now, the most at once)
    let state = Arc::new((Mutex::new((0usize, 0usize)), Condvar::new()));
    let probe = Probe::new({
        let (armed, state) = (armed.clone(), state.clone());
        move |_, _| {
            if !armed.load(Ordering::SeqCst) {
                return;
            }
            let (counts, changed) = &*state;
            let mut c = counts.lock().unwrap();
            c.0 += 1;
            c.1 = c.1.max(c.0);
            changed.notify_all();
            // Held until one more than the bound is in, or a while has passed: the overlap
            // that a burst makes when nothing bounds it.
            let deadline = Instant::now() + Duration::from_millis(100);
            while c.0 <= bound {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                c = changed.wait_timeout(c, left).unwrap().0;
            }
            c.0 -= 1;
        }
    });
    let catalog = Arc::new(catalog_of(&tools(), Some(probe.model("bounded"))));
    armed.store(true, Ordering::SeqCst);
    let searches = 4 * bound + 1;
    let results = within("the burst", move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..searches {
                let catalog = catalog.clone();
                set.spawn(async move {
                    catalog
                        .call("tool_search", json!({"query": "rain and weather"}))
                        .await
                });
            }
            set.join_all().await
        })
    });
    for r in results {
        let names: Vec<String> = listed(&r.unwrap()).into_iter().map(|t| t.0).collect();
        assert_eq!(names.first().map(String::as_str), Some("get_forecast"));
    }
    let most = state.0.lock().unwrap().1;
    assert!(
        (1..=bound).contains(&most),
        "{most} query embeddings at once; the bound is {bound}"
    );
    assert_eq!(probe.singles.load(Ordering::SeqCst), 0);
}

/// What `tool_search` lists for `steps`, made without the code that merges steps: each
/// step's own answer on the caller's thread (a `select:` step's by name, with its share of
/// the names the room allows; a step of words by search), then merged as the rule says: the
/// naming steps' tools first, one of each step in turn, then the steps of words' in the room
/// left, the same way; each tool once, scores rounded as `tool_search` rounds them.
fn stepwise(catalog: &Catalog, steps: &[String], k: usize) -> Vec<(String, f64, Option<u64>)> {
    let caller = Caller::anonymous();
    let steps: Vec<Step<'_>> = steps.iter().map(|s| Step::of(s)).collect();
    let lookups = lookups(&steps, k);
    let own: Vec<Vec<(String, f32)>> = steps
        .iter()
        .zip(&lookups)
        .map(|(step, &n)| match step {
            Step::Names(names) if n > 0 => catalog
                .select(names, n, &caller)
                .into_iter()
                .map(|t| (t.name.clone(), 1.0))
                .collect(),
            Step::Names(_) => Vec::new(),
            Step::Words(query) => catalog
                .search(query, k, &caller)
                .into_iter()
                .map(|(t, score)| (t.name.clone(), score))
                .collect(),
        })
        .collect();
    let mut out: Vec<(String, f64, Option<u64>)> = Vec::new();
    for naming in [true, false] {
        let mut lists: Vec<(usize, std::vec::IntoIter<(String, f32)>)> = own
            .iter()
            .enumerate()
            .filter(|(i, _)| matches!(steps[*i], Step::Names(_)) == naming)
            .map(|(i, list)| (i, list.clone().into_iter()))
            .collect();
        loop {
            let before = out.len();
            for (step, list) in &mut lists {
                if out.len() == k {
                    break;
                }
                if let Some((name, score)) = list.find(|(n, _)| !out.iter().any(|o| o.0 == *n)) {
                    let rounded = (f64::from(score) * 1000.0).round() / 1000.0;
                    out.push((name, rounded, Some(*step as u64)));
                }
            }
            if out.len() == before || out.len() == k {
                break;
            }
        }
    }
    out
}

/// A `queries` call embeds its steps in one batch, each distinct step once (one encoder
/// call; none for the steps that load tools by name, and no call when all do), and lists
/// what searching the steps one by one lists.
#[test]
fn a_calls_steps_are_embedded_in_one_batch() {
    let mut rng = fastrand::Rng::with_seed(0x57E95);
    let phrases = [
        "my horoscope",
        "exchange money",
        "rain tomorrow",
        "weather and money",
        "zodiac signs",
        "send an email",
        "nothing at all",
        "astrology currency",
        "read a file",
        "select:send_email",
        "select:read_file, nope, ExchangeTool",
    ];
    let probe = Probe::new(|_, _| {});
    let catalog = catalog_of(&tools(), Some(probe.model("steps")));
    let runtime = current_thread();
    for case in 0..60 {
        let steps: Vec<String> = (0..rng.usize(1..=MAX_QUERY_STEPS))
            .map(|_| phrases[rng.usize(..phrases.len())].to_string())
            .collect();
        let searching: HashSet<&String> =
            steps.iter().filter(|s| !s.starts_with("select:")).collect();
        let distinct = searching.len();
        let k = rng.usize(1..6);
        let counts =
            || [&probe.calls, &probe.singles, &probe.texts].map(|c| c.load(Ordering::SeqCst));
        let before = counts();
        let args = json!({"queries": steps, "max_results": k, "compact": true});
        let result = runtime.block_on(catalog.call("tool_search", args)).unwrap();
        let after = counts();
        assert_eq!(
            [
                after[0] - before[0],
                after[1] - before[1],
                after[2] - before[2]
            ],
            [usize::from(distinct > 0), 0, distinct],
            "case {case}: {steps:?}"
        );
        assert_eq!(
            listed(&result),
            stepwise(&catalog, &steps, k),
            "case {case}: {steps:?}"
        );
    }
}

/// With the evaluation's models at hand (`DISCO_SEMANTIC_MODEL`, the static one;
/// `DISCO_SEMANTIC_TRANSFORMER_MODEL`, the transformer), a `queries` call's batch lists what
/// its steps searched one by one list.
#[test]
fn the_real_models_list_the_same_for_a_batch_of_steps() {
    let tools = json!([
        {"name": "get_weather", "description": "Get the weather forecast for a city"},
        {"name": "convert_currency", "description": "Convert an amount between currencies"},
        {"name": "send_email", "description": "Send an email message to a recipient"},
        {"name": "read_file", "description": "Read the contents of a file from disk"},
        {"name": "delete_file", "description": "Remove a file from the disk"},
        {"name": "create_event", "description": "Create a calendar event"},
        {"name": "daily_horoscope", "description": "Astrology readings for each zodiac sign"},
        {"name": "search_web", "description": "Search the web for pages about a topic"},
        {"name": "translate_text", "description": "Translate text into another language"},
        {"name": "stock_price", "description": "The latest price of a company's shares"},
    ]);
    let tools = Value::Array(
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t["inputSchema"] = json!({"type": "object"});
                t
            })
            .collect(),
    );
    let tasks: [&[&str]; 5] = [
        &[
            "will it rain in paris tomorrow",
            "how much is 20 dollars in euros",
        ],
        &[
            "delete the old backup",
            "tell my boss by mail",
            "put a meeting on friday",
        ],
        &[
            "what does my star sign say",
            "look up news online",
            "say hello in french",
        ],
        &[
            "open my notes",
            "open my notes",
            "how are apple shares doing",
        ],
        &[
            "x",
            "weather",
            "convert currency",
            "email",
            "file",
            "event",
            "web",
            "stock",
        ],
    ];
    let runtime = current_thread();
    for var in ["DISCO_SEMANTIC_MODEL", "DISCO_SEMANTIC_TRANSFORMER_MODEL"] {
        let Some(dir) = std::env::var_os(var) else {
            eprintln!("{var} is not set: its comparison is skipped");
            continue;
        };
        let model = SemanticModel::load(&dir).expect("the model loads");
        let catalog = catalog_of(&tools, Some(model));
        for task in tasks {
            let steps: Vec<String> = task.iter().map(|s| s.to_string()).collect();
            for k in [1, 3, 10] {
                let args = json!({"queries": steps, "max_results": k, "compact": true});
                let result = runtime.block_on(catalog.call("tool_search", args)).unwrap();
                assert_eq!(
                    listed(&result),
                    stepwise(&catalog, &steps, k),
                    "{var}: {steps:?}, {k}"
                );
            }
        }
    }
}
