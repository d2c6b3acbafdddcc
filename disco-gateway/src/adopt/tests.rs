use super::*;

use crate::config::{Config, Format, Origin, ServerConfig, SignIn};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients")
}

/// Each JSON client's fixture (tests/fixtures/clients, written from its documentation).
const FILES: &[(Client, &str)] = &[
    (Client::ClaudeDesktop, "claude_desktop_config.json"),
    (Client::ClaudeCode, "claude-code.mcp.json"),
    (Client::Cursor, "cursor-mcp.json"),
    (Client::Windsurf, "windsurf-mcp_config.json"),
    (Client::Gemini, "gemini-settings.json"),
    (Client::VsCode, "vscode-mcp.json"),
];

fn vars(name: &str) -> Option<String> {
    Some(format!("value-of-{name}"))
}

/// The servers `text` serves, read from `dir` (where a relative `envFile` is found), each
/// whole: its name, and every part of its transport (env and headers too).
fn servers(text: &str, dir: &Path) -> Result<Vec<String>, String> {
    let origin = Origin {
        dir: Some(dir),
        ..Origin::default()
    };
    let c = Config::read(text, &vars, origin).map_err(|e| e.to_string())?;
    Ok(c.servers.iter().map(whole).collect())
}

/// A server as one line: its name and every part of its transport (env and headers too).
fn whole(s: &ServerConfig) -> String {
    use crate::config::Transport;
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => format!("{} {command} {args:?} {env:?} {cwd:?}", s.name),
        Transport::Http {
            url,
            headers,
            forward_token,
            oauth,
        } => format!(
            "{} {url} {headers:?} {forward_token} {:?}",
            s.name,
            match oauth {
                SignIn::Configured(o) =>
                    format!("{:?}", (&o.client_id, &o.scopes, o.callback_port)),
                SignIn::WhenSignedIn => "when signed in".into(),
                SignIn::Never => "never".into(),
            }
        ),
    }
}

/// Adopting each client's file moves its servers, as written, to the gateway's configuration,
/// leaves one entry that runs the gateway, keeps every other byte of the file, changes
/// nothing a second time, and `--undo` gives the file back byte for byte.
#[test]
fn each_clients_file_is_adopted_and_undone_keeping_the_rest_of_it() {
    let binary = Path::new("/opt/disco/bin/disco-gateway");
    let config = Path::new("/home/me/.config/disco-gateway/x.json");
    for (client, name) in FILES {
        let file = fixtures().join(name);
        let text = std::fs::read_to_string(&file).expect("the fixture");
        let plan = plan(*client, &file, &text, binary, config)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: nothing to adopt"));
        // Only the section changed: what comes before and after it is the file's own.
        let record = &plan.record;
        let start = text
            .find(&record.before)
            .expect("the section is the file's text");
        let end = start + record.before.len();
        assert_eq!(&plan.client_text[..start], &text[..start], "{name}");
        assert_eq!(
            &plan.client_text[start + record.after.len()..],
            &text[end..],
            "{name}"
        );
        // The gateway serves what the client did, read from where its file is; a relative
        // `envFile` is not found there, and `check` refuses the plan, as it does Gemini CLI's
        // `mcp.allowed` (the fixture has it).
        let here = servers(&text, &fixtures()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let moved = servers(&plan.gateway_text, config.parent().expect("a directory"));
        let checked = check(&plan, *client, &file, &text, config);
        if text.contains("\"envFile\"") {
            assert_ne!(moved.as_ref(), Ok(&here), "{name}");
            assert!(checked.is_err_and(|e| e.contains("envFile")), "{name}");
        } else {
            assert_eq!(moved.as_ref(), Ok(&here), "{name}");
            match client {
                Client::Gemini => assert!(checked.is_err_and(|e| e.contains("mcp.allowed"))),
                _ => assert_eq!(checked, Ok(()), "{name}"),
            }
        }
        // Beside the client's file, the gateway's serves every server as it does.
        let beside = fixtures().join("x.json");
        let moved = servers(&plan.gateway_text, &fixtures());
        assert_eq!(moved.as_ref(), Ok(&here), "{name}");
        if *client != Client::Gemini {
            assert_eq!(
                check(&plan, *client, &file, &text, &beside),
                Ok(()),
                "{name}"
            );
        }
        // Without Gemini CLI's `mcp.allowed` (which `check` refuses, above), the client runs
        // the gateway alone.
        let client_text = plan.client_text.replace(r#""allowed": ["#, r#""other": ["#);
        let after = Config::parse(&client_text, &vars).expect("the client's file reads");
        let entries: Vec<String> = after
            .servers
            .iter()
            .map(|s| format!("{} {}", s.name, s.transport.describe()))
            .collect();
        assert_eq!(
            entries,
            [format!(
                "{ENTRY} /opt/disco/bin/disco-gateway --config {}",
                config.display()
            )],
            "{name}"
        );
        // A second run changes nothing.
        assert!(
            super::plan(*client, &file, &plan.client_text, binary, config)
                .expect("reads")
                .is_none(),
            "{name}"
        );
        // Undo gives the file back, and keeps what was edited elsewhere since.
        assert_eq!(
            undo(&plan.client_text, record).as_deref(),
            Ok(&*text),
            "{name}"
        );
        let edited = format!("{}\n", plan.client_text);
        assert_eq!(undo(&edited, record), Ok(format!("{text}\n")), "{name}");
        // An edit of the section since is not overwritten.
        let changed = plan.client_text.replace("--config", "--config2");
        assert!(undo(&changed, record).is_err(), "{name}");
    }
}

/// Gemini CLI's `url` is a legacy SSE server, which the gateway does not serve: adopting it
/// would make it a Streamable HTTP server in the gateway's file, so the plan is refused naming
/// it, wherever Gemini CLI's file is. Its `httpUrl` is adopted.
#[test]
fn gemini_clis_sse_server_is_not_adopted() {
    let binary = Path::new("/opt/disco/bin/disco-gateway");
    let config = Path::new("/home/me/.config/disco-gateway/x.json");
    let file = Path::new("/elsewhere/gemini.json");
    let sse = r#"{"mcpServers": {"old": {"url": "http://127.0.0.1:9/sse"}}}"#;
    let http = r#"{"mcpServers": {"new": {"httpUrl": "http://127.0.0.1:9/mcp"}}}"#;
    let planned = |text: &str| {
        plan(Client::Gemini, file, text, binary, config)
            .expect("a plan")
            .expect("something to adopt")
    };
    let refused = check(&planned(sse), Client::Gemini, file, sse, config);
    assert!(
        refused.as_ref().is_err_and(|e| e.contains("`old`")),
        "{refused:?}"
    );
    assert_eq!(
        check(&planned(http), Client::Gemini, file, http, config),
        Ok(())
    );
}

/// A file with the gateway's entry and other servers, or without servers, is left alone.
#[test]
fn what_is_not_adoptable_is_said() {
    let b = Path::new("/b");
    let f = Path::new("/f.json");
    let plan = |t: &str| plan(Client::Cursor, f, t, b, f).map(|p| p.is_some());
    assert_eq!(plan(r#"{"mcpServers": {}}"#), Ok(false));
    assert_eq!(plan(r#"{"other": 1}"#), Ok(false));
    assert_eq!(
        plan(r#"{"mcpServers": {"disco-gateway": {"command": "x"}}}"#),
        Ok(false)
    );
    assert!(plan(r#"{"mcpServers": {"disco-gateway": {}, "fs": {}}}"#).is_err());
    assert!(plan(r#"{"mcpServers": []}"#).is_err());
    assert!(plan("[1]").is_err());
    assert!(plan(r#"{"mcpServers": {"#).is_err());
    assert!(Client::named("zed").is_err());
    for (client, _) in FILES.iter().chain([&(Client::Codex, "")]) {
        assert_eq!(Client::named(client.name()), Ok(*client));
    }
}

fn toml_servers(text: &str) -> (Vec<String>, Vec<String>) {
    let origin = Origin {
        format: Format::Toml,
        ..Origin::default()
    };
    let c = Config::read(text, &vars, origin).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let servers = c.servers.iter().map(whole).collect();
    let warned = c.warnings.iter().map(|w| w.key.clone()).collect();
    (servers, warned)
}

/// Codex's tables move as written, the gateway's table takes the first one's place, the rest
/// of the file is kept byte for byte, a second run changes nothing, and undo gives it back.
#[test]
fn codex_tables_are_adopted_and_undone_keeping_the_rest_of_the_file() {
    let binary = Path::new("/opt/disco/bin/disco-gateway");
    let config = Path::new("/home/me/.config/disco-gateway/codex.toml");
    let file = fixtures().join("codex-config.toml");
    let text = std::fs::read_to_string(&file).expect("the fixture");
    let plan = plan(Client::Codex, &file, &text, binary, config)
        .expect("reads")
        .expect("servers to adopt");
    assert_eq!(plan.servers, ["docs", "figma", "off"]);
    let start = text.find("[mcp_servers.docs]").expect("the first table");
    assert_eq!(&plan.client_text[..start], &text[..start]);
    assert_eq!(toml_servers(&plan.gateway_text).0, toml_servers(&text).0);
    let (served, warned) = toml_servers(&plan.client_text);
    assert_eq!(served.len(), 1, "{served:?}");
    assert!(
        served[0].contains(r#"["--config", "/home/me/.config/disco-gateway/codex.toml"]"#),
        "{served:?}"
    );
    // The client's own settings are still there, and still the only warnings.
    assert_eq!(warned, ["model", "approval_policy"]);
    assert!(
        super::plan(Client::Codex, &file, &plan.client_text, binary, config)
            .expect("reads")
            .is_none()
    );
    assert_eq!(undo(&plan.client_text, &plan.record).as_deref(), Ok(&*text));
    let edited = format!("# edited\n{}", plan.client_text);
    assert_eq!(undo(&edited, &plan.record), Ok(format!("# edited\n{text}")));
    let changed = plan.client_text.replace("--config", "--config2");
    assert!(undo(&changed, &plan.record).is_err());
}

/// Tables of servers apart from each other move together: the file keeps its other tables,
/// and after undo it serves the same servers; servers written as keys are not edited.
#[test]
fn codex_tables_apart_move_together_and_keys_are_refused() {
    let b = Path::new("/b");
    let f = Path::new("/c.toml");
    let text = "model = \"m\"\n\n[mcp_servers.a]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"n\"\n\n[mcp_servers.b]\ncommand = \"y\"\n[mcp_servers.b.env]\nK = \"v\"\n";
    let plan = plan(Client::Codex, f, text, b, f)
        .expect("reads")
        .expect("servers");
    assert_eq!(plan.servers, ["a", "b"]);
    assert!(plan
        .client_text
        .contains("[profiles.fast]\nmodel = \"n\"\n"));
    assert!(!plan.client_text.contains("[mcp_servers.b"));
    let back = undo(&plan.client_text, &plan.record).expect("undone");
    assert_eq!(toml_servers(&back).0, toml_servers(text).0);
    for keys in [
        "mcp_servers.a.command = \"x\"\n",
        "[mcp_servers]\na = { command = \"x\" }\n",
    ] {
        assert!(super::plan(Client::Codex, f, keys, b, f).is_err(), "{keys}");
    }
}

/// Claude Code's `~/.claude.json` is never edited: refused by its name, and by its `projects`
/// under any name; a project's `.mcp.json` is adopted.
#[test]
fn claude_codes_own_file_is_refused_by_name_and_by_its_projects() {
    let binary = Path::new("/opt/disco/bin/disco-gateway");
    let config = Path::new("/home/me/.config/disco-gateway/claude-code.json");
    let user = std::fs::read_to_string(fixtures().join("claude.json")).expect("the fixture");
    let project =
        std::fs::read_to_string(fixtures().join("claude-code.mcp.json")).expect("the fixture");
    let cases = [
        ("/home/me/.claude.json", &user, false),
        ("/home/me/backup.json", &user, false),
        ("/home/me/.claude.json", &project, false),
        ("/home/me/app/.mcp.json", &project, true),
    ];
    for (file, text, adopted) in cases {
        let got = plan(Client::ClaudeCode, Path::new(file), text, binary, config);
        match (got, adopted) {
            (Ok(Some(_)), true) => {}
            (Err(e), false) => assert!(e.contains("is not edited"), "{file}: {e}"),
            (got, _) => panic!("{file}: {:?}", got.map(|p| p.map(|p| p.servers))),
        }
    }
}

/// The client's file is read as JSON with comments and trailing commas, and nothing looser
/// (the parser's JSON5 extensions are refused, as the gateway's own reading refuses them).
#[test]
fn only_comments_and_trailing_commas_are_taken_beyond_json() {
    let b = Path::new("/b");
    let f = Path::new("/f.json");
    let plan = |t: &str| plan(Client::Cursor, f, t, b, f).map(|p| p.is_some());
    let server = r#""s": {"command": "x"}"#;
    for ok in [
        format!("{{\"mcpServers\": {{{server},}}, // note\n}}"),
        format!("/* a */ {{\"mcpServers\": {{{server}}}}}"),
    ] {
        assert_eq!(plan(&ok), Ok(true), "{ok}");
    }
    for loose in [
        format!("{{mcpServers: {{{server}}}}}"),
        format!("{{'mcpServers': {{{server}}}}}"),
        format!("{{\"mcpServers\": {{{server}}} \"n\": 0x1F}}"),
        format!("{{\"mcpServers\": {{{server}}}, \"n\": 0x1F}}"),
        format!("{{\"mcpServers\": {{{server}}}, \"n\": +1}}"),
        format!("{{\"mcpServers\": {{{server}}}, \"n\": .5}}"),
        format!("{{\"mcpServers\": {{{server}}}, \"n\": NaN}}"),
    ] {
        assert!(plan(&loose).is_err(), "{loose}");
    }
}
