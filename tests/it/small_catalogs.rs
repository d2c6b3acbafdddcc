//! The catalogs of a small server as a user writes it (a tracker with one-line doc comments)
//! and of a GitHub-like server: `tool_search` finds the search tool for everyday queries, and
//! a tool called behind the label a user gave the server (`mcp__<label>__<tool>`) runs, with
//! the correction reported.

use disco_runtime::catalog::provider::JsonCatalogProvider;
use disco_runtime::catalog::{Exposure, SearchOptions};
use disco_runtime::{Catalog, CatalogBuilder};
use serde_json::{json, Value};

use crate::common::tools_in;

/// An issue tracker's tools, documented as a user would.
mod tracker {
    use disco_runtime::mcp_tool;

    /// Search issues by text.
    #[mcp_tool(read_only)]
    fn search_issues(query: String) -> String {
        format!("issues matching {query}")
    }

    /// Create an issue.
    #[mcp_tool(destructive = false)]
    fn create_issue(title: String) -> String {
        format!("created {title}")
    }

    /// Delete an issue.
    #[mcp_tool]
    fn delete_issue(id: u64) -> String {
        format!("deleted {id}")
    }

    /// Get one issue by its id.
    #[mcp_tool(read_only)]
    fn get_issue(id: u64) -> String {
        format!("issue {id}")
    }
}

/// The tracker where `get_issue`'s documentation names another tool: "search" is no longer in
/// one tool only, and "find issues" must still find `search_issues`.
mod cross_referenced {
    use disco_runtime::mcp_tool;

    /// Get one issue by its id. Use search_issues to find the id.
    #[mcp_tool(read_only)]
    fn get_issue(id: u64) -> String {
        format!("issue {id}")
    }
}

fn search_enabled(builder: CatalogBuilder) -> CatalogBuilder {
    builder.search(
        SearchOptions::default()
            .enabled(true)
            .exposure(Exposure::All),
    )
}

fn tracker() -> Catalog {
    search_enabled(Catalog::builder().server_name("issue-desk"))
        .from_specs(tools_in(&format!("{}::tracker", module_path!())))
        .unwrap()
}

fn tracker_cross_referenced() -> Catalog {
    let (tracker, cross) = (
        format!("{}::tracker", module_path!()),
        format!("{}::cross_referenced", module_path!()),
    );
    let tools = tools_in(&tracker)
        .filter(|s| s.name != "get_issue")
        .chain(tools_in(&cross));
    search_enabled(Catalog::builder())
        .from_specs(tools)
        .unwrap()
}

/// A server shaped like a GitHub one: several search tools, several issue tools.
fn github_like() -> Catalog {
    let repo = json!({"owner": {"type": "string", "description": "Account that owns the repository"},
                      "repo": {"type": "string", "description": "Repository name"}});
    let tool = |name: &str, description: &str, extra: Value| {
        let mut properties = repo.as_object().unwrap().clone();
        properties.extend(extra.as_object().unwrap().clone());
        json!({"name": name, "description": description,
               "inputSchema": {"type": "object", "properties": properties}})
    };
    let query = json!({"q": {"type": "string", "description": "Search terms and qualifiers"},
                       "page": {"type": "integer"}});
    let number = json!({"issue_number": {"type": "integer", "description": "The issue's number"}});
    let pull =
        json!({"pull_number": {"type": "integer", "description": "The pull request's number"}});
    let tools = json!([
        tool(
            "search_repositories",
            "Find repositories on GitHub by name, topic or language",
            query.clone()
        ),
        tool(
            "search_code",
            "Look for code in every repository GitHub indexes",
            query.clone()
        ),
        tool(
            "search_issues",
            "Find issues and pull requests in any repository",
            query.clone()
        ),
        tool(
            "search_users",
            "Find GitHub accounts by login, name or location",
            query
        ),
        tool(
            "get_issue",
            "The title, body, labels and state of one issue",
            number.clone()
        ),
        tool(
            "create_issue",
            "Open an issue with a title, a body and labels",
            json!({"title": {"type": "string"}, "body": {"type": "string"}})
        ),
        tool(
            "update_issue",
            "Change an issue's title, body, labels or state",
            number.clone()
        ),
        tool(
            "list_issues",
            "Issues of a repository, filtered by state, labels and date",
            json!({})
        ),
        tool("add_issue_comment", "Comment on an issue", number),
        tool(
            "create_pull_request",
            "Propose merging a branch into another",
            json!({"head": {"type": "string"}, "base": {"type": "string"}})
        ),
        tool(
            "get_pull_request",
            "The details of one pull request",
            pull.clone()
        ),
        tool(
            "list_pull_requests",
            "Pull requests of a repository, filtered by state and branch",
            json!({})
        ),
        tool(
            "merge_pull_request",
            "Merge a pull request into its base branch",
            pull
        ),
        tool(
            "get_file_contents",
            "Read a file or list a directory of a repository",
            json!({"path": {"type": "string"}})
        ),
        tool(
            "create_branch",
            "Start a new branch from an existing one",
            json!({"branch": {"type": "string"}})
        ),
        tool(
            "list_commits",
            "The commits of a branch, newest first",
            json!({"sha": {"type": "string"}})
        ),
    ]);
    search_enabled(Catalog::builder())
        .provider(JsonCatalogProvider::from_value(&tools).unwrap())
        .from_specs([])
        .unwrap()
}

async fn first_hit(c: &Catalog, query: &str) -> Option<String> {
    let r = c
        .call("tool_search", json!({"query": query}))
        .await
        .unwrap();
    let s = r.structured_content.unwrap();
    s["tools"][0]["name"].as_str().map(str::to_string)
}

#[tokio::test]
async fn tool_search_finds_the_search_tool_for_everyday_queries() {
    for (name, c) in [
        ("tracker", tracker()),
        ("cross-referenced tracker", tracker_cross_referenced()),
        ("github-like", github_like()),
    ] {
        for query in [
            "find issue about login",
            "find issues about login",
            "find the login issue",
            "find issue about the login page",
            "search issues about login",
        ] {
            assert_eq!(
                first_hit(&c, query).await.as_deref(),
                Some("search_issues"),
                "{name}: {query}"
            );
        }
    }
}

/// Claude Code calls the tracker's tools `mcp__tracker__<tool>` when the user ran `claude mcp
/// add tracker ...`, while the server calls itself `issue-desk`.
#[tokio::test]
async fn a_label_the_user_chose_is_a_namespace_prefix() {
    let c = tracker();
    let r = c
        .call("mcp__tracker__delete_issue", json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert_eq!(
        r.meta.unwrap()["disco/corrections"]["tool"],
        json!({"requested": "mcp__tracker__delete_issue", "resolved": "delete_issue",
               "rule": "namespace_prefix"})
    );
    // A misspelled tool behind an unknown label is not guessed, only suggested.
    let err = c
        .call("mcp__tracker__get_isue", json!({"id": 7}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Did you mean: get_issue"), "{err}");
    // Behind the server's own name it is corrected.
    let r = c
        .call("mcp__issue-desk__get_isue", json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(
        r.meta.unwrap()["disco/corrections"]["tool"]["resolved"],
        "get_issue"
    );
}
