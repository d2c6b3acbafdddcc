//! Discovery events (feature `learning`): the recorder a serving gateway writes into
//! (`--learn`), what it learned used while serving (`--learn-online`), and `disco-gateway
//! report`, all on `learning.sqlite` in the gateway's state directory, or on the PostgreSQL
//! database `disco.learning.postgres` names (feature `learning-postgres`), which a fleet of
//! gateways shares; over the runtime's `learn`. Without the feature, each says how to get it.

/// What writes a recorder's queued events to its store.
pub type Flush = Box<dyn FnOnce() + Send>;

#[cfg(feature = "learning")]
pub use with::{forget, online, recorder, report};
#[cfg(not(feature = "learning"))]
pub use without::{forget, online, recorder, report};

/// The recorder and `report` on `learning.sqlite` in the state directory.
#[cfg(feature = "learning")]
mod with {
    use std::sync::Arc;

    use disco_runtime::catalog::DiscoverySink;
    use disco_runtime::learn::{self, EventStore, Forget, LearnOptions, Recorder, SqliteStore};
    use disco_runtime::Catalog;

    use crate::config::Config;
    use crate::learning::Flush;
    use crate::pins::state_dir;

    fn dir(config: Option<&Config>) -> Result<std::path::PathBuf, String> {
        state_dir(config.and_then(|c| c.disco.data_dir.as_deref()), &|k| {
            std::env::var(k).ok()
        })
    }

    /// The store of the events, and the secret callers are named under: the PostgreSQL
    /// database of `disco.learning.postgres`, which holds the fleet's secret, or else
    /// `learning.sqlite` and `learning.key` in the state directory. Said in the log.
    fn store(config: Option<&Config>) -> Result<(Arc<dyn EventStore>, Secret), String> {
        if let Some(connection) = config.and_then(|c| c.disco.learning_postgres.as_deref()) {
            return postgres(connection);
        }
        let dir = dir(config)?;
        let store = SqliteStore::open(&dir, learn::DEFAULT_MAX_BYTES).map_err(|e| e.to_string())?;
        tracing::info!(file = %store.path().display(), "discovery events");
        Ok((Arc::new(store), Box::new(move || learn::secret_in(&dir))))
    }

    /// The secret callers are named under, read only when recording.
    type Secret = Box<dyn FnOnce() -> Result<[u8; 32], String>>;

    #[cfg(feature = "learning-postgres")]
    fn postgres(connection: &str) -> Result<(Arc<dyn EventStore>, Secret), String> {
        let store = Arc::new(
            learn::PostgresStore::open(connection, learn::DEFAULT_MAX_BYTES)
                .map_err(|e| format!("disco.learning.postgres: {e}"))?,
        );
        tracing::info!("discovery events in PostgreSQL (disco.learning.postgres)");
        let secret = store.clone();
        Ok((
            store,
            Box::new(move || secret.secret().map_err(|e| e.to_string())),
        ))
    }

    #[cfg(not(feature = "learning-postgres"))]
    fn postgres(_: &str) -> Result<(Arc<dyn EventStore>, Secret), String> {
        Err(
            "disco.learning.postgres needs disco-gateway built with feature \
             `learning-postgres`"
                .into(),
        )
    }

    /// The recorder to serve with, and what writes its queued events at shutdown.
    pub fn recorder(config: &Config) -> Result<(Arc<dyn DiscoverySink>, Flush), String> {
        let (store, secret) = store(Some(config))?;
        let recorder = Recorder::new(store, secret()?, Default::default())
            .map_err(|e| format!("the discovery recorder: {e}"))?;
        tracing::info!("recording discovery events");
        let recorder = Arc::new(recorder);
        let flushed = recorder.clone();
        Ok((recorder, Box::new(move || flushed.flush())))
    }

    pub fn report(config: &Config, catalog: &Catalog, format: Option<&str>) -> Result<(), String> {
        let (store, _) = store(Some(config))?;
        let candidates = learn::candidates(&*store, catalog, &LearnOptions::default())
            .map_err(|e| e.to_string())?;
        match format.unwrap_or("table") {
            "table" => print!("{}", learn::report::table(&candidates)),
            "json" => {
                let out = serde_json::json!({
                    "candidates": candidates,
                    "disco": learn::report::gateway_entries(&candidates, false),
                });
                println!("{out:#}");
            }
            "attributes" => {
                for line in learn::report::attribute_lines(&candidates, false) {
                    println!("{line}");
                }
            }
            other => {
                return Err(format!(
                    "--format {other}: expected table, json or attributes"
                ))
            }
        }
        Ok(())
    }

    /// Every `period`, the candidates of the events so far, against the catalog served now:
    /// the ready aliases (read-only tools) and keywords are what it uses. Each change of what
    /// is in use is logged with its counts.
    pub fn online(
        config: &Config,
        handle: disco_runtime::ServerHandle,
        period: std::time::Duration,
    ) -> Result<tokio::task::JoinHandle<()>, String> {
        let (store, _) = store(Some(config))?;
        Ok(tokio::spawn(async move {
            let mut every = tokio::time::interval(period);
            let mut in_use = (0, 0);
            loop {
                every.tick().await;
                let Some(catalog) = handle.catalog() else {
                    continue;
                };
                let store = store.clone();
                let applied = tokio::task::spawn_blocking(move || {
                    let options = LearnOptions::default();
                    let candidates = learn::candidates(&*store, &catalog, &options)?;
                    let aliases = learn::learned_aliases(&candidates);
                    let keywords = learn::learned_keywords(&candidates);
                    let counts = (aliases.len(), keywords.len());
                    catalog.set_learned_aliases(aliases);
                    catalog.set_learned_keywords(keywords);
                    Ok::<(usize, usize), learn::StoreError>(counts)
                })
                .await;
                match applied {
                    Ok(Ok(counts)) => {
                        if counts != in_use {
                            in_use = counts;
                            tracing::info!(
                                aliases = counts.0,
                                keywords = counts.1,
                                "learned aliases and keywords in use"
                            );
                        }
                    }
                    Ok(Err(e)) => tracing::warn!(error = %e, "learned candidates not read"),
                    Err(e) => tracing::warn!(error = %e, "learned candidates not read"),
                }
            }
        }))
    }

    /// Forgets `what` (`all` or a name) in the store of `config` (without one: the default
    /// state directory's).
    pub fn forget(config: Option<&Config>, what: &str) -> Result<(), String> {
        let (store, _) = store(config)?;
        let what = match what {
            "all" => Forget::All,
            name => Forget::Name(name.to_string()).bounded(),
        };
        let n = store.forget(&what).map_err(|e| e.to_string())?;
        println!("forgot {n} event(s)");
        Ok(())
    }
}

/// Without feature `learning`, `--learn` and `report` say how to get them.
#[cfg(not(feature = "learning"))]
mod without {
    use std::sync::Arc;

    use disco_runtime::catalog::DiscoverySink;
    use disco_runtime::Catalog;

    use crate::config::Config;
    use crate::learning::Flush;

    const WHY: &str = "discovery events need disco-gateway built with feature `learning`";

    pub fn recorder(_: &Config) -> Result<(Arc<dyn DiscoverySink>, Flush), String> {
        Err(WHY.into())
    }
    pub fn report(_: &Config, _: &Catalog, _: Option<&str>) -> Result<(), String> {
        Err(WHY.into())
    }
    pub fn forget(_: Option<&Config>, _: &str) -> Result<(), String> {
        Err(WHY.into())
    }
    pub fn online(
        _: &Config,
        _: disco_runtime::ServerHandle,
        _: std::time::Duration,
    ) -> Result<tokio::task::JoinHandle<()>, String> {
        Err(WHY.into())
    }
}
