// Rule: a group is at most 64 characters.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "notes_of_the_team_about_the_quarterly_planning_meetings_and_their_follow_ups")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
