//! The binary's own flags: `--version` and `--help` print and exit 0 wherever they stand among
//! the gateway's arguments; after `--` they are the upstream command's; a mistake exits 2 with
//! the usage.

use std::process::{Command, Output};

fn gateway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .args(args)
        .output()
        .expect("the gateway runs")
}

/// A new directory of this test's own, under the system's temporary directory.
fn scratch(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "disco-gateway-{what}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(&dir).expect("a directory");
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn version_and_help_exit_zero() {
    let version = format!("disco-gateway {}\n", env!("CARGO_PKG_VERSION"));
    for args in [
        &["--version"][..],
        &["-V"],
        &["--config", "x.json", "--version"],
        &["lint", "--version"],
    ] {
        let o = gateway(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(stdout(&o), version, "{args:?}");
    }
    for args in [
        &["--help"][..],
        &["-h"],
        &["docs", "--help"],
        &["--bogus", "--help"],
    ] {
        let o = gateway(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let out = stdout(&o);
        assert!(out.starts_with(&version), "{args:?}: {out}");
        assert!(
            out.contains("usage:\n  disco-gateway --config FILE"),
            "{out}"
        );
    }
}

#[test]
fn after_the_separator_the_flags_are_the_upstreams_and_mistakes_exit_two() {
    // `--help` of the upstream command is not the gateway's: the command (which does not
    // exist) is what fails, not a help text.
    let o = gateway(&["lint", "--", "/nonexistent/server", "--help"]);
    assert!(!stdout(&o).contains("usage:"), "{}", stdout(&o));
    for args in [&[][..], &["--bogus"], &["--config"]] {
        let o = gateway(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("usage:"),
            "{args:?}"
        );
    }
}

/// `adopt` from the command line, on a copy of a client's file: without `--write` it changes
/// nothing; with it the servers move to the gateway's configuration and a backup is kept; a
/// second run changes nothing; `--undo --write` gives the file back byte for byte.
#[test]
fn adopt_writes_only_when_told_and_undoes() {
    let dir = scratch("adopt");
    let config_home = dir.join("config");
    std::fs::create_dir_all(&config_home).expect("a directory");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients/vscode-mcp.json");
    let original = std::fs::read_to_string(&fixture).expect("the fixture");
    let file = dir.join("mcp.json");
    std::fs::write(&file, &original).expect("a copy");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "adopt",
            "--from",
            "vscode",
            "--file",
            file.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
            .args(&args)
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", &config_home)
            .output()
            .expect("the gateway runs");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout(&o)
    };
    let read = || std::fs::read_to_string(&file).expect("the file");
    let gateway_config = config_home.join("disco-gateway/vscode.json");

    assert!(run(&[]).contains("would move 3 server(s)"));
    assert_eq!(read(), original);
    assert!(!gateway_config.exists());

    assert!(run(&["--write"]).starts_with("moved 3 server(s)"));
    assert_ne!(read(), original);
    assert!(read().contains("\"disco-gateway\": {"), "{}", read());
    let backup = dir.join("mcp.json.disco-gateway.bak");
    assert_eq!(
        std::fs::read_to_string(&backup).expect("a backup"),
        original
    );
    let moved = std::fs::read_to_string(&gateway_config).expect("the gateway's file");
    assert!(
        moved.contains("\"perplexity\"") && moved.contains("\"inputs\""),
        "{moved}"
    );

    let adopted = read();
    assert!(run(&["--write"]).contains("nothing to adopt"));
    assert_eq!(read(), adopted);

    assert!(run(&["--undo"]).starts_with("would put"));
    assert_eq!(read(), adopted);
    assert!(run(&["--undo", "--write"]).starts_with("put `servers`"));
    assert_eq!(read(), original);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An `https://` upstream needs no build feature: the gateway makes its TLS client (rustls)
/// and tries it. Nothing listens here, so the server is down and `lint` says so, without a
/// panic and without asking for a rebuild.
#[test]
fn an_https_upstream_is_tried_without_a_build_feature() {
    let dir = scratch("https");
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"remote": {"url": "https://127.0.0.1:9/mcp"}},
            "disco": {"startupTimeoutMs": 2000, "dataDir": "DIR"}}"#
            .replace("DIR", dir.to_str().unwrap()),
    )
    .expect("the configuration");
    let o = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .args(["lint", "--config", config.to_str().unwrap()])
        .env("XDG_STATE_HOME", &dir)
        .output()
        .expect("the gateway runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("feature"), "{err}");
    // Tried: its request was sent, and refused at the TCP connection.
    assert!(
        err.contains("upstream failed to start") && err.contains("https://127.0.0.1:9/mcp"),
        "{err}"
    );
    assert!(
        stdout(&o).contains("server `remote`: 0 tool(s)"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
