//! `disco-gateway adopt`: a client's servers moved behind the gateway. The servers of the
//! client's file (its section of servers, as written) go to a gateway configuration of their
//! own, and in the client's file that section becomes one entry that runs the gateway by its
//! absolute path. Only that section's text changes: every other byte of the file is kept
//! (the section is found by its byte range in jsonc-parser's syntax tree, and the text around
//! it is not rewritten). What was there is recorded beside the gateway's configuration, so
//! that `--undo` puts it back, and only while the section is still what `adopt` wrote.
//!
//! Claude Code's `~/.claude.json` is rewritten by Claude Code while it runs, and Codex's TOML
//! keeps its servers in tables of their own: neither is adopted here (their servers can still
//! be served: `--config` reads both files as they are).

use std::path::{Path, PathBuf};

use jsonc_parser::ast::Value;
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde::{Deserialize, Serialize};

/// The name of the one entry that runs the gateway in the client's file.
pub const ENTRY: &str = "disco-gateway";

/// A client whose file `adopt` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Windsurf,
    Gemini,
    VsCode,
}

impl Client {
    /// The client named on the command line.
    pub fn named(name: &str) -> Result<Client, String> {
        Ok(match name {
            "claude-desktop" => Client::ClaudeDesktop,
            "claude-code" => Client::ClaudeCode,
            "cursor" => Client::Cursor,
            "windsurf" => Client::Windsurf,
            "gemini" => Client::Gemini,
            "vscode" => Client::VsCode,
            "codex" => {
                return Err(
                    "adopt --from codex: Codex's servers are TOML tables of their own, \
                            which adopt does not edit; serve them with `--config \
                            ~/.codex/config.toml`"
                        .into(),
                )
            }
            other => {
                return Err(format!(
                    "adopt --from {other}: expected claude-desktop, claude-code (its project's \
                     .mcp.json), cursor, windsurf, gemini or vscode (the workspace's \
                     .vscode/mcp.json)"
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Windsurf => "windsurf",
            Client::Gemini => "gemini",
            Client::VsCode => "vscode",
        }
    }

    /// Where the client keeps its file (each client's documentation, config/clients.rs):
    /// `home` the user's home, `config` the user's configuration directory, `here` the
    /// working directory (a project's file).
    pub fn usual_place(self, home: &Path, config: &Path, here: &Path) -> PathBuf {
        match self {
            Client::ClaudeDesktop if cfg!(target_os = "macos") => {
                home.join("Library/Application Support/Claude/claude_desktop_config.json")
            }
            Client::ClaudeDesktop => config.join("Claude/claude_desktop_config.json"),
            Client::ClaudeCode => here.join(".mcp.json"),
            Client::Cursor => home.join(".cursor/mcp.json"),
            Client::Windsurf => home.join(".codeium/windsurf/mcp_config.json"),
            Client::Gemini => home.join(".gemini/settings.json"),
            Client::VsCode => here.join(".vscode/mcp.json"),
        }
    }

    /// The key of its section of servers.
    fn section(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            _ => "mcpServers",
        }
    }
}

/// What `adopt` changed, kept beside the gateway's configuration for `--undo`.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct Record {
    /// The client's file.
    pub file: PathBuf,
    /// The key of the section of servers.
    pub section: String,
    /// The section's text before.
    pub before: String,
    /// The section's text as `adopt` wrote it.
    pub after: String,
}

/// What `adopt` would do.
#[derive(Debug)]
pub struct Plan {
    /// The servers moved, by name.
    pub servers: Vec<String>,
    /// The client's file as it would be.
    pub client_text: String,
    /// The gateway's configuration of those servers.
    pub gateway_text: String,
    pub record: Record,
}

/// The range of the value of `key` in the top-level object of `text`, and the value.
fn section<'a>(text: &'a str, key: &str) -> Result<Option<(usize, usize, Value<'a>)>, String> {
    let parsed =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .map_err(|e| format!("not valid JSON: {e}"))?;
    let Some(Value::Object(root)) = parsed.value else {
        return Err("not a JSON object".into());
    };
    Ok(root
        .properties
        .into_iter()
        .find(|p| p.name.as_str() == key)
        .map(|p| {
            let r = p.value.range();
            (r.start, r.end, p.value)
        }))
}

/// The indentation of the line `at` is on, and the file's unit of indentation.
fn indents(text: &str, at: usize) -> (String, String) {
    let line_start = text
        .get(..at)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let base: String = text
        .get(line_start..)
        .unwrap_or("")
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    // The first indented line's indentation is the unit.
    let unit = text
        .lines()
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|i| !i.is_empty())
        .unwrap_or_else(|| "  ".into());
    (base, unit)
}

/// The plan of adopting `client`'s servers from its file's `text`: the gateway (at `binary`)
/// reading `config`, the gateway configuration's path. `None` when there is nothing to
/// change: the section is the gateway's entry alone (adopted already) or holds no server.
pub fn plan(
    client: Client,
    file: &Path,
    text: &str,
    binary: &Path,
    config: &Path,
) -> Result<Option<Plan>, String> {
    let key = client.section();
    let Some((start, end, value)) = section(text, key)? else {
        return Ok(None);
    };
    let Value::Object(servers) = &value else {
        return Err(format!("`{key}` is not an object"));
    };
    let names: Vec<String> = servers
        .properties
        .iter()
        .map(|p| p.name.as_str().to_string())
        .collect();
    if names.is_empty() || names == [ENTRY] {
        return Ok(None);
    }
    if names.iter().any(|n| n == ENTRY) {
        return Err(format!(
            "`{key}` has the gateway's entry `{ENTRY}` and other servers: adopt once, after \
             `--undo`, to move them all"
        ));
    }
    let before = text.get(start..end).unwrap_or_default().to_string();
    let (base, unit) = indents(text, start);
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let kind = match client {
        Client::VsCode => format!("\n{base}{unit}{unit}\"type\": \"stdio\","),
        _ => String::new(),
    };
    let after = format!(
        "{{\n{base}{unit}{entry}: {{{kind}\n{base}{unit}{unit}\"command\": {command},\n\
         {base}{unit}{unit}\"args\": [\"--config\", {config}]\n{base}{unit}}}\n{base}}}",
        entry = quoted(ENTRY),
        command = quoted(&binary.to_string_lossy()),
        config = quoted(&config.to_string_lossy()),
    );
    let (head, tail) = (
        text.get(..start).unwrap_or(""),
        text.get(end..).unwrap_or(""),
    );
    let client_text = format!("{head}{after}{tail}");
    // The gateway's configuration: the section as written, and VS Code's inputs with it.
    let mut gateway_text = format!("{{\n  {}: {before}", quoted(key));
    if client == Client::VsCode {
        if let Some((s, e, _)) = section(text, "inputs")? {
            let inputs = text.get(s..e).unwrap_or("[]");
            gateway_text.push_str(&format!(",\n  \"inputs\": {inputs}"));
        }
    }
    gateway_text.push_str("\n}\n");
    Ok(Some(Plan {
        servers: names,
        client_text,
        gateway_text,
        record: Record {
            file: file.to_path_buf(),
            section: key.into(),
            before,
            after,
        },
    }))
}

/// The client's file `text` with `record`'s section put back as it was; refused when the
/// section is no longer what `adopt` wrote (it was edited since, by hand or by the client).
pub fn undo(text: &str, record: &Record) -> Result<String, String> {
    let Some((start, end, _)) = section(text, &record.section)? else {
        return Err(format!(
            "{}: `{}` is gone; nothing of adopt's to undo",
            record.file.display(),
            record.section
        ));
    };
    if text.get(start..end) != Some(record.after.as_str()) {
        return Err(format!(
            "{}: `{}` changed since adopt wrote it; not undone (the backup beside the file \
             is the file before adopt)",
            record.file.display(),
            record.section
        ));
    }
    let (head, tail) = (
        text.get(..start).unwrap_or(""),
        text.get(end..).unwrap_or(""),
    );
    Ok(format!("{head}{}{tail}", record.before))
}

#[cfg(test)]
mod tests;
