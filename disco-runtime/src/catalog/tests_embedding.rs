//! Where the semantic model's work runs (feature `semantic`): a query is embedded off the
//! async runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::{Catalog, JsonCatalogProvider, SearchOptions};
use crate::search::{Encoder, SemanticModel, VectorCache};

/// Search with `model` and no vector cache, its vectors made in the background or not.
pub(super) fn with_model(model: SemanticModel, background: bool) -> SearchOptions {
    SearchOptions::default()
        .enabled(true)
        .semantic(Arc::new(model))
        .semantic_cache(VectorCache::Off)
        .semantic_background(background)
}

/// The query that [`Gate`] holds up.
const HELD: &str = "held query";

/// An encoder that, asked for [`HELD`], says it has started and then waits (at most a few
/// seconds) for the test to let it go: were it run on the runtime's one thread, nothing
/// could let it go, and it notes that it was starved. Every text has the same vector.
#[derive(Debug)]
struct Gate {
    started: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    open: Mutex<mpsc::Receiver<()>>,
    starved: Arc<AtomicBool>,
}

impl Encoder for Gate {
    fn kind(&self) -> &'static str {
        "gate"
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        if text == HELD {
            if let Some(started) = self.started.lock().unwrap().take() {
                let _ = started.send(());
            }
            let open = self.open.lock().unwrap();
            if open.recv_timeout(Duration::from_secs(5)).is_err() {
                self.starved.store(true, Ordering::SeqCst);
            }
        }
        Some(vec![1.0, 0.0])
    }
    fn approx_heap_bytes(&self) -> usize {
        0
    }
}

/// Every shape of a `tool_search` call that embeds a query (one query; one per step),
/// on a current-thread runtime: while the query is embedded, another task of the same
/// runtime runs (it is what lets the encoder go), and the search finds the tool by meaning.
#[test]
fn a_query_is_embedded_off_the_runtime() {
    let shapes = [
        json!({"query": HELD}),
        json!({"queries": [HELD, "something else"]}),
    ];
    for arguments in shapes {
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (open_tx, open_rx) = mpsc::channel();
        let starved = Arc::new(AtomicBool::new(false));
        let gate = Gate {
            started: Mutex::new(Some(started_tx)),
            open: Mutex::new(open_rx),
            starved: starved.clone(),
        };
        let model = SemanticModel::from_encoder(Box::new(gate), "gate");
        let tools = json!([{"name": "get_weather", "description": "Weather",
                            "inputSchema": {"type": "object"}}]);
        let catalog = Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools).unwrap())
            .search(with_model(model, false))
            .from_specs([])
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let result = runtime.block_on(async {
            let search = catalog.call("tool_search", arguments.clone());
            let other = async move {
                let _ = started_rx.await;
                let _ = open_tx.send(());
            };
            tokio::join!(search, other).0
        });
        assert!(
            !starved.load(Ordering::SeqCst),
            "{arguments}: the query was embedded on the runtime's thread"
        );
        let result = result.unwrap();
        let names: Vec<&str> = result.structured_content.as_ref().unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect();
        assert_eq!(names, ["get_weather"], "{arguments}");
    }
}

/// An encoder that counts the texts it embeds in batches (tool texts), and holds every batch
/// until the test opens its gate.
#[derive(Debug)]
struct Counted {
    texts: Arc<std::sync::atomic::AtomicUsize>,
    gate: Arc<(Mutex<bool>, std::sync::Condvar)>,
}

impl Encoder for Counted {
    fn kind(&self) -> &'static str {
        "counted"
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        Some(vec![1.0, text.len() as f32 / 100.0])
    }
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let (open, cv) = &*self.gate;
        let mut open = open.lock().unwrap();
        while !*open {
            let (o, timeout) = cv.wait_timeout(open, Duration::from_secs(10)).unwrap();
            open = o;
            assert!(!timeout.timed_out(), "the gate was never opened");
        }
        drop(open);
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        texts.iter().map(|t| self.embed(t)).collect()
    }
    fn approx_heap_bytes(&self) -> usize {
        0
    }
}

/// Each caller gets its own tool, and some get one tool every caller shares.
struct PerCaller;

impl super::ScopedProvider for PerCaller {
    fn provider_for(&self, caller: &crate::tool::Caller) -> Option<Arc<dyn super::ToolProvider>> {
        let id = caller.id()?;
        let mut tools = vec![json!({"name": format!("{id}_notes"),
            "description": format!("The notes of {id}"), "inputSchema": {"type": "object"}})];
        if id.len() % 2 == 0 {
            tools.push(
                json!({"name": "team_board", "description": "The team's board",
                "inputSchema": {"type": "object"}}),
            );
        }
        Some(Arc::new(
            JsonCatalogProvider::from_value(&Value::Array(tools)).unwrap(),
        ))
    }
}

/// Scoped callers whose catalogs are merged while the shared tools are still being embedded
/// in the background wait for those vectors rather than embed them again: every distinct
/// tool text is embedded once, however many callers; in the foreground, the shared tools are
/// embedded once. Every caller's catalog then ranks by meaning.
#[test]
fn scoped_callers_share_one_embedding() {
    for background in [true, false] {
        for callers in [1usize, 2, 5] {
            let texts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let gate = Arc::new((Mutex::new(!background), std::sync::Condvar::new()));
            let model = SemanticModel::from_encoder(
                Box::new(Counted {
                    texts: texts.clone(),
                    gate: gate.clone(),
                }),
                "counted",
            );
            let shared: Vec<Value> = (0..40)
                .map(|i| {
                    json!({"name": format!("tool_{i}"), "description": format!("Does thing {i}"),
                           "inputSchema": {"type": "object"}})
                })
                .collect();
            let catalog = Catalog::builder()
                .provider(JsonCatalogProvider::from_value(&Value::Array(shared)).unwrap())
                .scoped_provider(PerCaller)
                .search(with_model(model, background))
                .from_specs([])
                .unwrap();
            let ids: Vec<String> = (0..callers).map(|i| "c".repeat(i + 1)).collect();
            let who: Vec<crate::tool::Caller> = ids.iter().map(crate::tool::Caller::new).collect();
            // Each caller's catalog is merged (and its embedding started) now.
            let views: Vec<_> = who.iter().map(|c| catalog.for_caller(c)).collect();
            {
                let (open, cv) = &*gate;
                *open.lock().unwrap() = true;
                cv.notify_all();
            }
            catalog.search.wait_semantic();
            for view in &views {
                view.catalog().search.wait_semantic();
                assert!(view.catalog().search.semantic_ready());
            }
            // The shared board: once among callers at once; in the foreground, each caller's
            // catalog is made after the one before is done, and takes the shared tools'
            // vectors from the base catalog, not the board's from another caller's.
            let evens = ids.iter().filter(|id| id.len() % 2 == 0).count();
            let board = if background { evens.min(1) } else { evens };
            assert_eq!(
                texts.load(Ordering::SeqCst),
                40 + callers + board,
                "{callers} callers, background {background}"
            );
        }
    }
}

/// A catalog says when its vectors are in: not while they are being made in the background,
/// and from the moment `wait_semantic` returns; never without a model, where waiting returns
/// at once; and at once when built with its vectors.
#[test]
fn a_catalog_says_when_its_vectors_are_in() {
    let tools = json!([{"name": "get_weather", "description": "Weather",
                        "inputSchema": {"type": "object"}}]);
    for background in [true, false] {
        let gate = Arc::new((Mutex::new(!background), std::sync::Condvar::new()));
        let model = SemanticModel::from_encoder(
            Box::new(Counted {
                texts: Default::default(),
                gate: gate.clone(),
            }),
            "counted",
        );
        let catalog = Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools).unwrap())
            .search(with_model(model, background))
            .from_specs([])
            .unwrap();
        assert_eq!(catalog.semantic_ready(), !background);
        {
            let (open, cv) = &*gate;
            *open.lock().unwrap() = true;
            cv.notify_all();
        }
        catalog.wait_semantic();
        assert!(catalog.semantic_ready(), "background {background}");
    }
    let keywords = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&tools).unwrap())
        .search(SearchOptions::default().enabled(true))
        .from_specs([])
        .unwrap();
    keywords.wait_semantic();
    assert!(!keywords.semantic_ready());
}
