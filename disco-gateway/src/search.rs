//! The search meta-tools of the merged catalog, as the `disco` key asks for them: every tool
//! listed or search-first with the pinned ones, and for the gateway that serves, ranking by
//! the semantic model of `disco.semantic` (feature `semantic`) besides the keywords.
//!
//! The model is the runtime's own (`disco_runtime::search::SemanticModel`): a static model or
//! a sentence-transformer directory, loaded once at start, its tools' vectors made in the
//! background and kept in the user's cache directory, as every disco server does.

use disco_runtime::catalog::{Exposure, SearchOptions};

use crate::config::{DiscoConfig, ExposureKind};

/// The options `docs` and `lint` build the catalog with, and the base of the served ones: no
/// model, so that what they print is the same with `disco.semantic` or without it.
pub fn options(disco: &DiscoConfig) -> SearchOptions {
    SearchOptions::default()
        .enabled(true)
        .exposure(match disco.exposure {
            ExposureKind::All => Exposure::All,
            ExposureKind::SearchFirst => Exposure::SearchFirst {
                pinned: disco.pinned.clone(),
            },
        })
}

/// The options the gateway serves with: [`options`], and the model of `disco.semantic` when
/// the key is given. An error names the key: the model did not load, or this build has no
/// `semantic` feature (a gateway that ranked by keywords alone when asked for the model would
/// serve something else than its configuration says).
pub async fn serving(disco: &DiscoConfig) -> Result<SearchOptions, String> {
    match &disco.semantic {
        None => Ok(options(disco)),
        Some(dir) => with_model(options(disco), dir).await,
    }
}

/// The model is read and parsed (a transformer's weights are some 90 MB) on tokio's blocking
/// pool: on a worker thread it would hold up every task scheduled there meanwhile.
#[cfg(feature = "semantic")]
async fn with_model(
    options: SearchOptions,
    dir: &std::path::Path,
) -> Result<SearchOptions, String> {
    let at = dir.to_path_buf();
    let model =
        tokio::task::spawn_blocking(move || disco_runtime::search::SemanticModel::load(&at))
            .await
            .map_err(|e| format!("disco.semantic ({}): the load stopped: {e}", dir.display()))?
            .map_err(|e| format!("disco.semantic ({}): {e}", dir.display()))?;
    tracing::info!(
        model = %dir.display(),
        kind = model.kind(),
        dim = model.dim(),
        "tool_search ranks by the semantic model besides the keywords"
    );
    // The vectors' file: the runtime's default, the user's cache directory.
    Ok(options.semantic(std::sync::Arc::new(model)))
}

#[cfg(not(feature = "semantic"))]
async fn with_model(_: SearchOptions, dir: &std::path::Path) -> Result<SearchOptions, String> {
    Err(format!(
        "disco.semantic ({}): this disco-gateway was built without the `semantic` feature; \
         install it with `cargo install --locked --path disco-gateway --features semantic`, \
         or remove `disco.semantic` to rank by keywords alone",
        dir.display()
    ))
}
