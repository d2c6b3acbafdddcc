//! The store that shares the tool vectors being made between indexes of one model: every
//! claim ends in a vector or is given up (an index dropped, an encoder that panicked), so no
//! index waits for ever; and the cache file written at the end loses no row, whoever writes
//! it and however many write at once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::cache::{self, text_key, TextKey};
use super::store::{Found, Store};
use super::testing::{until, within, Latch, Probe};
use crate::search::index::{semantic_text, SearchDoc, SearchIndex, SemanticBuild};

/// The texts an index embeds in one batch: an index that stops stops between batches.
const BATCH: usize = crate::search::index::EMBED_BLOCK;

/// The vector a test puts for `key`.
fn vector_of(key: &TextKey) -> Vec<f32> {
    vec![f32::from(key[0]), f32::from(key[1]), 1.0]
}

/// How a job ends in [`claims_end_in_a_vector_or_are_given_up`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// Lets its claims go, then waits for the texts others claimed.
    Waits,
    /// Dropped, as an index that is replaced.
    Dropped,
    /// Unwinds from a panic, as an index whose encoder panicked.
    Panics,
}

/// Jobs started one after the other claim each text at its first asking; each then puts
/// some of its claims and ends (waiting for the others' texts, dropped, or unwinding from a
/// panic) on a thread of its own, in an order and with delays of the seed's choosing. Every
/// wait ends; a waiter gets a text's vector exactly when its claimer put it, and `None` when
/// the claim was given up. Once no job is left, the store holds nothing.
#[test]
fn claims_end_in_a_vector_or_are_given_up() {
    let mut rng = fastrand::Rng::with_seed(0x0057_07E5);
    for case in 0..300 {
        let store = Arc::new(Store::default());
        let pool: Vec<TextKey> = (0..rng.usize(1..10))
            .map(|i| text_key(&format!("text {i}")))
            .collect();
        let mut claimer: HashMap<TextKey, usize> = HashMap::new();
        let mut jobs = Vec::new();
        for j in 0..rng.usize(1..5) {
            let asks: Vec<TextKey> = (0..rng.usize(0..2 * pool.len()))
                .map(|_| pool[rng.usize(..pool.len())])
                .collect();
            let (job, found) = store.start(&asks);
            let mut mine = Vec::new();
            let mut theirs = Vec::new();
            for (k, f) in asks.iter().zip(found) {
                let first = !claimer.contains_key(k);
                let owner = *claimer.entry(*k).or_insert(j);
                match f {
                    Found::Mine if first => mine.push(*k),
                    Found::Theirs if !first => theirs.push((*k, owner)),
                    other => panic!("case {case}: job {j} found {other:?}, first {first}"),
                }
            }
            let put: Vec<TextKey> = mine.into_iter().filter(|_| rng.bool()).collect();
            let end = [End::Waits, End::Dropped, End::Panics][rng.usize(..3)];
            jobs.push((job, put, theirs, end));
        }
        let put_by: Vec<HashSet<TextKey>> = jobs
            .iter()
            .map(|(_, put, _, _)| put.iter().copied().collect())
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        rng.shuffle(&mut order);
        let mut jobs: Vec<_> = jobs.into_iter().map(Some).collect();
        let mut threads = Vec::new();
        for j in order {
            let (mut job, put, theirs, end) = jobs[j].take().expect("each job once");
            let want: Vec<Option<Vec<f32>>> = theirs
                .iter()
                .map(|(k, owner)| put_by[*owner].contains(k).then(|| vector_of(k)))
                .collect();
            let keys: Vec<TextKey> = theirs.iter().map(|t| t.0).collect();
            let spins = rng.usize(0..100);
            let thread = std::thread::spawn(move || {
                for _ in 0..spins {
                    std::thread::yield_now();
                }
                let vectors: Vec<Vec<f32>> = put.iter().map(vector_of).collect();
                job.put(put.iter().copied().zip(vectors.iter().map(Vec::as_slice)));
                match end {
                    End::Waits => {
                        job.release();
                        assert_eq!(job.wait(&keys), want, "case {case}");
                    }
                    End::Dropped => drop(job),
                    // Without the panic hook's message: the unwinding is the point.
                    End::Panics => {
                        let _held = job;
                        std::panic::resume_unwind(Box::new("the encoder panicked"));
                    }
                }
            });
            threads.push((thread, end));
        }
        let ends = within(&format!("case {case}"), move || {
            threads
                .into_iter()
                .map(|(t, end)| (t.join(), end))
                .collect::<Vec<_>>()
        });
        for (joined, end) in ends {
            match joined {
                Err(_) if end == End::Panics => {}
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => assert_ne!(end, End::Panics),
            }
        }
        let (_job, found) = store.start(&pool);
        assert!(
            found.iter().all(|f| *f == Found::Mine),
            "case {case}: the store kept {found:?}"
        );
    }
}

fn docs(prefix: &str, n: usize) -> Vec<SearchDoc> {
    (0..n)
        .map(|i| SearchDoc {
            name: format!("{prefix}_{i}"),
            title: None,
            description: format!("Does the {prefix} thing number {i}"),
            keywords: Vec::new(),
            aliases: Vec::new(),
            params: Vec::new(),
        })
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("disco-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn build(
    docs: &[SearchDoc],
    model: &Arc<super::SemanticModel>,
    dir: &Path,
    bg: bool,
) -> SearchIndex {
    let build = SemanticBuild {
        cache: Some(dir.to_path_buf()),
        background: bg,
    };
    SearchIndex::build_with_semantic_reusing(docs, model.clone(), None, &build)
}

/// Every tool of `docs` has its own text's vector in `index` (which is waited for).
fn vectors_are_right(index: &mut SearchIndex, docs: &[SearchDoc], what: &str) {
    for d in docs {
        let got = index.semantic_vector_mut(&d.name).map(|v| v.to_vec());
        assert_eq!(
            got,
            Some(Probe::vector(&semantic_text(d))),
            "{what}: {}",
            d.name
        );
    }
}

/// Writes a cache file for `model` holding `docs`' vectors, as an earlier catalog would have.
fn earlier_file(dir: &Path, model: &super::SemanticModel, docs: &[SearchDoc]) -> PathBuf {
    let keys: Vec<TextKey> = docs.iter().map(|d| text_key(&semantic_text(d))).collect();
    let vectors: Vec<Vec<f32>> = docs
        .iter()
        .map(|d| Probe::vector(&semantic_text(d)))
        .collect();
    let file = cache::file_of(dir, model.id());
    let bytes = cache::serialize(
        model.id(),
        4,
        keys.iter().zip(vectors.iter().map(Vec::as_slice)),
        &HashMap::new(),
    );
    cache::write(&file, &bytes).unwrap();
    file
}

/// The cache file holds the vector of every text of `docs`.
fn file_holds(file: &Path, model: &super::SemanticModel, docs: &[SearchDoc], what: &str) {
    let rows = cache::read(file, model.id(), 4);
    for d in docs {
        let text = semantic_text(d);
        assert_eq!(
            rows.get(&text_key(&text)),
            Some(&Probe::vector(&text)),
            "{what}: the file lost {}",
            d.name
        );
    }
}

/// A background index whose encoder holds its first batch, and other indexes of the same
/// texts started while it is held (all of whose texts it claimed), over a cache file that
/// held other rows already.
struct Held {
    probe: Arc<Probe>,
    model: Arc<super::SemanticModel>,
    dir: PathBuf,
    before: Vec<SearchDoc>,
    tools: Vec<SearchDoc>,
    first: Option<SearchIndex>,
    gate: Arc<Latch>,
    waiters: Vec<std::thread::JoinHandle<SearchIndex>>,
}

impl Held {
    /// `n` tools, `waiters` indexes waiting (made in the background or not); the encoder
    /// panics in its call numbered `panics_at`, if any.
    fn new(
        name: &str,
        n: usize,
        waiters: usize,
        background: bool,
        panics_at: Option<usize>,
    ) -> Held {
        let entered = Arc::new(Latch::default());
        let gate = Arc::new(Latch::default());
        let probe = Probe::new({
            let (entered, gate) = (entered.clone(), gate.clone());
            move |call, _| {
                if call == 0 {
                    entered.raise();
                    gate.wait_for(1);
                }
                if Some(call) == panics_at {
                    // Without the panic hook's message: the unwinding is the point.
                    std::panic::resume_unwind(Box::new("the encoder panicked"));
                }
            }
        });
        let model = Arc::new(probe.model(name));
        let dir = scratch(name);
        let before = docs("earlier", 5);
        earlier_file(&dir, &model, &before);
        let tools = docs("tool", n);
        let first = build(&tools, &model, &dir, true);
        entered.wait_for(1);
        let waiters: Vec<_> = (0..waiters)
            .map(|_| {
                let (tools, model, dir) = (tools.clone(), model.clone(), dir.clone());
                std::thread::spawn(move || {
                    let index = build(&tools, &model, &dir, background);
                    index.wait_semantic();
                    index
                })
            })
            .collect();
        let jobs = 1 + waiters.len();
        until("the waiters start", || model.store().jobs() == jobs);
        Held {
            probe,
            model,
            dir,
            before,
            tools,
            first: Some(first),
            gate,
            waiters,
        }
    }

    /// Lets the first batch go; once every index is made, checks the waiters' vectors and
    /// the cache file (every tool's row and every earlier one); how many texts were embedded.
    fn finish(mut self, case: &str) -> (Option<SearchIndex>, usize) {
        self.gate.raise();
        let waiters = std::mem::take(&mut self.waiters);
        let mut built = within(&format!("{case}: the waiters"), move || {
            waiters
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        for index in &mut built {
            vectors_are_right(index, &self.tools, case);
        }
        let first = self.first.take().map(|first| {
            within(&format!("{case}: the first index"), move || {
                first.wait_semantic();
                first
            })
        });
        // A dropped index's thread writes the file before its job ends.
        until("every index's thread ends", || {
            self.model.store().jobs() == 0
        });
        let file = cache::file_of(&self.dir, self.model.id());
        file_holds(&file, &self.model, &self.before, case);
        file_holds(&file, &self.model, &self.tools, case);
        std::fs::remove_dir_all(&self.dir).unwrap();
        (first, self.probe.texts.load(Ordering::SeqCst))
    }
}

/// An index whose vectors are made in the background is dropped while its encoder holds its
/// first batch, other indexes of the same texts waiting for them: it puts that batch and
/// stops, and the waiters take the rest over. They end, every vector right; each text is
/// embedded once with one waiter (with several, once more at most per waiter); the cache
/// file holds every text and the rows it held before.
#[test]
fn an_index_dropped_before_it_puts_its_texts_hands_them_to_its_waiters() {
    let mut rng = fastrand::Rng::with_seed(0xD40_99ED);
    for case in 0..6 {
        let n = rng.usize(BATCH + 1..3 * BATCH);
        let waiters = rng.usize(1..4);
        let mut held = Held::new(&format!("dropped-{case}"), n, waiters, rng.bool(), None);
        drop(held.first.take());
        let (_, texts) = held.finish(&format!("case {case}"));
        assert!(
            texts >= n && texts <= BATCH + waiters * (n - BATCH),
            "case {case}: {texts} texts embedded for {n}, {waiters} waiters"
        );
        if waiters == 1 {
            assert_eq!(texts, n, "case {case}");
        }
    }
}

/// An encoder panics in a batch of a background index while other indexes wait for those
/// texts: the failure is that index's alone (it ranks by keywords), and the waiters embed
/// the texts themselves, every vector right, each text once with one waiter. The cache file,
/// written only by indexes that claimed none of their texts, keeps the rows it held before.
#[test]
fn an_encoder_that_panics_hands_its_texts_to_the_waiters() {
    let mut rng = fastrand::Rng::with_seed(0xBAD_BA7C);
    for case in 0..8 {
        let n = rng.usize(1..3 * BATCH);
        let panics_at = rng.usize(..n.div_ceil(BATCH));
        let waiters = rng.usize(1..4);
        let held = Held::new(
            &format!("panics-{case}"),
            n,
            waiters,
            rng.bool(),
            Some(panics_at),
        );
        let (first, texts) = held.finish(&format!("case {case}"));
        let first = first.expect("kept");
        assert!(!first.semantic_ready(), "case {case}");
        let hits = first.search("tool_0", 1, &|_| true);
        assert_eq!(
            hits.first().map(|h| h.index),
            Some(0),
            "case {case}: keywords rank"
        );
        if waiters == 1 {
            assert_eq!(texts, n, "case {case}");
        }
    }
}

/// Indexes made at once over one cache file, each with tools of its own and some shared,
/// all reading the file before any writes it (the encoder holds their first batches until
/// all are in): the file ends with every row of every index and those it held before, each
/// index has every vector right, and each text the file did not hold is embedded once.
#[test]
fn indexes_writing_the_cache_at_once_lose_no_row() {
    let mut rng = fastrand::Rng::with_seed(0xCAC4E);
    for case in 0..10 {
        let k = rng.usize(2..5);
        let in_all = Arc::new(Latch::default());
        let probe = Probe::new({
            let in_all = in_all.clone();
            move |call, _| {
                if call < k {
                    in_all.raise();
                    in_all.wait_for(k);
                }
            }
        });
        let model = Arc::new(probe.model("writers"));
        let dir = scratch(&format!("writers-{case}"));
        let shared = docs("shared", 30);
        let mut before: Vec<SearchDoc> = docs("earlier", 5);
        before.extend(shared.iter().filter(|_| rng.usize(..4) == 0).cloned());
        let file = earlier_file(&dir, &model, &before);
        let sets: Vec<Vec<SearchDoc>> = (0..k)
            .map(|i| {
                let mut set = docs(&format!("own{i}"), rng.usize(1..20));
                set.extend(shared.iter().filter(|_| rng.bool()).cloned());
                set
            })
            .collect();
        let handles: Vec<_> = sets
            .iter()
            .map(|set| {
                let (set, model, dir) = (set.clone(), model.clone(), dir.clone());
                std::thread::spawn(move || build(&set, &model, &dir, false))
            })
            .collect();
        let mut built = within(&format!("case {case}: the writers"), move || {
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        for (index, set) in built.iter_mut().zip(&sets) {
            vectors_are_right(index, set, &format!("case {case}"));
        }
        let known: HashSet<String> = before.iter().map(|d| d.name.clone()).collect();
        let new: HashSet<String> = sets
            .iter()
            .flatten()
            .map(|d| d.name.clone())
            .filter(|n| !known.contains(n))
            .collect();
        assert_eq!(probe.texts.load(Ordering::SeqCst), new.len(), "case {case}");
        file_holds(&file, &model, &before, &format!("case {case}"));
        for set in &sets {
            file_holds(&file, &model, set, &format!("case {case}"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
