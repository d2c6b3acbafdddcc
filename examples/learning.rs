//! Discovery that learns from its own traffic, as a library: a catalog records its discovery
//! events into a SQLite file, and the report turns them into candidates ready to paste.
//!
//! ```text
//! cargo run --example learning --features learning [-- STATE_DIR]
//! ```
//!
//! Five callers each ask for `bug_details` (no such tool), then call `fetch_ticket`; a sixth
//! searches "my tasks for today" and calls `list_open`. The report shows the alias ready (five
//! callers, five sessions), and the keywords waiting for more callers.

use std::sync::Arc;

use disco_runtime::learn::{self, report, LearnOptions, Recorder, SqliteStore};
use disco_runtime::{mcp_tool, Caller, Catalog, Context, SearchOptions};

/// Fetch a ticket of the tracker by its id.
///
/// # Arguments
/// * `id` - the ticket's id, e.g. `T-7`
#[mcp_tool(read_only)]
fn fetch_ticket(id: String) -> String {
    format!("ticket {id}")
}

/// List the open items of the todo list.
#[mcp_tool(read_only)]
fn list_open() -> String {
    "water the plants".into()
}

/// List the tasks of the tracker assigned to a person.
#[mcp_tool(read_only)]
fn list_tasks(person: String) -> String {
    format!("no task for {person}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("disco-learning-example"));
    // ANCHOR: recorder
    let store = Arc::new(SqliteStore::open(&dir, learn::DEFAULT_MAX_BYTES)?);
    let recorder = Arc::new(Recorder::new(
        store.clone(),
        learn::secret_in(&dir)?,
        Default::default(),
    )?);
    let catalog = Catalog::builder()
        .search(SearchOptions::default().enabled(true))
        .discovery(recorder.clone())
        .from_inventory()?;
    // ANCHOR_END: recorder

    for (session, caller) in ["ana", "bo", "cy", "di", "ed"].into_iter().enumerate() {
        let ctx = Context::builder()
            .caller(Caller::new(caller))
            .session(Some(session as u64))
            .build();
        let unknown = catalog
            .call_with("bug_details", Some(serde_json::json!({"id": "7"})), &ctx)
            .await;
        assert!(unknown.is_err());
        catalog
            .call_with("fetch_ticket", Some(serde_json::json!({"id": "7"})), &ctx)
            .await?;
    }
    let ctx = Context::builder()
        .caller(Caller::new("fay"))
        .session(Some(99))
        .build();
    catalog
        .call_with(
            "tool_search",
            Some(serde_json::json!({"query": "my tasks for today"})),
            &ctx,
        )
        .await?;
    catalog.call_with("list_open", None, &ctx).await?;
    recorder.flush();
    println!("What was kept (no argument value, no caller name):");
    for e in learn::EventStore::events(&*store)? {
        println!("{}", serde_json::to_string(&e.event)?);
    }

    let candidates = learn::candidates(&*store, &catalog, &LearnOptions::default())?;
    println!("{}", report::table(&candidates));
    for line in report::attribute_lines(&candidates, false) {
        println!("{line}");
    }
    println!("{:#}", report::gateway_entries(&candidates, false));
    // Everything learned can be forgotten.
    store_forget(&store)?;
    Ok(())
}

fn store_forget(store: &SqliteStore) -> Result<(), learn::StoreError> {
    use learn::EventStore;
    let n = store.forget(&learn::Forget::All)?;
    println!("forgot {n} events");
    Ok(())
}
