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

/// The tools of a configuration's aliases, as the gateway gives them to the catalog.
struct Aliased(Vec<(String, Vec<String>)>);

impl disco_runtime::ToolProvider for Aliased {
    fn tools(&self) -> Vec<disco_runtime::catalog::DynamicTool> {
        self.0
            .iter()
            .map(|(name, aliases)| {
                let tool = serde_json::from_value(serde_json::json!(
                    {"name": name, "inputSchema": {"type": "object"}}
                ))
                .expect("a tool");
                let mut def = disco_runtime::catalog::DynamicTool::new(tool);
                def.aliases = aliases.clone();
                def
            })
            .collect()
    }

    fn call(
        &self,
        _: &str,
        _: serde_json::Map<String, serde_json::Value>,
        _: disco_runtime::Context,
    ) -> disco_runtime::tool::BoxFuture {
        Box::pin(async { disco_runtime::CallToolResult::success(vec![]) })
    }
}

/// `disco.aliases` is taken exactly when the catalog can be built with it: every list of at
/// most two aliases for each of two tools, from their own names, other words and the gateway's
/// tool names, is accepted by the configuration if and only if the catalog builds (an edit
/// that is refused keeps the running configuration; one that is taken must serve).
#[test]
fn aliases_are_taken_exactly_when_the_catalog_can_be_built() {
    let words = ["a.x", "a.y", "u", "v", "tool_search", "execute_tool"];
    let mut lists: Vec<Vec<&str>> = vec![vec![]];
    for w in words {
        lists.push(vec![w]);
        for v in words {
            lists.push(vec![w, v]);
        }
    }
    let (mut taken, mut refused) = (0, 0);
    for x in &lists {
        // An alias that is the other tool's name leaves that tool out (provider.rs), no error:
        // not a case of this rule.
        if x.contains(&"a.y") {
            continue;
        }
        for y in &lists {
            if y.contains(&"a.x") {
                continue;
            }
            let aliases = serde_json::json!({"a.x": x, "a.y": y});
            let config = parse_disco(&format!(r#"{{"aliases": {aliases}}}"#));
            let tools = Aliased(vec![
                ("a.x".into(), x.iter().map(|s| s.to_string()).collect()),
                ("a.y".into(), y.iter().map(|s| s.to_string()).collect()),
            ]);
            let built = disco_runtime::catalog::Catalog::builder()
                .specs([])
                .provider(tools)
                .search(disco_runtime::catalog::SearchOptions::default().enabled(true))
                .build();
            match (&config, &built) {
                (Ok(_), Ok(_)) => taken += 1,
                (Err(e), Err(_)) => {
                    assert!(e.key.starts_with("disco.aliases.a."), "{aliases}: {e}");
                    refused += 1;
                }
                (Ok(_), Err(e)) => panic!("{aliases} taken, but the catalog fails: {e}"),
                (Err(e), Ok(_)) => panic!("{aliases} refused, but the catalog builds: {e}"),
            }
        }
    }
    assert!(taken > 0 && refused > 0, "taken {taken}, refused {refused}");
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
