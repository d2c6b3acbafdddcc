//! The tool vectors a model is making in this process, shared by every index of that model
//! that is being built at the same time: a catalog, each scoped caller's catalog merged from
//! it while its vectors are still being made, a rebuild. Keyed by the tool text's key (as the
//! disk cache is): a text another index is embedding now is waited for, not embedded again,
//! so N callers at once cost one embedding.
//!
//! The vectors are kept only while some index is being made (an index keeps its own copy,
//! and a later one takes those of its base catalog by name and text): the store does not
//! double the memory of the vectors for the life of the server.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::cache::TextKey;

/// The vectors being shared now, and the texts being embedded.
#[derive(Debug, Default)]
pub(crate) struct Store {
    inner: Mutex<Inner>,
    /// Told whenever claimed texts get their vectors or are given up.
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Inner {
    /// A vector per text (all zero for a text without a token).
    ready: HashMap<TextKey, Vec<f32>>,
    /// Texts an index is embedding now.
    claimed: HashSet<TextKey>,
    /// Indexes being made now; when none is, `ready` is emptied.
    jobs: usize,
}

/// What the store says of one text asked for by [`Store::start`].
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// Its vector.
    Ready(Vec<f32>),
    /// Nobody is embedding it: the job is to, and holds its claim.
    Mine,
    /// Another index is embedding it: [`Job::wait`] for it.
    Theirs,
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        crate::util::lock(&self.inner)
    }

    /// The making of one index's vectors for `keys`: for each, its vector, or the claim to
    /// embed it, or that another index holds that claim. A key twice in `keys` is claimed at
    /// its first place and [`Found::Theirs`] after.
    pub(crate) fn start(self: &Arc<Self>, keys: &[TextKey]) -> (Job, Vec<Found>) {
        let mut guard = self.lock();
        let inner = &mut *guard;
        inner.jobs += 1;
        let mut held = HashSet::new();
        let found = keys
            .iter()
            .map(|k| match inner.ready.get(k) {
                Some(v) => Found::Ready(v.clone()),
                None if inner.claimed.insert(*k) => {
                    held.insert(*k);
                    Found::Mine
                }
                None => Found::Theirs,
            })
            .collect();
        drop(guard);
        let job = Job {
            store: self.clone(),
            held,
        };
        (job, found)
    }

    /// How many indexes are being made now (tests).
    #[cfg(test)]
    pub(crate) fn jobs(&self) -> usize {
        self.lock().jobs
    }

    /// Stores vectors, and lets the claims of their texts go.
    fn put<'a>(&self, made: impl IntoIterator<Item = (TextKey, &'a [f32])>) {
        let mut inner = self.lock();
        for (k, v) in made {
            inner.claimed.remove(&k);
            inner.ready.insert(k, v.to_vec());
        }
        drop(inner);
        self.changed.notify_all();
    }
}

/// One index's vectors being made: its claims, and its place among the jobs. Claims still
/// held when it ends (embedding stopped early, or an encoder panicked) are let go, so that
/// no index waits for them for ever.
#[derive(Debug)]
pub(crate) struct Job {
    store: Arc<Store>,
    held: HashSet<TextKey>,
}

impl Job {
    /// Stores the vectors of texts; those this job holds are no longer claimed.
    pub(crate) fn put<'v>(&mut self, made: impl IntoIterator<Item = (TextKey, &'v [f32])>) {
        let made: Vec<(TextKey, &[f32])> = made
            .into_iter()
            .inspect(|(k, _)| {
                self.held.remove(k);
            })
            .collect();
        self.store.put(made);
    }

    /// Lets every claim still held go (embedding stopped): a waiting index embeds them.
    pub(crate) fn release(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut inner = self.store.lock();
        for k in self.held.drain() {
            inner.claimed.remove(&k);
        }
        drop(inner);
        self.store.changed.notify_all();
    }

    /// Waits until none of `keys` is claimed (call [`Job::release`] first: a job that waits
    /// holds no claim, so no two jobs wait for each other); then each one's vector, `None`
    /// when its claim was given up without one.
    pub(crate) fn wait(&self, keys: &[TextKey]) -> Vec<Option<Vec<f32>>> {
        let mut inner = self.store.lock();
        while keys.iter().any(|k| inner.claimed.contains(k)) {
            inner = crate::util::wait(&self.store.changed, inner);
        }
        keys.iter().map(|k| inner.ready.get(k).cloned()).collect()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.release();
        let mut inner = self.store.lock();
        inner.jobs -= 1;
        if inner.jobs == 0 {
            inner.ready = HashMap::new();
        }
    }
}
