use super::*;

use crate::config::{Config, Format, Origin, ServerConfig};

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

fn servers(text: &str) -> Vec<String> {
    let dir = fixtures();
    let origin = Origin {
        format: Format::Json,
        dir: Some(&dir),
        project: None,
    };
    let c = Config::read(text, &vars, origin).unwrap_or_else(|e| panic!("{e}\n{text}"));
    c.servers
        .iter()
        .map(|s: &ServerConfig| format!("{s:?}"))
        .collect()
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
        // The gateway serves what the client did; the client runs the gateway alone.
        assert_eq!(servers(&plan.gateway_text), servers(&text), "{name}");
        let after = Config::parse(&plan.client_text, &vars).expect("the client's file reads");
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
    assert!(Client::named("codex").is_err());
    for (client, _) in FILES {
        assert_eq!(Client::named(client.name()), Ok(*client));
    }
}
