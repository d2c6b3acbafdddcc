use super::super::*;

fn parse_disco(disco: &str) -> Result<Config, ConfigError> {
    let text = format!(r#"{{"mcpServers": {{"a": {{"command": "a"}}}}, "disco": {disco}}}"#);
    Config::parse(&text, &|_| None)
}

/// `disco.rateLimit`: read, off by default, and every malformed shape refused at its key.
#[test]
fn the_rate_limit_is_read_and_off_by_default() {
    let c = parse_disco("{}").unwrap();
    assert_eq!(c.disco.rate_limit, None);
    let c = parse_disco(r#"{"rateLimit": {"perSecond": 2.5, "burst": 10}}"#).unwrap();
    assert_eq!(
        c.disco.rate_limit,
        Some(disco_runtime::RateLimit::new(2.5, 10))
    );
    // Without a burst: one second's worth.
    let c = parse_disco(r#"{"rateLimit": {"perSecond": 2.5}}"#).unwrap();
    assert_eq!(
        c.disco.rate_limit,
        Some(disco_runtime::RateLimit::new(2.5, 3))
    );
    let c = parse_disco(r#"{"rateLimit": {"perSecond": 0.1}}"#).unwrap();
    assert_eq!(
        c.disco.rate_limit,
        Some(disco_runtime::RateLimit::new(0.1, 1))
    );
    for bad in [
        "1",
        "true",
        r#""fast""#,
        "[]",
        "{}",
        r#"{"burst": 3}"#,
        r#"{"perSecond": 0}"#,
        r#"{"perSecond": -1}"#,
        r#"{"perSecond": "2"}"#,
        r#"{"perSecond": 2, "burst": 0}"#,
        r#"{"perSecond": 2, "burst": 1.5}"#,
        r#"{"perSecond": 2, "burst": 5000000000}"#,
        r#"{"perSecond": 2, "burts": 3}"#,
    ] {
        match parse_disco(&format!(r#"{{"rateLimit": {bad}}}"#)) {
            Ok(_) => panic!("{bad} was accepted"),
            Err(e) => assert_eq!(e.key, "disco.rateLimit", "{bad}: {e}"),
        }
    }
}

/// `disco.semantic`: the model's directory, absolute, `${VAR}` expanded; no model by default;
/// any other shape refused at the key. Read the same with the `semantic` feature or without:
/// what a build without it does with the key is search.rs's.
#[test]
fn the_semantic_model_is_an_absolute_directory() {
    let vars = |name: &str| (name == "MODELS").then(|| "/opt/models".to_string());
    let read = |disco: &str| {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "a"}}}}, "disco": {disco}}}"#);
        Config::parse(&text, &vars)
    };
    assert_eq!(read("{}").unwrap().disco.semantic, None);
    let c = read(r#"{"semantic": "${MODELS}/minilm"}"#).unwrap();
    assert_eq!(
        c.disco.semantic.as_deref(),
        Some(std::path::Path::new("/opt/models/minilm"))
    );
    for bad in [
        r#""minilm""#,
        r#""./minilm""#,
        r#""""#,
        r#""${UNSET}/minilm""#,
        "7",
        "true",
        "null",
        r#"["/opt/models/minilm"]"#,
        r#"{"model": "/opt/models/minilm"}"#,
    ] {
        match read(&format!(r#"{{"semantic": {bad}}}"#)) {
            Ok(c) => panic!("{bad} was accepted: {:?}", c.disco.semantic),
            Err(e) => assert_eq!(e.key, "disco.semantic", "{bad}: {e}"),
        }
    }
    // A misspelt key is no setting of its own.
    let e = read(r#"{"semantics": "/opt/models/minilm"}"#)
        .err()
        .unwrap();
    assert_eq!(e.key, "disco.semantics", "{e}");
}

/// `disco.learning.postgres`: a connection string, `${VAR}` expanded (the password is a
/// variable's, not the file's), never empty; absent, the state directory's SQLite file.
#[test]
fn learning_postgres_is_a_connection_string() {
    let l = |v: &str| format!(r#"{{"mcpServers": {{}}, "disco": {{"learning": {v}}}}}"#);
    let c = super::parse(&l(
        r#"{"postgres": "host=/run/postgresql user=disco password=${TOKEN}"}"#,
    ));
    assert_eq!(
        c.unwrap().disco.learning_postgres.as_deref(),
        Some("host=/run/postgresql user=disco password=s3cret")
    );
    assert_eq!(
        super::parse(r#"{"mcpServers": {}}"#)
            .unwrap()
            .disco
            .learning_postgres,
        None
    );
    super::refused_at(&[
        (&l("{}"), "disco.learning.postgres"),
        (&l(r#"{"postgres": " "}"#), "disco.learning.postgres"),
        (
            &l(r#"{"postgres": "password=${UNSET}"}"#),
            "disco.learning.postgres",
        ),
        (&l(r#"{"sqlite": "x"}"#), "disco.learning.sqlite"),
        (&l("true"), "disco.learning"),
    ]);
}
