//! The vectors becoming ready in the middle of a `tool_search` call (feature `semantic`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{embed_queries, run_search};
use crate::catalog::{Catalog, JsonCatalogProvider, SearchOptions};
use crate::search::semantic::testing::{within, Latch, Probe};
use crate::search::VectorCache;
use crate::tool::Context;

fn tools() -> Value {
    json!([
        {"name": "StrologyTool", "description": "Provides astrology services",
         "inputSchema": {"type": "object"}},
        {"name": "ExchangeTool", "description": "Convert currency",
         "inputSchema": {"type": "object"}},
    ])
}

/// A call looks at the vectors before they are ready, and they become ready before its
/// search runs (the test holds the call at that point): the search ranks by keywords alone,
/// as a catalog without a model does, and embeds nothing, on the runtime's thread or any.
/// The next call ranks by meaning, its query embedded once.
#[test]
fn vectors_ready_in_the_middle_of_a_call_embed_nothing_there() {
    let shapes = [
        json!({"query": "my horoscope"}),
        json!({"queries": ["my horoscope", "convert currency"]}),
    ];
    for args in shapes {
        let gate = Arc::new(Latch::default());
        let probe = Probe::new({
            let gate = gate.clone();
            move |call, _| {
                if call == 0 {
                    gate.wait_for(1);
                }
            }
        });
        let model = Arc::new(probe.model("race"));
        let options = SearchOptions::default()
            .enabled(true)
            .semantic(model)
            .semantic_cache(VectorCache::Off)
            .semantic_background(true);
        let catalog = Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools()).unwrap())
            .search(options)
            .from_specs([])
            .unwrap();
        let keywords = Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools()).unwrap())
            .search(SearchOptions::default().enabled(true))
            .from_specs([])
            .unwrap();
        let map: Map<String, Value> = args.as_object().unwrap().clone();
        let (raced, alone, next, calls) = within("the call", move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let ctx = Context::default();
            let view = catalog.for_caller(ctx.caller());
            let embedded = runtime.block_on(embed_queries(&view, &map));
            gate.raise();
            catalog.wait_semantic();
            assert!(catalog.semantic_ready());
            let calls = probe.calls.load(Ordering::SeqCst);
            let raced =
                runtime.block_on(async { run_search(&view, &map, embedded.as_ref(), &ctx) });
            let calls = [calls, probe.calls.load(Ordering::SeqCst)];
            let kview = keywords.for_caller(ctx.caller());
            let alone = run_search(&kview, &map, None, &ctx);
            let next = runtime.block_on(catalog.call("tool_search", Value::Object(map)));
            let calls = [calls[0], calls[1], probe.calls.load(Ordering::SeqCst)];
            (raced, alone, next.unwrap(), calls)
        });
        assert_eq!(calls[1], calls[0], "{args}: the search embedded its query");
        assert_eq!(raced.structured_content, alone.structured_content, "{args}");
        assert_eq!(
            calls[2],
            calls[1] + 1,
            "{args}: one batch for the next call"
        );
        let next = next.structured_content.unwrap();
        assert_eq!(next["tools"][0]["name"], "StrologyTool", "{args}: {next}");
    }
}
