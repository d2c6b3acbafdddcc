//! The configuration file followed while the gateway serves: read again when its contents
//! change (checked every second) or on SIGHUP, and its servers handed to [`Hub::reload`]
//! (upstream/reload.rs). A reading that fails keeps the running configuration, and the log
//! says why, naming the key (the configuration's errors carry its JSON path).

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, DiscoConfig};
use crate::upstream::Hub;

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
/// The `disco` section is read at start only: a change to it is logged and waits for a restart.
pub async fn follow(
    path: String,
    load: impl Fn() -> Result<Config, String>,
    hub: Arc<Hub>,
    disco: DiscoConfig,
) {
    let mut seen = config_digest(&path);
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
        if config.disco != disco {
            tracing::warn!(
                "{path}: the `disco` section changed; it is read at start, and takes effect when                  the gateway is restarted"
            );
        }
        let done = hub.reload(config.servers);
        tracing::info!(
            added = ?done.added,
            removed = ?done.removed,
            changed = ?done.changed,
            "configuration reloaded"
        );
    }
}
