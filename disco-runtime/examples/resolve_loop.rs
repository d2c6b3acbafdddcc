//! Resolves one kind of the micro benchmark's probes in a loop: the same synthetic catalog
//! (`bench/synth`, seed 42) and the same 256 probes as `benches/micro.rs`'s `resolve` group,
//! without criterion, so that a build can be timed beside another in paired rounds
//! (`bench/resolve_pairs.py`) or run under cachegrind's cache and branch simulation.
//!
//! ```text
//! cargo build --release -p disco-runtime --example resolve_loop
//! resolve_loop TOOLS KIND ROUNDS      # KIND: exact, spelling, typo or unknown
//! valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes resolve_loop 1000 typo 12
//! ```
//!
//! It prints the mean time of one resolution on stderr. Two runs with different ROUNDS under
//! cachegrind, diffed (`cg_diff`), give the counts of the resolutions alone.

use std::hint::black_box;
use std::process::ExitCode;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::{Caller, Catalog, SearchOptions};

const SEED: u64 = 42;
const PROBES: usize = 256;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [tools, kind, rounds] => tools
            .parse::<usize>()
            .ok()
            .zip(rounds.parse::<usize>().ok())
            .map(|(tools, rounds)| (tools, kind.as_str(), rounds)),
        _ => None,
    };
    let Some((tools, kind, rounds)) = parsed else {
        eprintln!("usage: resolve_loop TOOLS exact|spelling|typo|unknown ROUNDS");
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
        eprintln!("error: nothing to resolve ({} probes, {rounds} rounds)", names.len());
        return ExitCode::from(2);
    }
    let caller = Caller::anonymous();
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for name in &names {
            black_box(catalog.resolve(black_box(name), &caller));
        }
    }
    let each = start.elapsed().as_secs_f64() * 1e6 / (rounds * names.len()) as f64;
    eprintln!("{each:.3} us per resolution ({} probes)", names.len());
    ExitCode::SUCCESS
}
