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
