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

/// The mode bits of a file (its permissions for owner, group and others).
#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("a file")
        .permissions()
        .mode()
        & 0o777
}

/// `adopt` from the command line, on a copy of a client's file: without `--write` it changes
/// nothing; with it the servers move to the gateway's configuration and a backup is kept; a
/// second run changes nothing; `--undo --write` gives the file back byte for byte. The files
/// that hold the servers' secrets are 0600 in a 0700 directory, the client's file keeps its
/// mode and stays a symlink when it is one, and the configuration written is served.
#[cfg(unix)]
#[test]
fn adopt_writes_only_when_told_and_undoes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("adopt");
    let config_home = dir.join("config");
    std::fs::create_dir_all(&config_home).expect("a directory");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients/vscode-mcp.json");
    let original = std::fs::read_to_string(&fixture).expect("the fixture");
    // The file a dotfiles manager keeps elsewhere, linked into place; readable by its owner.
    let real = dir.join("dotfiles/mcp.json");
    std::fs::create_dir_all(dir.join("dotfiles")).expect("a directory");
    // The client's folder is open to others to read, and stays so: it is not the gateway's.
    let folder = dir.join("dotfiles");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).expect("a mode");
    std::fs::write(&real, &original).expect("a copy");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("a mode");
    let file = dir.join("mcp.json");
    std::os::unix::fs::symlink(&real, &file).expect("a symlink");
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
    // Beside the file itself, not its link.
    let backup = dir.join("dotfiles/mcp.json.disco-gateway.bak");
    assert_eq!(
        std::fs::read_to_string(&backup).expect("a backup"),
        original
    );
    let moved = std::fs::read_to_string(&gateway_config).expect("the gateway's file");
    assert!(
        moved.contains("\"perplexity\"") && moved.contains("\"inputs\""),
        "{moved}"
    );
    let record = config_home.join("disco-gateway/vscode.adopt.json");
    assert!(std::fs::symlink_metadata(&file)
        .expect("the link")
        .is_symlink());
    assert!(read().contains("\"disco-gateway\": {"));
    assert_eq!(mode(&real), 0o600);
    assert_eq!(mode(&folder), 0o755);
    assert_eq!(mode(&gateway_config), 0o600);
    assert_eq!(mode(&record), 0o600);
    assert_eq!(mode(&config_home.join("disco-gateway")), 0o700);
    let origin = disco_gateway::config::Origin::of(&gateway_config);
    let served = disco_gateway::config::Config::read(&moved, &|_| Some("v".into()), origin)
        .unwrap_or_else(|e| panic!("{moved}: {e}"));
    let names: Vec<&str> = served.servers.iter().map(|s| s.name.as_str()).collect();
    // `legacy` is SSE, served neither here nor from the client's file.
    assert_eq!(names, ["perplexity", "github"], "{moved}");

    let adopted = read();
    assert!(run(&["--write"]).contains("nothing to adopt"));
    assert_eq!(read(), adopted);

    assert!(run(&["--undo"]).starts_with("would put"));
    assert_eq!(read(), adopted);
    assert!(run(&["--undo", "--write"]).starts_with("put `servers`"));
    assert_eq!(read(), original);
    assert_eq!(mode(&folder), 0o755);
    // The gateway's configuration is still there: a second adoption does not overwrite it.
    let kept = std::fs::read_to_string(&gateway_config).expect("the gateway's file");
    let o = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .args([
            "adopt",
            "--from",
            "vscode",
            "--file",
            file.to_str().unwrap(),
            "--write",
        ])
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", &config_home)
        .output()
        .expect("the gateway runs");
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not overwrite it"));
    assert_eq!(read(), original);
    assert_eq!(std::fs::read_to_string(&gateway_config).ok(), Some(kept));
    assert!(std::fs::symlink_metadata(&file)
        .expect("the link")
        .is_symlink());
    assert_eq!(mode(&real), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `adopt` refuses, saying why and changing nothing, when the gateway's configuration it would
/// write is not served as the client's file is: an `envFile` found from the client's
/// directory (not the gateway's), Gemini CLI's `mcp.allowed`, which would not let it start
/// the gateway's entry, and Gemini CLI's `url`, an SSE server the gateway cannot serve.
#[test]
fn adopt_refuses_what_would_not_be_served() {
    let dir = scratch("adopt-refused");
    let config_home = dir.join("config");
    std::fs::create_dir_all(&config_home).expect("a directory");
    let gemini = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/clients/gemini-settings.json"),
    )
    .expect("the fixture");
    let cases = [
        (
            "vscode",
            "mcp.json",
            r#"{"servers": {"db": {"type": "stdio", "command": "db", "envFile": ".env"}}}"#
                .to_string(),
            "is not served",
        ),
        ("gemini", "settings.json", gemini, "mcp.allowed"),
        (
            "gemini",
            "settings.json",
            r#"{"mcp": {"excluded": ["b"]}, "mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#
                .to_string(),
            "does not serve it",
        ),
        // Gemini CLI's `url` is an SSE server: the refusal says so.
        (
            "gemini",
            "settings.json",
            r#"{"mcpServers": {"old": {"url": "http://127.0.0.1:9/sse"}}}"#.to_string(),
            "does not serve it (mcpServers.old.url: not served: a legacy SSE server",
        ),
    ];
    std::fs::write(dir.join(".env"), "DB_URL=postgres://db\n").expect("an env file");
    for (client, name, text, why) in cases {
        let file = dir.join(name);
        std::fs::write(&file, &text).expect("a copy");
        let o = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
            .args(["adopt", "--from", client, "--file", file.to_str().unwrap()])
            .arg("--write")
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", &config_home)
            .output()
            .expect("the gateway runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{client}: {}", stdout(&o));
        assert!(err.contains(why), "{client}: {err}");
        assert_eq!(std::fs::read_to_string(&file).expect("the file"), text);
        assert!(!config_home.join("disco-gateway").exists(), "{client}");
    }
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
    // Its summary line says why it is not up.
    let out = stdout(&o);
    assert!(
        out.contains("server `remote`: not up (initialization failed: ")
            && out.contains("https://127.0.0.1:9/mcp")
            && out.contains("; 0 tool(s)"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
