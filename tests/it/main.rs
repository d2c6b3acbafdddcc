//! The integration tests as one test binary: one module per subject. A binary links the
//! runtime, rmcp, tokio and hyper once; one binary instead of one per file is that much less to
//! link and to keep on disk (BENCHMARKS.md, "Integration tests as one binary"). Only the
//! compile-fail cases (`tests/ui.rs`, trybuild) are a binary of their own.
//!
//! Every `#[mcp_tool]` of every module registers into this binary's one inventory, and some are
//! refused on purpose (clashing names, defaults that do not fit, `State<T>`s no server here
//! registers). So no test here builds a catalog or a server from the whole inventory
//! (`Catalog::from_inventory`, `Server::from_inventory`, `disco_runtime::check`): each builds
//! it from the tools its own module declares, `common::tools_in(module_path!())` or
//! `common::server_in(module_path!())`, which is what a binary of that module alone would
//! hold. A test that runs this binary again as a child process names the child's test by its
//! module path (`common::test_name`).

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod args_corpus;
mod authorization;
mod catalog_docs;
mod catalog_errors;
mod discovery;
mod embedding;
mod failing_tools;
mod field_reports;
mod groups;
mod guide;
mod hostile_http;
mod hostile_stdio;
mod http_calls;
mod json_answer;
mod lint;
mod listen;
mod load;
mod meaning_corpus;
mod polarity_corpus;
mod readme;
mod reload;
mod request_limits;
mod request_memory;
mod resolution_corpus;
mod resources;
mod schemas;
mod search_modes;
mod shapes;
mod slow_clients;
mod small_catalogs;
mod startup;
mod stdio_calls;
mod struct_params;
mod wild_schemas;
