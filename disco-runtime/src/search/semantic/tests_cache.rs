//! The vectors cached on disk and made in the background: what an index reads back, what it
//! refuses, and what it searches with before and after its vectors are ready.

use super::cache::{self, text_key, VectorCache};
use super::*;
use crate::search::index::{SearchDoc, SearchIndex, SemanticBuild};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// An encoder over three directions (zodiac, money, weather) that counts the texts it embeds
/// and, when gated, waits before embedding tools.
#[derive(Debug, Default)]
struct Counting {
    embedded: AtomicUsize,
    gate: Option<Arc<(Mutex<bool>, Condvar)>>,
}

impl Encoder for Counting {
    fn kind(&self) -> &'static str {
        "counting"
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let v = super::testing::directions(text);
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        (n > 0.0).then(|| v.iter().map(|x| x / n).collect())
    }
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        if let Some(gate) = &self.gate {
            let (open, cv) = &**gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
        }
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        texts.iter().map(|t| self.embed(t)).collect()
    }
    fn approx_heap_bytes(&self) -> usize {
        0
    }
}

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        title: None,
        description: description.into(),
        keywords: Vec::new(),
        aliases: Vec::new(),
        params: Vec::new(),
    }
}

fn docs() -> Vec<SearchDoc> {
    vec![
        doc("StrologyTool", "Provides astrology services"),
        doc("ExchangeTool", "Convert currency"),
        doc("get_forecast", "Weather for a city"),
    ]
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("disco-vectors-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A model of a fresh [`Counting`] under `id`, and the counter.
fn counting(id: &str) -> (Arc<SemanticModel>, Arc<Counting>) {
    let c = Arc::new(Counting::default());
    struct Shared(Arc<Counting>);
    impl fmt::Debug for Shared {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.fmt(f)
        }
    }
    impl Encoder for Shared {
        fn kind(&self) -> &'static str {
            self.0.kind()
        }
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn embed(&self, t: &str) -> Option<Vec<f32>> {
            self.0.embed(t)
        }
        fn embed_all(&self, t: &[String]) -> Vec<Option<Vec<f32>>> {
            self.0.embed_all(t)
        }
        fn approx_heap_bytes(&self) -> usize {
            0
        }
    }
    let m = SemanticModel::from_encoder(Box::new(Shared(c.clone())), id);
    (Arc::new(m), c)
}

fn build(docs: &[SearchDoc], model: Arc<SemanticModel>, dir: &Path) -> SearchIndex {
    let b = SemanticBuild {
        cache: Some(dir.to_path_buf()),
        background: false,
    };
    SearchIndex::build_with_semantic_reusing(docs, model, None, &b)
}

fn top(index: &SearchIndex, q: &str) -> Option<usize> {
    index.search(q, 5, &|_| true).first().map(|h| h.index)
}

/// A restart (a new model object of the same identity) embeds nothing the file holds; a new
/// tool text is embedded and added; another model's file is another file.
#[test]
fn vectors_are_reused_across_restarts_by_model_and_text() {
    let dir = scratch("restart");
    let (m, c) = counting("model-a");
    let first = build(&docs(), m.clone(), &dir);
    assert_eq!(c.embedded.load(Ordering::SeqCst), 3);
    assert_eq!(top(&first, "horoscope"), Some(0));
    let file = cache::file_of(&dir, m.id());
    assert!(file.is_file());

    let (m2, c2) = counting("model-a");
    let again = build(&docs(), m2, &dir);
    assert_eq!(c2.embedded.load(Ordering::SeqCst), 0, "all from the file");
    for q in ["horoscope", "money", "rain", "astrology services"] {
        assert_eq!(
            again.search(q, 5, &|_| true),
            first.search(q, 5, &|_| true),
            "{q}"
        );
    }

    let mut changed = docs();
    changed[2].description = "Rain and weather".into();
    changed.push(doc("zodiac_daily", "Daily zodiac"));
    let (m3, c3) = counting("model-a");
    build(&changed, m3, &dir);
    assert_eq!(c3.embedded.load(Ordering::SeqCst), 2, "the new texts alone");
    // The file now holds both versions of the changed tool: going back embeds nothing.
    let (m4, c4) = counting("model-a");
    build(&docs(), m4, &dir);
    assert_eq!(c4.embedded.load(Ordering::SeqCst), 0);

    let (other, c5) = counting("model-b");
    build(&docs(), other.clone(), &dir);
    assert_eq!(
        c5.embedded.load(Ordering::SeqCst),
        3,
        "another model embeds its own"
    );
    assert_ne!(cache::file_of(&dir, other.id()), file);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whatever is wrong with the file (any byte changed, cut anywhere, another model's or
/// dimension's under this name), it is not read, the tools are embedded, and a good file
/// takes its place.
#[test]
fn a_damaged_or_foreign_cache_file_is_ignored_and_rewritten() {
    let dir = scratch("damaged");
    let (m, _) = counting("model-a");
    build(&docs(), m.clone(), &dir);
    let file = cache::file_of(&dir, m.id());
    let good = std::fs::read(&file).unwrap();
    assert_eq!(cache::parse(&good, m.id(), 3).unwrap().len(), 3);

    let mut bad: Vec<Vec<u8>> = Vec::new();
    for at in (0..good.len()).step_by(7).chain([good.len() - 1]) {
        let mut b = good.clone();
        b[at] ^= 0x40;
        bad.push(b);
    }
    for len in (0..good.len()).step_by(11) {
        bad.push(good[..len].to_vec());
    }
    let mut longer = good.clone();
    longer.push(0);
    bad.push(longer);
    let keys: Vec<_> = ["a", "b"].iter().map(|t| text_key(t)).collect();
    let vectors = [vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0]];
    let entries = || keys.iter().zip(vectors.iter().map(|v| v.as_slice()));
    bad.push(cache::serialize(
        "another",
        3,
        entries(),
        &Default::default(),
    ));
    bad.push(cache::serialize(m.id(), 4, entries(), &Default::default()));
    let nan = [vec![f32::NAN, 0.0, 0.0]];
    bad.push(cache::serialize(
        m.id(),
        3,
        keys.iter().zip(nan.iter().map(|v| v.as_slice())),
        &Default::default(),
    ));
    for (n, b) in bad.iter().enumerate() {
        assert!(cache::parse(b, m.id(), 3).is_err(), "case {n} was read");
        std::fs::write(&file, b).unwrap();
        let (again, c) = counting("model-a");
        let index = build(&docs(), again, &dir);
        assert_eq!(c.embedded.load(Ordering::SeqCst), 3, "case {n}");
        assert_eq!(top(&index, "horoscope"), Some(0));
        let rewritten = std::fs::read(&file).unwrap();
        assert_eq!(
            cache::parse(&rewritten, m.id(), 3).unwrap().len(),
            3,
            "case {n}"
        );
    }
    // A directory that cannot be made: the index is built all the same.
    let blocked = dir.join("file-not-dir");
    std::fs::write(&blocked, b"x").unwrap();
    let (again, c) = counting("model-a");
    let index = build(&docs(), again, &blocked.join("sub"));
    assert_eq!(
        (c.embedded.load(Ordering::SeqCst), top(&index, "horoscope")),
        (3, Some(0))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// In the background, the index searches by keywords until the vectors are ready, then
/// fuses: a query that shares no word with a tool finds it only then.
#[test]
fn background_vectors_keep_keyword_search_until_they_are_ready() {
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let c = Arc::new(Counting {
        embedded: AtomicUsize::new(0),
        gate: Some(gate.clone()),
    });
    #[derive(Debug)]
    struct Gated(Arc<Counting>);
    impl Encoder for Gated {
        fn kind(&self) -> &'static str {
            "gated"
        }
        fn dim(&self) -> usize {
            3
        }
        fn embed(&self, t: &str) -> Option<Vec<f32>> {
            self.0.embed(t)
        }
        fn embed_all(&self, t: &[String]) -> Vec<Option<Vec<f32>>> {
            self.0.embed_all(t)
        }
        fn approx_heap_bytes(&self) -> usize {
            0
        }
    }
    let model = Arc::new(SemanticModel::from_encoder(
        Box::new(Gated(c.clone())),
        "gated",
    ));
    let b = SemanticBuild {
        cache: None,
        background: true,
    };
    let index = SearchIndex::build_with_semantic_reusing(&docs(), model, None, &b);
    // Before: keywords alone, which know no "horoscope" but do know "currency".
    assert!(!index.semantic_ready());
    assert_eq!(top(&index, "horoscope"), None);
    assert_eq!(top(&index, "convert currency"), Some(1));
    let (open, cv) = &*gate;
    *open.lock().unwrap() = true;
    cv.notify_all();
    index.wait_semantic();
    assert!(index.semantic_ready());
    assert_eq!(top(&index, "horoscope"), Some(0));
    assert_eq!(c.embedded.load(Ordering::SeqCst), 3);
}

#[test]
fn the_user_cache_directory_follows_the_environment() {
    assert_eq!(VectorCache::Off.dir(), None);
    let d = std::path::PathBuf::from("/some/where");
    assert_eq!(VectorCache::Dir(d.clone()).dir(), Some(d));
    if cfg!(all(unix, not(target_os = "macos"))) {
        if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            assert_eq!(
                VectorCache::UserDir.dir(),
                Some(std::path::PathBuf::from(xdg).join("disco"))
            );
        } else if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            let want = std::path::PathBuf::from(home).join(".cache/disco");
            assert_eq!(VectorCache::UserDir.dir(), Some(want));
        }
    }
}

/// Whatever already lies in the cache directory (links to another file, stale files under
/// the names a writer might pick), writing the cache never follows, truncates or removes
/// it, and leaves a whole file in place.
#[cfg(unix)]
#[test]
fn writing_the_cache_never_follows_or_reuses_an_existing_path() {
    let dir = scratch("planted");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, b"not yours").unwrap();
    let file = cache::file_of(&dir, "model-a");
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    // Names derived from the file's own, and from this process: links to the victim.
    let pid = std::process::id();
    let mut planted = Vec::new();
    for n in 0..2048 {
        for candidate in [
            format!("{name}.tmp{n}"),
            format!(".{name}.{n}.tmp"),
            format!("vectors-model-a.tmp{pid}-{n}"),
            format!("{}.tmp{pid}-{n}", name.trim_end_matches(".bin")),
        ] {
            let at = dir.join(candidate);
            if std::os::unix::fs::symlink(&victim, &at).is_ok() {
                planted.push(at);
            }
        }
    }
    let keys = [text_key("a")];
    let vectors = [vec![1.0f32, 0.0, 0.0]];
    let bytes = cache::serialize(
        "model-a",
        3,
        keys.iter().zip(vectors.iter().map(|v| v.as_slice())),
        &Default::default(),
    );
    for _ in 0..8 {
        cache::write(&file, &bytes).unwrap();
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"not yours");
    for at in &planted {
        assert!(at.symlink_metadata().unwrap().file_type().is_symlink());
    }
    let read = std::fs::read(&file).unwrap();
    assert_eq!(cache::parse(&read, "model-a", 3).unwrap().len(), 1);
    // Only the file, the victim and the planted links: no temporary file is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), planted.len() + 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writers at once on the same cache file (as processes sharing a cache directory are),
/// each with its own content, while a reader reads it: the reader only ever sees a whole
/// file of one of them, and one of them is in place at the end, with nothing else left.
#[test]
fn writers_at_once_leave_a_whole_file() {
    let dir = scratch("writers");
    let file = cache::file_of(&dir, "model-a");
    let contents: Vec<Vec<u8>> = (0..4)
        .map(|w| {
            let keys: Vec<_> = (0..200).map(|i| text_key(&format!("{w}-{i}"))).collect();
            let vectors: Vec<Vec<f32>> = (0..200).map(|i| vec![w as f32, i as f32, 1.0]).collect();
            cache::serialize(
                "model-a",
                3,
                keys.iter().zip(vectors.iter().map(|v| v.as_slice())),
                &Default::default(),
            )
        })
        .collect();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = contents
            .iter()
            .map(|bytes| {
                let file = &file;
                s.spawn(move || {
                    (0..25)
                        .map(|_| cache::write(file, bytes))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut partial = 0;
            while !done.load(Ordering::SeqCst) {
                if let Ok(bytes) = std::fs::read(&file) {
                    partial += usize::from(!contents.contains(&bytes));
                }
            }
            partial
        });
        let failed: Vec<String> = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .filter_map(|r| r.err().map(|e| e.to_string()))
            .collect();
        done.store(true, Ordering::SeqCst);
        assert_eq!(reader.join().unwrap(), 0, "a reader saw a partial file");
        assert!(failed.is_empty(), "writes failed: {failed:?}");
    });
    assert!(contents.contains(&std::fs::read(&file).unwrap()));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
