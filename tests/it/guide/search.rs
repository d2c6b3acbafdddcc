//! The code of the guide's chapter on search (`docs/guide/src/search.md`), which includes the
//! part between the `ANCHOR` lines; the tests below hold what the chapter says of it.

use disco_runtime::{mcp_tool, Caller, Catalog, CatalogTool, Exposure, SearchOptions, Server};

/// Search the saved papers and notes by their words. Returns the best matches.
#[mcp_tool(read_only)]
fn search_papers(query: String) -> String {
    query
}

/// Reset the whole database to empty: every paper and note is deleted.
#[mcp_tool(destructive)]
fn admin_reset_database() -> String {
    "reset".into()
}

// ANCHOR: search
/// Search-first: tools/list shows only `tool_search`, `execute_tool` and the pinned tools.
fn search() -> SearchOptions {
    SearchOptions::default()
        .enabled(true)
        .exposure(Exposure::SearchFirst {
            pinned: vec!["search_papers".into()],
        })
}

/// The tools named `admin_...` exist for the caller `admin` alone.
fn visible(caller: &Caller, tool: &CatalogTool) -> bool {
    !tool.name().starts_with("admin_") || caller.id() == Some("admin")
}

async fn serve() -> Result<(), disco_runtime::server::Error> {
    Server::from_inventory()
        .search(search())
        .visibility(visible)
        .serve_stdio()
        .await
}
// ANCHOR_END: search

fn catalog() -> Catalog {
    let _ = serve; // compiled, not served: this binary's whole inventory is no server
    Catalog::builder()
        .specs(crate::common::tools_in(module_path!()))
        .search(search())
        .visibility(visible)
        .build()
        .expect("catalog")
}

#[test]
fn search_first_lists_the_meta_tools_and_the_pinned_ones() {
    let names: Vec<String> = catalog()
        .list(&Caller::anonymous())
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["tool_search", "execute_tool", "search_papers"]);
}

#[test]
fn a_tool_the_caller_may_not_see_is_not_found() {
    let catalog = catalog();
    let found = |caller: &Caller| -> Vec<String> {
        catalog
            .for_caller(caller)
            .search("reset the database", 5)
            .into_iter()
            .map(|(tool, _)| tool.name().to_string())
            .collect()
    };
    assert_eq!(found(&Caller::new("admin")), ["admin_reset_database"]);
    assert!(found(&Caller::anonymous()).is_empty());
}
