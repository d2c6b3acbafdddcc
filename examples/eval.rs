//! Evaluations anyone can rerun, on any tools/list catalog, through the same library code a
//! server uses.
//!
//! ```text
//! cargo run --release --example eval -- resolve --catalog CATALOG --cases CASES [--server-name S] [--quiet]
//! cargo run --release --example eval -- search --catalog CATALOG --queries QUERIES [--k N]
//!        [--threshold X] [--category A,B] [--parity even|odd] [--quiet]
//!        [--semantic MODEL_DIR [--semantic-weight W] [--semantic-threshold T]
//!         [--semantic-floor F] [--spread-floor F] [--keyword-floor F] [--vector-cache DIR|off]]
//! cargo run --release --example eval -- args --catalog CATALOG --cases CASES [--quiet]
//! cargo run --release --example eval -- replay --catalog CATALOG --queries QUERIES [--category A,B]
//!        [--names CASES] [--callers N] [--seed N] [--name-share X]
//!        [--other NAME=CATALOG:QUERIES[:CATEGORIES]]... [--semantic MODEL_DIR ...]
//! ```
//!
//! CATALOG is a tools/list result (`{"tools": [...]}` or a bare array; annotations honoured).
//!
//! `resolve`: CASES is JSON Lines `{"id", "name", "arguments"?}`; prints one
//! `{"id", "outcome": "exact|corrected|suggested|unknown", "tool", "rule", "suggestions"}` line
//! per case, then a summary. Cases that carry `category`, `expected` and `expected_tool` are
//! scored: per category, how many got the expected outcome, and every wrong correction.
//!
//! `search`: QUERIES is JSON Lines `{"id", "query", "gold"?: [names], "candidates"?: [names]}`
//! (with `candidates`, only those tools are ranked: BFCL rows); prints one `{"id", "results",
//! "scores"}` line per query (names best first, and the score `tool_search` reports for each),
//! then Hit@1, Hit@3, Hit@5, Recall@5, MRR and the abstention rate on queries
//! whose `gold` is empty. Recall@5 is also given for the rows with two gold tools or more
//! (`multi_recall@5`); rows that carry `"steps": [..]` are searched a second time as
//! `tool_search`'s `queries` (one query per step, balanced), and `steps_recall@5` is that
//! search's Recall@5 beside `steps_query_recall@5`, the single query's on the same rows.
//!
//! With `--semantic`, the tools' vectors are kept between runs in `disco-vectors/` beside the
//! `examples/` directory of the binary (under the cargo target directory), not in the user
//! cache directory a server uses by default; `--vector-cache DIR` keeps them in DIR, `off`
//! nowhere. The queries' vectors are kept there too (a server keeps none), so that a rerun
//! with other weights or floors embeds nothing.
//!
//! `replay`: traffic simulated from QUERIES's `even` half (and CASES's name mistakes) is
//! learned from, and the figures are taken on the `odd` half as the traffic grows (see
//! `eval/replay.rs`); one JSON line.
//!
//! `args`: CASES is JSON Lines `{"id", "tool", "arguments", "gold"}`: the arguments a model
//! sent and the call it meant; prints whether repair produced exactly the gold arguments.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::ExitCode;

use disco_runtime::catalog::{JsonCatalogProvider, SearchOptions};
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::{Caller, Catalog, NameRule};
use serde_json::{json, Value};

const USAGE: &str = "usage:\n  eval resolve --catalog CATALOG --cases CASES [--server-name S] [--quiet]\n  eval search --catalog CATALOG --queries QUERIES [--k N] [--threshold X] [--category A,B] [--parity even|odd] [--quiet] [--semantic MODEL_DIR [--semantic-weight W] [--semantic-threshold T] [--semantic-floor F] [--spread-floor F] [--keyword-floor F] [--vector-cache DIR|off]]\n  eval args --catalog CATALOG --cases CASES [--quiet]\n  eval replay --catalog CATALOG --queries QUERIES [--category A,B] [--names CASES] [--callers N] [--seed N] [--name-share X] [--other NAME=CATALOG:QUERIES[:CATEGORIES]]... [--semantic MODEL_DIR ...]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("resolve") => Opts::parse(&args[1..]).and_then(|o| resolve(&o)),
        Some("search") => Opts::parse(&args[1..]).and_then(|o| search(&o)),
        Some("args") => Opts::parse(&args[1..]).and_then(|o| repair(&o)),
        Some("replay") => Opts::parse(&args[1..]).and_then(|o| replay::replay(&o, &o.replay)),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Default)]
struct Opts {
    catalog: String,
    input: String,
    k: usize,
    threshold: Option<f32>,
    categories: Option<Vec<String>>,
    server_name: Option<String>,
    /// Keep one of two halves of the rows (split by a fixed hash of the id): tune on one,
    /// report on the other.
    parity: Option<u64>,
    quiet: bool,
    /// A semantic model's directory (feature `semantic`).
    semantic: Option<String>,
    semantic_weight: Option<f32>,
    semantic_threshold: Option<f32>,
    /// The fusion's floors (`Ranking::semantic_floor`, `semantic_spread_floor`,
    /// `keyword_scale_floor`).
    semantic_floor: Option<f32>,
    spread_floor: Option<f32>,
    keyword_floor: Option<f32>,
    /// Where the tools' vectors are kept (`off`: nowhere); by default under the target
    /// directory.
    vector_cache: Option<String>,
    /// `replay`'s own arguments.
    replay: replay::ReplayArgs,
}

#[path = "eval/replay.rs"]
mod replay;

/// The share of `gold` (not empty) among the first five `results`.
fn recall_at_5<G: AsRef<str>, R: AsRef<str>>(gold: &[G], results: &[R]) -> f64 {
    let found = gold
        .iter()
        .filter(|g| results.iter().take(5).any(|r| r.as_ref() == g.as_ref()))
        .count();
    found as f64 / gold.len() as f64
}

impl Opts {
    fn parse(args: &[String]) -> Result<Opts, String> {
        let mut o = Opts {
            k: 5,
            ..Opts::default()
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{a} needs a value"))
            };
            match a.as_str() {
                "--catalog" => o.catalog = value()?,
                "--cases" | "--queries" => o.input = value()?,
                "--k" => o.k = value()?.parse().map_err(|e| format!("--k: {e}"))?,
                "--threshold" => {
                    o.threshold = Some(value()?.parse().map_err(|e| format!("--threshold: {e}"))?)
                }
                "--category" => {
                    o.categories = Some(value()?.split(',').map(str::to_string).collect())
                }
                "--server-name" => o.server_name = Some(value()?),
                "--parity" => {
                    o.parity = Some(match value()?.as_str() {
                        "even" => 0,
                        "odd" => 1,
                        p => return Err(format!("--parity {p}: want even or odd")),
                    })
                }
                "--quiet" => o.quiet = true,
                "--names" => o.replay.names = Some(value()?),
                "--callers" => {
                    o.replay.callers = value()?.parse().map_err(|e| format!("{a}: {e}"))?
                }
                "--seed" => o.replay.seed = value()?.parse().map_err(|e| format!("{a}: {e}"))?,
                "--name-share" => {
                    o.replay.name_share = value()?.parse().map_err(|e| format!("{a}: {e}"))?
                }
                "--other" => o.replay.others.push(value()?),
                "--semantic" => o.semantic = Some(value()?),
                "--vector-cache" => o.vector_cache = Some(value()?),
                "--semantic-weight" => {
                    o.semantic_weight = Some(value()?.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                "--semantic-threshold" => {
                    o.semantic_threshold = Some(value()?.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                "--semantic-floor" => {
                    o.semantic_floor = Some(value()?.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                "--spread-floor" => {
                    o.spread_floor = Some(value()?.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                "--keyword-floor" => {
                    o.keyword_floor = Some(value()?.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                _ => return Err(format!("unknown argument {a}\n{USAGE}")),
            }
        }
        if o.catalog.is_empty() || o.input.is_empty() {
            return Err(USAGE.to_string());
        }
        Ok(o)
    }

    /// `--vector-cache`, or `disco-vectors/` in the directory above the binary's
    /// (`target/release/` for `target/release/examples/eval`), or nowhere when there is none.
    #[cfg(feature = "semantic")]
    fn vector_cache(&self) -> disco_runtime::search::VectorCache {
        use disco_runtime::search::VectorCache;
        match self.vector_cache.as_deref() {
            Some("off") => VectorCache::Off,
            Some(dir) => VectorCache::Dir(dir.into()),
            None => std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.parent()?.join("disco-vectors")))
                .map_or(VectorCache::Off, VectorCache::Dir),
        }
    }

    /// The options the input files are read with, without the files.
    fn clone_inputs(&self) -> Opts {
        Opts {
            catalog: self.catalog.clone(),
            input: self.input.clone(),
            k: self.k,
            threshold: self.threshold,
            categories: self.categories.clone(),
            server_name: self.server_name.clone(),
            parity: self.parity,
            quiet: self.quiet,
            ..Opts::default()
        }
    }

    /// The search options of every catalog of this run (the semantic model loaded once).
    fn search_options(&self) -> Result<SearchOptions, String> {
        static MADE: std::sync::OnceLock<SearchOptions> = std::sync::OnceLock::new();
        if let Some(made) = MADE.get() {
            return Ok(made.clone());
        }
        let made = self.make_search_options()?;
        Ok(MADE.get_or_init(|| made).clone())
    }

    fn catalog(&self) -> Result<Catalog, String> {
        let provider = JsonCatalogProvider::from_file(Path::new(&self.catalog))?;
        let search = self.search_options()?;
        let mut builder = Catalog::builder().provider(provider).search(search);
        if let Some(name) = &self.server_name {
            builder = builder.server_name(name.clone());
        }
        let catalog = builder.from_specs([]).map_err(|e| e.to_string())?;
        // A tool whose schema cannot be compiled is kept (the catalog's rule for schemas found
        // in the wild); its arguments go unchecked, which the figures should not hide.
        for tool in catalog.tools() {
            for problem in tool.schema_problems() {
                eprintln!("eval: `{}` kept unchecked: {problem}", tool.name());
            }
        }
        Ok(catalog)
    }

    fn make_search_options(&self) -> Result<SearchOptions, String> {
        let mut search = SearchOptions::default();
        if let Some(t) = self.threshold {
            search.threshold = t;
        }
        let mut ranking = disco_runtime::search::index::Ranking::default();
        if let Some(w) = self.semantic_weight {
            ranking.semantic_weight = w;
        }
        if let Some(t) = self.semantic_threshold {
            ranking.semantic_threshold = t;
        }
        if let Some(f) = self.semantic_floor {
            ranking.semantic_floor = f;
        }
        if let Some(f) = self.spread_floor {
            ranking.semantic_spread_floor = f;
        }
        if let Some(f) = self.keyword_floor {
            ranking.keyword_scale_floor = f;
        }
        if ranking != disco_runtime::search::index::Ranking::default() {
            search.ranking = Some(ranking);
        }
        if let Some(dir) = &self.semantic {
            #[cfg(feature = "semantic")]
            {
                use disco_runtime::search::{SemanticModel, VectorCache};
                let model = SemanticModel::load(dir).map_err(|e| format!("--semantic: {e}"))?;
                // With a directory, the memo keeps every text's vector, the tools' too: the
                // catalog keeps no file of its own, so every tool text reaches the memo.
                let model = match self.vector_cache() {
                    VectorCache::Dir(d) => {
                        let id = model.id().to_string();
                        let memo = memo::wrap(model, d);
                        let _ = memo::MEMO.set(memo.clone());
                        SemanticModel::from_encoder(Box::new(memo::Remembering(memo)), id)
                    }
                    _ => model,
                };
                search.semantic = Some(std::sync::Arc::new(model));
                search.semantic_cache = VectorCache::Off;
                // The figures are of fused search: the catalog is built with its vectors.
                search.semantic_background = false;
            }
            #[cfg(not(feature = "semantic"))]
            return Err(format!(
                "--semantic {dir}: build the example with `--features semantic`"
            ));
        }
        Ok(search)
    }

    /// The input's JSON lines, filtered by `--category` and `--parity`.
    fn rows(&self) -> Result<Vec<Value>, String> {
        let file = std::fs::File::open(&self.input).map_err(|e| format!("{}: {e}", self.input))?;
        let mut rows = Vec::new();
        for (n, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|e| format!("{}: {e}", self.input))?;
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(&line)
                .map_err(|e| format!("{}:{}: {e}", self.input, n + 1))?;
            if let Some(cats) = &self.categories {
                let c = row
                    .get("category")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !cats.iter().any(|x| x == c) {
                    continue;
                }
            }
            if let Some(parity) = self.parity {
                // Bit 32 of FNV-1a of the id's JSON text. The halves it makes are uneven where
                // ids differ only in their last characters (MetaTool's `multi` rows: 160 even,
                // 337 odd), since that bit barely depends on them; the published halves are
                // these, so the split stays as it is until every figure is measured again.
                let hash = row["id"]
                    .to_string()
                    .bytes()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
                    });
                if (hash >> 32) % 2 != parity {
                    continue;
                }
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

fn str_field<'a>(row: &'a Value, key: &str) -> &'a str {
    row.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn names(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

#[derive(Default)]
struct Tally {
    cases: usize,
    as_expected: usize,
    wrong_corrections: usize,
}

fn resolve(o: &Opts) -> Result<(), String> {
    let catalog = o.catalog()?;
    let caller = Caller::anonymous();
    let out = std::io::stdout();
    let mut out = out.lock();
    let mut outcomes: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut by_category: BTreeMap<String, Tally> = BTreeMap::new();
    let mut wrong: Vec<Value> = Vec::new();
    for row in o.rows()? {
        let name = str_field(&row, "name");
        let r = catalog.resolve(name, &caller);
        let outcome = match (&r.tool, r.rule) {
            (Some(_), Some(NameRule::Exact)) => "exact",
            (Some(_), _) => "corrected",
            (None, _) if !r.suggestions.is_empty() => "suggested",
            (None, _) => "unknown",
        };
        *outcomes.entry(outcome).or_default() += 1;
        let tool = r.tool.as_ref().map(|t| t.name());
        let line = json!({
            "id": row.get("id").cloned().unwrap_or(Value::Null),
            "outcome": outcome,
            "tool": tool,
            "rule": r.rule.map(|r| r.as_str()),
            "suggestions": r.suggestions,
        });
        if !o.quiet {
            writeln!(out, "{line}").map_err(|e| e.to_string())?;
        }
        if let Some(expected) = row.get("expected").and_then(Value::as_str) {
            let category = str_field(&row, "category").to_string();
            let expected_tool = row.get("expected_tool").and_then(Value::as_str);
            let tally = by_category.entry(category).or_default();
            tally.cases += 1;
            let resolved_to = tool;
            let wrong_tool = resolved_to.is_some() && resolved_to != expected_tool;
            if wrong_tool {
                tally.wrong_corrections += 1;
                wrong.push(line.clone());
            } else {
                // Not correcting is what matters for the must-not cases: a suggestion and a
                // bare "unknown" are both safe. A correction to the expected tool where only a
                // suggestion was expected is right too.
                let declined = matches!(outcome, "suggested" | "unknown");
                let pass = match expected {
                    "suggested" | "unknown" => declined || resolved_to == expected_tool,
                    _ => resolved_to.is_some() && resolved_to == expected_tool,
                };
                tally.as_expected += usize::from(pass);
            }
        }
    }
    let categories: BTreeMap<&String, Value> = by_category
        .iter()
        .map(|(c, t)| {
            (
                c,
                json!({"cases": t.cases, "as_expected": t.as_expected,
                       "rate": ratio(t.as_expected, t.cases), "wrong_corrections": t.wrong_corrections}),
            )
        })
        .collect();
    let total_wrong: usize = by_category.values().map(|t| t.wrong_corrections).sum();
    let summary = json!({
        "summary": {"outcomes": outcomes, "categories": categories, "wrong_corrections": total_wrong,
                    "wrong": wrong.iter().take(20).collect::<Vec<_>>()}
    });
    writeln!(out, "{summary}").map_err(|e| e.to_string())
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        (a as f64 / b as f64 * 1000.0).round() / 1000.0
    }
}

fn search(o: &Opts) -> Result<(), String> {
    let catalog = o.catalog()?;
    let out = std::io::stdout();
    let mut out = out.lock();
    let k = o.k.max(5);
    let (mut n, mut hit1, mut hit3, mut hit5, mut recall5, mut mrr) =
        (0usize, 0usize, 0usize, 0usize, 0f64, 0f64);
    let (mut negatives, mut abstained) = (0usize, 0usize);
    // Rows with two gold tools or more, and rows that carry `steps` (searched as `queries`).
    let (mut multi, mut multi_recall5) = (0usize, 0f64);
    let (mut stepped, mut steps_recall5, mut steps_query_recall5) = (0usize, 0f64, 0f64);
    let rows = o.rows()?;
    #[cfg(feature = "semantic")]
    if let Some(memo) = memo::MEMO.get() {
        // As the index cuts a query before embedding it.
        let queries: Vec<String> = rows
            .iter()
            .map(|r| {
                str_field(r, "query")
                    .chars()
                    .take(disco_runtime::search::index::MAX_QUERY_CHARS)
                    .collect()
            })
            .collect();
        memo.prefetch(&queries);
    }
    for row in rows {
        let query = str_field(&row, "query");
        let candidates: Option<HashSet<String>> =
            names(row.get("candidates")).map(|c| c.into_iter().collect());
        let allowed = |t: &disco_runtime::CatalogTool| {
            candidates.as_ref().is_none_or(|set| set.contains(t.name()))
        };
        let hits = catalog.search_where(query, k, &allowed);
        let results: Vec<&str> = hits.iter().map(|(t, _)| t.name()).collect();
        if !o.quiet {
            let shown = &results[..results.len().min(o.k)];
            let scores: Vec<f32> = hits.iter().take(shown.len()).map(|(_, s)| *s).collect();
            writeln!(
                out,
                "{}",
                json!({"id": row.get("id"), "results": shown, "scores": scores})
            )
            .map_err(|e| e.to_string())?;
        }
        let gold = names(row.get("gold")).unwrap_or_default();
        if gold.is_empty() {
            negatives += 1;
            if results.is_empty() {
                abstained += 1;
            }
            continue;
        }
        n += 1;
        let rank = results.iter().position(|r| gold.iter().any(|g| g == r));
        if let Some(r) = rank {
            mrr += 1.0 / (r as f64 + 1.0);
            hit1 += usize::from(r < 1);
            hit3 += usize::from(r < 3);
            hit5 += usize::from(r < 5);
        }
        let recall = recall_at_5(&gold, &results);
        recall5 += recall;
        if gold.len() > 1 {
            multi += 1;
            multi_recall5 += recall;
        }
        if let Some(steps) = names(row.get("steps")).filter(|s| !s.is_empty()) {
            let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
            let by_step = catalog.search_steps_where(&steps, 5, &allowed);
            let found = gold
                .iter()
                .filter(|g| by_step.tools.iter().any(|(t, _, _)| t.name() == *g))
                .count();
            stepped += 1;
            steps_recall5 += found as f64 / gold.len() as f64;
            steps_query_recall5 += recall;
        }
    }
    #[cfg(feature = "semantic")]
    if let Some(memo) = memo::MEMO.get() {
        // Losing the file costs the next run time, not a figure.
        if let Err(e) = memo.save() {
            eprintln!("eval: the embedded texts were not kept: {e}");
        }
    }
    let nf = n.max(1) as f64;
    let summary = json!({"summary": {
        "queries": n, "hit@1": round(hit1 as f64 / nf), "hit@3": round(hit3 as f64 / nf),
        "hit@5": round(hit5 as f64 / nf), "recall@5": round(recall5 / nf), "mrr": round(mrr / nf),
        "no_tool_queries": negatives, "abstention": round(abstained as f64 / negatives.max(1) as f64),
        "multi_gold_queries": multi, "multi_recall@5": round(multi_recall5 / multi.max(1) as f64),
        "step_queries": stepped, "steps_recall@5": round(steps_recall5 / stepped.max(1) as f64),
        "steps_query_recall@5": round(steps_query_recall5 / stepped.max(1) as f64),
    }});
    writeln!(out, "{summary}").map_err(|e| e.to_string())
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn repair(o: &Opts) -> Result<(), String> {
    let catalog = o.catalog()?;
    let out = std::io::stdout();
    let mut out = out.lock();
    let (mut cases, mut repaired, mut refused, mut wrong) = (0usize, 0usize, 0usize, 0usize);
    let mut excluded = 0usize;
    let mut by_category: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for row in o.rows()? {
        let Some(tool) = catalog.get(str_field(&row, "tool")) else {
            continue;
        };
        let Some(args) = row.get("arguments").and_then(Value::as_object).cloned() else {
            continue;
        };
        let gold = row.get("gold").cloned().unwrap_or(Value::Null);
        // A gold call the tool's own schema refuses (the dataset's definitions and answers
        // disagree) cannot be a repair target: count it apart.
        let gold_accepted = match gold.as_object() {
            Some(g) => matches!(prepare(tool, g.clone(), Repair::Safe), Ok(p) if p.arguments == *g),
            None => false,
        };
        if !gold_accepted {
            excluded += 1;
            continue;
        }
        cases += 1;
        let entry = by_category
            .entry(str_field(&row, "category").to_string())
            .or_default();
        entry.0 += 1;
        let outcome = match prepare(tool, args, Repair::Safe) {
            Ok(p) if Value::Object(p.arguments.clone()) == gold => {
                repaired += 1;
                entry.1 += 1;
                "repaired"
            }
            Ok(p) => {
                wrong += 1;
                entry.2 += 1;
                if !o.quiet {
                    eprintln!(
                        "wrong: {} -> {}",
                        row["arguments"],
                        Value::Object(p.arguments)
                    );
                }
                "wrong"
            }
            Err(e) => {
                refused += 1;
                if !o.quiet {
                    eprintln!(
                        "refused [{}]: {} : {}",
                        str_field(&row, "category"),
                        row["arguments"],
                        e.lines().next().unwrap_or_default()
                    );
                }
                "refused"
            }
        };
        if !o.quiet {
            writeln!(out, "{}", json!({"id": row.get("id"), "outcome": outcome}))
                .map_err(|e| e.to_string())?;
        }
    }
    let categories: BTreeMap<&String, Value> = by_category
        .iter()
        .map(|(c, (n, ok, bad))| {
            (
                c,
                json!({"cases": n, "repaired": ok, "rate": ratio(*ok, *n), "wrong": bad}),
            )
        })
        .collect();
    let summary = json!({"summary": {"cases": cases, "repaired": repaired, "rate": ratio(repaired, cases),
                                     "refused": refused, "wrong": wrong, "gold_refused_by_schema": excluded,
                                     "categories": categories}});
    writeln!(out, "{summary}").map_err(|e| e.to_string())
}

/// The vectors of every text `eval` embeds (tool texts and queries), kept between runs in one
/// file beside the tools' vector cache, so that a run that changes only the ranking's weights
/// embeds nothing. A server embeds each query once and keeps no query vectors; this is for the
/// evaluation's reruns only. The file is in the tools' cache format (`kept::read_texts`,
/// `write_texts`): it names the model and the dimension, ends with a checksum, and is ignored
/// and written anew when it does not check. A text without a token has no vector and is not
/// kept. It holds the tools' vectors too: the catalog is given no cache of its own.
#[cfg(feature = "semantic")]
mod memo {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    use disco_runtime::search::semantic::kept::{read_texts, text_key, write_texts, TextKey};
    use disco_runtime::search::{Encoder, SemanticModel};

    /// The memo of this run, when `--semantic` has a cache directory.
    pub(crate) static MEMO: std::sync::OnceLock<Arc<Memo>> = std::sync::OnceLock::new();

    #[derive(Debug)]
    pub(crate) struct Memo {
        model: SemanticModel,
        file: PathBuf,
        vectors: Mutex<HashMap<TextKey, Vec<f32>>>,
        read: usize,
    }

    /// `model` with its answers remembered in `dir`.
    pub(crate) fn wrap(model: SemanticModel, dir: PathBuf) -> Arc<Memo> {
        let short: String = model.id().chars().take(16).collect();
        let file = dir.join(format!("eval-texts-{short}.bin"));
        let vectors = read_texts(&file, model.id(), model.dim());
        Arc::new(Memo {
            read: vectors.len(),
            model,
            file,
            vectors: Mutex::new(vectors),
        })
    }

    impl Memo {
        fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TextKey, Vec<f32>>> {
            self.vectors.lock().expect("memo lock")
        }

        /// Embeds, in batches, those of `texts` not remembered yet.
        pub(crate) fn prefetch(&self, texts: &[String]) {
            let missing: Vec<String> = {
                let have = self.lock();
                let mut seen = std::collections::HashSet::new();
                texts
                    .iter()
                    .filter(|t| {
                        let key = text_key(t);
                        !have.contains_key(&key) && seen.insert(key)
                    })
                    .cloned()
                    .collect()
            };
            for block in missing.chunks(64) {
                let vectors = self.model.embed_all(block);
                let mut have = self.lock();
                for (t, v) in block.iter().zip(vectors) {
                    if let Some(v) = v {
                        have.insert(text_key(t), v);
                    }
                }
            }
        }

        /// Writes the file when this run embedded a text it did not hold.
        pub(crate) fn save(&self) -> std::io::Result<()> {
            let have = self.lock();
            if have.len() == self.read {
                return Ok(());
            }
            write_texts(&self.file, self.model.id(), self.model.dim(), &have)
        }
    }

    /// The memo as the catalog's encoder.
    #[derive(Debug)]
    pub(crate) struct Remembering(pub(crate) Arc<Memo>);

    impl Encoder for Remembering {
        fn kind(&self) -> &'static str {
            self.0.model.kind()
        }
        fn dim(&self) -> usize {
            self.0.model.dim()
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            let key = text_key(text);
            if let Some(v) = self.0.lock().get(&key) {
                return Some(v.clone());
            }
            let v = self.0.model.embed(text)?;
            self.0.lock().insert(key, v.clone());
            Some(v)
        }
        fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
            self.0.prefetch(texts);
            let have = self.0.lock();
            texts
                .iter()
                .map(|t| have.get(&text_key(t)).cloned())
                .collect()
        }
        fn approx_heap_bytes(&self) -> usize {
            0
        }
    }
}
