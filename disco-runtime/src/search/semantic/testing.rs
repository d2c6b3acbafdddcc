//! What the tests of the model's concurrent work share: a bound on waiting that turns a hang
//! into a failure, a latch, and an encoder that counts its calls and lets a test hold or
//! break them.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::cache::text_key;
use super::Encoder;

/// How long a test waits for what must happen before it calls it a hang. Generous: the
/// machine may be loaded, and nothing here measures speed.
pub(crate) const HANG: Duration = Duration::from_secs(60);

/// `f` on a thread of its own: its result, or a failure naming `what` when it does not end
/// (a wait that never ends fails the test instead of stopping it).
pub(crate) fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(HANG) {
        Ok(Ok(v)) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{what}: still waiting after {HANG:?}"),
    }
}

/// Waits until `done` says so, failing after [`HANG`].
pub(crate) fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not after {HANG:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A count that threads raise and wait on.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Latch {
    /// Raises the count by one.
    pub(crate) fn raise(&self) {
        *self.count.lock().unwrap() += 1;
        self.changed.notify_all();
    }

    /// Waits until the count is at least `n`, failing after [`HANG`].
    pub(crate) fn wait_for(&self, n: usize) {
        let deadline = Instant::now() + HANG;
        let mut count = self.count.lock().unwrap();
        while *count < n {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "a latch was not raised to {n} in {HANG:?}");
            count = self.changed.wait_timeout(count, left).unwrap().0;
        }
    }
}

/// How much `text` is about each of three things (zodiac, money, weather): how many of
/// their words it holds.
pub(crate) fn directions(text: &str) -> [f32; 3] {
    let t = text.to_lowercase();
    [
        &["horoscope", "astrology", "zodiac"][..],
        &["money", "currency"][..],
        &["weather", "rain"][..],
    ]
    .map(|words| words.iter().filter(|w| t.contains(*w)).count() as f32)
}

/// What a [`Probe`] does before a call, given the call's number (from 0, batches and single
/// texts alike) and its texts: hold it, count it, panic in it.
pub(crate) type Hook = Box<dyn Fn(usize, &[String]) + Send + Sync>;

/// An encoder over three directions (zodiac, money, weather) and a faint fourth fixed by the
/// text's key (so that no two texts share a vector), which counts its calls and runs `hook`
/// before each.
pub(crate) struct Probe {
    /// Calls of either method.
    pub(crate) calls: AtomicUsize,
    /// Calls of [`Encoder::embed`], one text each.
    pub(crate) singles: AtomicUsize,
    /// Texts embedded (by calls that did not panic).
    pub(crate) texts: AtomicUsize,
    hook: Hook,
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("calls", &self.calls)
            .finish_non_exhaustive()
    }
}

impl Probe {
    pub(crate) fn new(hook: impl Fn(usize, &[String]) + Send + Sync + 'static) -> Arc<Probe> {
        Arc::new(Probe {
            calls: AtomicUsize::new(0),
            singles: AtomicUsize::new(0),
            texts: AtomicUsize::new(0),
            hook: Box::new(hook),
        })
    }

    /// The vector of `text`, without counting or hooks.
    pub(crate) fn vector(text: &str) -> Vec<f32> {
        let [zodiac, money, weather] = directions(text);
        let key = text_key(text);
        let v = [zodiac, money, weather, 0.01 + f32::from(key[0]) / 2550.0];
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn enter(&self, texts: &[String]) {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        (self.hook)(call, texts);
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
    }

    /// `Probe` as a model's encoder, the test keeping its counts.
    pub(crate) fn model(self: &Arc<Probe>, id: &str) -> super::SemanticModel {
        super::SemanticModel::from_encoder(Box::new(self.clone()), id)
    }
}

impl Encoder for Arc<Probe> {
    fn kind(&self) -> &'static str {
        "probe"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.singles.fetch_add(1, Ordering::SeqCst);
        self.enter(std::slice::from_ref(&text.to_string()));
        Some(Probe::vector(text))
    }
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        self.enter(texts);
        texts.iter().map(|t| Some(Probe::vector(t))).collect()
    }
    fn approx_heap_bytes(&self) -> usize {
        0
    }
}
