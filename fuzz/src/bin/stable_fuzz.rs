//! Runs the fuzz targets on stable Rust, without libFuzzer: first every file of the
//! target's corpus, then inputs mutated from the corpus (bit flips, byte edits, splices,
//! repeated chunks, dictionary words) until the time for that target is up. There is no
//! coverage feedback: this is a bounded random search around the corpus, not a substitute
//! for `cargo +nightly fuzz run` (FUZZING.md). A panic is a finding: the input is written to
//! `fuzz/artifacts/<target>/` and the run exits non-zero.
//!
//! ```text
//! cargo run --release --manifest-path fuzz/Cargo.toml --bin stable_fuzz -- [--secs N] [--seed S] [target...]
//! ```

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use disco_fuzz::TARGETS;

/// xorshift64*: deterministic for a given seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const DICTIONARY: &[&str] = &[
    "_",
    "-",
    ".",
    " ",
    "__",
    "mcp__",
    "disco__",
    "disco.",
    "s",
    "es",
    "_door",
    "unlock",
    "lock",
    "delete",
    "drop",
    "get_",
    "search",
    "paper",
    "Ü",
    "ß",
    "İ",
    "\u{301}",
    "\u{200b}",
    "😀",
    "\u{0}",
    "\n",
    "\t",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "null",
    "true",
    "1e309",
    "-0",
    "18446744073709551616",
    "\"query\"",
    "\"limit\"",
    "\"Limit\"",
    "\"max_results\"",
    "\"1\"",
    "\"yes\"",
    "[\"a\"]",
    "{}",
    "# Arguments",
    "* `query` - ",
    "* `",
    "` - ",
    "```",
    "# Examples",
    "- ",
    "1. ",
    "    ",
    "<br>",
    "**",
    "##",
    "\r",
];

fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(9) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = rng.next() as u8;
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                let n = 1 + rng.below(8.min(out.len() - i));
                out.drain(i..i + n);
            }
            3 => {
                let i = rng.below(out.len() + 1);
                out.insert(i, rng.next() as u8);
            }
            4 | 5 => {
                let word = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                let i = rng.below(out.len() + 1);
                out.splice(i..i, word.iter().copied());
            }
            6 if !corpus.is_empty() => {
                // Splice: our head, another entry's tail.
                let other = &corpus[rng.below(corpus.len())];
                let cut = rng.below(out.len() + 1);
                let from = rng.below(other.len() + 1);
                out.truncate(cut);
                out.extend_from_slice(&other[from..]);
            }
            7 if !out.is_empty() => {
                // Repeat a chunk: long names, deep nesting, many keys.
                let i = rng.below(out.len());
                let n = 1 + rng.below(16.min(out.len() - i));
                let chunk = out[i..i + n].to_vec();
                let most = if rng.below(20) == 0 { 2_000 } else { 16 };
                let times = 1 + rng.below(most);
                for _ in 0..times {
                    out.splice(i..i, chunk.iter().copied());
                }
            }
            8 if !out.is_empty() => {
                out.truncate(rng.below(out.len()));
            }
            _ => {}
        }
    }
    out.truncate(256 * 1024);
    out
}

fn load_corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn save_crash(target: &str, input: &[u8]) -> PathBuf {
    let mut h = DefaultHasher::new();
    input.hash(&mut h);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("artifacts")
        .join(target);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("crash-{:016x}", h.finish()));
    let _ = std::fs::write(&path, input);
    path
}

fn main() {
    let mut secs = 10u64;
    let mut seed = 0x5eed_d15c_u64;
    let mut only: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--secs" => secs = args.next().and_then(|v| v.parse().ok()).unwrap_or(secs),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(seed),
            other => only.push(other.to_string()),
        }
    }
    // Findings are reported once each, below; keep the default hook's noise out.
    std::panic::set_hook(Box::new(|_| {}));
    let corpus_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut failed = false;
    for &(name, target) in TARGETS {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let corpus = load_corpus(&corpus_root.join(name));
        let mut rng = Rng(seed ^ (name.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let started = Instant::now();
        let budget = Duration::from_secs(secs);
        let (mut runs, mut crashes, mut slowest) = (0u64, 0u64, Duration::ZERO);
        let mut run = |input: &[u8], crashes: &mut u64| {
            let t = Instant::now();
            let outcome = std::panic::catch_unwind(|| target(input));
            slowest = slowest.max(t.elapsed());
            if let Err(panic) = outcome {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let path = save_crash(name, input);
                eprintln!(
                    "{name}: CRASH {message} (input saved to {})",
                    path.display()
                );
                *crashes += 1;
            }
        };
        for input in &corpus {
            run(input, &mut crashes);
            runs += 1;
        }
        while started.elapsed() < budget && crashes < 10 {
            let base: &[u8] = if corpus.is_empty() {
                &[]
            } else {
                &corpus[rng.below(corpus.len())]
            };
            let input = mutate(&mut rng, base, &corpus);
            run(&input, &mut crashes);
            runs += 1;
        }
        println!(
            "{name}: {runs} inputs ({} corpus) in {:.1} s, {crashes} crashes, slowest input {:.1} ms",
            corpus.len(),
            started.elapsed().as_secs_f64(),
            slowest.as_secs_f64() * 1000.0
        );
        failed |= crashes > 0;
    }
    if failed {
        std::process::exit(1);
    }
}
