//! Each client's own configuration file, read as it is: the fixtures under
//! `tests/fixtures/clients/` are written from each client's documentation (cited in
//! `src/config/clients.rs`), and each is read into the servers it says. Then the rule for a
//! server entry's keys, generated from the lists: every key a client defines is read or left
//! out with a warning, and every one-edit misspelling of one is an error naming it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use disco_gateway::config::clients::{self, Use};
use disco_gateway::config::{Config, ConfigError, Format, Origin, ServerConfig, SignIn, Transport};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients")
}

/// The environment the fixtures are read in.
fn vars(name: &str) -> Option<String> {
    let set = [
        ("GITHUB_TOKEN", "ghp-1"),
        ("NOTION_TOKEN", "ntn-2"),
        ("CONTEXT7_API_KEY", "c7-3"),
        ("FIGMA_TOKEN", "fig-4"),
        ("DB_CONNECTION_STRING", "postgres://db"),
        ("FIGMA_OAUTH_TOKEN", "fig-5"),
        ("FIGMA_ORG", "acme"),
        ("DISCO_INPUT_PERPLEXITY_KEY", "pplx-6"),
        ("TOKEN", "t-7"),
    ];
    set.iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn read_with(file: &str, vars: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    let path = fixtures().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let origin = Origin {
        project: Some(Path::new("/home/me/app")),
        ..Origin::of(&path)
    };
    Config::read(&text, vars, origin)
}

fn read(file: &str) -> Config {
    read_with(file, &vars).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// A server as one line: its name, its transport, and what it carries.
fn shown(s: &ServerConfig) -> String {
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => format!("{}: {command} {args:?} env={env:?} cwd={cwd:?}", s.name),
        Transport::Http {
            url,
            headers,
            forward_token,
            oauth,
        } => format!(
            "{}: {url} headers={headers:?} forward={forward_token}{}",
            s.name,
            if matches!(oauth, SignIn::Configured(_)) {
                " oauth"
            } else {
                ""
            }
        ),
    }
}

/// The file's servers and the keys of its warnings.
fn check(file: &str, servers: &[&str], warned: &[&str]) {
    let c = read(file);
    let got: Vec<String> = c.servers.iter().map(shown).collect();
    assert_eq!(got, servers, "{file}");
    let keys: Vec<&str> = c.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, warned, "{file}: {:#?}", c.warnings);
}

#[test]
fn claude_desktop() {
    check(
        "claude_desktop_config.json",
        &[
            r#"filesystem: npx ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"] env={} cwd=None"#,
            r#"github: npx ["-y", "@modelcontextprotocol/server-github"] env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-1"} cwd=None"#,
        ],
        &["globalShortcut"],
    );
}

#[test]
fn claude_code_project_file() {
    check(
        "claude-code.mcp.json",
        &[
            r#"airtable: npx ["-y", "airtable-mcp-server"] env={"AIRTABLE_API_KEY": "none"} cwd=None"#,
            r#"notion: https://mcp.notion.com/mcp headers={"Authorization": "Bearer ntn-2"} forward=false"#,
        ],
        // The file's own warnings first, then those of what its servers mean together.
        &["mcpServers.old.type", "mcpServers.notion.oauth"],
    );
}

/// `~/.claude.json`: the user's servers, and this project's (which win a name both have, in
/// the user's place); another project's are not read, nor Claude Code's own keys.
#[test]
fn claude_code_user_file() {
    check(
        "claude.json",
        &[
            r#"memory: npx ["-y", "@modelcontextprotocol/server-memory"] env={} cwd=None"#,
            r#"time: uvx ["mcp-server-time", "--local-timezone=Europe/Paris"] env={} cwd=None"#,
            r#"sentry: https://mcp.sentry.dev/mcp headers={} forward=false"#,
        ],
        &["numStartups", "autoUpdates", "mcpServers.time"],
    );
}

/// A project's server wins over the user's of the same name wherever the two stand in the file.
#[test]
fn a_projects_server_wins_wherever_it_stands() {
    let text = r#"{"projects": {"/home/me/app": {"mcpServers": {"time": {"command": "project"}}}},
                   "mcpServers": {"time": {"command": "user"}, "memory": {"command": "m"}}}"#;
    let origin = Origin {
        project: Some(Path::new("/home/me/app")),
        ..Origin::default()
    };
    let c = Config::read(text, &vars, origin).expect("reads");
    let got: Vec<String> = c
        .servers
        .iter()
        .map(|s| format!("{} {}", s.name, s.transport.describe()))
        .collect();
    assert_eq!(got, ["time project", "memory m"]);
    let keys: Vec<&str> = c.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, ["mcpServers.time"]);
}

#[test]
fn cursor() {
    check(
        "cursor-mcp.json",
        &[
            r#"playwright: npx ["-y", "@playwright/mcp@latest"] env={"BROWSER": "chromium", "HEADLESS": "true"} cwd=None"#,
            r#"context7: https://mcp.context7.com/mcp headers={"CONTEXT7_API_KEY": "c7-3"} forward=false"#,
            r#"linear: https://mcp.linear.app/mcp headers={} forward=false"#,
        ],
        &["mcpServers.linear.auth"],
    );
}

#[test]
fn windsurf() {
    check(
        "windsurf-mcp_config.json",
        &[
            r#"github: npx ["-y", "@modelcontextprotocol/server-github"] env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-1"} cwd=None"#,
            r#"figma: https://mcp.figma.com/mcp headers={"Authorization": "Bearer fig-4"} forward=false"#,
        ],
        &["mcpServers.github.disabledTools"],
    );
}

#[test]
fn gemini_cli() {
    check(
        "gemini-settings.json",
        &[
            r#"pythonTools: python ["-m", "my_mcp_server", "--port", "8080"] env={"DATABASE_URL": "postgres://db"} cwd=Some("./mcp-servers/python")"#,
            r#"github: https://api.githubcopilot.com/mcp/ headers={"Authorization": "Bearer ghp-1"} forward=false"#,
        ],
        &[
            "theme",
            "selectedAuthType",
            "mcpServers.pythonTools.timeout",
            "mcpServers.pythonTools.trust",
            "mcpServers.pythonTools.includeTools",
            "mcpServers.github.timeout",
            "mcpServers.github.description",
        ],
    );
}

/// In Gemini CLI's settings (`settings.json` in a `.gemini` directory, its system settings and
/// defaults) a server's `url` is a
/// legacy SSE server (its Streamable HTTP servers are `httpUrl`, or `url` with `"type": "http"`):
/// it is not served, with one warning naming it and why, and the others are. The same entries
/// in another client's file (Cursor's `mcp.json`, or a `settings.json` elsewhere) are
/// Streamable HTTP servers, served.
#[test]
fn gemini_clis_url_is_sse_and_skipped() {
    let text = r#"{"mcpServers": {
        "old": {"url": "http://127.0.0.1:9/sse", "headers": {"X": "1"}},
        "typed": {"url": "http://127.0.0.1:9/mcp", "type": "http"},
        "streamable": {"url": "http://127.0.0.1:9/mcp", "type": "streamable-http"},
        "new": {"httpUrl": "http://127.0.0.1:9/mcp"},
        "both": {"url": "http://127.0.0.1:9/sse", "httpUrl": "http://127.0.0.1:9/both"},
        "local": {"command": "python"}
    }}"#;
    let root = std::env::temp_dir().join(format!("disco-gemini-sse-{}", std::process::id()));
    let read_at = |rel: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        Config::read(text, &vars, Origin::of(&path)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    let names = |c: &Config| -> Vec<String> { c.servers.iter().map(|s| s.name.clone()).collect() };

    // Gemini CLI's own places: a user's or project's `.gemini`, and its system settings and
    // system defaults (Linux's and macOS's folders).
    for at in [
        ".gemini/settings.json",
        "etc/gemini-cli/settings.json",
        "etc/gemini-cli/system-defaults.json",
        "Library/Application Support/GeminiCli/settings.json",
    ] {
        let gemini = read_at(at);
        assert_eq!(
            names(&gemini),
            ["typed", "streamable", "new", "both", "local"],
            "{at}"
        );
        assert_eq!(gemini.left_out, ["old"], "{at}");
        // An entry with both is Streamable HTTP at `httpUrl`, as Gemini CLI takes it.
        let both = gemini.servers.iter().find(|s| s.name == "both").unwrap();
        assert!(
            matches!(&both.transport, Transport::Http { url, .. } if url.ends_with("/both")),
            "{at}"
        );
        let [sse, not_read] = gemini.warnings.as_slice() else {
            panic!("{at}: two warnings: {:#?}", gemini.warnings)
        };
        assert_eq!(sse.key, "mcpServers.old.url");
        for says in ["not served", "SSE", "httpUrl"] {
            assert!(sse.message.contains(says), "{says}: {sse}");
        }
        assert_eq!(not_read.key, "mcpServers.both.url");
        assert!(not_read.message.contains("not read"), "{not_read}");
    }

    for elsewhere in [
        ".cursor/mcp.json",
        "app/settings.json",
        ".gemini/other.json",
        "etc/gemini-cli/other.json",
    ] {
        let text = text.replace(
            r#""both": {"url": "http://127.0.0.1:9/sse", "httpUrl": "http://127.0.0.1:9/both"},"#,
            "",
        );
        let path = root.join(elsewhere);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c = Config::read(&text, &vars, Origin::of(&path))
            .unwrap_or_else(|e| panic!("{elsewhere}: {e}"));
        assert_eq!(
            names(&c),
            ["old", "typed", "streamable", "new", "local"],
            "{elsewhere}"
        );
        assert!(c.warnings.is_empty(), "{elsewhere}: {:#?}", c.warnings);
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// VS Code's JSONC, its `servers` and `inputs`; `${input:ID}` from `DISCO_INPUT_<ID>`.
#[test]
fn vs_code() {
    check(
        "vscode-mcp.json",
        &[
            r#"perplexity: npx ["-y", "server-perplexity-ask"] env={"PERPLEXITY_API_KEY": "pplx-6"} cwd=None"#,
            r#"github: https://api.githubcopilot.com/mcp/ headers={} forward=false"#,
        ],
        &["servers.github.dev", "servers.legacy.type"],
    );
}

/// An unset input refuses its server alone, naming the variable; the others serve.
#[test]
fn an_unset_input_refuses_its_server_only() {
    let c = read_with("vscode-mcp.json", &|name| match name {
        "DISCO_INPUT_PERPLEXITY_KEY" => None,
        other => vars(other),
    })
    .expect("the others serve");
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["github"]);
    let w = c
        .warnings
        .iter()
        .find(|w| w.key == "servers.perplexity.env.PERPLEXITY_API_KEY")
        .unwrap_or_else(|| panic!("{:#?}", c.warnings));
    assert!(w.message.contains("`DISCO_INPUT_PERPLEXITY_KEY`"), "{w}");
    assert!(w.message.contains("`perplexity` is not served"), "{w}");
}

/// The variable an input is read from: upper case, every other character `_`.
#[test]
fn input_variables_are_named_from_the_id() {
    for (id, var) in [
        ("api-key", "DISCO_INPUT_API_KEY"),
        ("apiKey", "DISCO_INPUT_APIKEY"),
        ("gh.token_2", "DISCO_INPUT_GH_TOKEN_2"),
        ("clé", "DISCO_INPUT_CL_"),
    ] {
        let text =
            format!(r#"{{"servers": {{"a": {{"command": "x", "args": ["${{input:{id}}}"]}}}}}}"#);
        let c = Config::parse(&text, &|name| (name == var).then(|| "v".to_string()))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(c.servers.len(), 1, "{id}: {:?}", c.warnings);
        let c = Config::parse(&text, &|_| None).expect("refused alone");
        assert!(c.servers.is_empty());
        assert!(c.warnings[0].message.contains(var), "{}", c.warnings[0]);
    }
}

#[test]
fn codex() {
    check(
        "codex-config.toml",
        &[
            r#"docs: npx ["-y", "mcp-server-docs"] env={"DOCS_DIR": "/srv/docs"} cwd=None"#,
            r#"figma: https://mcp.figma.com/mcp headers={"Authorization": "Bearer fig-5", "X-Figma-Region": "us-east-1", "X-Org": "acme"} forward=false"#,
        ],
        &[
            "model",
            "approval_policy",
            "mcp_servers.docs.startup_timeout_sec",
            "mcp_servers.docs.tool_timeout_sec",
            "mcp_servers.figma.enabled_tools",
        ],
    );
}

/// The `disco` section stays strict in every format.
#[test]
fn the_disco_section_stays_strict() {
    let e = Config::parse(
        r#"{"servers": {"a": {"command": "x"}}, "disco": {"exposur": "all"}}"#,
        &vars,
    )
    .err()
    .expect("a misspelt disco key");
    assert_eq!(e.key, "disco.exposur");
    let toml = "[mcp_servers.a]\ncommand = \"x\"\n[disco]\npageSiz = 3\n";
    let e = Config::read(
        toml,
        &vars,
        Origin {
            format: Format::Toml,
            ..Origin::default()
        },
    )
    .err()
    .expect("a misspelt disco key");
    assert_eq!(e.key, "disco.pageSiz");
}

/// A server entry of `format` with `key` set to a value that fits it, and the section it is in.
fn entry(format: Format, key: &str) -> String {
    // The transport the key belongs with, and a value of its kind.
    let (http, value) = match key {
        "type" => (false, r#""stdio""#.to_string()),
        "command" | "url" | "serverUrl" | "httpUrl" => (key != "command", String::new()),
        "args" | "env_vars" => (false, r#"["-y"]"#.into()),
        "env" => (false, r#"{"K": "v"}"#.into()),
        "envFile" => (
            false,
            format!("{:?}", fixtures().join("cursor.env").display().to_string()),
        ),
        "cwd" => (false, r#""/""#.into()),
        "headers" | "http_headers" => (true, r#"{"X": "y"}"#.into()),
        "env_http_headers" => (true, r#"{"X": "TOKEN"}"#.into()),
        "bearer_token_env_var" => (true, r#""TOKEN""#.into()),
        "forwardToken" | "oauth" => (true, "true".into()),
        "scopes" => (true, r#"["read"]"#.into()),
        "disabled" => (false, "false".into()),
        "enabled" => (false, "true".into()),
        // A key the gateway leaves out: its value is not read.
        _ => (false, "[1]".into()),
    };
    let base = if http {
        ("url", r#""http://h/mcp""#)
    } else {
        ("command", r#""x""#)
    };
    let mut fields: Vec<(String, String)> = Vec::new();
    if value.is_empty() {
        let v = if key == "command" {
            r#""x""#
        } else {
            r#""http://h/mcp""#
        };
        fields.push((key.into(), v.into()));
    } else {
        fields.push((base.0.into(), base.1.into()));
        fields.push((key.into(), value));
    }
    match format {
        Format::Json => {
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
            format!(r#"{{"mcpServers": {{"s": {{{}}}}}}}"#, body.join(", "))
        }
        Format::Toml => {
            // JSON's values are TOML's here, but for objects: inline tables.
            let body: Vec<String> = fields
                .iter()
                .map(|(k, v)| {
                    let v = if v.starts_with('{') {
                        v.replace(':', " =")
                    } else {
                        v.clone()
                    };
                    format!("{k} = {v}")
                })
                .collect();
            format!("[mcp_servers.s]\n{}\n", body.join("\n"))
        }
    }
}

fn parse(format: Format, text: &str) -> Result<Config, ConfigError> {
    Config::read(
        text,
        &vars,
        Origin {
            format,
            ..Origin::default()
        },
    )
}

fn section(format: Format) -> &'static str {
    match format {
        Format::Json => "mcpServers.s",
        Format::Toml => "mcp_servers.s",
    }
}

/// Every key any client defines for a server entry is accepted: read, or left out with one
/// warning naming it.
#[test]
fn every_documented_key_is_read_or_left_out_with_a_warning() {
    for format in [Format::Json, Format::Toml] {
        for (key, used) in clients::uses(format) {
            let text = entry(format, key);
            let c = parse(format, &text).unwrap_or_else(|e| panic!("{key}: {text}: {e}"));
            assert_eq!(c.servers.len(), 1, "{key}: {text}");
            let at = format!("{}.{key}", section(format));
            let warned: Vec<_> = c.warnings.iter().filter(|w| w.key == at).collect();
            match used {
                Use::Read => assert!(warned.is_empty(), "{key}: {warned:?}"),
                Use::Ignored(why) => {
                    assert_eq!(warned.len(), 1, "{key}: {:?}", c.warnings);
                    assert!(warned[0].message.contains(why), "{}", warned[0]);
                }
            }
        }
    }
}

/// Each string one edit away from `key`: a character left out, put in, changed, or two
/// neighbours swapped.
fn one_edit(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let alphabet: Vec<char> = ('a'..='z').chain('A'..='Z').chain(['_', '-']).collect();
    let mut out = Vec::new();
    for i in 0..=chars.len() {
        if i < chars.len() {
            let mut v = chars.clone();
            v.remove(i);
            out.push(v.iter().collect());
            for &c in &alphabet {
                let mut v = chars.clone();
                v[i] = c;
                out.push(v.iter().collect());
            }
        }
        if i + 1 < chars.len() {
            let mut v = chars.clone();
            v.swap(i, i + 1);
            out.push(v.iter().collect());
        }
        for &c in &alphabet {
            let mut v = chars.clone();
            v.insert(i, c);
            out.push(v.iter().collect());
        }
    }
    out
}

/// Every one-edit misspelling of a key (that is not itself a key) is refused, naming it at
/// its path: in every format, whether the server is served or disabled.
#[test]
fn every_misspelt_key_is_refused_naming_it() {
    let mut checked = 0;
    for format in [Format::Json, Format::Toml] {
        let known: BTreeMap<&str, Use> = clients::uses(format).iter().copied().collect();
        for (key, _) in clients::uses(format) {
            for typo in one_edit(key) {
                if typo.is_empty() || known.contains_key(typo.as_str()) {
                    continue;
                }
                // In a served entry and in a disabled one alike.
                for off in ["", "\"disabled\": true, ", "enabled = false\n"] {
                    let text = match (format, off) {
                        (Format::Json, "enabled = false\n")
                        | (Format::Toml, "\"disabled\": true, ") => continue,
                        (Format::Json, _) => format!(
                            r#"{{"mcpServers": {{"s": {{{off}"command": "x", "{typo}": 1}}}}}}"#
                        ),
                        (Format::Toml, _) => {
                            format!("[mcp_servers.s]\n{off}command = \"x\"\n{typo} = 1\n")
                        }
                    };
                    let e = parse(format, &text)
                        .err()
                        .unwrap_or_else(|| panic!("`{typo}` was accepted: {text}"));
                    assert_eq!(e.key, format!("{}.{typo}", section(format)), "{e}");
                    assert!(
                        e.message.starts_with(&format!("unknown key `{typo}`")),
                        "{e}"
                    );
                    checked += 1;
                }
            }
        }
    }
    // The generator made the cases it should (a floor, not a figure to match).
    assert!(checked > 20_000, "{checked}");
}

/// An `envFile` that cannot be read is an error at its key naming the file; one with a line
/// that is not `KEY=VALUE` says so without showing the line (it may hold a secret).
#[test]
fn an_env_file_error_names_the_file_and_shows_no_line() {
    let dir = std::env::temp_dir().join(format!(
        "disco-gateway-envfile-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::write(dir.join("bad.env"), "GOOD=1\nsk-live-hush no equals sign\n").expect("a file");
    let read = |file: &str| {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x", "envFile": "{file}"}}}}}}"#);
        let origin = Origin {
            dir: Some(&dir),
            ..Origin::default()
        };
        Config::read(&text, &vars, origin)
    };
    // A file that cannot be read refuses its server alone, with a warning naming the file.
    let c = read("missing.env").expect("the other servers serve");
    assert!(c.servers.is_empty());
    let w = c.warnings.first().expect("a warning");
    assert_eq!(w.key, "mcpServers.a.envFile");
    assert!(w.message.contains("missing.env"), "{w}");
    let e = read("bad.env").err().expect("a line that is not KEY=VALUE");
    assert_eq!(e.key, "mcpServers.a.envFile");
    assert!(
        e.message.contains("bad.env") && e.message.contains("KEY=VALUE"),
        "{e}"
    );
    assert!(!e.message.contains("hush"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The one-edit misspellings of `key`: a letter left out, two neighbours swapped, a letter
/// doubled, and the key in other case.
fn misspellings(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut out = vec![key.to_uppercase(), key.to_lowercase()];
    let mut first = chars.clone();
    if let Some(c) = first.first_mut() {
        *c = if c.is_uppercase() {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        };
    }
    out.push(first.iter().collect());
    for i in 0..chars.len() {
        let mut left_out = chars.clone();
        left_out.remove(i);
        out.push(left_out.iter().collect());
        let mut doubled = chars.clone();
        doubled.insert(i, chars[i]);
        out.push(doubled.iter().collect());
        if i + 1 < chars.len() {
            let mut swapped = chars.clone();
            swapped.swap(i, i + 1);
            out.push(swapped.iter().collect());
        }
    }
    out.retain(|k| k != key);
    out
}

/// A top-level key of the gateway's misspelt (`disko`, `Disco`, `mcpServer`) is an error that
/// says which was meant: the section would be left out, and a `disco` left out takes its
/// `tokens` with it (`--http` would serve without authentication). A client's own setting
/// stays a warning.
#[test]
fn a_misspelt_top_level_key_is_an_error_and_a_clients_own_is_a_warning() {
    let read = |text: &str, format: Format| {
        let origin = Origin {
            format,
            ..Origin::default()
        };
        Config::read(text, &vars, origin)
    };
    let json = |key: &str| {
        format!(
            r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "{key}": {{"tokens": [{{"token": "t", "sees": "*"}}]}}}}"#
        )
    };
    let toml = |key: &str| format!("[mcp_servers.a]\ncommand = \"x\"\n\n[\"{key}\"]\nx = 1\n");
    type Text<'a> = &'a dyn Fn(&str) -> String;
    let cases: [(Format, &[&str], Text); 2] = [
        (Format::Json, &["disco", "mcpServers", "servers"], &json),
        (Format::Toml, &["disco", "mcp_servers"], &toml),
    ];
    let mut checked = 0;
    for (format, keys, text) in cases {
        for key in keys {
            for wrong in misspellings(key) {
                if keys.contains(&wrong.as_str()) || (format == Format::Json && wrong == "inputs") {
                    continue;
                }
                let text = text(&wrong);
                match read(&text, format) {
                    Ok(_) => panic!("{text}: `{wrong}` was accepted"),
                    Err(e) => {
                        assert_eq!(e.key, wrong, "{text}: {e}");
                        assert!(e.message.contains("did you mean `"), "{text}: {e}");
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} misspellings");
    // The found cases, and the message's suggestion.
    for (wrong, meant) in [
        ("disko", "disco"),
        ("Disco", "disco"),
        ("mcpservers", "mcpServers"),
    ] {
        let e = read(&json(wrong), Format::Json)
            .err()
            .map(|e| e.to_string());
        let said = e.unwrap_or_default();
        assert!(
            said.contains(&format!("did you mean `{meant}`")),
            "{wrong}: {said}"
        );
    }
    // Clients' own top-level settings (Gemini CLI's, Codex's, Claude Code's, VS Code's).
    for own in [
        "mcp",
        "ui",
        "tools",
        "theme",
        "model",
        "inputs",
        "projects",
        "numStartups",
    ] {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "{own}": {{}}}}"#);
        let config = read(&text, Format::Json).unwrap_or_else(|e| panic!("{own}: {e}"));
        assert_eq!(config.servers.len(), 1, "{own}");
    }
    for own in [
        "model",
        "profile",
        "sandbox_mode",
        "approval_policy",
        "notify",
    ] {
        let text = format!("{own} = \"x\"\n[mcp_servers.a]\ncommand = \"x\"\n");
        let config = read(&text, Format::Toml).unwrap_or_else(|e| panic!("{own}: {e}"));
        assert_eq!(config.servers.len(), 1, "{own}");
    }
}

/// A server the gateway would serve otherwise than its client does is left out with a warning
/// at the key that says so, and the file's other servers are served: Claude Code's WebSocket
/// (`"type": "ws"`), a legacy SSE server, and one VS Code runs in its sandbox
/// (`"sandboxEnabled": true`; `false` is served).
#[test]
fn a_server_served_otherwise_is_left_out_alone() {
    let cases = [
        (r#""type": "ws", "url": "ws://localhost:9/mcp""#, "type"),
        (r#""type": "sse", "url": "http://localhost:9/sse""#, "type"),
        (
            r#""type": "stdio", "command": "x", "sandboxEnabled": true, "sandbox": {}"#,
            "sandboxEnabled",
        ),
    ];
    for (entry, key) in cases {
        let text = format!(r#"{{"servers": {{"kept": {{"command": "k"}}, "left": {{{entry}}}}}}}"#);
        let config = Config::parse(&text, &vars).unwrap_or_else(|e| panic!("{text}: {e}"));
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["kept"], "{text}");
        let at = format!("servers.left.{key}");
        assert!(
            config
                .warnings
                .iter()
                .any(|w| w.key == at && w.message.starts_with("not served")),
            "{text}: {:?}",
            config.warnings
        );
    }
    let text = r#"{"servers": {"s": {"command": "x", "sandboxEnabled": false}}}"#;
    let config = Config::parse(text, &vars).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(config.servers.len(), 1);
}

/// Codex's `env_vars`: the named variables of the gateway's environment are given to that
/// server (an unset one is not), under its `env`; only a stdio server takes them.
#[test]
fn codex_env_vars_pass_the_named_variables() {
    let read = |text: &str| {
        let origin = Origin {
            format: Format::Toml,
            ..Origin::default()
        };
        Config::read(text, &vars, origin)
    };
    let text =
        "[mcp_servers.a]\ncommand = \"x\"\nenv_vars = [\"TOKEN\", \"FIGMA_ORG\", \"UNSET\"]\n\
                env = { FIGMA_ORG = \"own\" }\n";
    let config = read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let Some(Transport::Stdio { env, .. }) = config.servers.first().map(|s| &s.transport) else {
        panic!("{text}: not a stdio server");
    };
    let want = BTreeMap::from([
        ("FIGMA_ORG".to_string(), "own".to_string()),
        ("TOKEN".to_string(), "t-7".to_string()),
    ]);
    assert_eq!(env, &want);
    let text = "[mcp_servers.a]\nurl = \"https://h/mcp\"\nenv_vars = [\"TOKEN\"]\n";
    let e = read(text).err().map(|e| e.key).unwrap_or_default();
    assert_eq!(e, "mcp_servers.a.env_vars", "{text}");
}

/// VS Code's predefined variables: `${userHome}` is `HOME`, `${workspaceFolder}` the
/// gateway's working directory (and `${workspaceFolderBasename}` its name), `${/}` and
/// `${pathSeparator}` the separator; another of VS Code's forms (`${config:...}`,
/// `${command:...}`) refuses its server alone, the others serve.
#[test]
fn vs_codes_predefined_variables_are_read() {
    let here = std::env::current_dir().expect("a working directory");
    let home = "/home/me";
    let env = |name: &str| (name == "HOME").then(|| home.to_string());
    let sep = std::path::MAIN_SEPARATOR_STR;
    let base = here
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cases = [
        ("${userHome}/notes", format!("{home}/notes")),
        ("${workspaceFolder}", here.to_string_lossy().into_owned()),
        ("${workspaceFolderBasename}", base),
        ("a${/}b${pathSeparator}c", format!("a{sep}b{sep}c")),
    ];
    for (arg, want) in cases {
        let text = format!(r#"{{"servers": {{"a": {{"command": "x", "args": ["{arg}"]}}}}}}"#);
        let config = Config::parse(&text, &env).unwrap_or_else(|e| panic!("{arg}: {e}"));
        let Some(Transport::Stdio { args, .. }) = config.servers.first().map(|s| &s.transport)
        else {
            panic!("{arg}: not served");
        };
        assert_eq!(args, &[want], "{arg}");
    }
    for arg in ["${config:editor.fontSize}", "${command:pickFile}"] {
        let text = format!(
            r#"{{"servers": {{"kept": {{"command": "k"}}, "a": {{"command": "x", "env": {{"K": "{arg}"}}}}}}}}"#
        );
        let config = Config::parse(&text, &env).unwrap_or_else(|e| panic!("{arg}: {e}"));
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["kept"], "{arg}");
        let w = config
            .warnings
            .first()
            .map(|w| w.to_string())
            .unwrap_or_default();
        assert!(
            w.starts_with("servers.a.env.K") && w.contains("VS Code's"),
            "{w}"
        );
    }
}

/// `disabled` (and Codex's `enabled`) is a boolean: `"disabled": "true"` is an error at the
/// key, not a server served.
#[test]
fn disabled_and_enabled_are_booleans() {
    for (format, text, key) in [
        (
            Format::Json,
            r#"{"mcpServers": {"s": {"command": "x", "disabled": "true"}}}"#,
            "mcpServers.s.disabled",
        ),
        (
            Format::Json,
            r#"{"mcpServers": {"s": {"command": "x", "disabled": 1}}}"#,
            "mcpServers.s.disabled",
        ),
        (
            Format::Json,
            r#"{"mcpServers": {"s": {"command": "x", "disabled": null}}}"#,
            "mcpServers.s.disabled",
        ),
        (
            Format::Toml,
            "[mcp_servers.s]\ncommand = \"x\"\nenabled = \"false\"\n",
            "mcp_servers.s.enabled",
        ),
        (
            Format::Toml,
            "[mcp_servers.s]\ncommand = \"x\"\nenabled = 0\n",
            "mcp_servers.s.enabled",
        ),
    ] {
        let e = parse(format, text)
            .err()
            .unwrap_or_else(|| panic!("{text} was accepted"));
        assert_eq!(e.key, key, "{text}: {e}");
    }
    for (format, text, served) in [
        (
            Format::Json,
            r#"{"mcpServers": {"s": {"command": "x", "disabled": true}, "t": {"command": "y"}}}"#,
            1,
        ),
        (
            Format::Json,
            r#"{"mcpServers": {"s": {"command": "x", "disabled": false}}}"#,
            1,
        ),
        (
            Format::Toml,
            "[mcp_servers.s]\ncommand = \"x\"\nenabled = true\n",
            1,
        ),
    ] {
        let c = parse(format, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.servers.len(), served, "{text}");
    }
}

/// A value of `env` is a string, or as VS Code documents, a number (its decimal text) or null
/// (the name left out); anything else is refused at its key.
#[test]
fn env_values_are_strings_numbers_or_null() {
    let text = r#"{"servers": {"a": {"command": "x", "env": {"S": "s", "N": 3000, "F": 1.5, "Z": null}}}}"#;
    let config = Config::parse(text, &vars).unwrap_or_else(|e| panic!("{e}"));
    let Some(Transport::Stdio { env, .. }) = config.servers.first().map(|s| &s.transport) else {
        panic!("not served");
    };
    let want = BTreeMap::from([
        ("F".to_string(), "1.5".to_string()),
        ("N".to_string(), "3000".to_string()),
        ("S".to_string(), "s".to_string()),
    ]);
    assert_eq!(env, &want);
    for bad in ["true", "[]", "{}"] {
        let text = format!(r#"{{"servers": {{"a": {{"command": "x", "env": {{"B": {bad}}}}}}}}}"#);
        let e = Config::parse(&text, &vars)
            .err()
            .map(|e| e.key)
            .unwrap_or_default();
        assert_eq!(e, "servers.a.env.B", "{bad}");
    }
}

/// Gemini CLI's `mcp.allowed` and `mcp.excluded` (`excluded` over `allowed`): a server it would
/// not start is not served, with a warning naming it; `mcp` without them is its own setting.
#[test]
fn gemini_clis_allowed_and_excluded_are_honoured() {
    let servers =
        r#""mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}, "c": {"command": "c"}}"#;
    let cases: [(&str, &[&str]); 5] = [
        (r#"{"allowed": ["a", "b"]}"#, &["a", "b"]),
        (r#"{"excluded": ["b"]}"#, &["a", "c"]),
        (r#"{"allowed": ["a", "b"], "excluded": ["a"]}"#, &["b"]),
        (r#"{"allowed": []}"#, &[]),
        (r#"{"serverCommand": "x"}"#, &["a", "b", "c"]),
    ];
    for (mcp, served) in cases {
        let text = format!(r#"{{"mcp": {mcp}, {servers}}}"#);
        let config = Config::parse(&text, &vars).unwrap_or_else(|e| panic!("{mcp}: {e}"));
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, served, "{mcp}");
        for left in ["a", "b", "c"].iter().filter(|n| !served.contains(n)) {
            let key = format!("mcpServers.{left}");
            assert!(
                config
                    .warnings
                    .iter()
                    .any(|w| w.key == key && w.message.contains("mcp.")),
                "{mcp}: {:?}",
                config.warnings
            );
        }
    }
    let e = Config::parse(
        &format!(r#"{{"mcp": {{"allowed": "a"}}, {servers}}}"#),
        &vars,
    );
    assert_eq!(e.err().map(|e| e.key).as_deref(), Some("mcp.allowed"));
}

/// Claude Code's `disabledMcpServers` of the project read: the servers it names (of the user's
/// and of the project's) are not served, each with a warning; another project's list is not
/// read.
#[test]
fn claude_codes_disabled_servers_of_the_project_are_left_out() {
    let text = r#"{"mcpServers": {"memory": {"command": "m"}, "time": {"command": "t"}},
        "projects": {
            "/home/me/app": {"disabledMcpServers": ["memory", "sentry"],
                             "mcpServers": {"sentry": {"url": "https://h/mcp"}, "db": {"command": "d"}}},
            "/home/me/other": {"disabledMcpServers": ["time", "db"]}}}"#;
    let origin = Origin {
        project: Some(Path::new("/home/me/app")),
        ..Origin::default()
    };
    let c = Config::read(text, &vars, origin).unwrap_or_else(|e| panic!("{e}"));
    let mut names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["db", "time"]);
    for left in [
        "mcpServers.memory",
        "projects./home/me/app.mcpServers.sentry",
    ] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.key == left && w.message.contains("disabledMcpServers")),
            "{left}: {:?}",
            c.warnings
        );
    }
}
