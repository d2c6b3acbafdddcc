//! Text from an upstream as the gateway may show it: bounded, and nothing in it that moves a
//! terminal's cursor, reverses the text around it or hides itself.

/// The longest tool name an upstream may list, in characters: the MCP specification's advice
/// for tool names (1 to 128 characters), and the length disco clips names to in answers.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// A name as the log and `lint` may show it: nothing in it can move a terminal's cursor,
/// reverse the text around it or hide itself.
pub fn shown(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == MAX_TOOL_NAME_CHARS {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut: an upstream's text in
/// the log or in an answer is bounded.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `text` as a terminal may show it: control and format characters, line breaks, bidi
/// overrides and zero-width characters escaped (`\u{202e}`), everything else as it is (quotes
/// and backslashes too, unlike [`shown`]: JSON in a diff stays readable).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let escaped = c.escape_debug();
        if escaped.len() == 1 || matches!(c, '"' | '\'' | '\\') {
            out.push(c);
        } else {
            out.extend(escaped);
        }
    }
    out
}
