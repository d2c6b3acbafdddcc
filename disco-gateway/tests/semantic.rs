//! `disco.semantic`: `tool_search` ranked by a semantic model besides the keywords (feature
//! `semantic`). With the feature and the transformer `.ci/run` unpacks (all-MiniLM-L6-v2, in
//! `DISCO_SEMANTIC_TRANSFORMER_MODEL`, as the runtime's tests find it), a query that shares no
//! word with the tool it means finds it, where the keywords alone find nothing; its vectors
//! are kept in the user's cache directory. Without the feature, a gateway asked for a model
//! refuses to serve, naming the key. In both builds, `docs` and `lint` print the same with
//! the key as without it.

#[path = "hostile/harness.rs"]
mod harness;

#[cfg(feature = "semantic")]
use std::time::{Duration, Instant};

use harness::{command, up, Dir, Up};
use serde_json::{json, Value};

/// Upstream tools described in words (the `services` scenario of upstream.py).
const SERVICES: [Up; 1] = [up("svc", "services")];

fn disco(model: Option<&std::path::Path>) -> Value {
    let mut disco = json!({"startupTimeoutMs": 10000});
    if let Some(model) = model {
        disco["semantic"] = json!(model);
    }
    disco
}

/// A directory that holds no model: `docs` and `lint` must not read it.
fn no_model(dir: &Dir) -> std::path::PathBuf {
    dir.0.join("no-model")
}

/// The gateway asked to serve with the model in `model`, stdin closed (a gateway that served
/// would stop by itself, exit 0): its exit code, stderr and stdout.
fn serve_with(dir: &Dir, model: &std::path::Path) -> (Option<i32>, String, String) {
    let config = harness::config(dir, &SERVICES, disco(Some(model)));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("--config")
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the gateway runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stderr), text(&out.stdout))
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
/// exits 2 at once, and says which key and how to get the feature.
#[cfg(not(feature = "semantic"))]
#[test]
fn without_the_feature_the_key_is_refused() {
    let dir = Dir::new("semantic-off");
    let model = no_model(&dir);
    let (code, stderr, stdout) = serve_with(&dir, &model);
    assert_eq!(code, Some(2), "{stderr}");
    let said = format!(
        "disco-gateway: disco.semantic ({}): this disco-gateway was built without the \
         `semantic` feature; install it with `cargo install --locked --path disco-gateway \
         --features semantic`, or remove `disco.semantic` to rank by keywords alone",
        model.display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
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
        eprintln!("DISCO_SEMANTIC_TRANSFORMER_MODEL is not set: the real-model test is skipped");
        return;
    };
    let model = std::path::PathBuf::from(model);

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
/// upstream starts.
#[cfg(feature = "semantic")]
#[test]
fn a_model_that_does_not_load_is_refused_at_start() {
    let dir = Dir::new("semantic-bad");
    let model = no_model(&dir);
    std::fs::create_dir_all(&model).expect("the directory");
    let (code, stderr, _) = serve_with(&dir, &model);
    assert_eq!(code, Some(2), "{stderr}");
    let said = format!("disco-gateway: disco.semantic ({}): ", model.display());
    assert!(stderr.contains(&said), "{stderr}");
}
