//! Resolves one kind of the micro benchmark's probes in a loop: the same synthetic catalog
//! (`bench/synth`, seed 42) and the same 256 probes as `benches/micro.rs`'s `resolve` group,
//! without criterion, so that a build can be timed beside another in paired rounds
//! (`bench/resolve_pairs.py`) or run under cachegrind's cache and branch simulation.
//!
//! ```text
//! cargo build --release -p disco-runtime --example resolve_loop
//! resolve_loop TOOLS KIND ROUNDS      # KIND: exact, spelling, typo or unknown
//! resolve_loop --catalog tests/corpus/names/bfcl-readonly.catalog.json \
//!     --cases tests/corpus/names/bfcl.cases.jsonl ROUNDS   # the `name` of each case
//! valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes resolve_loop 1000 typo 12
//! ```
//!
//! It prints the mean time of one resolution on stderr. Two runs with different ROUNDS under
//! cachegrind, diffed (`cg_diff`), give the counts of the resolutions alone. A real catalog is
//! built as it is read, without the server name and the descriptions the corpus test gives
//! it: the resolutions timed are the same in every build, not necessarily the corpus test's.

use std::hint::black_box;
use std::process::ExitCode;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::{Caller, Catalog, SearchOptions};

const SEED: u64 = 42;
const PROBES: usize = 256;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, catalog, cases_flag, cases, rounds] = args.as_slice() {
        if flag == "--catalog" && cases_flag == "--cases" {
            return match corpus(catalog, cases, rounds) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    let parsed = match args.as_slice() {
        [tools, kind, rounds] => tools
            .parse::<usize>()
            .ok()
            .zip(rounds.parse::<usize>().ok())
            .map(|(tools, rounds)| (tools, kind.as_str(), rounds)),
        _ => None,
    };
    let Some((tools, kind, rounds)) = parsed else {
        eprintln!(
            "usage: resolve_loop TOOLS exact|spelling|typo|unknown ROUNDS\n       \
             resolve_loop --catalog CATALOG --cases CASES ROUNDS"
        );
        return ExitCode::from(2);
    };
    let json = synth::catalog(tools, SEED, &synth::vocab());
    let catalog = match JsonCatalogProvider::from_value(&json).and_then(|provider| {
        Catalog::builder()
            .provider(provider)
            .search(SearchOptions::default().enabled(true))
            .from_specs([])
            .map_err(|e| e.to_string())
    }) {
        Ok(catalog) => catalog,
        Err(e) => {
            eprintln!("error: the synthetic catalog: {e}");
            return ExitCode::FAILURE;
        }
    };
    let probes = synth::probes(&json, PROBES, SEED + 1);
    let names = match kind {
        "exact" => probes.exact,
        "spelling" => probes.spelling,
        "typo" => probes.typo,
        "unknown" => probes.unknown,
        other => {
            eprintln!("error: no probes of kind `{other}`: exact, spelling, typo or unknown");
            return ExitCode::from(2);
        }
    };
    if names.is_empty() || rounds == 0 {
        eprintln!(
            "error: nothing to resolve ({} probes, {rounds} rounds)",
            names.len()
        );
        return ExitCode::from(2);
    }
    time(&catalog, &names, rounds);
    ExitCode::SUCCESS
}

/// A real catalog (a tools/list result) and the names of a corpus's cases.
fn corpus(catalog: &str, cases: &str, rounds: &str) -> Result<(), String> {
    let rounds: usize = rounds
        .parse()
        .map_err(|_| format!("ROUNDS `{rounds}` is not a count"))?;
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"));
    let json: serde_json::Value =
        serde_json::from_str(&read(catalog)?).map_err(|e| format!("{catalog}: {e}"))?;
    let catalog = JsonCatalogProvider::from_value(&json).and_then(|provider| {
        Catalog::builder()
            .provider(provider)
            .from_specs([])
            .map_err(|e| e.to_string())
    })?;
    let mut names = Vec::new();
    for (n, line) in read(cases)?.lines().enumerate() {
        let case: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{cases}:{}: {e}", n + 1))?;
        match case["name"].as_str() {
            Some(name) => names.push(name.to_string()),
            None => return Err(format!("{cases}:{}: no `name`", n + 1)),
        }
    }
    if names.is_empty() || rounds == 0 {
        return Err(format!(
            "nothing to resolve ({} names, {rounds} rounds)",
            names.len()
        ));
    }
    time(&catalog, &names, rounds);
    Ok(())
}

/// Resolves every name `rounds` times and prints the mean time of one resolution.
fn time(catalog: &Catalog, names: &[String], rounds: usize) {
    let caller = Caller::anonymous();
    // Once before the clock: the lexicon's tables are built on first use.
    for name in names {
        black_box(catalog.resolve(black_box(name), &caller));
    }
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for name in names {
            black_box(catalog.resolve(black_box(name), &caller));
        }
    }
    let each = start.elapsed().as_secs_f64() * 1e6 / (rounds * names.len()) as f64;
    eprintln!("{each:.3} us per resolution ({} names)", names.len());
}
