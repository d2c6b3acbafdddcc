//! The repository's example servers as catalogs, for `examples/catalog.rs` and
//! `tests/it/catalog_docs.rs`.
//!
//! Each example is a separate binary, so the tools are compiled in here again by including the
//! example files themselves: the docs can never describe a copy that drifted from the real
//! tools. The two examples are separate servers (both have an `add_note`), so each gets its own
//! catalog, built from the tools declared in its module.

// Only the tool declarations are used here; the servers' `main`s and helpers are not.
#[allow(dead_code)]
#[path = "../knowledge_base.rs"]
mod knowledge_base;

#[allow(dead_code)]
#[path = "../apps.rs"]
mod apps;

use disco_runtime::{Catalog, CatalogError};

/// The example servers: (name, the example file's module name).
pub const SERVERS: &[(&str, &str)] = &[("knowledge_base", "knowledge_base"), ("apps", "apps")];

/// The catalog of one example server: the tools declared in its module, with the defaults its
/// `main` uses.
pub fn catalog(module: &str) -> Result<Catalog, CatalogError> {
    let path = format!("{}::{module}", module_path!());
    let specs = disco_runtime::tool::registered().filter(|s| s.origin.module == path);
    Catalog::builder().from_specs(specs)
}

/// Every example server's catalog, by name.
pub fn catalogs() -> Result<Vec<(&'static str, Catalog)>, CatalogError> {
    SERVERS
        .iter()
        .map(|&(name, module)| catalog(module).map(|c| (name, c)))
        .collect()
}
