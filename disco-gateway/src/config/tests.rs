use super::*;
use serde::Deserialize;

/// The `disco` section's settings of HTTP serving.
mod disco;
/// Every kind of URL server entry as to signing in, with what the rule says of it.
pub(crate) mod kinds;
/// A URL server's `oauth`.
mod oauth;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cret".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, &env)
}

/// The error of a text that must be refused.
fn refused(text: &str) -> ConfigError {
    match parse(text) {
        Ok(_) => panic!("{text} was accepted"),
        Err(e) => e,
    }
}

/// Each text is refused, with an error at its key.
fn refused_at(cases: &[(&str, &str)]) {
    for (text, key) in cases {
        match parse(text) {
            Ok(_) => panic!("{text} was accepted"),
            Err(e) => assert_eq!(e.key, *key, "{text}: {e}"),
        }
    }
}

#[test]
fn expansion() {
    let cases = [
        ("plain", Ok("plain")),
        ("${HOME}/notes", Ok("/home/u/notes")),
        ("Bearer ${TOKEN}", Ok("Bearer s3cret")),
        ("${UNSET:-fallback}", Ok("fallback")),
        ("${HOME:-x}", Ok("/home/u")),
        ("$$HOME", Ok("$HOME")),
        ("cost $5", Ok("cost $5")),
        (
            "${UNSET}",
            Err("the environment variable `UNSET` is not set"),
        ),
        ("${HOME", Err("`${` without its closing `}`")),
        ("${1X}", Err("`${1X}` is not a variable name")),
        ("${}", Err("`${}` is not a variable name")),
    ];
    for (text, want) in cases {
        let got = expand(text, "k", &env, Secrecy::Plain);
        match want {
            Ok(s) => assert_eq!(got, Ok(s.to_string()), "{text}"),
            Err(m) => assert_eq!(got, Err(err("k", m)), "{text}"),
        }
        // A secret expands alike; of its errors, the one that would quote it says less.
        let secret = expand(text, "k", &env, Secrecy::Secret);
        match want {
            Err(m) if m.ends_with("is not a variable name") => {
                let e = secret.expect_err(text);
                assert!(!e.message.contains(text), "{text}: {e}");
                assert!(e.message.contains("not a variable name"), "{e}");
            }
            _ => assert_eq!(secret, got, "{text}"),
        }
    }
}

/// What sits between `${` and `}` in a value of `env` or `headers`, or in a token, may be the
/// secret itself (one with a `$` in it): an error says what is wrong at the key, not the text.
/// Elsewhere the text is quoted, to find the typo by.
#[test]
fn a_secret_that_is_not_a_variable_is_not_quoted() {
    let servers = |s: &str| format!(r#"{{"mcpServers": {{"a": {s}}}}}"#);
    for (text, key) in [
        (
            servers(r#"{"command": "x", "env": {"K": "pa${zq9-hush}"}}"#),
            "mcpServers.a.env.K",
        ),
        (
            servers(r#"{"url": "http://h/mcp", "headers": {"X-Key": "${zq9-hush:-d}"}}"#),
            "mcpServers.a.headers.X-Key",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"tokens": [{"token": "${zq9-hush}", "caller": "c"}]}}"#
                .to_string(),
            "disco.tokens[0].token",
        ),
    ] {
        let e = refused(&text);
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains("not a variable name"), "{e}");
        assert!(!e.to_string().contains("zq9"), "the value is shown: {e}");
    }
    let e = refused(&servers(r#"{"command": "x", "args": ["${1X}"]}"#));
    assert_eq!(
        e.to_string(),
        "mcpServers.a.args[0]: `${1X}` is not a variable name"
    );
}

#[test]
fn a_full_configuration_reads() {
    let c = parse(
        r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "server-filesystem", "${HOME}"], "env": {"A": "${TOKEN}"}},
            "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "type": "http"},
            "off": {"command": "nothing", "disabled": true}
        },
        "disco": {"exposure": "search-first", "pinned": ["fs.read_file"], "pageSize": 50,
                  "callTimeoutMs": 5000, "namespace": "__",
                  "pingIntervalMs": 2500, "pingTimeoutMs": 700,
                  "aliases": {"fs.read_text_file": ["read_file"]},
                  "keywords": {"fs.read_text_file": ["cat"]},
                  "tokens": [{"token": "${TOKEN}", "caller": "ops", "servers": ["fs"], "tools": ["search.find"]}]}}"#,
    )
    .unwrap();
    assert_eq!(
        c.servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["fs", "search"]
    );
    match &c.servers[0].transport {
        Transport::Stdio { args, env, .. } => {
            assert_eq!(args[2], "/home/u");
            assert_eq!(env["A"], "s3cret");
        }
        _ => panic!("fs is stdio"),
    }
    match &c.servers[1].transport {
        Transport::Http { headers, .. } => {
            assert_eq!(headers["Authorization"], "Bearer s3cret")
        }
        _ => panic!("search is http"),
    }
    assert_eq!(c.disco.exposure, ExposureKind::SearchFirst);
    assert_eq!(c.disco.page_size, 50);
    assert_eq!(c.disco.call_timeout, Duration::from_secs(5));
    assert_eq!(c.disco.namespace, Namespace::Separator("__".into()));
    assert_eq!(c.disco.aliases["fs.read_text_file"], ["read_file"]);
    assert_eq!(c.disco.tokens[0].token, "s3cret");
    assert_eq!(c.disco.ping_interval, Some(Duration::from_millis(2500)));
    assert_eq!(c.disco.ping_timeout, Duration::from_millis(700));
    // Secrets stay out of what may be logged.
    let shown = format!("{:?}", c.servers);
    assert!(!shown.contains("s3cret"), "{shown}");
}

/// Every duration key takes a positive whole number of milliseconds and refuses anything
/// else, naming itself; `pingIntervalMs` alone also takes `false` (no pings).
#[test]
fn durations_are_positive_milliseconds() {
    let keys = [
        "callTimeoutMs",
        "startupTimeoutMs",
        "restartInitialMs",
        "restartMaxMs",
        "pingIntervalMs",
        "pingTimeoutMs",
    ];
    let bad = [
        "0", "-1", "1.5", "\"10\"", "null", "[]", "{}", "true", "false",
    ];
    for key in keys {
        // The restart bounds are checked against each other too (restart_bounds_fit_
        // together): the other one is set out of the way.
        let other = match key {
            "restartInitialMs" => r#", "restartMaxMs": 86400000"#,
            _ => "",
        };
        let config = |value: &str| {
            parse(&format!(
                r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "disco": {{"{key}": {value}{other}}}}}"#
            ))
        };
        assert!(config("1").is_ok(), "{key}: 1");
        assert!(config("86400000").is_ok(), "{key}: a day");
        for value in bad {
            if key == "pingIntervalMs" && value == "false" {
                assert_eq!(config(value).unwrap().disco.ping_interval, None);
                continue;
            }
            match config(value) {
                Ok(_) => panic!("{key}: {value} was accepted"),
                Err(e) => {
                    assert_eq!(e.key, format!("disco.{key}"), "{key}: {value}: {e}");
                    assert!(e.to_string().contains("milliseconds"), "{e}");
                }
            }
        }
    }
}

/// The first wait before a restart is never above the cap: a cap alone below the default
/// first wait lowers it; a first wait the user set above the cap is an error naming it.
#[test]
fn restart_bounds_fit_together() {
    let disco = |d: &str| {
        parse(&format!(
            r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "disco": {d}}}"#
        ))
    };
    let ms = Duration::from_millis;
    let c = disco(r#"{"restartMaxMs": 200}"#).unwrap().disco;
    assert_eq!((c.restart_initial, c.restart_max), (ms(200), ms(200)));
    let c = disco(r#"{"restartInitialMs": 100, "restartMaxMs": 200}"#)
        .unwrap()
        .disco;
    assert_eq!((c.restart_initial, c.restart_max), (ms(100), ms(200)));
    let c = disco(r#"{"restartInitialMs": 200, "restartMaxMs": 200}"#)
        .unwrap()
        .disco;
    assert_eq!((c.restart_initial, c.restart_max), (ms(200), ms(200)));
    for (d, says) in [
        (
            r#"{"restartInitialMs": 300, "restartMaxMs": 200}"#,
            "(200 ms)",
        ),
        (r#"{"restartInitialMs": 40000}"#, "(30000 ms, the default)"),
    ] {
        let Err(e) = disco(d) else {
            panic!("{d} was accepted")
        };
        assert_eq!(e.key, "disco.restartInitialMs", "{d}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

fn forwarding(server: &str, tokens: &str) -> Result<Config, ConfigError> {
    parse(&format!(
        r#"{{"mcpServers": {{"a": {server}, "b": {{"command": "x"}}}}, "disco": {{"tokens": {tokens}}}}}"#
    ))
}

/// `forwardToken` is a boolean of a `url` server: anything else, or on a `command`
/// server, is an error naming `mcpServers.<name>.forwardToken`.
#[test]
fn forward_token_is_a_boolean_of_url_servers() {
    for (value, want) in [("true", true), ("false", false)] {
        let c = forwarding(
            &format!(r#"{{"url": "http://h/mcp", "forwardToken": {value}}}"#),
            "[]",
        )
        .unwrap();
        match &c.servers[0].transport {
            Transport::Http { forward_token, .. } => assert_eq!(*forward_token, want),
            _ => panic!("a is http"),
        }
        assert_eq!(c.forwarding_server().is_some(), want);
    }
    let c = forwarding(r#"{"url": "http://h/mcp"}"#, "[]").unwrap();
    assert_eq!(c.forwarding_server(), None);
    for value in ["1", "0", "\"true\"", "null", "[]", "{}", "\"yes\""] {
        let e = forwarding(
            &format!(r#"{{"url": "http://h/mcp", "forwardToken": {value}}}"#),
            "[]",
        )
        .err()
        .unwrap_or_else(|| panic!("{value} was accepted"));
        assert_eq!(e.key, "mcpServers.a.forwardToken", "{value}: {e}");
        assert!(e.message.contains("true or false"), "{e}");
    }
    // On a `command` server it is refused for being there; a value that is not a boolean is
    // refused for its type first (the shape of each value is checked as it is read).
    for (value, says) in [
        ("true", "a URL"),
        ("false", "a URL"),
        ("1", "true or false"),
    ] {
        let e = forwarding(
            &format!(r#"{{"command": "x", "forwardToken": {value}}}"#),
            "[]",
        )
        .err()
        .unwrap_or_else(|| panic!("a command server took forwardToken {value}"));
        assert_eq!(e.key, "mcpServers.a.forwardToken", "{value}: {e}");
        assert!(e.message.contains(says), "{e}");
    }
}

/// Every key the unknown-key error lists is accepted, and every accepted key is listed.
#[test]
fn the_unknown_key_error_lists_the_server_keys() {
    let e = forwarding(r#"{"url": "http://h/mcp", "forwardTokens": true}"#, "[]")
        .err()
        .expect("an unknown key was accepted");
    assert_eq!(e.key, "mcpServers.a.forwardTokens");
    let listed: Vec<&str> = e
        .message
        .split_once("a server's keys are ")
        .map(|(_, l)| l.split(", ").map(|k| k.trim_matches('`')).collect())
        .unwrap_or_default();
    let accepted = [
        ("command", r#""x""#, "command"),
        ("args", "[]", "command"),
        ("env", "{}", "command"),
        ("cwd", r#""/""#, "command"),
        ("url", r#""http://h/mcp""#, "url"),
        ("headers", "{}", "url"),
        ("type", r#""http""#, "url"),
        ("forwardToken", "true", "url"),
        ("oauth", "true", "url"),
        ("disabled", "false", "command"),
        ("envFile", r#""/dev/null""#, "command"),
        ("serverUrl", r#""http://h/mcp""#, "serverUrl"),
        ("httpUrl", r#""http://h/mcp""#, "httpUrl"),
    ];
    let mut keys: Vec<&str> = accepted.iter().map(|(k, _, _)| *k).collect();
    keys.sort();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort();
    assert_eq!(listed_sorted, keys, "{e}");
    for (k, v, kind) in accepted {
        let base = if kind != "command" {
            r#""url": "http://h/mcp""#
        } else {
            r#""command": "x""#
        };
        let server = if k == kind {
            format!("{{\"{k}\": {v}}}")
        } else {
            format!("{{{base}, \"{k}\": {v}}}")
        };
        assert!(forwarding(&server, "[]").is_ok(), "{k}: {server}");
    }
}

/// With a forwarding server, a second token for a caller is an error at that token's
/// `caller` saying why; without one, a caller may have several tokens.
#[test]
fn forwarding_needs_one_token_per_caller() {
    let mut rng = fastrand::Rng::with_seed(0xF0);
    for _ in 0..40 {
        let n = rng.usize(2..10);
        let callers: Vec<String> = (0..n).map(|i| format!("c{}", rng.usize(..n + i))).collect();
        let tokens = format!(
            "[{}]",
            callers
                .iter()
                .enumerate()
                .map(|(i, c)| format!(r#"{{"token": "t{i}", "caller": "{c}"}}"#))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let first_repeat = (0..n).find(|&j| callers[..j].contains(&callers[j]));
        let forwarded = forwarding(r#"{"url": "http://h/mcp", "forwardToken": true}"#, &tokens);
        match first_repeat {
            None => assert!(forwarded.is_ok(), "{tokens}"),
            Some(j) => {
                let e = forwarded
                    .err()
                    .unwrap_or_else(|| panic!("{tokens} was accepted"));
                assert_eq!(e.key, format!("disco.tokens[{j}].caller"), "{tokens}: {e}");
                assert!(e.message.contains("mcpServers.a.forwardToken"), "{e}");
                assert!(e.message.contains("exactly one token"), "{e}");
                assert!(!e.message.contains("  "), "a run of spaces: {e}");
                assert!(
                    !e.message.contains(&format!("t{j}")),
                    "the token is shown: {e}"
                );
            }
        }
        for other in [
            r#"{"url": "http://h/mcp"}"#,
            r#"{"url": "http://h/mcp", "forwardToken": false}"#,
        ] {
            assert!(forwarding(other, &tokens).is_ok(), "{other} {tokens}");
        }
    }
}

/// With a forwarding server, a token or a configured header that cannot go in an HTTP
/// header is an error naming its key, never showing the value; the same configuration
/// without forwarding leaves tokens alone.
#[test]
fn forwarding_refuses_tokens_and_headers_that_are_not_header_values() {
    let on = r#"{"url": "http://h/mcp", "forwardToken": true}"#;
    for (i, bad) in ["zq9\\nen-x", "zq9\\u0001en", "zq9\\u007fen", "zq9\\ren"]
        .iter()
        .enumerate()
    {
        let tokens = format!(
            r#"[{{"token": "good-{i}", "caller": "a"}}, {{"token": "{bad}", "caller": "b"}}]"#
        );
        let e = forwarding(on, &tokens)
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(e.key, "disco.tokens[1].token", "{bad}: {e}");
        assert!(!e.message.contains("zq9"), "the token is shown: {e}");
        assert!(!e.message.contains("  "), "a run of spaces: {e}");
        let plain = r#"{"url": "http://h/mcp"}"#;
        assert!(forwarding(plain, &tokens).is_ok(), "{bad}");
    }
    for (name, value, key) in [
        ("X-Kept", "val\\nue-x", "mcpServers.a.headers.X-Kept"),
        ("X Bad", "value-y", "mcpServers.a.headers.X Bad"),
    ] {
        let server = format!(
            r#"{{"url": "http://h/mcp", "forwardToken": true, "headers": {{"{name}": "{value}"}}}}"#
        );
        let e = forwarding(&server, "[]")
            .err()
            .unwrap_or_else(|| panic!("{name}: {value} was accepted"));
        assert_eq!(e.key, key, "{e}");
        assert!(!e.message.contains("value-"), "the value is shown: {e}");
    }
}

/// Each mistake is an error naming its key.
#[test]
fn errors_name_the_key() {
    let cases = [
        (r#"[]"#, ""),
        (r#"{"servers": []}"#, "servers"),
        (r#"{"disco": {}}"#, "mcpServers"),
        (r#"{"mcpServers": {"a": {}}}"#, "mcpServers.a"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
            "mcpServers.a",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "argz": []}}}"#,
            "mcpServers.a.argz",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#,
            "mcpServers.a.args[0]",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}"#,
            "mcpServers.a.env.K",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "http://h", "headers": {"Authorization": "${NOPE}"}}}}"#,
            "mcpServers.a.headers.Authorization",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#,
            "mcpServers.a.url",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "http://h", "args": []}}}"#,
            "mcpServers.a.args",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "type": "websocket"}}}"#,
            "mcpServers.a.type",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "forwardToken": true}}}"#,
            "mcpServers.a.forwardToken",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "http://h", "forwardToken": "yes"}}}"#,
            "mcpServers.a.forwardToken",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "http://h", "forwardToken": true}}, "disco": {"tokens": [{"token": "t", "caller": "c"}, {"token": "u", "caller": "c"}]}}"#,
            "disco.tokens[1].caller",
        ),
        (
            r#"{"mcpServers": {"a.b": {"command": "x"}}}"#,
            "mcpServers.a.b",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"exposur": "all"}}"#,
            "disco.exposur",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"exposure": "some"}}"#,
            "disco.exposure",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"callTimeoutMs": 0}}"#,
            "disco.callTimeoutMs",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"restartInitialMs": 5000, "restartMaxMs": 4000}}"#,
            "disco.restartInitialMs",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"restartInitialMs": 40000}}"#,
            "disco.restartInitialMs",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"tokens": [{"token": "${NOPE}", "caller": "c"}]}}"#,
            "disco.tokens[0].token",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"tokens": [{"token": "t", "caller": "c", "servers": ["b"]}]}}"#,
            "disco.tokens[0].servers[0]",
        ),
    ];
    refused_at(&cases);
}

/// An error is the JSON path of the value at fault and what is wrong with it, whichever
/// layer found it: the shape of a value, a rule across keys, a variable.
#[test]
fn every_error_is_its_json_path_and_what_is_wrong() {
    let server = |s: &str| format!(r#"{{"mcpServers": {{"fs": {s}}}}}"#);
    let disco =
        |d: &str| format!(r#"{{"mcpServers": {{"fs": {{"command": "x"}}}}, "disco": {d}}}"#);
    let cases = [
        (
            server(r#"{"command": "npx", "args": ["-y", "x", 3]}"#),
            "mcpServers.fs.args[2]: must be a string",
        ),
        (
            server(r#"{"command": "npx", "env": {"A": "1", "A": "2"}}"#),
            "mcpServers.fs.env.A: given more than once: each key may be given once (JSON \
             readers differ on which one counts)",
        ),
        (
            server(r#"{"command": "npx", "args": "-y x"}"#),
            "mcpServers.fs.args: must be an array of strings",
        ),
        (
            server(r#"{"command": "npx", "argz": []}"#),
            "mcpServers.fs.argz: unknown key `argz` (did you mean `args`?): no client's \
             documentation defines it; a server's keys are `type`, `command`, `args`, `env`, \
             `envFile`, `cwd`, `url`, `serverUrl`, `httpUrl`, `headers`, `disabled`, \
             `forwardToken`, `oauth`",
        ),
        (
            server(r#"{"url": "http://h/mcp", "headers": {"X-Key": 7}}"#),
            "mcpServers.fs.headers.X-Key: must be a string",
        ),
        (
            server(r#"{"command": "npx", "env": {"K": "${NOPE}"}}"#),
            "mcpServers.fs.env.K: the environment variable `NOPE` is not set",
        ),
        (
            server(r#""npx -y x""#),
            "mcpServers.fs: must be an object with `command` or `url`",
        ),
        (
            disco(r#"{"tokens": [{"token": "t", "caller": "c", "tools": ["a", 1]}]}"#),
            "disco.tokens[0].tools[1]: must be a string",
        ),
        (
            disco(r#"{"aliases": {"fs.read": "cat"}}"#),
            "disco.aliases.fs.read: must be an array of strings",
        ),
        (
            disco(r#"{"pingIntervalMs": true}"#),
            "disco.pingIntervalMs: must be a positive number of milliseconds, or false to send \
             no pings",
        ),
        (
            r#"{"mcpServers": {}, "servers": 1}"#.to_string(),
            "servers: must be an object of servers by name",
        ),
        ("[]".to_string(), "the configuration must be a JSON object"),
    ];
    for (text, want) in cases {
        match parse(&text) {
            Ok(_) => panic!("{text} was accepted"),
            Err(e) => assert_eq!(e.to_string(), want, "{text}"),
        }
    }
}

/// A text that is not JSON says so, where it stops being JSON, and the path it was in.
#[test]
fn a_text_that_is_not_json_says_where() {
    let e = parse("{\"mcpServers\": {\"fs\": {\"command\": \"x\" \"args\": []}}}")
        .err()
        .expect("a missing comma was accepted");
    assert_eq!(e.key, "mcpServers.fs", "{e}");
    assert!(e.message.starts_with("not valid JSON: "), "{e}");
    assert!(e.message.contains("line 1 column"), "{e}");
    let e = parse(r#"{"mcpServers": {"fs": {"command": "x"}}} {}"#)
        .err()
        .expect("a second value was accepted");
    assert_eq!(e.key, "", "{e}");
    assert!(
        e.message.starts_with("not valid JSON: trailing characters"),
        "{e}"
    );
}

/// A struct is read from an object only (serde would read an array into it field by field),
/// and `null` is a value of the wrong type, never the absence of the key.
#[test]
fn structs_are_objects_and_null_is_not_absence() {
    let cases = [
        (r#"[{"fs": {"command": "x"}}]"#, ""),
        (r#"{"mcpServers": {"fs": ["x", ["-y"]]}}"#, "mcpServers.fs"),
        (r#"{"mcpServers": [["x"]]}"#, "mcpServers"),
        (
            r#"{"mcpServers": {"fs": {"command": "x"}}, "disco": ["all"]}"#,
            "disco",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x"}}, "disco": {"tokens": [["t", "c"]]}}"#,
            "disco.tokens[0]",
        ),
        (r#"{"mcpServers": null}"#, "mcpServers"),
        (
            r#"{"mcpServers": {"fs": {"command": null}}}"#,
            "mcpServers.fs.command",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x", "cwd": null}}}"#,
            "mcpServers.fs.cwd",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x", "env": null}}}"#,
            "mcpServers.fs.env",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x"}}, "disco": null}"#,
            "disco",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x"}}, "disco": {"pinned": null}}"#,
            "disco.pinned",
        ),
        (
            r#"{"mcpServers": {"fs": {"command": "x"}}, "disco": {"tokens": [{"token": null, "caller": "c"}]}}"#,
            "disco.tokens[0].token",
        ),
    ];
    refused_at(&cases);
}

/// No value of the file appears in an error, whatever is written in its place or around it: a
/// number, a string where an object or a list was expected, a list or an object where a string
/// was. A token, a value of `env` or `headers` and an argument are the secrets among them;
/// every string is held to it.
#[test]
fn secrets_never_appear_in_errors() {
    const WORD: &str = "zq9-hush";
    const DIGITS: &str = "8675309123";
    let word = format!("\"{WORD}\"");
    let shapes = [
        word.clone(),
        DIGITS.to_string(),
        format!("-{DIGITS}"),
        format!("{DIGITS}.5"),
        format!("[{word}]"),
        format!("[{DIGITS}]"),
        format!("{{\"k\": {word}}}"),
        "true".to_string(),
    ];
    // What fits each position: the one shape accepted there, every other refused unseen.
    enum Fits {
        String,
        /// A string or a number (a value of `env`, as VS Code documents it).
        Number,
        List,
        Object,
        /// A string, judged then by a rule that may quote it (a URL's scheme, a transport's
        /// name, a server's name); every other shape is refused unseen.
        Judged,
        Nothing,
    }
    let server = |s: &str| format!(r#"{{"mcpServers": {{"a": {s}}}}}"#);
    let disco = |d: &str| format!(r#"{{"mcpServers": {{"a": {{"command": "x"}}}}, "disco": {d}}}"#);
    let positions = [
        (Fits::String, server(r#"{"command": @}"#)),
        (Fits::List, server(r#"{"command": "x", "args": @}"#)),
        (
            Fits::String,
            server(r#"{"command": "x", "args": ["-y", @]}"#),
        ),
        (Fits::Object, server(r#"{"command": "x", "env": @}"#)),
        (Fits::Number, server(r#"{"command": "x", "env": {"K": @}}"#)),
        (Fits::String, server(r#"{"command": "x", "cwd": @}"#)),
        (Fits::Judged, server(r#"{"url": @}"#)),
        (
            Fits::Judged,
            server(r#"{"url": "http://h/mcp", "type": @}"#),
        ),
        (
            Fits::Object,
            server(r#"{"url": "http://h/mcp", "headers": @}"#),
        ),
        (
            Fits::String,
            server(r#"{"url": "http://h/mcp", "headers": {"X-Key": @}}"#),
        ),
        (Fits::Nothing, disco(r#"{"tokens": @}"#)),
        (Fits::Nothing, disco(r#"{"tokens": [@]}"#)),
        (
            Fits::String,
            disco(r#"{"tokens": [{"token": @, "caller": "c"}]}"#),
        ),
        (
            Fits::String,
            disco(r#"{"tokens": [{"token": "t", "caller": @}]}"#),
        ),
        (
            Fits::Judged,
            disco(r#"{"tokens": [{"token": "t", "caller": "c", "servers": [@]}]}"#),
        ),
        (
            Fits::String,
            disco(r#"{"tokens": [{"token": "t", "caller": "c", "tools": [@]}]}"#),
        ),
        (Fits::String, disco(r#"{"pinned": [@]}"#)),
        (Fits::String, disco(r#"{"aliases": {"a.t": [@]}}"#)),
        (Fits::String, disco(r#"{"keywords": {"a.t": [@]}}"#)),
        (Fits::String, disco(r#"{"learning": {"postgres": @}}"#)),
    ];
    for (fits, position) in &positions {
        for (i, shape) in shapes.iter().enumerate() {
            let text = position.replace('@', shape);
            let (fitting, judged) = match fits {
                Fits::String => (i == 0, false),
                Fits::Number => (i <= 3, false),
                Fits::List => (i == 4, false),
                Fits::Object => (i == 6, false),
                Fits::Judged => (false, i == 0),
                Fits::Nothing => (false, false),
            };
            match parse(&text) {
                Ok(_) => assert!(fitting, "{text} was accepted"),
                Err(e) => {
                    assert!(!fitting, "{text}: {e}");
                    let said = e.to_string();
                    if !judged {
                        for secret in [WORD, DIGITS] {
                            assert!(!said.contains(secret), "{text}: the value is shown: {said}");
                        }
                    }
                    assert!(
                        e.key.starts_with("mcpServers.a.") || e.key.starts_with("disco."),
                        "{text}: {said}"
                    );
                }
            }
        }
    }
}

/// A key given twice is refused wherever it is, at its own path: JSON readers differ on
/// which of the two counts, and the file is read one way only.
#[test]
fn a_key_given_twice_is_refused_at_its_path() {
    let cases = [
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {}}"#,
            "mcpServers",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
            "mcpServers.a",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "command": "y"}}}"#,
            "mcpServers.a.command",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "env": {"PORT": "1", "PORT": "zq9"}}}}"#,
            "mcpServers.a.env.PORT",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"X-Key": "zq9", "X-Key": "zq9"}}}}"#,
            "mcpServers.a.headers.X-Key",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}, "off": {"command": "y", "disabled": true, "command": "z"}}}"#,
            "mcpServers.off.command",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"pageSize": 5, "pageSize": 6}}"#,
            "disco.pageSize",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"aliases": {"a.t": [], "a.t": ["u"]}}}"#,
            "disco.aliases.a.t",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"tokens": [{"token": "zq9", "token": "zq9", "caller": "c"}]}}"#,
            "disco.tokens[0].token",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x"}}, "disco": {"exposure": "all"}, "disco": {}}"#,
            "disco",
        ),
    ];
    for (text, key) in cases {
        let e = refused(text);
        assert_eq!(e.key, key, "{text}: {e}");
        assert_eq!(e.message, shape::GIVEN_TWICE, "{text}");
        assert!(!e.message.contains("zq9"), "{e}");
    }
}

/// With serde_json's `arbitrary_precision` (a feature another crate of a build may turn on), a
/// number reaches a reader as a map of one private key: where an object is expected, it is
/// still a number, and refused as one.
#[test]
fn a_number_handed_over_as_a_map_is_not_an_object() {
    use serde::de::value::{Error, MapDeserializer};
    let number = || {
        MapDeserializer::<_, Error>::new(
            [("$serde_json::private::Number", "8675309123")].into_iter(),
        )
    };
    let Err(e) = file::Secrets::deserialize(number()) else {
        panic!("a number was read as `env`");
    };
    assert_eq!(e.to_string(), "must be an object of strings");
    assert!(file::Strings::deserialize(number()).is_err());
}

/// The file is read in order, and its first mistake is the error: the shape of each value as
/// it is read, whichever part of the file it is in; of one server, its keys before its values.
#[test]
fn the_first_mistake_in_the_file_is_the_error() {
    let cases = [
        (
            r#"{"mcpServers": {"a": {"command": 1}}, "disco": {"pageSize": "x"}}"#,
            "mcpServers.a.command",
        ),
        (
            r#"{"disco": {"pageSize": "x"}, "mcpServers": {"a": {"command": 1}}}"#,
            "disco.pageSize",
        ),
        (
            r#"{"mcpServers": {"b": {"command": "x", "cwd": 1}, "a": {"command": 1}}}"#,
            "mcpServers.b.cwd",
        ),
        (
            r#"{"mcpServers": {"a": {"args": [1], "command": 2}}}"#,
            "mcpServers.a.args[0]",
        ),
        (
            r#"{"mcpServers": {"a": {"command": 1, "argz": []}}}"#,
            "mcpServers.a.argz",
        ),
        (
            r#"{"mcpServers": {"a": {"command": 1}}, "servers": {}}"#,
            "mcpServers.a.command",
        ),
    ];
    refused_at(&cases);
}

/// A server left out with `"disabled": true` has its keys checked and nothing else read: its
/// variables may be unset, its values of another client's kind.
#[test]
fn a_disabled_server_is_read_but_not_expanded() {
    for off in [
        r#"{"command": "${NOPE}", "env": {"K": "${NOPE}"}, "disabled": true}"#,
        r#"{"command": 1, "disabled": true}"#,
        r#"{"command": "x", "env": {"PORT": 3000}, "disabled": true}"#,
        r#"{"url": "http://h/mcp", "forwardToken": "yes", "disabled": true}"#,
        r#"{"disabled": true, "command": "x", "url": "ftp://h", "args": "-y"}"#,
        r#"{"command": null, "env": {"A": "1", "A": "2"}, "disabled": true}"#,
        r#"{"disabled": true}"#,
    ] {
        let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x"}}, "off": {off}}}}}"#);
        let c = parse(&text).unwrap_or_else(|e| panic!("{off}: {e}"));
        assert_eq!(c.servers.len(), 1, "{off}");
    }
    let c = parse(r#"{"mcpServers": {"a": {"command": "x", "disabled": false}}}"#).unwrap();
    assert_eq!(c.servers.len(), 1);
    let e = refused(r#"{"mcpServers": {"a": {"command": 1, "disabled": false}}}"#);
    assert_eq!(e.to_string(), "mcpServers.a.command: must be a string");
    // Only a boolean: `"true"` is a mistake shown at its key, not a server served.
    for disabled in ["\"true\"", "1", "null", "{}"] {
        let e = refused(&format!(
            r#"{{"mcpServers": {{"a": {{"command": "x", "disabled": {disabled}}}}}}}"#
        ));
        assert_eq!(e.key, "mcpServers.a.disabled", "{disabled}: {e}");
    }
    // Its keys are the keys of any server, and it is an object.
    let cases = [
        (
            r#"{"mcpServers": {"off": {"command": "x", "argz": [], "disabled": true}}}"#,
            "mcpServers.off.argz",
        ),
        (
            r#"{"mcpServers": {"off": {"disabled": true, "forwardTokens": true}}}"#,
            "mcpServers.off.forwardTokens",
        ),
        (r#"{"mcpServers": {"off": ["x"]}}"#, "mcpServers.off"),
    ];
    refused_at(&cases);
    let e = refused(r#"{"mcpServers": {"off": {"disabled": true, "argz": 1}}}"#);
    assert!(
        e.message
            .starts_with("unknown key `argz` (did you mean `args`?)"),
        "{e}"
    );
}

#[test]
fn servers_keep_the_order_of_the_file_and_max_tools_is_read() {
    let c = parse(
        r#"{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}},
            "disco": {"maxTools": 12}}"#,
    )
    .unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(c.disco.max_tools, 12);
    assert_eq!(
        parse(r#"{"mcpServers": {"a": {"command": "a"}}}"#)
            .unwrap()
            .disco
            .max_tools,
        DEFAULT_MAX_TOOLS
    );
    refused_at(&[
        (
            r#"{"mcpServers": {"a": {"command": "a"}}, "disco": {"maxTools": 0}}"#,
            "disco.maxTools",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "a"}, "a": {"command": "b"}}}"#,
            "mcpServers.a",
        ),
    ]);
}

/// `dataDir` is an absolute path, `${VAR}` expanded; `onChange` is "hold" (the default) or
/// "serve".
#[test]
fn the_state_directory_and_what_a_change_does_are_read() {
    let c = parse(
        r#"{"mcpServers": {"a": {"command": "a"}},
            "disco": {"dataDir": "${HOME}/state", "onChange": "serve"}}"#,
    )
    .unwrap();
    assert_eq!(
        c.disco.data_dir.as_deref(),
        Some(std::path::Path::new("/home/u/state"))
    );
    assert_eq!(c.disco.on_change, OnChange::Serve);
    let c = parse(r#"{"mcpServers": {"a": {"command": "a"}}}"#).unwrap();
    assert_eq!(
        (c.disco.data_dir, c.disco.on_change),
        (None, OnChange::Hold)
    );
    refused_at(&[
        (
            r#"{"mcpServers": {"a": {"command": "a"}}, "disco": {"dataDir": "state"}}"#,
            "disco.dataDir",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "a"}}, "disco": {"dataDir": 7}}"#,
            "disco.dataDir",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "a"}}, "disco": {"onChange": "ignore"}}"#,
            "disco.onChange",
        ),
    ]);
}

/// `disco.metrics`: an address to listen on, or an error at the key.
#[test]
fn metrics_listen_on_an_address() {
    let c = parse(r#"{"mcpServers": {}, "disco": {"metrics": {"listen": "127.0.0.1:9464"}}}"#);
    assert_eq!(
        c.unwrap().disco.metrics,
        Some(([127, 0, 0, 1], 9464).into())
    );
    assert_eq!(parse(r#"{"mcpServers": {}}"#).unwrap().disco.metrics, None);
    let m = |v: &str| format!(r#"{{"mcpServers": {{}}, "disco": {{"metrics": {v}}}}}"#);
    refused_at(&[
        (&m(r#"{"listen": "localhost"}"#), "disco.metrics.listen"),
        (&m(r#"{"listen": 9464}"#), "disco.metrics.listen"),
        (&m("{}"), "disco.metrics.listen"),
        (&m(r#"{"port": 9464}"#), "disco.metrics.port"),
        (&m("true"), "disco.metrics"),
    ]);
}
