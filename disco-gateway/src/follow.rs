//! The configuration file followed while the gateway serves: read again when its contents
//! change (checked every second) or on SIGHUP, and its servers handed to [`Hub::reload`](crate::upstream::Hub::reload)
//! (upstream/reload.rs). A reading that fails keeps the running configuration, and the log
//! says why, naming the key (the configuration's errors carry its JSON path).

use std::time::Duration;

use crate::config::Labels;
use crate::config::{Config, DiscoConfig};
use crate::provider::GatewayProvider;

/// How often the configuration file is read for a change: its contents' hash, so that an edit
/// is seen however it is saved (in place, or a new file renamed over it, within the mtime's
/// granularity, on any file system) with no watcher to keep and no new dependency (the
/// workspace has no file-watching crate): one read of a small file a second. The pins are
/// followed the same way (upstream/review.rs).
const CONFIG_POLL: Duration = Duration::from_secs(1);

/// The hash of the file's bytes, `None` while it cannot be read (an editor between writes).
fn config_digest(path: &str) -> Option<u64> {
    use std::hash::Hasher;
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&bytes);
    Some(h.finish())
}

/// Follows the configuration file: when its contents change, or on SIGHUP, it is read again
/// and its servers served (upstream/reload.rs: added started, removed stopped, changed
/// restarted, the rest untouched; the catalog's clients get `tools/list_changed`). A file
/// that does not read keeps the running configuration, and the log says why, naming the key.
/// Of the `disco` section, the aliases and keywords are put in force at once (the catalog is
/// rebuilt; the clients whose `tools/list` changes hear `list_changed`); a change to any other
/// key is logged once, naming it, and waits for a restart.
pub async fn follow(
    path: String,
    load: impl Fn() -> Result<Config, String>,
    provider: GatewayProvider,
    disco: DiscoConfig,
) {
    let hub = provider.hub().clone();
    let mut seen = config_digest(&path);
    // The keys read at start whose change was last logged: said once, not at every edit.
    let mut said: Vec<&'static str> = Vec::new();
    let mut tick = tokio::time::interval(CONFIG_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        #[cfg(unix)]
        let hup = async {
            match hangup.as_mut() {
                Some(h) => h.recv().await,
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let hup = std::future::pending::<Option<()>>();
        let asked = tokio::select! {
            _ = tick.tick() => false,
            _ = hup => true,
        };
        let now = config_digest(&path);
        if !asked && now == seen {
            continue;
        }
        seen = now;
        let config = match load() {
            Ok(config) => config,
            Err(e) => {
                tracing::error!("the configuration was not reloaded; the running one serves: {e}");
                continue;
            }
        };
        if hub.relabel(Labels::of(&config.disco)) {
            tracing::info!("{path}: `disco.aliases` and `disco.keywords` reloaded");
            provider.warn_unknown_labels();
        }
        let waiting = start_only_changes(&disco, &config.disco);
        if !waiting.is_empty() && waiting != said {
            tracing::warn!(
                "{path}: `disco.{}` changed; read at start, it takes effect when the gateway is \
                 restarted",
                waiting.join("`, `disco.")
            );
        }
        said = waiting;
        let done = hub.reload(config.servers);
        tracing::info!(
            added = ?done.added,
            removed = ?done.removed,
            changed = ?done.changed,
            "configuration reloaded"
        );
    }
}

/// The keys of the `disco` section, other than the aliases and keywords, whose values differ
/// between `started` (the section the gateway runs with) and `now`, by their names in the file.
/// Every field is named here, so that a new one must be sorted into read-at-start or followed.
pub fn start_only_changes(started: &DiscoConfig, now: &DiscoConfig) -> Vec<&'static str> {
    let DiscoConfig {
        exposure,
        pinned,
        page_size,
        call_timeout,
        startup_timeout,
        restart_initial,
        restart_max,
        ping_interval,
        ping_timeout,
        namespace,
        max_tools,
        max_message_bytes,
        aliases: _,
        keywords: _,
        tokens,
        data_dir,
        on_change,
        rate_limit,
        metrics,
        semantic,
        learning_postgres,
    } = started;
    let keys = [
        ("exposure", *exposure == now.exposure),
        ("pinned", *pinned == now.pinned),
        ("pageSize", *page_size == now.page_size),
        ("callTimeoutMs", *call_timeout == now.call_timeout),
        ("startupTimeoutMs", *startup_timeout == now.startup_timeout),
        ("restartInitialMs", *restart_initial == now.restart_initial),
        ("restartMaxMs", *restart_max == now.restart_max),
        ("pingIntervalMs", *ping_interval == now.ping_interval),
        ("pingTimeoutMs", *ping_timeout == now.ping_timeout),
        ("namespace", *namespace == now.namespace),
        ("maxTools", *max_tools == now.max_tools),
        (
            "maxMessageBytes",
            *max_message_bytes == now.max_message_bytes,
        ),
        ("tokens", *tokens == now.tokens),
        ("dataDir", *data_dir == now.data_dir),
        ("onChange", *on_change == now.on_change),
        ("rateLimit", *rate_limit == now.rate_limit),
        ("metrics", *metrics == now.metrics),
        ("semantic", *semantic == now.semantic),
        (
            "learning.postgres",
            *learning_postgres == now.learning_postgres,
        ),
    ];
    keys.into_iter()
        .filter(|(_, same)| !same)
        .map(|(key, _)| key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(disco: &str) -> DiscoConfig {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "disco": {disco}}}"#);
        match Config::parse(&text, &|_| None) {
            Ok(c) => c.disco,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    /// Each key of the `disco` section, given a value other than its default, alone: the
    /// change names that key by its name in the file, and no other; the aliases and keywords
    /// name none, as they are followed.
    #[test]
    fn a_change_names_the_key_read_at_start_by_its_name_in_the_file() {
        let defaults = parsed("{}");
        let cases = [
            ("exposure", r#""search-first""#),
            ("pinned", r#"["a.x"]"#),
            ("pageSize", "7"),
            ("callTimeoutMs", "1234"),
            ("startupTimeoutMs", "1234"),
            ("restartInitialMs", "1234"),
            ("restartMaxMs", "12345"),
            ("pingIntervalMs", "false"),
            ("pingTimeoutMs", "1234"),
            ("namespace", r#""none""#),
            ("maxTools", "7"),
            ("maxMessageBytes", "70000"),
            ("tokens", r#"[{"token": "t", "caller": "c"}]"#),
            ("dataDir", r#""/tmp/elsewhere""#),
            ("onChange", r#""serve""#),
            ("rateLimit", r#"{"perSecond": 3}"#),
            ("metrics", r#"{"listen": "127.0.0.1:0"}"#),
            ("semantic", r#""/tmp/model""#),
            ("learning", r#"{"postgres": "host=/tmp"}"#),
            ("aliases", r#"{"a.x": ["y"]}"#),
            ("keywords", r#"{"a.x": ["y"]}"#),
        ];
        for (key, value) in cases {
            let changed = parsed(&format!(r#"{{"{key}": {value}}}"#));
            assert!(changed != defaults, "`{key}: {value}` is the default");
            let named = start_only_changes(&defaults, &changed);
            let followed = key == "aliases" || key == "keywords";
            // `learning` is an object; the key named is the one it holds.
            let named_key = if key == "learning" {
                "learning.postgres"
            } else {
                key
            };
            let expected: Vec<&str> = if followed { vec![] } else { vec![named_key] };
            assert_eq!(named, expected, "`{key}: {value}`");
            assert_eq!(
                Labels::of(&changed) != Labels::of(&defaults),
                followed,
                "`{key}`"
            );
        }
    }
}
