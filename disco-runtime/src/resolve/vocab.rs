//! Words a model swaps for one another in tool names.

use std::sync::OnceLock;

use crate::text::hash::FastMap;

/// Verb synonyms a model swaps freely. Each word maps to its class head. Classes that are
/// opposites of each other (create/delete) are listed in OPPOSITES by head, so `add` and
/// `remove` are opposed although neither is in the table itself.
pub(crate) const SYNONYMS: &[(&str, &str)] = &[
    ("search", "search"),
    ("find", "search"),
    ("lookup", "search"),
    ("query", "search"),
    ("locate", "search"),
    ("get", "get"),
    ("fetch", "get"),
    ("read", "get"),
    ("retrieve", "get"),
    ("show", "get"),
    ("obtain", "get"),
    ("view", "get"),
    ("create", "create"),
    ("add", "create"),
    ("new", "create"),
    ("make", "create"),
    ("insert", "create"),
    ("update", "update"),
    ("edit", "update"),
    ("modify", "update"),
    ("change", "update"),
    ("alter", "update"),
    ("delete", "delete"),
    ("remove", "delete"),
    ("erase", "delete"),
    ("destroy", "delete"),
    ("del", "delete"),
    ("rm", "delete"),
    ("list", "list"),
    ("enumerate", "list"),
    ("ls", "list"),
    ("send", "send"),
    ("post", "send"),
    ("publish", "send"),
    ("run", "run"),
    ("execute", "run"),
    ("exec", "run"),
    ("invoke", "run"),
    ("start", "start"),
    ("launch", "start"),
    ("boot", "start"),
    ("stop", "stop"),
    ("halt", "stop"),
    ("shutdown", "stop"),
    ("shut", "stop"),
    ("terminate", "stop"),
    ("kill", "stop"),
    ("calculate", "calculate"),
    ("compute", "calculate"),
    ("calc", "calculate"),
];

pub(crate) fn canon(stem: &str) -> &'static str {
    static MAP: OnceLock<FastMap<&'static str, &'static str>> = OnceLock::new();
    let map = MAP.get_or_init(|| SYNONYMS.iter().copied().collect());
    map.get(stem).copied().unwrap_or("")
}
