//! Discovery that learns from its own traffic.
//!
//! When the operator turns it on, a catalog records **discovery events**
//! ([`Discovery`](crate::catalog::Discovery)): names that resolved to no tool, with what was
//! suggested; names corrected, with the rule; `tool_search` queries, with the tools shown;
//! and each call, by the tool's name and whether it succeeded. Never an argument value. Each
//! event carries the caller as an HMAC-SHA256 of its identity under a secret made at first run
//! (every anonymous caller is one caller), and its transport session (none for stateless
//! HTTP: no sequence is learned there).
//!
//! The [`learner`] turns the events into candidate aliases and keywords, each with the
//! distinct callers and sessions behind it and the safety rules applied; [`report`] prints
//! them ready to paste. Events live in an [`EventStore`]: [`MemoryStore`], or a SQLite file
//! (`SqliteStore`, feature `learning`) capped in size and expired after 30 days, or one
//! PostgreSQL database a fleet of processes shares (`PostgresStore`, feature
//! `learning-postgres`), with the same bounds.

pub mod learner;
pub mod report;
mod store;

#[cfg(feature = "learning")]
mod files;
#[cfg(feature = "learning-postgres")]
mod postgres;
#[cfg(feature = "learning")]
mod recorder;
#[cfg(feature = "learning")]
mod sqlite;

pub use learner::{
    facts_of, gather, judge, Candidate, Evidence, LearnOptions, Lesson, Status, Support, ToolFacts,
};
pub use store::{EventStore, Forget, MemoryStore, StoreError, StoredEvent};

#[cfg(feature = "learning-postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "learning")]
pub use recorder::{
    caller_hmac, now, secret_in, Recorder, RecorderOptions, DEFAULT_QUEUE, DEFAULT_TTL, SECRET_FILE,
};
#[cfg(feature = "learning")]
pub use sqlite::{SqliteStore, DEFAULT_MAX_BYTES, EVENTS_FILE};

/// The candidates of a store's events against a catalog's tools.
pub fn candidates(
    store: &dyn EventStore,
    catalog: &crate::catalog::Catalog,
    options: &LearnOptions,
) -> Result<Vec<Candidate>, StoreError> {
    let events = store.events()?;
    Ok(judge(
        &gather(&events, options.window),
        &facts_of(catalog),
        options,
    ))
}

/// The ready keyword candidates as `(tool, word, weight)`, what
/// [`Catalog::set_learned_keywords`](crate::Catalog::set_learned_keywords) takes.
pub fn learned_keywords(candidates: &[Candidate]) -> Vec<(String, String, f32)> {
    candidates
        .iter()
        .filter(|c| c.status == Status::Ready)
        .filter_map(|c| match &c.lesson {
            Lesson::Keyword { word, tool } => Some((tool.clone(), word.clone(), c.weight)),
            Lesson::Alias { .. } => None,
        })
        .collect()
}

/// The ready alias candidates as `(name, tool)`, what
/// [`Catalog::set_learned_aliases`](crate::Catalog::set_learned_aliases) takes (online
/// learning: ready means the tool is read-only and the evidence enough).
pub fn learned_aliases(candidates: &[Candidate]) -> Vec<(String, String)> {
    candidates
        .iter()
        .filter(|c| c.status == Status::Ready)
        .filter_map(|c| match &c.lesson {
            Lesson::Alias { name, tool } => Some((name.clone(), tool.clone())),
            Lesson::Keyword { .. } => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
