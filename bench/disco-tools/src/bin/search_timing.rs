//! `search_timing CATALOG < QUERIES`: builds disco's catalog with search on (default options)
//! and prints, for each query line on stdin, the microseconds one top-5 search takes (the
//! median of 5 repeats, after one warm-up), one number a line. Used by bench/fastmcp/compare.py
//! for the in-process side of the latency comparison.

use std::io::BufRead;
use std::time::Instant;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::{Caller, Catalog, SearchOptions};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: search_timing CATALOG < QUERIES");
        std::process::exit(2);
    };
    let provider = JsonCatalogProvider::from_file(std::path::Path::new(&path))?;
    let catalog = Catalog::builder()
        .provider(provider)
        .search(SearchOptions::default().enabled(true))
        .from_specs([])?;
    let caller = Caller::anonymous();
    for line in std::io::stdin().lock().lines() {
        let query = line?;
        std::hint::black_box(catalog.search(&query, 5, &caller));
        let mut times: Vec<f64> = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(catalog.search(&query, 5, &caller));
                t0.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("{:.2}", times[2]);
    }
    Ok(())
}
