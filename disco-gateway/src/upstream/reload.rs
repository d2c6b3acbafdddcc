//! A new list of servers taken while the gateway serves: the servers it adds are started, those
//! it removes stopped, those whose entry changed restarted, and the rest keep running untouched
//! (their connections, their calls, their callers' own connections). A server is the same
//! when its name and its whole entry are (`ServerConfig`'s equality: transport, command,
//! arguments, environment, URL, headers).
//!
//! A server that leaves (removed, or replaced by its changed entry) leaves the catalog at once,
//! and its process is stopped once the calls it runs have answered, at most one call timeout
//! later: a call already on its way is not cut by an edit of the file.
//!
//! A reload approves nothing: the pins are the server's name's (pins.rs), so a changed entry
//! that lists other definitions has them held for approval like any relisting, and only a
//! name never seen before is approved as first listed, as at start-up.
//!
//! The operator's aliases and keywords are taken the same way (`Hub::relabel`): the catalog is
//! rebuilt with them, and no server is touched.

use std::sync::Arc;
use std::time::Duration;

use disco_runtime::util;

use super::{supervise, Hub, Upstream, SHUTDOWN_WAIT};
use crate::config::{Labels, ServerConfig};

/// What a reload did, by server name, for the log and the tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    pub kept: Vec<String>,
}

impl Reloaded {
    /// Whether the servers are as they were.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// How often a leaving server's calls in flight are counted while it drains.
const DRAIN_POLL: Duration = Duration::from_millis(50);

impl Hub {
    /// The operator's aliases and keywords in force.
    pub fn labels(&self) -> Arc<Labels> {
        util::read(&self.labels).clone()
    }

    /// Puts `labels` in force; when they differ from those in force, the catalog is rebuilt
    /// (the clients whose `tools/list` it changes get `tools/list_changed`). Returns whether
    /// they differed.
    pub fn relabel(&self, labels: Labels) -> bool {
        {
            let mut now = util::write(&self.labels);
            if **now == labels {
                return false;
            }
            *now = Arc::new(labels);
        }
        self.change();
        true
    }

    /// Serves `servers` from now on (see the module's docs); the catalog's rebuilder is woken
    /// when anything changed. Names are unique in a configuration (the file is a map).
    pub fn reload(self: &Arc<Self>, servers: Vec<ServerConfig>) -> Reloaded {
        let mut done = Reloaded::default();
        let mut leaving = Vec::new();
        let mut starting = Vec::new();
        {
            let mut now = util::write(&self.upstreams);
            let old = now.clone();
            let mut next: Vec<Arc<Upstream>> = Vec::with_capacity(servers.len());
            for config in servers {
                let same_name = old.iter().find(|u| u.config.name == config.name);
                match same_name {
                    Some(u) if u.config == config => {
                        done.kept.push(config.name.clone());
                        next.push(u.clone());
                    }
                    found => {
                        if let Some(u) = found {
                            done.changed.push(config.name.clone());
                            leaving.push(u.clone());
                        } else {
                            done.added.push(config.name.clone());
                        }
                        let u = Upstream::new(config, &self.disco, &self.tokens, &self.shutdown);
                        starting.push(u.clone());
                        next.push(u);
                    }
                }
            }
            for u in old.iter() {
                if !next.iter().any(|n| n.config.name == u.config.name) {
                    done.removed.push(u.config.name.clone());
                    leaving.push(u.clone());
                }
            }
            *now = next.into();
        }
        if done.is_empty() {
            return done;
        }
        let mut tasks = util::lock(&self.tasks);
        tasks.retain(|t| !t.is_finished());
        for upstream in starting {
            let hub = self.clone();
            tasks.push(tokio::spawn(async move { supervise(hub, upstream).await }));
        }
        for upstream in leaving {
            let call_timeout = self.disco.call_timeout;
            tasks.push(tokio::spawn(retire(upstream, call_timeout)));
        }
        drop(tasks);
        // Out of the catalog now: the provider reads the new list.
        self.change();
        done
    }
}

/// Stops a server that left the configuration once its calls in flight have answered (at most
/// `call_timeout`, the longest the catalog lets a call run), then waits for it to close.
async fn retire(upstream: Arc<Upstream>, call_timeout: Duration) {
    let drained = async {
        while upstream.calls_in_flight() > 0 {
            tokio::time::sleep(DRAIN_POLL).await;
        }
    };
    tokio::select! {
        _ = tokio::time::timeout(call_timeout, drained) => {}
        _ = upstream.stop.cancelled() => {}
    }
    tracing::info!(server = %upstream.config.name, "server stopped: it left the configuration or changed");
    upstream.stop.cancel();
    if let Some(forwarded) = &upstream.forwarded {
        forwarded.wait_closed(SHUTDOWN_WAIT).await;
    }
}
