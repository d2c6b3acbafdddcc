//! The integration tests that build their own catalogs, as one test binary: one module per
//! subject. A binary links the runtime, rmcp, tokio and hyper once; one binary instead of one
//! per file is that much less to link and to keep on disk (BENCHMARKS.md, "Integration tests as
//! one binary").
//!
//! Every `#[mcp_tool]` of every module registers into this binary's one inventory, so no test
//! here builds a catalog from the whole inventory: each builds it from the tools its own module
//! declares (`common::tools_in(module_path!())`), which is what its binary's inventory held
//! when it was a binary of its own. The tests that start a `Server` are binaries of their own
//! (`tests/*.rs`): a `Server` serves the whole inventory of its binary.

#[path = "../common/mod.rs"]
mod common;

mod args_corpus;
mod catalog_docs;
mod catalog_errors;
mod discovery;
mod groups;
mod lint;
mod polarity_corpus;
mod readme;
mod resolution_corpus;
mod schemas;
mod shapes;
mod small_catalogs;
mod struct_params;
mod wild_schemas;
