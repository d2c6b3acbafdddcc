//! `"oauth"` on a URL server: each form the clients write, the rules across keys, and every
//! malformed value refused at its key.

use super::super::*;

fn vars(name: &str) -> Option<String> {
    (name == "SECRET").then(|| "s3cr3t-value".to_string())
}

fn server(entry: &str) -> Result<Config, ConfigError> {
    let text = format!(r#"{{"mcpServers": {{"remote": {entry}}}}}"#);
    Config::parse(&text, &vars)
}

/// The error of an entry that must be refused.
fn refused(entry: &str) -> ConfigError {
    match server(entry) {
        Ok(_) => panic!("{entry} was accepted"),
        Err(e) => e,
    }
}

/// What the entry's `oauth` configures: `None` when it signs in by no configuration of its
/// own (when asked, or never).
fn oauth_of(entry: &str) -> Option<OAuthConfig> {
    configured(&sign_in_of(entry))
}

fn sign_in_of(entry: &str) -> SignIn {
    let c = server(entry).unwrap_or_else(|e| panic!("{entry}: {e}"));
    match &c.servers[0].transport {
        Transport::Http { oauth, .. } => oauth.clone(),
        Transport::Stdio { .. } => panic!("{entry}: not a URL server"),
    }
}

fn configured(sign_in: &SignIn) -> Option<OAuthConfig> {
    match sign_in {
        SignIn::Configured(config) => Some(config.clone()),
        SignIn::WhenSignedIn | SignIn::Never => None,
    }
}

#[test]
fn each_form_the_clients_write_is_read() {
    let url = r#""url": "https://mcp.example.com/mcp""#;
    // `true`: dynamic registration, the scopes the server advertises.
    assert!(oauth_of(&format!(r#"{{{url}, "oauth": true}}"#)) == Some(OAuthConfig::default()));
    for off in ["false", "null", r#"{"enabled": false, "clientId": "x"}"#] {
        assert!(
            oauth_of(&format!(r#"{{{url}, "oauth": {off}}}"#)).is_none(),
            "{off}"
        );
    }
    assert!(oauth_of(&format!("{{{url}}}")).is_none());
    // Claude Code: clientId, callbackPort, scopes as one space-separated string.
    let o = oauth_of(&format!(
        r#"{{"type": "http", {url}, "oauth": {{"clientId": "abc", "callbackPort": 8080, "scopes": "read  write"}}}}"#
    ))
    .unwrap();
    assert_eq!(o.client_id.as_deref(), Some("abc"));
    assert_eq!(o.callback_port, Some(8080));
    assert_eq!(o.scopes, ["read", "write"]);
    assert_eq!(o.client_secret, None);
    // VS Code: clientId alone.
    let o = oauth_of(&format!(
        r#"{{"type": "http", {url}, "oauth": {{"clientId": "guid"}}}}"#
    ))
    .unwrap();
    assert_eq!(o.client_id.as_deref(), Some("guid"));
    assert!(o.scopes.is_empty());
    // Gemini CLI: enabled, a secret from the environment, scopes as an array.
    let o = oauth_of(
        r#"{"httpUrl": "https://mcp.example.com/mcp", "oauth": {"enabled": true, "clientId": "id", "clientSecret": "${SECRET}", "scopes": ["a:read", "offline_access"]}}"#,
    )
    .unwrap();
    assert_eq!(o.client_secret.as_deref(), Some("s3cr3t-value"));
    assert_eq!(o.scopes, ["a:read", "offline_access"]);
}

#[test]
fn keys_other_clients_define_are_warnings_and_others_errors() {
    for key in [
        "authServerMetadataUrl",
        "authorizationUrl",
        "tokenUrl",
        "registrationUrl",
        "issuer",
        "redirectUri",
        "audiences",
        "tokenParamName",
    ] {
        let entry =
            format!(r#"{{"url": "https://h/mcp", "oauth": {{"clientId": "c", "{key}": "x"}}}}"#);
        let c = server(&entry).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(
            c.warnings
                .iter()
                .any(|w| w.key == format!("mcpServers.remote.oauth.{key}")),
            "{key}: {:?}",
            c.warnings
        );
    }
    // A typo is a mistake, said at its key.
    for typo in ["clientID", "scope", "client_id", "callback_port"] {
        let e = refused(&format!(
            r#"{{"url": "https://h/mcp", "oauth": {{"{typo}": "x"}}}}"#
        ));
        assert_eq!(e.key, format!("mcpServers.remote.oauth.{typo}"), "{e}");
        assert!(e.message.contains("`clientId`"), "{e}");
    }
}

#[test]
fn malformed_values_are_refused_at_their_key() {
    let cases: &[(&str, &str)] = &[
        ("1", "oauth"),
        (r#""yes""#, "oauth"),
        ("[]", "oauth"),
        (r#"{"clientId": 1}"#, "oauth.clientId"),
        (r#"{"clientId": ""}"#, "oauth.clientId"),
        (r#"{"clientSecret": "${SECRET}"}"#, "oauth.clientSecret"),
        (
            r#"{"clientId": "c", "clientSecret": 5}"#,
            "oauth.clientSecret",
        ),
        (r#"{"scopes": 3}"#, "oauth.scopes"),
        (r#"{"scopes": ["a", 1]}"#, "oauth.scopes[1]"),
        (r#"{"scopes": ["a b"]}"#, "oauth.scopes[0]"),
        (r#"{"scopes": [""]}"#, "oauth.scopes[0]"),
        (r#"{"callbackPort": 0}"#, "oauth.callbackPort"),
        (r#"{"callbackPort": 65536}"#, "oauth.callbackPort"),
        (r#"{"callbackPort": "8080"}"#, "oauth.callbackPort"),
        (r#"{"callbackPort": -1}"#, "oauth.callbackPort"),
        (r#"{"enabled": "true"}"#, "oauth.enabled"),
    ];
    for (value, key) in cases {
        let e = refused(&format!(r#"{{"url": "https://h/mcp", "oauth": {value}}}"#));
        assert_eq!(e.key, format!("mcpServers.remote.{key}"), "{value}: {e}");
        assert!(!e.to_string().contains("s3cr3t-value"), "{e}");
    }
}

/// Every form that turns OAuth on is refused with `forwardToken`, and left out (a warning)
/// beside a configured `Authorization`; with OAuth off, both are what they were.
#[test]
fn oauth_excludes_forwarding_and_a_static_authorization() {
    let on = [
        "true",
        r#"{"clientId": "c"}"#,
        r#"{"enabled": true}"#,
        r#"{"scopes": "a"}"#,
    ];
    let off = ["false", "null", r#"{"enabled": false}"#];
    for oauth in on.iter().chain(&off) {
        let enabled = on.contains(oauth);
        let forwarding =
            format!(r#"{{"url": "https://h/mcp", "forwardToken": true, "oauth": {oauth}}}"#);
        match server(&forwarding) {
            Err(e) if enabled => {
                assert_eq!(e.key, "mcpServers.remote.oauth", "{oauth}");
                assert!(e.message.contains("forwardToken"), "{e}");
            }
            Ok(_) if !enabled => {}
            other => panic!("{oauth}: {:?}", other.map(|_| ())),
        }
        for header in ["Authorization", "authorization"] {
            let static_header = format!(
                r#"{{"url": "https://h/mcp", "headers": {{"{header}": "Bearer ${{SECRET}}"}}, "oauth": {oauth}}}"#
            );
            let c = server(&static_header).unwrap_or_else(|e| panic!("{oauth}: {e}"));
            let Transport::Http {
                oauth: read,
                headers,
                ..
            } = &c.servers[0].transport
            else {
                panic!("{oauth}: not a URL server")
            };
            assert!(*read == SignIn::Never, "{oauth} {header}");
            assert!(headers.contains_key(header));
            let warned = c
                .warnings
                .iter()
                .find(|w| w.key == "mcpServers.remote.oauth");
            assert_eq!(
                warned.is_some(),
                enabled,
                "{oauth} {header}: {:?}",
                c.warnings
            );
            if let Some(w) = warned {
                assert!(w.message.contains(header), "{w}");
                assert!(!w.message.contains("s3cr3t"), "{w}");
            }
        }
    }
    // Other headers go with it.
    assert!(
        oauth_of(r#"{"url": "https://h/mcp", "headers": {"X-Team": "a"}, "oauth": true}"#)
            .is_some()
    );
}

#[test]
fn oauth_is_for_url_servers_only() {
    let e = refused(r#"{"command": "x", "oauth": true}"#);
    assert_eq!(e.key, "mcpServers.remote.oauth");
}

/// Codex's TOML: a server with `scopes` signs in with OAuth (`codex mcp login`), and so it does
/// behind the gateway, asking for those scopes (an empty list: those the server advertises); a
/// server without them sends its static headers; `scopes` on a stdio server is refused, and
/// Codex's `oauth_resource` is left out with a warning naming it.
#[test]
fn codex_scopes_sign_in_with_oauth() {
    let codex = |table: &str| {
        let text = format!("[mcp_servers.remote]\n{table}\n");
        let origin = Origin {
            format: Format::Toml,
            ..Origin::default()
        };
        Config::read(&text, &vars, origin)
    };
    let oauth = |table: &str| match codex(table)
        .unwrap_or_else(|e| panic!("{table}: {e}"))
        .servers[0]
        .transport
        .clone()
    {
        Transport::Http { oauth, .. } => configured(&oauth),
        Transport::Stdio { .. } => panic!("{table}: not a URL server"),
    };
    let url = r#"url = "https://mcp.example.com/mcp""#;
    let scopes = |list: &[&str]| OAuthConfig {
        scopes: list.iter().map(|s| s.to_string()).collect(),
        ..OAuthConfig::default()
    };
    assert!(oauth(url).is_none());
    assert!(oauth(&format!("{url}\nscopes = []")) == Some(scopes(&[])));
    assert!(
        oauth(&format!("{url}\nscopes = [\"read\", \"write\"]"))
            == Some(scopes(&["read", "write"]))
    );
    // A bearer token in the file is what Codex sends too: the sign-in is left out, said.
    let both = format!("{url}\nscopes = [\"read\"]\nbearer_token_env_var = \"SECRET\"");
    assert!(oauth(&both).is_none());
    let said = codex(&both).expect("read").warnings;
    assert!(
        said.iter().any(|w| w.key == "mcp_servers.remote.oauth"),
        "{:?}",
        said.iter().map(|w| &w.message).collect::<Vec<_>>()
    );
    let resource = codex(&format!(
        "{url}\nscopes = []\noauth_resource = \"https://x\""
    ))
    .expect("read")
    .warnings;
    assert!(
        resource
            .iter()
            .any(|w| w.key.ends_with("oauth_resource") && w.message.contains("RFC 8707")),
        "{:?}",
        resource.iter().map(|w| &w.message).collect::<Vec<_>>()
    );
    let e = codex("command = \"npx\"\nscopes = [\"read\"]")
        .err()
        .expect("scopes on a stdio server is refused");
    assert!(e.to_string().contains("scopes"), "{e}");
    for bad in ["scopes = \"read\"", "scopes = [1]"] {
        assert!(codex(&format!("{url}\n{bad}")).is_err(), "{bad}");
    }
}

/// Which entries sign in, and how: every kind of entry (each source of an `Authorization` of its
/// own, `forwardToken`, `oauth` absent, on or off, JSON's and Codex's) read as the rule says.
/// A refusal names the entry's `oauth`, and a left-out `oauth` is a warning naming the header.
#[test]
fn which_entries_sign_in_follows_the_rule_over_every_kind() {
    use super::kinds::kinds;
    let kinds = kinds();
    let mut seen = Vec::new();
    for kind in &kinds {
        let want = kind.expected();
        assert_eq!(kind.got(), want, "{}", kind.label);
        if !seen.contains(&want) {
            seen.push(want);
        }
        match kind.read() {
            Err(e) => {
                assert!(e.key.ends_with("remote.oauth"), "{}: {e}", kind.label);
                assert!(!e.to_string().contains("s3cr3t"), "{e}");
            }
            Ok(c) => {
                let left_out = c.warnings.iter().any(|w| w.key.ends_with("remote.oauth"));
                let asked_but_sends =
                    kind.asked == super::kinds::Asked::On && kind.credential && !kind.forward;
                assert_eq!(left_out, asked_but_sends, "{}", kind.label);
            }
        }
    }
    assert_eq!(seen.len(), 4, "every outcome is among the kinds");
}
