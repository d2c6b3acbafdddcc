//! `--learn` and `disco-gateway report` (feature `learning`): a serving gateway records its
//! discovery events in the state directory (0600 files, no argument value in them), `report`
//! lists the candidates with their evidence, and `report --forget` deletes them.

#![cfg(feature = "learning")]

#[path = "hostile/harness.rs"]
mod harness;
mod support;

use std::time::Instant;

use harness::{up, Dir, Gateway, LIVENESS};
use serde_json::{json, Value};

fn settings() -> Value {
    json!({"namespace": ".", "startupTimeoutMs": 10000, "callTimeoutMs": 15000})
}

/// Three callers' bearer tokens, one distinct caller each (`ada`, `bo`, `cy`).
const TOKENS: [&str; 3] = ["tok-ada-7f31", "tok-bo-0c9e", "tok-cy-d4a2"];

/// [`settings`] with [`TOKENS`] as `disco.tokens`, each its own caller.
fn settings_with_callers() -> Value {
    let mut disco = settings();
    disco["tokens"] = json!([
        {"token": TOKENS[0], "caller": "ada"},
        {"token": TOKENS[1], "caller": "bo"},
        {"token": TOKENS[2], "caller": "cy"},
    ]);
    disco
}

/// `disco-gateway report --config <the test's configuration> ARGS...`: its output, or the
/// failure with its errors.
fn report(dir: &Dir, ups: &[harness::Up], args: &[&str]) -> String {
    let config = harness::config(dir, ups, settings());
    support::succeeds(
        std::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
            .arg("report")
            .arg("--config")
            .arg(&config)
            .args(args),
    )
}

/// Calls `name` as `caller` until it answers `answer` (a learned alias in use), within
/// [`LIVENESS`]; `context` is what a failure shows besides the last answer.
fn until_learned(
    caller: &harness::HttpClient,
    name: &str,
    answer: &str,
    context: impl Fn() -> String,
) {
    let started = Instant::now();
    loop {
        let (text, failed) = caller.call(name);
        if !failed {
            assert_eq!(text, answer);
            return;
        }
        assert!(
            started.elapsed() < LIVENESS,
            "`{name}` never became a learned alias: {text}\n{}",
            context()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
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

/// `--learn-online` end to end over HTTP: three callers (three tokens), each in a session of
/// its own (the 2025-06-18 era: a client of the sessionless era gives no sequence to learn
/// from), ask for a name no tool has and then call the read-only tool they meant. Once the
/// gateway next reads what is ready (`--learn-every 1`), the name is a learned alias of that
/// tool for every caller, the log says so, and a name only one caller used stays unknown.
#[test]
fn a_learning_gateway_uses_what_three_callers_taught_while_serving() {
    let dir = Dir::new("learning-online");
    let ups = [up("shifty", "shifty")];
    let disco = settings_with_callers();
    let gw = harness::HttpGateway::start_with(&dir, &ups, disco, &["--learn-every", "1"]);
    let callers: Vec<harness::HttpClient> = TOKENS
        .iter()
        .map(|token| harness::HttpClient::connect_with_session(&gw.url, token))
        .collect();
    // `peek` is the upstream's read-only tool; `inspect_item` and `view_thing` are names no
    // tool has, and nothing corrects or suggests them (a name whose tool was suggested teaches
    // nothing: the model was told).
    for (k, caller) in callers.iter().enumerate() {
        let (text, unknown) = caller.call("inspect_item");
        assert!(unknown && text.contains("Unknown tool"), "{text}");
        if k == 0 {
            let (text, unknown) = caller.call("view_thing");
            assert!(unknown && text.contains("Unknown tool"), "{text}");
        }
        assert_eq!(caller.call("shifty.peek"), ("shifty:peek:{}".into(), false));
    }
    until_learned(&callers[1], "inspect_item", "shifty:peek:{}", || {
        format!(
            "report:\n{}\nlog:\n{}",
            report(&dir, &ups, &["--format", "json"]),
            gw.log()
        )
    });
    assert!(
        gw.log().contains("learned aliases and keywords in use"),
        "{}",
        gw.log()
    );
    // One caller's mistake teaches nothing.
    let (text, unknown) = callers[2].call("view_thing");
    assert!(unknown && text.contains("Unknown tool"), "{text}");
}

#[test]
fn learn_every_takes_seconds_from_1_to_86400() {
    for bad in ["0", "86401", "-1", "1.5", "soon"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
            .args(["--learn-every", bad, "--config", "/nonexistent.json"])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the gateway runs");
        assert_eq!(out.status.code(), Some(2), "--learn-every {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "--learn-every {bad}: expected a number of seconds, 1 to 86400"
            )),
            "{err}"
        );
    }
}

/// A fleet behind one load balancer (feature `learning-postgres`): two gateways, each with its
/// own state directory, keep their events in one PostgreSQL database (`disco.learning.postgres`,
/// a schema of its own here). Three callers teach `inspect_item`, two through one gateway and
/// one through the other: both gateways use the alias. One caller teaching `view_thing` through
/// both gateways is one caller (the fleet names callers under one secret, the database's), so
/// it and a second caller teach nothing. The server is `DISCO_TEST_POSTGRES`, the directory of
/// its Unix socket (`.ci/run` starts one); unset, the test says so and checks nothing (and
/// fails when `DISCO_REQUIRE_POSTGRES` is set, as `.ci/test` sets it).
#[cfg(feature = "learning-postgres")]
#[test]
fn a_fleet_of_gateways_learns_together_through_postgres() {
    let Ok(socket) = std::env::var("DISCO_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("DISCO_REQUIRE_POSTGRES").is_none(),
            "DISCO_REQUIRE_POSTGRES is set (.ci/test) and DISCO_TEST_POSTGRES is not: the \
             test would check nothing"
        );
        eprintln!(
            "skipped: DISCO_TEST_POSTGRES (the directory of a PostgreSQL server's Unix socket) \
             is not set; .ci/run starts one"
        );
        return;
    };
    let user = std::env::var("DISCO_TEST_POSTGRES_USER").unwrap_or_else(|_| "postgres".into());
    let schema = format!("disco_fleet_{}", std::process::id());
    support::succeeds(
        std::process::Command::new("psql")
            .args([
                "-h",
                &socket,
                "-U",
                &user,
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
            ])
            .arg(format!("CREATE SCHEMA {schema}")),
    );
    let ups = [up("shifty", "shifty")];
    let mut disco = settings_with_callers();
    disco["learning"] = json!({
        "postgres": format!("host={socket} user={user} dbname=postgres options=-csearch_path={schema}")
    });
    let (dir_a, dir_b) = (Dir::new("fleet-a"), Dir::new("fleet-b"));
    let a = harness::HttpGateway::start_with(&dir_a, &ups, disco.clone(), &["--learn-every", "1"]);
    let b = harness::HttpGateway::start_with(&dir_b, &ups, disco, &["--learn-every", "1"]);
    let teach = |gw: &harness::HttpGateway, token: &str, name: &str| {
        let caller = harness::HttpClient::connect_with_session(&gw.url, token);
        let (text, unknown) = caller.call(name);
        assert!(unknown && text.contains("Unknown tool"), "{text}");
        assert_eq!(caller.call("shifty.peek"), ("shifty:peek:{}".into(), false));
    };
    teach(&a, TOKENS[0], "view_thing");
    teach(&b, TOKENS[0], "view_thing");
    teach(&b, TOKENS[1], "view_thing");
    teach(&a, TOKENS[0], "inspect_item");
    teach(&a, TOKENS[1], "inspect_item");
    teach(&b, TOKENS[2], "inspect_item");
    for gw in [&b, &a] {
        let caller = harness::HttpClient::connect_with_session(&gw.url, TOKENS[2]);
        until_learned(&caller, "inspect_item", "shifty:peek:{}", || {
            format!("{}: log:\n{}", gw.url, gw.log())
        });
        // Written before `inspect_item`'s lessons, so read with them: still one caller's.
        let (text, unknown) = caller.call("view_thing");
        assert!(unknown && text.contains("Unknown tool"), "{text}");
    }
    assert!(!harness::state(&dir_a).join("learning.sqlite").exists());
}
