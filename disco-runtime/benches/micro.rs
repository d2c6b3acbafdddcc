//! Micro benchmarks of disco's per-call work, on synthetic catalogs of 100 to 100,000 tools
//! built from the vocabulary of the real catalogs (`bench/synth`).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench -p disco-runtime --bench micro
//! cargo bench -p disco-runtime --bench micro --features learning -- "^call/"   # events off and on
//! DISCO_SEMANTIC_MODEL=DIR cargo bench -p disco-runtime --bench micro --features semantic -- "^semantic/"
//! DISCO_SEMANTIC_TRANSFORMER_MODEL=DIR cargo bench -p disco-runtime --bench micro --features semantic -- "^transformer/"
//! python3 bench/criterion_table.py /work/target-bench/criterion   # medians, min, max
//! ```
//!
//! Before the timings it prints, per catalog size, the build time and the memory of the
//! catalog and of its search index (see BENCHMARKS.md for how to read them), and how the
//! probes resolved (so a "fuzzy" timing is known to time fuzzy corrections).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::search::{SearchDoc, SearchIndex};
use disco_runtime::{Caller, Catalog, SearchOptions};
use serde_json::{json, Map, Value};

const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];
const SEED: u64 = 42;
const PROBES: usize = 256;

fn build(catalog: &Value) -> Catalog {
    let provider = JsonCatalogProvider::from_value(catalog).expect("a valid synthetic catalog");
    Catalog::builder()
        .provider(provider)
        .search(SearchOptions::default().enabled(true))
        .from_specs([])
        .expect("a valid synthetic catalog")
}

/// What the search index sees of each tool, as the catalog builds it.
fn docs(catalog: &Value) -> Vec<SearchDoc> {
    catalog["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| SearchDoc {
            name: t["name"].as_str().unwrap_or_default().to_string(),
            title: None,
            description: t["description"].as_str().unwrap_or_default().to_string(),
            keywords: Vec::new(),
            aliases: Vec::new(),
            params: t["inputSchema"]["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v["description"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect(),
        })
        .collect()
}

/// Resident memory of this process in bytes (Linux), for the per-tool figure.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

struct Sized {
    n: usize,
    catalog: Catalog,
    probes: synth::Probes,
    json: Value,
}

fn prepare_sizes(vocab: &synth::Vocab) -> Vec<Sized> {
    println!("vocabulary: {}", vocab.source);
    println!("size\tbuild_ms\tindex_build_ms\tcatalog_rss_bytes_per_tool\tindex_heap_bytes_per_tool\tresolved(exact/spelling/typo/unknown of {PROBES})");
    let caller = Caller::anonymous();
    let mut out = Vec::new();
    for n in SIZES {
        let json = synth::catalog(n, SEED, vocab);
        let rss0 = rss_bytes();
        let t0 = Instant::now();
        let catalog = build(&json);
        let build_ms = t0.elapsed().as_secs_f64() * 1e3;
        let rss1 = rss_bytes();
        let d = docs(&json);
        let t1 = Instant::now();
        let index = SearchIndex::build(&d);
        let index_ms = t1.elapsed().as_secs_f64() * 1e3;
        let index_bytes = index.approx_heap_bytes() / n;
        drop(index);
        let probes = synth::probes(&json, PROBES, SEED + 1);
        let count = |names: &[String], fuzzy_ok: bool| {
            names
                .iter()
                .filter(|name| {
                    let r = catalog.resolve(name, &caller);
                    r.tool.is_some() && (fuzzy_ok || !r.rule.is_some_and(|r| r.is_fuzzy()))
                })
                .count()
        };
        println!(
            "{n}\t{build_ms:.1}\t{index_ms:.1}\t{}\t{index_bytes}\t{}/{}/{}/{}",
            rss0.zip(rss1)
                .map(|(a, b)| (b.saturating_sub(a) / n as u64).to_string())
                .unwrap_or_else(|| "?".into()),
            count(&probes.exact, false),
            count(&probes.spelling, false),
            count(&probes.typo, true),
            count(&probes.unknown, true),
        );
        out.push(Sized {
            n,
            catalog,
            probes,
            json,
        });
    }
    out
}

fn resolution(c: &mut Criterion, sizes: &[Sized]) {
    let caller = Caller::anonymous();
    let mut g = c.benchmark_group("resolve");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for s in sizes {
        for (kind, names) in [
            ("exact", &s.probes.exact),
            ("spelling", &s.probes.spelling),
            ("typo", &s.probes.typo),
            ("unknown", &s.probes.unknown),
        ] {
            g.bench_with_input(BenchmarkId::new(kind, s.n), names, |b, names| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % names.len();
                    black_box(s.catalog.resolve(black_box(&names[i]), &caller))
                })
            });
        }
    }
    g.finish();
}

/// Arguments for one tool: `keys` renames each parameter, `coerce` writes numbers and
/// booleans as strings (what a model often sends).
fn arguments(tool: &disco_runtime::CatalogTool, camel: bool, coerce: bool) -> Map<String, Value> {
    let mut m = Map::new();
    for p in tool.params() {
        let ty = p.schema()["type"].as_str().unwrap_or("string");
        let value = match (ty, coerce) {
            ("integer", false) => json!(5),
            ("integer", true) => json!("5"),
            ("number", false) => json!(2.5),
            ("number", true) => json!("2.5"),
            ("boolean", false) => json!(true),
            ("boolean", true) => json!("true"),
            ("array", _) => json!(["a"]),
            ("object", _) => json!({}),
            _ => json!("text"),
        };
        let key = if camel {
            let mut parts = p.name.split('_');
            let mut k = parts.next().unwrap_or_default().to_string();
            for w in parts {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    k.extend(f.to_uppercase());
                    k.push_str(c.as_str());
                }
            }
            if k == p.name {
                k.to_uppercase()
            } else {
                k
            }
        } else {
            p.name.clone()
        };
        m.insert(key, value);
    }
    m
}

fn argument_repair(c: &mut Criterion, sizes: &[Sized]) {
    let Some(s) = sizes.iter().find(|s| s.n == 1_000) else {
        return;
    };
    // A tool with several parameters, at least one of them numeric or boolean.
    let Some(tool) = s.catalog.tools().iter().find(|t| {
        t.params().len() >= 3
            && t.params().iter().any(|p| {
                matches!(
                    p.schema()["type"].as_str(),
                    Some("integer" | "number" | "boolean")
                )
            })
    }) else {
        return;
    };
    let mut g = c.benchmark_group("args");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (kind, camel, coerce) in [
        ("exact", false, false),
        ("renamed_keys", true, false),
        ("renamed_and_coerced", true, true),
    ] {
        let args = arguments(tool, camel, coerce);
        if prepare(tool, args.clone(), Repair::Safe).is_err() {
            eprintln!(
                "note: args/{kind} on `{}` does not repair fully",
                tool.name()
            );
        }
        g.bench_function(kind, |b| {
            b.iter_batched(
                || args.clone(),
                |a| black_box(prepare(tool, a, Repair::Safe)),
                criterion::BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn search(c: &mut Criterion, sizes: &[Sized]) {
    let caller = Caller::anonymous();
    let mut g = c.benchmark_group("search");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for s in sizes {
        g.bench_with_input(BenchmarkId::new("top5", s.n), &s.probes.queries, |b, q| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % q.len();
                black_box(s.catalog.search(black_box(&q[i]), 5, &caller))
            })
        });
    }
    g.finish();
}

fn list(c: &mut Criterion, sizes: &[Sized]) {
    let caller = Caller::anonymous();
    let mut g = c.benchmark_group("tools_list");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for s in sizes.iter().filter(|s| s.n <= 10_000) {
        g.throughput(Throughput::Elements(s.n as u64));
        g.bench_function(BenchmarkId::new("serialize_all", s.n), |b| {
            b.iter(|| {
                let tools = s.catalog.list(&caller);
                black_box(serde_json::to_vec(&json!({ "tools": tools })).map(|v| v.len()))
            })
        });
    }
    g.finish();
}

/// The instructions written for a caller at `initialize` and the first tools/list page (which
/// holds `tool_search` with the caller's groups), on the synthetic catalogs with their tools
/// spread over 40 groups.
fn instructions(c: &mut Criterion, sizes: &[Sized]) {
    let caller = Caller::anonymous();
    let mut g = c.benchmark_group("groups");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for s in sizes.iter().filter(|s| s.n <= 10_000) {
        let mut json = s.json.clone();
        if let Some(tools) = json["tools"].as_array_mut() {
            for (i, t) in tools.iter_mut().enumerate() {
                t["_meta"][disco_runtime::catalog::GROUPS_META_KEY] =
                    json!([format!("group{}", i % 40)]);
            }
        }
        let catalog = build(&json);
        g.bench_function(BenchmarkId::new("instructions", s.n), |b| {
            b.iter(|| black_box(catalog.for_caller(&caller).instructions()))
        });
        g.bench_function(BenchmarkId::new("tools_list_first_page", s.n), |b| {
            b.iter(|| black_box(catalog.list_page(&caller, 0, 100)))
        });
    }
    g.finish();
}

fn index_build(c: &mut Criterion, sizes: &[Sized]) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(3));
    for s in sizes.iter().filter(|s| s.n <= 10_000) {
        let d = docs(&s.json);
        g.bench_function(BenchmarkId::new("search_index", s.n), |b| {
            b.iter(|| black_box(SearchIndex::build(&d).len()))
        });
        g.bench_function(BenchmarkId::new("catalog", s.n), |b| {
            b.iter(|| black_box(build(&s.json).tools().len()))
        });
    }
    g.finish();
}

/// Search with a semantic model (feature `semantic`, model directory in
/// `DISCO_SEMANTIC_MODEL`): the index alone, keywords only and fused, on the same probes, and
/// the build with the model.
#[cfg(feature = "semantic")]
fn semantic(c: &mut Criterion, sizes: &[Sized]) {
    use disco_runtime::search::SemanticModel;
    use std::sync::Arc;
    let Some(dir) = std::env::var_os("DISCO_SEMANTIC_MODEL") else {
        eprintln!("semantic: DISCO_SEMANTIC_MODEL is not set; skipped");
        return;
    };
    let start = Instant::now();
    let model = Arc::new(SemanticModel::load(dir).expect("the semantic model loads"));
    eprintln!(
        "semantic model: {} bytes, loaded in {:.0} ms",
        model.approx_heap_bytes(),
        start.elapsed().as_secs_f64() * 1000.0
    );
    let mut g = c.benchmark_group("semantic");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for s in sizes {
        let d = docs(&s.json);
        let keywords = SearchIndex::build(&d);
        let start = Instant::now();
        let fused = SearchIndex::build_with_semantic(&d, model.clone());
        eprintln!(
            "semantic index at {} tools: built in {:.0} ms, {} bytes of vectors per tool",
            s.n,
            start.elapsed().as_secs_f64() * 1000.0,
            model.dim() * std::mem::size_of::<f32>()
        );
        for (name, index) in [("keywords_top5", &keywords), ("fused_top5", &fused)] {
            g.bench_with_input(BenchmarkId::new(name, s.n), &s.probes.queries, |b, q| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % q.len();
                    black_box(index.search(black_box(&q[i]), 5, &|_| true))
                })
            });
        }
        if s.n <= 10_000 {
            g.bench_function(BenchmarkId::new("build", s.n), |b| {
                b.iter(|| black_box(SearchIndex::build_with_semantic(&d, model.clone()).len()))
            });
            // The keyword index first, then the vectors (what `build` overlaps).
            g.bench_function(BenchmarkId::new("build_one_after_the_other", s.n), |b| {
                b.iter(|| {
                    black_box(
                        SearchIndex::build(&d)
                            .with_semantic(model.clone(), &d)
                            .len(),
                    )
                })
            });
            // The whole catalog from its JSON, then rebuilt with nothing changed (a provider's
            // reload): the rebuild embeds no tool again.
            let catalog = || {
                Catalog::builder()
                    .provider(JsonCatalogProvider::from_value(&s.json).expect("a valid catalog"))
                    .search(
                        SearchOptions::default()
                            .enabled(true)
                            .semantic(model.clone())
                            // Never the user cache directory a server uses by default.
                            .semantic_cache(disco_runtime::search::VectorCache::Off),
                    )
                    .from_specs([])
                    .expect("a valid synthetic catalog")
            };
            g.bench_function(BenchmarkId::new("catalog", s.n), |b| {
                b.iter(|| black_box(catalog().tools().len()))
            });
            let built = catalog();
            g.bench_function(BenchmarkId::new("catalog_rebuild", s.n), |b| {
                b.iter(|| black_box(built.rebuild().map(|c| c.tools().len())))
            });
            let keywords_only = build(&s.json);
            g.bench_function(BenchmarkId::new("keywords_catalog_rebuild", s.n), |b| {
                b.iter(|| black_box(keywords_only.rebuild().map(|c| c.tools().len())))
            });
        }
    }
    g.finish();
}

/// The resident memory of this process, in bytes (Linux; 0 elsewhere).
#[cfg(feature = "semantic")]
fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// A transformer sentence encoder (feature `semantic`, its directory in
/// `DISCO_SEMANTIC_TRANSFORMER_MODEL`) at 10,000 tools: one query embedded, fused search
/// including the query, and a restart whose vectors come from the disk cache; printed before,
/// the model's memory and the time to embed every tool once.
#[cfg(feature = "semantic")]
fn transformer(c: &mut Criterion, sizes: &[Sized]) {
    use disco_runtime::search::{SemanticModel, VectorCache};
    use std::sync::Arc;
    let Some(dir) = std::env::var_os("DISCO_SEMANTIC_TRANSFORMER_MODEL") else {
        eprintln!("transformer: DISCO_SEMANTIC_TRANSFORMER_MODEL is not set; skipped");
        return;
    };
    let Some(s) = sizes.iter().find(|s| s.n == 10_000) else {
        return;
    };
    let before = resident_bytes();
    let start = Instant::now();
    let model = Arc::new(SemanticModel::load(dir).expect("the transformer loads"));
    eprintln!(
        "transformer: {} bytes of weights, {} more resident bytes ({} resident in all), \
         loaded in {:.0} ms, load average {}",
        model.approx_heap_bytes(),
        resident_bytes().saturating_sub(before),
        resident_bytes(),
        start.elapsed().as_secs_f64() * 1000.0,
        load_average()
    );
    // Under the target directory, never the user cache directory a server uses by default.
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-vectors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let catalog = || {
        let options = SearchOptions::default()
            .enabled(true)
            .semantic(model.clone())
            .semantic_cache(VectorCache::Dir(cache.clone()))
            .semantic_background(false);
        Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&s.json).expect("a valid catalog"))
            .search(options)
            .from_specs([])
            .expect("a valid synthetic catalog")
    };
    // The first build embeds every tool and writes the cache.
    let start = Instant::now();
    let built = catalog();
    let took = start.elapsed().as_secs_f64();
    eprintln!(
        "transformer: {} tools embedded in {:.1} s, {:.0} tools/s (catalog built with its \
         vectors), load average {}",
        built.tools().len(),
        took,
        built.tools().len() as f64 / took,
        load_average()
    );
    let mut g = c.benchmark_group("transformer");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    g.bench_with_input(
        BenchmarkId::new("embed_query", s.n),
        &s.probes.queries,
        |b, q| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % q.len();
                black_box(model.embed(black_box(&q[i])))
            })
        },
    );
    let anyone = Caller::anonymous();
    g.bench_with_input(
        BenchmarkId::new("fused_top5", s.n),
        &s.probes.queries,
        |b, q| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % q.len();
                black_box(built.search(black_box(&q[i]), 5, &anyone))
            })
        },
    );
    // A restart: the catalog from its JSON, every vector read from the cache. A new process
    // builds its catalog while the old one's is freed by its own exit, so the drop is left
    // out of the figure.
    g.sample_size(10);
    g.bench_function(BenchmarkId::new("restart_from_cache", s.n), |b| {
        b.iter_with_large_drop(catalog)
    });
    g.finish();
    eprintln!("transformer: load average {} at the end", load_average());
    let _ = std::fs::remove_dir_all(&cache);
}

/// The machine's load averages over 1, 5 and 15 minutes (Linux; "?" elsewhere): the machine
/// is shared, and a figure means little without it.
#[cfg(feature = "semantic")]
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// The lexicon the fuzzy tier reads: its bytes in the binary and on the heap, and the cost of
/// one lookup of a word (`is_known_word`) that is in it and of one that is not.
fn lexicon(c: &mut Criterion) {
    use disco_runtime::resolve::lexicon;
    let (binary, heap) = lexicon::footprint();
    println!("lexicon: {binary} bytes of data in the binary, {heap} bytes on the heap");
    let words: Vec<&str> = lexicon::english_words().step_by(97).collect();
    let misses: Vec<String> = words.iter().map(|w| format!("{w}q")).collect();
    let mut g = c.benchmark_group("lexicon");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("known_word", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % words.len();
            black_box(lexicon::is_known_word(black_box(words[i])))
        })
    });
    g.bench_function("unknown_word", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % misses.len();
            black_box(lexicon::is_known_word(black_box(&misses[i])))
        })
    });
    g.finish();
}

/// A whole call through the catalog (`Catalog::call`: resolution, argument checks, the
/// handler or the error, the result) on the 1,000-tool catalog, with discovery events off and,
/// with feature `learning`, on (a `Recorder` over a SQLite file in a temporary directory): the
/// cost the recorder adds to the call's own path. The synthetic tools take required
/// parameters and the calls send none, so each call ends in the arguments' error: the same
/// work for both rows. `unknown` ends in the unknown-tool error, `search` is `tool_search`.
fn calls(c: &mut Criterion, sizes: &[Sized]) {
    let Some(s) = sizes.iter().find(|s| s.n == 1_000) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    #[cfg_attr(not(feature = "learning"), allow(unused_mut))]
    let mut catalogs: Vec<(&str, Catalog)> = vec![("off", build(&s.json))];
    #[cfg(feature = "learning")]
    let (_dir, recorder) = {
        use disco_runtime::learn::{Recorder, SqliteStore};
        let dir = std::env::temp_dir().join(format!("disco-bench-learning-{}", std::process::id()));
        let store = SqliteStore::open(&dir, 64 << 20).expect("the store");
        let recorder = std::sync::Arc::new(
            Recorder::new(std::sync::Arc::new(store), [0; 32], Default::default())
                .expect("the recorder"),
        );
        let provider = JsonCatalogProvider::from_value(&s.json).expect("the catalog");
        let on = Catalog::builder()
            .provider(provider)
            .search(SearchOptions::default().enabled(true))
            .discovery(recorder.clone())
            .from_specs([])
            .expect("the catalog");
        catalogs.push(("on", on));
        (DirGuard(dir), recorder)
    };
    let mut g = c.benchmark_group("call");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let search: Vec<Value> = s
        .probes
        .queries
        .iter()
        .map(|q| json!({"query": q}))
        .collect();
    for (kind, names) in [
        ("exact", &s.probes.exact),
        ("typo", &s.probes.typo),
        ("unknown", &s.probes.unknown),
    ] {
        for (mode, catalog) in &catalogs {
            let mut i = 0;
            g.bench_function(format!("{kind}/{mode}"), |b| {
                b.iter(|| {
                    i = (i + 1) % names.len();
                    black_box(rt.block_on(catalog.call(black_box(&names[i]), json!({}))))
                })
            });
        }
    }
    for (mode, catalog) in &catalogs {
        let mut i = 0;
        g.bench_function(format!("search/{mode}"), |b| {
            b.iter(|| {
                i = (i + 1) % search.len();
                black_box(rt.block_on(catalog.call("tool_search", search[i].clone())))
            })
        });
    }
    g.finish();
    #[cfg(feature = "learning")]
    println!(
        "discovery events dropped (queue full): {}",
        recorder.dropped()
    );
}

/// Removes the benchmark's temporary directory.
#[cfg(feature = "learning")]
struct DirGuard(std::path::PathBuf);

#[cfg(feature = "learning")]
impl Drop for DirGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    let vocab = synth::vocab();
    let sizes = prepare_sizes(&vocab);
    let mut c = Criterion::default().configure_from_args();
    lexicon(&mut c);
    resolution(&mut c, &sizes);
    argument_repair(&mut c, &sizes);
    search(&mut c, &sizes);
    list(&mut c, &sizes);
    instructions(&mut c, &sizes);
    index_build(&mut c, &sizes);
    calls(&mut c, &sizes);
    #[cfg(feature = "semantic")]
    semantic(&mut c, &sizes);
    #[cfg(feature = "semantic")]
    transformer(&mut c, &sizes);
    c.final_summary();
}
