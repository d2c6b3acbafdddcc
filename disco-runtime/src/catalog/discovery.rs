//! What a catalog tells a discovery recorder: names that resolved to no tool or were
//! corrected, `tool_search` queries with the tools shown, and the calls that followed. Never
//! an argument value: an event holds names, a query and tool names, and nothing else.
//! The recorder (`crate::learn::Recorder`) stores them; the catalog only hands them over.

use serde::{Deserialize, Serialize};

use crate::tool::Caller;

/// The longest requested name or query an event keeps, in characters (the rest is cut).
pub const MAX_EVENT_TEXT: usize = 256;
/// The most tool names one event keeps (suggested or shown, best first).
pub const MAX_EVENT_NAMES: usize = 10;

/// One step of discovery as the catalog saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Discovery {
    /// A name that resolved to no tool the caller can see, with the names suggested to it.
    Unknown {
        /// The name as the caller wrote it.
        requested: String,
        /// The tools suggested for it, best first.
        suggested: Vec<String>,
    },
    /// A name corrected to a tool, and the rule that corrected it.
    Corrected {
        /// The name as the caller wrote it.
        requested: String,
        /// The tool it was corrected to.
        resolved: String,
        /// The rule that corrected it (`NameRule::as_str`).
        rule: String,
    },
    /// A `tool_search` query (one step of `queries`, or `query`) and the tools shown for it,
    /// best first.
    Search {
        /// The query as the caller wrote it.
        query: String,
        /// The tools shown for it, best first.
        shown: Vec<String>,
    },
    /// A call of a tool (named as it is in the catalog, after any correction) and whether it
    /// succeeded (not `isError`).
    Call {
        /// The tool called.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
    },
}

impl Discovery {
    /// The event with its texts made [`bounded_text`] and its lists clipped to
    /// [`MAX_EVENT_NAMES`] names: what any store keeps of it.
    pub fn bounded(self) -> Discovery {
        use bounded_text as text;
        fn names(mut v: Vec<String>) -> Vec<String> {
            v.truncate(MAX_EVENT_NAMES);
            v.into_iter().map(text).collect()
        }
        match self {
            Discovery::Unknown {
                requested,
                suggested,
            } => Discovery::Unknown {
                requested: text(requested),
                suggested: names(suggested),
            },
            Discovery::Corrected {
                requested,
                resolved,
                rule,
            } => Discovery::Corrected {
                requested: text(requested),
                resolved: text(resolved),
                rule: text(rule),
            },
            Discovery::Search { query, shown } => Discovery::Search {
                query: text(query),
                shown: names(shown),
            },
            Discovery::Call { tool, ok } => Discovery::Call {
                tool: text(tool),
                ok,
            },
        }
    }
}

/// A text as every store keeps it: clipped to [`MAX_EVENT_TEXT`] characters, each control
/// character (`\0` among them, which a PostgreSQL `TEXT` cannot hold; newlines and escapes,
/// which would reach a terminal through a report) replaced by U+FFFD. One rule for all stores,
/// so the same event reads back the same from each.
pub fn bounded_text(s: String) -> String {
    let s = match s.char_indices().nth(MAX_EVENT_TEXT) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s,
    };
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect()
    } else {
        s
    }
}

/// Where a catalog's discovery events go ([`CatalogBuilder::discovery`](super::CatalogBuilder::discovery)).
/// `record` runs on the call's own path: it must only hand the event over (a bounded queue),
/// never wait for a disk.
pub trait DiscoverySink: Send + Sync + 'static {
    /// One event of `caller`'s, in the transport session `session` (`None` without sessions:
    /// stateless HTTP, or a call made outside a server).
    fn record(&self, caller: &Caller, session: Option<u64>, event: Discovery);
}
