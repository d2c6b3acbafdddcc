//! Discovery events (feature `learning`): the recorder a serving gateway writes into
//! (`--learn`), what it learned used while serving (`--learn-online`), and `disco-gateway
//! report`, all on `learning.sqlite` in the gateway's state directory, over the runtime's
//! `learn`. Without the feature, each says how to get it.

/// What writes a recorder's queued events to its store.
pub type Flush = Box<dyn FnOnce() + Send>;

#[cfg(feature = "learning")]
pub use with::{forget, online, recorder, report};
#[cfg(not(feature = "learning"))]
pub use without::{forget, online, recorder, report};

/// The recorder and `report` on `learning.sqlite` in the state directory.
#[cfg(feature = "learning")]
mod with {
    use std::path::Path;
    use std::sync::Arc;

    use disco_runtime::catalog::DiscoverySink;
    use disco_runtime::learn::{self, EventStore, Forget, LearnOptions, Recorder, SqliteStore};
    use disco_runtime::Catalog;

    use crate::config::Config;
    use crate::learning::Flush;
    use crate::pins::state_dir;

    fn dir(config: &Config) -> Result<std::path::PathBuf, String> {
        state_dir(config.disco.data_dir.as_deref(), &|k| std::env::var(k).ok())
    }

    /// The recorder to serve with, and what writes its queued events at shutdown.
    pub fn recorder(config: &Config) -> Result<(Arc<dyn DiscoverySink>, Flush), String> {
        let dir = dir(config)?;
        let store = SqliteStore::open(&dir, learn::DEFAULT_MAX_BYTES).map_err(|e| e.to_string())?;
        let secret = learn::secret_in(&dir)?;
        let recorder = Recorder::new(Arc::new(store), secret, Default::default())
            .map_err(|e| format!("the discovery recorder: {e}"))?;
        tracing::info!(dir = %dir.display(), "recording discovery events");
        let recorder = Arc::new(recorder);
        let flushed = recorder.clone();
        Ok((recorder, Box::new(move || flushed.flush())))
    }

    pub fn report(config: &Config, catalog: &Catalog, format: Option<&str>) -> Result<(), String> {
        let store = SqliteStore::open(&dir(config)?, learn::DEFAULT_MAX_BYTES)
            .map_err(|e| e.to_string())?;
        let candidates = learn::candidates(&store, catalog, &LearnOptions::default())
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

    /// Every minute, the candidates of the events so far, against the catalog served now: the
    /// ready aliases (read-only tools) and keywords are what it uses.
    pub fn online(
        config: &Config,
        handle: disco_runtime::ServerHandle,
    ) -> Result<tokio::task::JoinHandle<()>, String> {
        let store = Arc::new(
            SqliteStore::open(&dir(config)?, learn::DEFAULT_MAX_BYTES)
                .map_err(|e| e.to_string())?,
        );
        Ok(tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
            loop {
                every.tick().await;
                let Some(catalog) = handle.catalog() else {
                    continue;
                };
                let store = store.clone();
                let applied = tokio::task::spawn_blocking(move || {
                    let options = LearnOptions::default();
                    let candidates = learn::candidates(&*store, &catalog, &options)?;
                    catalog.set_learned_aliases(learn::learned_aliases(&candidates));
                    catalog.set_learned_keywords(learn::learned_keywords(&candidates));
                    Ok::<usize, learn::StoreError>(candidates.len())
                })
                .await;
                match applied {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "learned candidates not read"),
                    Err(e) => tracing::warn!(error = %e, "learned candidates not read"),
                }
            }
        }))
    }

    pub fn forget(dir: &Path, what: &str) -> Result<(), String> {
        let store = SqliteStore::open(dir, learn::DEFAULT_MAX_BYTES).map_err(|e| e.to_string())?;
        let what = match what {
            "all" => Forget::All,
            name => Forget::Name(name.to_string()),
        };
        let n = store.forget(&what).map_err(|e| e.to_string())?;
        println!("forgot {n} event(s)");
        Ok(())
    }
}

/// Without feature `learning`, `--learn` and `report` say how to get them.
#[cfg(not(feature = "learning"))]
mod without {
    use std::path::Path;
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
    pub fn forget(_: &Path, _: &str) -> Result<(), String> {
        Err(WHY.into())
    }
    pub fn online(
        _: &Config,
        _: disco_runtime::ServerHandle,
    ) -> Result<tokio::task::JoinHandle<()>, String> {
        Err(WHY.into())
    }
}
