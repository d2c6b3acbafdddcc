//! The gateway's counters in Prometheus's text format, at `GET /metrics` of an address the
//! operator opts into (`disco.metrics.listen`, or `--metrics ADDR`):
//!
//! - `disco_gateway_calls_total`, `disco_gateway_call_errors_total` and the histogram
//!   `disco_gateway_call_duration_seconds`, by `server` and `tool`: the calls forwarded
//!   upstream, those answered with `isError`, and how long each took;
//! - `disco_gateway_requests_total`: every tools/call received (meta-tools included);
//! - `disco_gateway_corrections_total` by `rule` (`alias`, `equivalent`, `fuzzy`,
//!   `arguments`), `disco_gateway_refusals_total` by `rule` (`unknown_tool`,
//!   `unknown_tool_suggested`, `arguments`), `disco_gateway_searches_total` by `result`
//!   (`found`, `empty`): the catalog's own counters (`StatsSnapshot`), read at each scrape;
//! - `disco_gateway_upstream_restarts_total` by `server`.
//!
//! The label sets are bounded: `tool` is a tool of the catalog (a call reaches the provider
//! only once resolved to one; a server lists at most `disco.maxTools`), and past
//! [`MAX_TOOL_LABELS`] pairs of server and tool, further tools are counted under
//! `tool="(other)"`, a name no MCP tool can have. `server` is a server of the configuration;
//! `rule` and `result` are the fixed words above.
//!
//! The encoding is prometheus-client's (the Prometheus project's Rust client): its families,
//! histogram buckets and the format's layout, which a hand-written exposition would have to get
//! right again. It writes label values as given, so the values from outside (server and tool
//! names) are escaped here first (`label`).

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use disco_runtime::catalog::StatsSnapshot;
use disco_runtime::util;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// The most (server, tool) label pairs kept; the calls of any further tool are counted under
/// `tool="(other)"` of their server.
pub const MAX_TOOL_LABELS: usize = 2_000;

/// The tool label of the calls past [`MAX_TOOL_LABELS`].
pub const OTHER_TOOL: &str = "(other)";

type ToolLabels = [(&'static str, String); 2];
type Durations = Family<ToolLabels, Histogram, fn() -> Histogram>;

fn durations() -> Histogram {
    // 5 ms to about 82 s, doubling: a tool answers in milliseconds or in a minute.
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

/// The counters the gateway keeps itself (the catalog keeps the rest). Shared by every call.
pub struct Metrics {
    calls: Family<ToolLabels, Counter>,
    errors: Family<ToolLabels, Counter>,
    durations: Durations,
    labelled: Mutex<HashSet<(String, String)>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            calls: Family::default(),
            errors: Family::default(),
            durations: Family::new_with_constructor(durations),
            labelled: Mutex::default(),
        }
    }
}

impl Metrics {
    /// One call forwarded to `server`'s tool `tool` (its downstream name), answered with an
    /// error or not, after `took`.
    pub fn call(&self, server: &str, tool: &str, failed: bool, took: Duration) {
        let tool = {
            let mut labelled = util::lock(&self.labelled);
            let pair = (server.to_string(), tool.to_string());
            if labelled.contains(&pair) || labelled.len() < MAX_TOOL_LABELS {
                labelled.insert(pair);
                tool
            } else {
                OTHER_TOOL
            }
        };
        let labels: ToolLabels = [("server", label(server)), ("tool", label(tool))];
        self.calls.get_or_create(&labels).inc();
        if failed {
            self.errors.get_or_create(&labels).inc();
        }
        self.durations
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// The exposition: these counters, the catalog's `stats` and each server's restarts.
    pub fn render(&self, stats: Option<StatsSnapshot>, restarts: &[(String, u64)]) -> String {
        let mut registry = Registry::with_prefix("disco_gateway");
        registry.register(
            "calls",
            "Calls forwarded upstream, by server and tool",
            self.calls.clone(),
        );
        registry.register(
            "call_errors",
            "Calls forwarded upstream answered with isError, by server and tool",
            self.errors.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "How long calls forwarded upstream took, by server and tool",
            self.durations.clone(),
        );
        let stats = stats.unwrap_or_default();
        let by = |label: &'static str, values: &[(&'static str, u64)]| {
            let family = Family::<[(&'static str, &'static str); 1], Counter>::default();
            for (value, n) in values {
                family.get_or_create(&[(label, *value)]).inc_by(*n);
            }
            family
        };
        let requests = Counter::<u64>::default();
        requests.inc_by(stats.calls);
        registry.register(
            "requests",
            "tools/call requests received, meta-tools included",
            requests,
        );
        registry.register(
            "corrections",
            "Calls served after a correction, by rule: the tool's name by alias, \
             spelling-equivalent or fuzzy match, or its arguments repaired",
            by(
                "rule",
                &[
                    ("alias", stats.alias),
                    ("equivalent", stats.equivalent),
                    ("fuzzy", stats.fuzzy),
                    ("arguments", stats.args_repaired),
                ],
            ),
        );
        registry.register(
            "refusals",
            "Calls refused, by rule: an unknown tool (with suggestions or without), or \
             arguments that could not be repaired",
            by(
                "rule",
                &[
                    ("unknown_tool", stats.unknown),
                    ("unknown_tool_suggested", stats.unknown_suggested),
                    ("arguments", stats.args_rejected),
                ],
            ),
        );
        registry.register(
            "searches",
            "tool_search queries, by whether they found a tool",
            by(
                "result",
                &[
                    ("found", stats.searches.saturating_sub(stats.searches_empty)),
                    ("empty", stats.searches_empty),
                ],
            ),
        );
        let family = Family::<[(&'static str, String); 1], Counter>::default();
        for (server, n) in restarts {
            family
                .get_or_create(&[("server", label(server))])
                .inc_by(*n);
        }
        registry.register(
            "upstream_restarts",
            "Starts of an upstream after its first: after a crash, a hang or a failed start",
            family,
        );
        let mut text = String::new();
        // Writing to a String fails only if an encoder does, which these do not.
        if let Err(e) = encode(&mut text, &registry) {
            tracing::error!(error = %e, "the metrics could not be encoded");
        }
        text
    }
}

/// A label value as the exposition format writes it: `\`, `"` and a line feed escaped with a
/// backslash (prometheus-client 0.24 writes values as given).
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The exposition's media type (prometheus-client writes OpenMetrics text).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The most connections the endpoint keeps open: a scraper or two, and room to spare. At the
/// cap a new connection closes the oldest idle one, or is closed itself when every one is
/// answering a scrape, so no client can hold more of the gateway through it.
pub const MAX_CONNECTIONS: usize = 16;

/// How long a connection has to send a request head; then it gets 408 and is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long writing a response may make no progress (a client that does not read it) before
/// its connection is closed, so that it does not hold a place among the connections.
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `GET /metrics` on `listener` with what `render` gives at each scrape, until the
/// process ends, on the bounded connections of the MCP endpoint ([`MAX_CONNECTIONS`],
/// [`HEADER_READ_TIMEOUT`], [`WRITE_STALL_TIMEOUT`]).
pub async fn serve(
    listener: tokio::net::TcpListener,
    render: impl Fn() -> String + Clone + Send + Sync + 'static,
) -> std::io::Result<()> {
    serve_within(
        listener,
        render,
        MAX_CONNECTIONS,
        HEADER_READ_TIMEOUT,
        WRITE_STALL_TIMEOUT,
        std::future::pending(),
    )
    .await
}

/// [`serve`] with its bounds given, until `stop` resolves.
async fn serve_within(
    listener: tokio::net::TcpListener,
    render: impl Fn() -> String + Clone + Send + Sync + 'static,
    max_connections: usize,
    header_read_timeout: Duration,
    write_stall: Duration,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let render = render.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, CONTENT_TYPE)], render()) }
        }),
    );
    disco_runtime::server::serve_bounded(
        listener,
        app,
        max_connections,
        header_read_timeout,
        write_stall,
        stop,
    )
    .await
}

#[cfg(test)]
mod tests;
