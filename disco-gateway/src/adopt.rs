//! `disco-gateway adopt`: a client's servers moved behind the gateway. The servers of the
//! client's file (its section of servers, as written) go to a gateway configuration of their
//! own, and in the client's file that section becomes one entry that runs the gateway by its
//! absolute path. Only that section's text changes: every other byte of the file is kept
//! (the section is found by its byte range in jsonc-parser's syntax tree, and the text around
//! it is not rewritten). What was there is recorded beside the gateway's configuration, so
//! that `--undo` puts it back, and only while the section is still what `adopt` wrote.
//!
//! Codex's servers are TOML tables of their own (`[mcp_servers.<name>]` and its subtables):
//! each is found by its byte range in toml_parser's events (from its header to the next), and
//! they are moved together, the gateway's table put where the first of them stood; a file
//! whose servers are written otherwise (dotted keys, inline tables) is not edited.
//!
//! Claude Code's `~/.claude.json` is rewritten by Claude Code while it runs: it is not adopted
//! here (its servers can still be served: `--config` reads it as it is).

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
    Codex,
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
            "codex" => Client::Codex,
            other => {
                return Err(format!(
                    "adopt --from {other}: expected claude-desktop, claude-code (its project's \
                     .mcp.json), cursor, windsurf, gemini, vscode (the workspace's \
                     .vscode/mcp.json) or codex"
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
            Client::Codex => "codex",
        }
    }

    /// The extension of its files, and of the gateway configuration written for it.
    pub fn extension(self) -> &'static str {
        match self {
            Client::Codex => "toml",
            _ => "json",
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
            // `$CODEX_HOME/config.toml` when it is set (the binary reads it).
            Client::Codex => home.join(".codex/config.toml"),
        }
    }

    /// The key of its section of servers.
    fn section(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            Client::Codex => "mcp_servers",
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
    /// A TOML file (Codex's): `before` is its servers' tables, `after` the gateway's table.
    #[serde(default)]
    pub toml: bool,
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
    // JSON with comments and trailing commas (what the clients and the gateway read), nothing
    // looser: the parser's defaults also take JSON5 (single quotes, hex numbers, missing
    // commas), which the gateway's own reading refuses.
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options)
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
    if client == Client::Codex {
        return plan_toml(file, text, binary, config);
    }
    // Claude Code's `~/.claude.json` (by its name, or by its `projects`): see the top.
    let user_file = file.file_name().is_some_and(|n| n == ".claude.json");
    if client == Client::ClaudeCode && (user_file || section(text, "projects")?.is_some()) {
        return Err(format!(
            "{}: Claude Code's own file, which it rewrites while it runs, is not edited; adopt \
             a project's .mcp.json, or serve this file as it is with `--config`",
            file.display()
        ));
    }
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
            "`{key}` has the gateway's entry `{ENTRY}` and other servers: move the others into \
             the gateway's configuration (its `--config` file) by hand; `--undo` puts back \
             only a section as adopt left it"
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
            toml: false,
        },
    }))
}

/// Refuses a plan whose gateway configuration would not serve what the client's file serves
/// now, with the reason: the gateway configuration (read from where it will be, so that a
/// relative `envFile` is found from its directory) must give every server of the section as
/// the client's file read in place gives it, its command, arguments, env, working directory,
/// URL and headers. Variables are left unexpanded on both sides: only what the file says is
/// compared, not the environment of the moment. Gemini CLI starts only the servers named in
/// its `mcp.allowed` when that is set: a file that sets it is refused, since the gateway's
/// entry would not be started.
pub fn check(
    plan: &Plan,
    client: Client,
    file: &Path,
    text: &str,
    config: &Path,
) -> Result<(), String> {
    use crate::config::{Config, Origin, ServerConfig, Transport};
    if client == Client::Gemini && gemini_allows_some(text)? {
        return Err(format!(
            "{}: `mcp.allowed` is set, and Gemini CLI starts only the servers it names: the \
             gateway's entry `{ENTRY}` would not be started. Remove `mcp.allowed` (the gateway \
             serves the servers adopted), then adopt again",
            file.display()
        ));
    }
    let vars: crate::config::Vars = &|name| Some(format!("${{{name}}}"));
    let read = |text: &str, origin: Origin| Config::read(text, vars, origin);
    // The client's file read as that client reads it: Gemini CLI's `url` is SSE wherever the
    // file is.
    let theirs = Origin {
        gemini: client == Client::Gemini,
        ..Origin::of(file)
    };
    let now = read(text, theirs).map_err(|e| {
        format!(
            "{}: {e} (the gateway could not serve its servers)",
            file.display()
        )
    })?;
    let then = read(&plan.gateway_text, Origin::of(config)).map_err(|e| {
        format!(
            "adopt: {} as it would be written is not served by the gateway ({e}); {} is left \
             as it is",
            config.display(),
            file.display()
        )
    })?;
    let in_section = |s: &&ServerConfig| {
        s.key
            .strip_prefix(plan.record.section.as_str())
            .is_some_and(|k| k.starts_with('.'))
    };
    let same = |a: &ServerConfig, b: &ServerConfig| {
        a.name == b.name
            && match (&a.transport, &b.transport) {
                (
                    Transport::Stdio {
                        command,
                        args,
                        env,
                        cwd,
                    },
                    Transport::Stdio {
                        command: c,
                        args: a,
                        env: e,
                        cwd: w,
                    },
                ) => command == c && args == a && env == e && cwd == w,
                (
                    Transport::Http {
                        url,
                        headers,
                        forward_token,
                        oauth,
                    },
                    Transport::Http {
                        url: u,
                        headers: h,
                        forward_token: f,
                        oauth: o,
                    },
                ) => url == u && headers == h && forward_token == f && oauth == o,
                _ => false,
            }
    };
    let served: Vec<&ServerConfig> = now.servers.iter().filter(in_section).collect();
    // A server the client leaves out (Gemini CLI's `mcp.excluded`) must stay out.
    if let Some(extra) = then
        .servers
        .iter()
        .find(|t| !served.iter().any(|s| s.name == t.name))
    {
        return Err(format!(
            "adopt: `{}` would be served from {}, and {} does not serve it; {} is left as it is",
            extra.name,
            config.display(),
            file.display(),
            file.display()
        ));
    }
    for s in &served {
        match then.servers.iter().find(|t| t.name == s.name) {
            Some(t) if same(s, t) => {}
            Some(_) => {
                return Err(format!(
                    "adopt: `{}` would be served otherwise from {} (a path or envFile found from \
                     another directory); {} is left as it is",
                    s.name,
                    config.display(),
                    file.display()
                ))
            }
            None => {
                let why = then
                    .warnings
                    .iter()
                    .find(|w| w.message.contains(&format!("`{}`", s.name)))
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default();
                return Err(format!(
                    "adopt: `{}` would not be served from {}{why}; {} is left as it is",
                    s.name,
                    config.display(),
                    file.display()
                ));
            }
        }
    }
    Ok(())
}

/// Whether Gemini CLI's settings set `mcp.allowed` (the servers it starts, by name).
fn gemini_allows_some(text: &str) -> Result<bool, String> {
    let Some((_, _, Value::Object(mcp))) = section(text, "mcp")? else {
        return Ok(false);
    };
    Ok(mcp.properties.iter().any(|p| p.name.as_str() == "allowed"))
}

/// The tables of Codex's servers in `text`: each server's name and the byte range from its
/// header (`[mcp_servers.<name>]`, or one of its subtables) to the next header or the end.
fn codex_tables(text: &str) -> Result<Vec<(String, usize, usize)>, String> {
    use toml_parser::parser::{parse_document, Event, EventKind};
    let source = toml_parser::Source::new(text);
    let tokens: Vec<_> = source.lex().collect();
    let mut events: Vec<Event> = Vec::new();
    let mut error: Option<toml_parser::ParseError> = None;
    parse_document(&tokens, &mut events, &mut error);
    if error.is_some() {
        return Err("not valid TOML".into());
    }
    let key = |e: &Event| -> String {
        let raw = source.get(e.span()).map(|r| r.as_str()).unwrap_or("");
        raw.trim_matches(|c| c == '"' || c == '\'').to_string()
    };
    // Each header: where its line starts, and its keys; and the first key of each key-value
    // of the table it opens.
    let mut headers: Vec<(usize, Vec<String>, Vec<String>)> = vec![(0, Vec::new(), Vec::new())];
    let mut in_header = false;
    let mut first_key = true;
    for e in &events {
        match e.kind() {
            EventKind::StdTableOpen | EventKind::ArrayTableOpen => {
                let open = e.span().start();
                let line = text
                    .get(..open)
                    .and_then(|t| t.rfind('\n'))
                    .map_or(0, |i| i + 1);
                headers.push((line, Vec::new(), Vec::new()));
                in_header = true;
            }
            EventKind::StdTableClose | EventKind::ArrayTableClose => in_header = false,
            EventKind::SimpleKey => {
                if let Some((_, path, keys)) = headers.last_mut() {
                    if in_header {
                        path.push(key(e));
                    } else if first_key {
                        keys.push(key(e));
                    }
                }
                first_key = false;
            }
            EventKind::Newline => first_key = true,
            _ => {}
        }
    }
    let mut tables = Vec::new();
    for (i, (start, path, keys)) in headers.iter().enumerate() {
        let end = headers.get(i + 1).map_or(text.len(), |h| h.0);
        let written_otherwise = match path.as_slice() {
            [] => keys.iter().any(|k| k == "mcp_servers"),
            [only] => only == "mcp_servers" && !keys.is_empty(),
            _ => false,
        };
        if written_otherwise {
            return Err(
                "the servers are written as keys, not `[mcp_servers.<name>]` tables: \
                        adopt edits only those; serve the file with `--config` as it is"
                    .into(),
            );
        }
        if let [first, name, ..] = path.as_slice() {
            if first == "mcp_servers" {
                tables.push((name.clone(), *start, end));
            }
        }
    }
    Ok(tables)
}

/// [`plan`] for Codex's TOML.
fn plan_toml(
    file: &Path,
    text: &str,
    binary: &Path,
    config: &Path,
) -> Result<Option<Plan>, String> {
    let tables = codex_tables(text)?;
    let mut names: Vec<String> = Vec::new();
    for (name, _, _) in &tables {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    if names.is_empty() || names == [ENTRY] {
        return Ok(None);
    }
    if names.iter().any(|n| n == ENTRY) {
        return Err(format!(
            "the file has the gateway's table `[mcp_servers.{ENTRY}]` and other servers: \
             adopt once, after `--undo`, to move them all"
        ));
    }
    let before: String = tables
        .iter()
        .map(|(_, s, e)| text.get(*s..*e).unwrap_or(""))
        .collect();
    // The blank lines that closed the servers' tables close the gateway's.
    let blank = before.get(before.trim_end().len()..).unwrap_or("");
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let after = format!(
        "[mcp_servers.{ENTRY}]\ncommand = {}\nargs = [\"--config\", {}]{}",
        quoted(&binary.to_string_lossy()),
        quoted(&config.to_string_lossy()),
        if blank.is_empty() { "\n" } else { blank }
    );
    let first = tables.first().map_or(0, |t| t.1);
    let mut client_text = String::with_capacity(text.len());
    let mut at = 0;
    for (_, start, end) in &tables {
        client_text.push_str(text.get(at..*start).unwrap_or(""));
        if *start == first {
            client_text.push_str(&after);
        }
        at = *end;
    }
    client_text.push_str(text.get(at..).unwrap_or(""));
    Ok(Some(Plan {
        servers: names,
        client_text,
        gateway_text: before.clone(),
        record: Record {
            file: file.to_path_buf(),
            section: "mcp_servers".into(),
            before,
            after,
            toml: true,
        },
    }))
}

/// The client's file `text` with `record`'s section put back as it was; refused when the
/// section is no longer what `adopt` wrote (it was edited since, by hand or by the client).
pub fn undo(text: &str, record: &Record) -> Result<String, String> {
    if record.toml {
        // The gateway's table, where adopt put it, once.
        let at: Vec<usize> = text.match_indices(&record.after).map(|(i, _)| i).collect();
        let [start] = at[..] else {
            return Err(format!(
                "{}: the `[mcp_servers.{ENTRY}]` table adopt wrote is not there as it was \
                 written (changed since, or given twice); not undone (the backup beside the \
                 file is the file before adopt)",
                record.file.display()
            ));
        };
        let (head, tail) = (
            text.get(..start).unwrap_or(""),
            text.get(start + record.after.len()..).unwrap_or(""),
        );
        return Ok(format!("{head}{}{tail}", record.before));
    }
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

/// `disco-gateway adopt`: the client's servers moved to a gateway configuration of their own
/// (`$XDG_CONFIG_HOME/disco-gateway/CLIENT.json`), and one entry that runs this binary put in
/// their place. Without `--write` it says what it would change; with it, the client's file is
/// first copied to `FILE.disco-gateway.bak`. `--undo` puts the section back (adopt.rs).
pub fn command(from: &str, file: Option<&str>, undo: bool, write: bool) -> Result<(), String> {
    let (file_arg, undoing, writing) = (file, undo, write);
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let client = Client::named(from)?;
    let home = env("HOME").ok_or("adopt: HOME is not set")?;
    let config_home = env("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    let here = std::env::current_dir().map_err(|e| format!("adopt: {e}"))?;
    let file = match (file_arg, client, env("CODEX_HOME")) {
        (Some(f), _, _) => here.join(f),
        (None, Client::Codex, Some(codex)) => codex.join("config.toml"),
        (None, _, _) => client.usual_place(&home, &config_home, &here),
    };
    let gateway_config =
        config_home
            .join("disco-gateway")
            .join(format!("{}.{}", client.name(), client.extension()));
    let record_path = gateway_config.with_extension("adopt.json");
    // A symlinked file (a dotfiles manager's) is edited where it is, and stays a symlink.
    let file = file
        .canonicalize()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mode = std::fs::metadata(&file)
        .map_err(|e| format!("{}: {e}", file.display()))?
        .permissions();
    // Whole or not at all, never readable by others (the servers' env and headers): the
    // gateway's files 0600 in a directory made 0700, the client's file keeping its own mode.
    let write = |path: &std::path::Path, text: &str| -> Result<(), String> {
        if let Some(dir) = path.parent() {
            disco_runtime::learn::private_dir(dir)?;
        }
        let keep = (path == file).then_some(&mode);
        crate::pins::write_whole(path, text.as_bytes(), keep)
    };
    if undoing {
        let saved = std::fs::read_to_string(&record_path)
            .map_err(|e| format!("{}: {e} (nothing adopted to undo)", record_path.display()))?;
        let record: Record =
            serde_json::from_str(&saved).map_err(|e| format!("{}: {e}", record_path.display()))?;
        if record.file.canonicalize().as_ref().unwrap_or(&record.file) != &file {
            return Err(format!(
                "adopt --undo: {} adopted {}, not {}",
                record_path.display(),
                record.file.display(),
                file.display()
            ));
        }
        let restored = self::undo(&text, &record)?;
        if !writing {
            println!(
                "would put `{}` of {} back as it was; run again with --write",
                record.section,
                file.display()
            );
            return Ok(());
        }
        write(&file, &restored)?;
        std::fs::remove_file(&record_path)
            .map_err(|e| format!("{}: {e}", record_path.display()))?;
        println!(
            "put `{}` of {} back as it was",
            record.section,
            file.display()
        );
        return Ok(());
    }
    let binary = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("adopt: where this binary is: {e}"))?;
    let Some(plan) = self::plan(client, &file, &text, &binary, &gateway_config)? else {
        println!(
            "{}: nothing to adopt (no servers, or only the gateway)",
            file.display()
        );
        return Ok(());
    };
    self::check(&plan, client, &file, &text, &gateway_config)?;
    if record_path.exists() {
        return Err(format!(
            "{} exists: a file of {} was adopted already; `adopt --from {} --undo --write` it \
             first (or, if its file does not run the gateway, as after a crash, delete {0})",
            record_path.display(),
            client.name(),
            client.name()
        ));
    }
    // A gateway configuration that is there (written by hand, or left by an adoption undone
    // by hand) is never overwritten.
    if gateway_config.exists() {
        return Err(format!(
            "{} exists, and adopt does not overwrite it: move it away (or move the servers of {} \
             into it by hand), then adopt again",
            gateway_config.display(),
            file.display()
        ));
    }
    let servers = plan.servers.join(", ");
    if !writing {
        println!(
            "would move {} server(s) ({servers}) of {} to {}, and make its `{}`:\n{}\n\
             run again with --write (a backup of the file is kept)",
            plan.servers.len(),
            file.display(),
            gateway_config.display(),
            plan.record.section,
            plan.record.after
        );
        return Ok(());
    }
    let backup = file.with_extension(format!(
        "{}.disco-gateway.bak",
        file.extension()
            .and_then(|e| e.to_str())
            .unwrap_or(client.extension())
    ));
    std::fs::copy(&file, &backup).map_err(|e| format!("{}: {e}", backup.display()))?;
    write(&gateway_config, &plan.gateway_text)?;
    let record = serde_json::to_string_pretty(&plan.record).map_err(|e| e.to_string())?;
    write(&record_path, &record)?;
    // The record stands before the client's file changes: if that write fails, the record
    // says an adoption that did not happen, and must go before the next one.
    if let Err(e) = write(&file, &plan.client_text) {
        return Err(match std::fs::remove_file(&record_path) {
            Ok(()) => format!("{e}; {} is unchanged", file.display()),
            Err(_) => format!(
                "{e}; {} is unchanged: delete {} before adopting again",
                file.display(),
                record_path.display()
            ),
        });
    }
    println!(
        "moved {} server(s) ({servers}) of {} to {} (backup: {}); check them with \
         `disco-gateway lint --config {}`",
        plan.servers.len(),
        file.display(),
        gateway_config.display(),
        backup.display(),
        gateway_config.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests;
