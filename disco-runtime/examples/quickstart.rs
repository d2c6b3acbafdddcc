use std::sync::Mutex;

use disco_runtime::{mcp_tool, Json, Server, State, ToolError};

#[derive(Default)]
struct Kb {
    notes: Mutex<Vec<String>>,
}

/// Search my personal knowledge base for papers and notes by meaning.
///
/// Use this when the user asks about something they saved earlier. Returns the best
/// matches, most relevant first, with their text.
///
/// # Arguments
/// * `query` - what to look for, in the user's own words
/// * `limit` - how many results to return
#[mcp_tool(
    aliases("search_knowledge_base"),
    keywords("knowledge base", "papers", "notes"),
    read_only,
    params(query(alias = "question"), limit(alias = "max_results"))
)]
async fn search_papers(
    kb: State<Kb>,
    query: String,
    #[param(default = 5)] limit: u32,
) -> Result<Json<Vec<String>>, ToolError> {
    let notes = kb.notes.lock().unwrap_or_else(|e| e.into_inner());
    let hits = notes
        .iter()
        .filter(|n| n.contains(&query))
        .take(limit as usize);
    Ok(Json(hits.cloned().collect()))
}

/// Save a note in my knowledge base and return how many notes it now holds.
///
/// Use this when the user asks to remember or write something down. Nothing already saved
/// is changed.
///
/// # Arguments
/// * `text` - the note itself
#[mcp_tool(destructive = false, aliases("save_note"))]
async fn add_note(kb: State<Kb>, text: String) -> String {
    let mut notes = kb.notes.lock().unwrap_or_else(|e| e.into_inner());
    notes.push(text);
    format!("{} notes saved", notes.len())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Server::from_inventory()
        .with_state(Kb::default())
        .serve_stdio()
        .await?;
    Ok(())
}
