//! Counters of what resolution and repair did, so an operator can compare their traffic
//! before and after: how many calls were exact, corrected (and how), suggested or failed.

use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters, shared by every catalog built from the same configuration.
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    exact: AtomicU64,
    alias: AtomicU64,
    equivalent: AtomicU64,
    fuzzy: AtomicU64,
    unknown_suggested: AtomicU64,
    unknown: AtomicU64,
    args_repaired: AtomicU64,
    args_rejected: AtomicU64,
    tool_errors: AtomicU64,
    panics: AtomicU64,
    timeouts: AtomicU64,
    cancelled: AtomicU64,
    searches: AtomicU64,
    searches_empty: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct StatsSnapshot {
    /// tools/call requests (and execute_tool calls) received.
    pub calls: u64,
    /// Resolved by exact name.
    pub exact: u64,
    /// Resolved through an alias the author declared.
    pub alias: u64,
    /// Resolved as a spelling-equivalent name (case, separators, plural, order, prefix).
    pub equivalent: u64,
    /// Resolved by the guarded fuzzy tier.
    pub fuzzy: u64,
    /// Unknown tool, answered with suggestions.
    pub unknown_suggested: u64,
    /// Unknown tool, nothing to suggest.
    pub unknown: u64,
    /// Calls whose arguments were repaired.
    pub args_repaired: u64,
    /// Calls refused for their arguments.
    pub args_rejected: u64,
    /// Results with `isError: true` from the tool itself.
    pub tool_errors: u64,
    /// Calls whose tool panicked (answered as a failed call).
    pub panics: u64,
    /// Calls stopped at their timeout.
    pub timeouts: u64,
    /// Calls cancelled before they finished (through the call's cancellation token).
    pub cancelled: u64,
    /// tool_search queries.
    pub searches: u64,
    /// tool_search queries that found nothing.
    pub searches_empty: u64,
}

/// What to count.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    Call,
    Exact,
    Alias,
    Equivalent,
    Fuzzy,
    UnknownSuggested,
    Unknown,
    ArgsRepaired,
    ArgsRejected,
    ToolError,
    Panic,
    Timeout,
    Cancelled,
    Search,
    SearchEmpty,
}

impl Stats {
    pub(crate) fn count(&self, event: Event) {
        let counter = match event {
            Event::Call => &self.calls,
            Event::Exact => &self.exact,
            Event::Alias => &self.alias,
            Event::Equivalent => &self.equivalent,
            Event::Fuzzy => &self.fuzzy,
            Event::UnknownSuggested => &self.unknown_suggested,
            Event::Unknown => &self.unknown,
            Event::ArgsRepaired => &self.args_repaired,
            Event::ArgsRejected => &self.args_rejected,
            Event::ToolError => &self.tool_errors,
            Event::Panic => &self.panics,
            Event::Timeout => &self.timeouts,
            Event::Cancelled => &self.cancelled,
            Event::Search => &self.searches,
            Event::SearchEmpty => &self.searches_empty,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now. Each is read on its own, so a snapshot taken during calls may be a
    /// call apart between counters.
    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            calls: get(&self.calls),
            exact: get(&self.exact),
            alias: get(&self.alias),
            equivalent: get(&self.equivalent),
            fuzzy: get(&self.fuzzy),
            unknown_suggested: get(&self.unknown_suggested),
            unknown: get(&self.unknown),
            args_repaired: get(&self.args_repaired),
            args_rejected: get(&self.args_rejected),
            tool_errors: get(&self.tool_errors),
            panics: get(&self.panics),
            timeouts: get(&self.timeouts),
            cancelled: get(&self.cancelled),
            searches: get(&self.searches),
            searches_empty: get(&self.searches_empty),
        }
    }
}
