//! The two texts the configuration is written in besides JSON, each turned into the JSON that
//! `file.rs` reads: JSONC (VS Code's `mcp.json` and `settings.json`: JSON with comments and
//! trailing commas) and TOML (Codex's `config.toml`).

use std::borrow::Cow;

use jsonc_parser::tokens::Token;
use jsonc_parser::{Scanner, ScannerOptions};

use super::ConfigError;

/// JSON with comments and trailing commas read as the JSON it stands for: each comment and
/// each comma before a `}` or `]` is written over with spaces (line breaks are kept), so that
/// every other byte keeps its place and an error's line and column are the file's own.
///
/// The tokens are jsonc-parser's (dprint's JSONC scanner, the one its formatter and `deno`
/// read `jsonc` with); a text it cannot scan is left as it is, for serde_json to say where it
/// stops being JSON.
pub(super) fn jsonc(text: &str) -> Cow<'_, str> {
    let mut scanner = Scanner::new(text, &ScannerOptions::default());
    // Byte ranges to blank, and the comma seen last (blanked if a closing bracket follows).
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut comma: Option<(usize, usize)> = None;
    loop {
        let token = match scanner.scan() {
            Ok(Some(token)) => token,
            Ok(None) => break,
            Err(_) => return Cow::Borrowed(text),
        };
        let range = (scanner.token_start(), scanner.token_end());
        match token {
            Token::CommentLine(_) | Token::CommentBlock(_) => blank.push(range),
            Token::Comma => comma = Some(range),
            Token::CloseBrace | Token::CloseBracket => {
                blank.extend(comma.take());
            }
            _ => comma = None,
        }
    }
    if blank.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for (start, end) in blank {
        for b in bytes.get_mut(start..end).into_iter().flatten() {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    // Whole tokens were written over with ASCII spaces: the text is still UTF-8.
    match String::from_utf8(bytes) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(text),
    }
}

/// A TOML text as JSON. An error says where the text stops being TOML (line and column) and
/// why, never the line itself: it may hold a secret.
pub(super) fn toml_to_json(text: &str) -> Result<String, ConfigError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|span| {
                let before = text.get(..span.start).unwrap_or("");
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                format!(" at line {line} column {column}")
            })
            .unwrap_or_default();
        ConfigError::new(
            "",
            format!("not valid TOML{at}: {}", e.message().trim_end()),
        )
    })?;
    serde_json::to_string(&table).map_err(|e| ConfigError::new("", format!("not valid TOML: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_become_spaces_in_place() {
        let cases = [
            ("{\"a\": 1}", "{\"a\": 1}"),
            ("{\"a\": 1,}", "{\"a\": 1 }"),
            ("[1, 2, ]", "[1, 2  ]"),
            ("{\"a\": [1,], }", "{\"a\": [1 ]  }"),
            ("// c\n{\"a\": 1}", "    \n{\"a\": 1}"),
            ("{\"a\": /* é */ 1}", "{\"a\":          1}"),
            (
                "{\"a\": \"// not a comment,\"}",
                "{\"a\": \"// not a comment,\"}",
            ),
            ("{\"a\": 1, // c\n}", "{\"a\": 1      \n}"),
            (
                "{\"a\": 1, /* c */ \"b\": 2}",
                "{\"a\": 1,         \"b\": 2}",
            ),
        ];
        for (text, want) in cases {
            let got = jsonc(text);
            assert_eq!(got, want, "{text}");
            assert_eq!(got.len(), text.len(), "{text}");
        }
        // What is not JSONC is left for the JSON reader to say where.
        assert_eq!(jsonc("{\"a\": /* open"), "{\"a\": /* open");
    }

    #[test]
    fn toml_errors_say_where_without_the_line() {
        let e = toml_to_json("[mcp_servers.a]\ncommand = \"x\"\ntoken = sk-secret\n")
            .expect_err("not TOML");
        assert!(e.message.contains("line 3"), "{e}");
        assert!(!e.message.contains("sk-secret"), "{e}");
        let json = toml_to_json("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"-y\"]\n").unwrap();
        // In the file's order: under `"namespace": "none"` the first server keeps a name.
        assert_eq!(
            json,
            r#"{"mcp_servers":{"a":{"command":"x","args":["-y"]}}}"#
        );
    }
}
