//! The code of the guide's chapter on semantic search (`docs/guide/src/semantic.md`), which
//! includes the part between the `ANCHOR` lines. Compiled with the feature `semantic` (the
//! `clippy, semantic` step of `.ci/test`), never run: it needs a model.

#![allow(dead_code)]

use disco_runtime::{SearchOptions, Server};

// ANCHOR: semantic
fn server() -> Result<Server, Box<dyn std::error::Error>> {
    let model = disco_runtime::search::SemanticModel::load("model")?;
    Ok(Server::from_inventory().search(
        SearchOptions::default()
            .enabled(true)
            .semantic(std::sync::Arc::new(model)),
    ))
}
// ANCHOR_END: semantic
