// Must compile: aliases, keywords, every annotation (as a flag and as `= bool`), `hidden`,
// `timeout_ms` and `full_schema`.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(
    aliases("find_notes", "notes.find"),
    keywords("notes", "knowledge base"),
    read_only,
    idempotent,
    open_world = false,
    hidden,
    timeout_ms = 5000,
    full_schema
)]
fn search_notes(query: String) -> String {
    query
}

/// Delete a note.
#[mcp_tool(
    destructive,
    read_only = false,
    idempotent = true,
    open_world,
    hidden = false
)]
fn delete_note(id: u32) -> String {
    id.to_string()
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    let tool = catalog.get("search_notes").unwrap();
    assert_eq!(tool.aliases(), ["find_notes", "notes.find"]);
    assert_eq!(tool.keywords(), ["notes", "knowledge base"]);
    assert_eq!(tool.annotations().read_only, Some(true));
    assert_eq!(tool.annotations().idempotent, Some(true));
    assert_eq!(tool.annotations().open_world, Some(false));
    assert_eq!(tool.annotations().destructive, None);
    assert!(tool.hidden());
    assert_eq!(tool.timeout(), Some(std::time::Duration::from_millis(5000)));
    assert!(tool.input_schema().contains_key("$schema"));
    let delete = catalog.get("delete_note").unwrap();
    assert!(delete.is_destructive());
    assert!(!delete.hidden());
}
