//! `--learn` and `disco-gateway report` (feature `learning`): a serving gateway records its
//! discovery events in the state directory (0600 files, no argument value in them), `report`
//! lists the candidates with their evidence, and `report --forget` deletes them.

#![cfg(feature = "learning")]

#[path = "hostile/harness.rs"]
mod harness;

use std::time::Instant;

use harness::{up, Dir, Gateway, LIVENESS};
use serde_json::{json, Value};

fn settings() -> Value {
    json!({"namespace": ".", "startupTimeoutMs": 10000, "callTimeoutMs": 15000})
}

/// `disco-gateway report --config <the test's configuration> ARGS...`: its output, or the
/// failure with its errors.
fn report(dir: &Dir, ups: &[harness::Up], args: &[&str]) -> String {
    let config = harness::config(dir, ups, settings());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("report")
        .arg("--config")
        .arg(&config)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("report runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_learning_gateway_records_reports_and_forgets() {
    let dir = Dir::new("learning");
    let ups = [up("good", "good")];
    let mut gw = Gateway::start_with(&dir, &ups, settings(), &["--learn"]);
    let marker = "ARGUMENT-VALUE-4c7d";
    let (_, unknown) = gw.call("good.repeat_back", json!({"text": marker}));
    assert!(unknown);
    let (_, failed) = gw.call("good.echo", json!({"text": marker}));
    assert!(!failed);
    let started = Instant::now();
    let candidates = loop {
        let out: Value = serde_json::from_str(&report(&dir, &ups, &["--format", "json"]))
            .expect("report's JSON");
        let found = out["candidates"].as_array().cloned().unwrap_or_default();
        if !found.is_empty() {
            break found;
        }
        assert!(started.elapsed() < LIVENESS, "no candidate recorded");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // One caller (stdio is one anonymous caller): evidence, not yet an alias.
    assert_eq!(
        candidates,
        [
            json!({"kind": "alias", "name": "good.repeat_back", "tool": "good.echo",
                "status": "too_few", "callers": 1, "sessions": 1, "events": 1, "weight": 0.0})
        ]
    );
    let table = report(&dir, &ups, &[]);
    assert!(
        table.contains("alias   good.repeat_back -> good.echo"),
        "{table}"
    );
    let state = harness::state(&dir);
    for file in ["learning.sqlite", "learning.key"] {
        let path = state.join(file);
        let bytes = std::fs::read(&path).expect("the state file");
        assert!(!bytes.windows(marker.len()).any(|w| w == marker.as_bytes()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{file}");
        }
    }
    drop(gw);
    let forgot = report(&dir, &ups, &["--forget", "all"]);
    assert_eq!(forgot, "forgot 2 event(s)\n");
    let out: Value = serde_json::from_str(&report(&dir, &ups, &["--format", "json"])).unwrap();
    assert_eq!(out["candidates"], json!([]));
}
