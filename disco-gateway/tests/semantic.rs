//! `disco.semantic`: `tool_search` ranked by a semantic model besides the keywords (feature
//! `semantic`). With the feature and the transformer `.ci/run` unpacks (all-MiniLM-L6-v2, in
//! `DISCO_SEMANTIC_TRANSFORMER_MODEL`, as the runtime's tests find it), a query that shares no
//! word with the tool it means finds it, where the keywords alone find nothing; its vectors
//! are kept in the user's cache directory. Without the feature, a gateway asked for a model
//! refuses to serve, naming the key. In both builds, `docs` and `lint` print the same with
//! the key as without it.

#[path = "hostile/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::{command, up, Dir, Up};
use serde_json::{json, Value};

/// Upstream tools described in words (the `services` scenario of upstream.py).
const SERVICES: [Up; 1] = [up("svc", "services")];

fn disco(model: Option<&Path>) -> Value {
    let mut disco = json!({"startupTimeoutMs": 10000});
    if let Some(model) = model {
        disco["semantic"] = json!(model);
    }
    disco
}

/// A directory that holds no model: `docs` and `lint` must not read it.
fn no_model(dir: &Dir) -> PathBuf {
    dir.0.join("no-model")
}

/// A configuration of one upstream that leaves the file `started` in `dir` when it is started
/// (and then exits, which the gateway takes for an upstream that failed), with `disco.semantic`
/// when `model` is given.
fn marker_config(dir: &Dir, model: Option<&Path>) -> PathBuf {
    let config = json!({
        "mcpServers": {"marker": {
            "command": "python3",
            "args": ["-c", "import pathlib, sys; pathlib.Path(sys.argv[1]).touch()", started(dir)],
        }},
        "disco": disco(model),
    });
    let path = dir.0.join("marker.json");
    std::fs::write(&path, config.to_string()).expect("the configuration");
    path
}

/// The file the upstream of [`marker_config`] leaves.
fn started(dir: &Dir) -> PathBuf {
    dir.0.join("started")
}

/// The gateway asked to serve `config`, stdin closed (a gateway that served stops by itself,
/// exit 0), within [`harness::LIVENESS`]: its exit code, stderr and stdout.
fn serve_with(dir: &Dir, config: &Path) -> (Option<i32>, String, String) {
    let (out, err) = (dir.0.join("serve.out"), dir.0.join("serve.err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("--config")
        .arg(config)
        .env("XDG_CACHE_HOME", harness::cache(dir))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("the output file"))
        .stderr(std::fs::File::create(&err).expect("the log file"))
        .spawn()
        .expect("the gateway runs");
    let deadline = Instant::now() + harness::LIVENESS;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the gateway did not stop within {:?}; log:\n{}",
                    harness::LIVENESS,
                    std::fs::read_to_string(&err).unwrap_or_default()
                );
            }
        }
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (status.code(), read(&err), read(&out))
}

/// The probe of "before any upstream starts": without `disco.semantic`, the same configuration
/// starts its upstream (which leaves its file) and serves.
#[test]
fn without_the_key_the_upstream_starts() {
    let dir = Dir::new("semantic-none");
    let (code, stderr, _) = serve_with(&dir, &marker_config(&dir, None));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(started(&dir).exists(), "{stderr}");
}

/// `docs` and `lint` print the same with `disco.semantic` as without it: they build the
/// catalog without the model (and do not even load it: the directory holds none).
#[test]
fn docs_and_lint_are_the_same_with_the_key() {
    let dir = Dir::new("semantic-docs");
    for subcommand in ["docs", "lint"] {
        let plain = command(&dir, subcommand, &SERVICES, disco(None));
        let with = command(&dir, subcommand, &SERVICES, disco(Some(&no_model(&dir))));
        assert!(plain.contains("svc.astrology"), "{subcommand}: {plain}");
        assert_eq!(plain, with, "{subcommand}");
    }
}

/// A build without the feature refuses to serve a configuration that asks for a model: it
/// exits 2 at once, before any upstream starts, and says which key and how to get the
/// feature.
#[cfg(not(feature = "semantic"))]
#[test]
fn without_the_feature_the_key_is_refused() {
    let dir = Dir::new("semantic-off");
    let model = no_model(&dir);
    let (code, stderr, stdout) = serve_with(&dir, &marker_config(&dir, Some(&model)));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!started(&dir).exists(), "an upstream started: {stderr}");
    let said = format!(
        "disco-gateway: disco.semantic ({}): this disco-gateway was built without the \
         `semantic` feature; install it with `cargo install --locked --path disco-gateway \
         --features semantic`, or remove `disco.semantic` to rank by keywords alone",
        model.display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}

/// Whether the tests run in CI (`CI` or `DISCO_CI_TOOLS` set), where a model must be given.
#[cfg(feature = "semantic")]
fn in_ci() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("DISCO_CI_TOOLS").is_some()
}

/// The names `tool_search` finds for `query`.
#[cfg(feature = "semantic")]
fn search(gw: &mut harness::Gateway, query: &str) -> Vec<String> {
    let answer = gw.request(
        "tools/call",
        json!({"name": "tool_search", "arguments": {"query": query}}),
    );
    let result = &answer["result"];
    assert_ne!(result["isError"], json!(true), "{answer}");
    result["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// With the transformer, "my horoscope for today" finds `svc.astrology` ("Provides astrology
/// services."), which shares no word with it; the same gateway without the model finds
/// nothing for it. The tools' vectors are made in the background (the gateway answers by
/// keywords meanwhile), by the transformer (the log says `bert`), and kept in the user's cache
/// directory.
#[cfg(feature = "semantic")]
#[test]
fn tool_search_finds_by_meaning_with_the_transformer() {
    const QUERY: &str = "my horoscope for today";
    let Some(model) = std::env::var_os("DISCO_SEMANTIC_TRANSFORMER_MODEL") else {
        // In CI (`.ci/test` sets the variable), a missing model is a failure, not a pass.
        assert!(
            !in_ci(),
            "DISCO_SEMANTIC_TRANSFORMER_MODEL is not set, but CI or DISCO_CI_TOOLS is: run \
             .ci/run, or set it to the transformer-model directory it installs"
        );
        eprintln!("DISCO_SEMANTIC_TRANSFORMER_MODEL is not set: the real-model test is skipped");
        return;
    };
    let model = PathBuf::from(model);

    let dir = Dir::new("semantic-keywords");
    let mut gw = harness::Gateway::start(&dir, &SERVICES, disco(None));
    gw.wait_for_tools("the services", |n| n.contains(&"svc.astrology".to_string()));
    assert_eq!(search(&mut gw, QUERY), Vec::<String>::new());
    assert_eq!(search(&mut gw, "astrology")[0], "svc.astrology");
    gw.assert_healthy();
    drop(gw);

    let dir = Dir::new("semantic-model");
    let mut gw = harness::Gateway::start(&dir, &SERVICES, disco(Some(&model)));
    gw.wait_for_tools("the services", |n| n.contains(&"svc.astrology".to_string()));
    let deadline = Instant::now() + harness::LIVENESS;
    loop {
        let found = search(&mut gw, QUERY);
        if found.first().map(String::as_str) == Some("svc.astrology") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{QUERY:?} found {found:?} within {:?}; log:\n{}",
            harness::LIVENESS,
            gw.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The keywords still rank: the name finds its tool first.
    assert_eq!(search(&mut gw, "currency")[0], "svc.convert_currency");
    let log = gw.log();
    assert!(
        log.contains("tool_search ranks by the semantic model besides the keywords"),
        "{log}"
    );
    assert!(
        log.contains("kind=\"bert\"") && log.contains("dim=384"),
        "{log}"
    );
    assert!(log.contains("semantic vectors ready"), "{log}");
    let vectors: Vec<_> = std::fs::read_dir(harness::cache(&dir).join("disco"))
        .expect("the vector cache's directory")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vectors-") && n.ends_with(".bin"))
        .collect();
    assert_eq!(vectors.len(), 1, "{vectors:?}");
    gw.assert_healthy();
}

/// A directory that holds no model is refused at start with the runtime's reason, before any
/// upstream starts (the upstream's file is absent; [`without_the_key_the_upstream_starts`] is
/// the same configuration without the key).
#[cfg(feature = "semantic")]
#[test]
fn a_model_that_does_not_load_is_refused_at_start() {
    let dir = Dir::new("semantic-bad");
    let model = no_model(&dir);
    std::fs::create_dir_all(&model).expect("the directory");
    let (code, stderr, _) = serve_with(&dir, &marker_config(&dir, Some(&model)));
    assert_eq!(code, Some(2), "{stderr}");
    let said = format!("disco-gateway: disco.semantic ({}): ", model.display());
    assert!(stderr.contains(&said), "{stderr}");
    assert!(!started(&dir).exists(), "an upstream started: {stderr}");
}
