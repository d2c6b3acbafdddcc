//! Every kind of URL server entry as to signing in, for the tests of the rule
//! (config/oauth.rs, `sign_in`) and of what follows from it (who sees the server, what `login`
//! says): each source of an `Authorization` of its own (JSON's `headers` in either case,
//! Codex's `http_headers`, `env_http_headers` and `bearer_token_env_var`), a header that is no
//! credential, or none; `forwardToken` absent, false or true; `oauth` absent (no key, `null`),
//! on (each form the clients write, Codex's `scopes`) or off (each form). Each with what the
//! rule says of it, written from the rule, not from the code.

use super::super::*;

/// What an entry says of OAuth.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Asked {
    /// No key (or `null`).
    Absent,
    /// `"oauth": true`, an object that does not turn it off, Codex's `scopes`.
    On,
    /// `"oauth": false`, `{"enabled": false}`.
    Off,
}

/// What the rule makes of an entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expected {
    /// A configuration error at its `oauth`.
    Refused,
    /// [`SignIn::Configured`].
    Configured,
    /// [`SignIn::WhenSignedIn`].
    WhenSignedIn,
    /// [`SignIn::Never`].
    Never,
}

/// One entry, named `remote`, as a whole configuration file.
pub(crate) struct Kind {
    /// The entry as written, for the assertions' messages (it holds no secret's value).
    pub label: String,
    pub text: String,
    pub format: Format,
    /// It sends an `Authorization` of its own.
    pub credential: bool,
    pub forward: bool,
    pub asked: Asked,
}

/// Its URL.
pub(crate) const URL: &str = "http://127.0.0.1:9/mcp";

fn vars(name: &str) -> Option<String> {
    (name == "SECRET").then(|| "s3cr3t-value".to_string())
}

impl Kind {
    /// The rule: OAuth asked for, with `forwardToken`, is an error (two identities); asked
    /// for beside an `Authorization` of its own, left out (that header is sent); asked for
    /// alone, configured. Turned off: never. Not said: when signed in, unless the entry has
    /// credentials of its own (an `Authorization`, or each caller's token).
    pub(crate) fn expected(&self) -> Expected {
        match (self.asked, self.forward, self.credential) {
            (Asked::On, true, _) => Expected::Refused,
            (Asked::On, false, true) => Expected::Never,
            (Asked::On, false, false) => Expected::Configured,
            (Asked::Off, _, _) => Expected::Never,
            (Asked::Absent, false, false) => Expected::WhenSignedIn,
            (Asked::Absent, _, _) => Expected::Never,
        }
    }

    pub(crate) fn read(&self) -> Result<Config, ConfigError> {
        let origin = Origin {
            format: self.format,
            ..Origin::default()
        };
        Config::read(&self.text, &vars, origin)
    }

    /// What the configuration makes of it.
    pub(crate) fn got(&self) -> Expected {
        match self.read() {
            Err(_) => Expected::Refused,
            Ok(c) => match &c.servers[0].transport {
                Transport::Http { oauth, .. } => match oauth {
                    SignIn::Configured(_) => Expected::Configured,
                    SignIn::WhenSignedIn => Expected::WhenSignedIn,
                    SignIn::Never => Expected::Never,
                },
                Transport::Stdio { .. } => panic!("{}: not a URL server", self.label),
            },
        }
    }
}

/// Every kind, JSON's and Codex's TOML's.
pub(crate) fn kinds() -> Vec<Kind> {
    use serde_json::{json, Value};
    let mut out = Vec::new();
    let credentials: [(Option<Value>, bool); 4] = [
        (None, false),
        (Some(json!({"Authorization": "Bearer ${SECRET}"})), true),
        (Some(json!({"authorization": "Bearer ${SECRET}"})), true),
        (Some(json!({"X-Team": "a"})), false),
    ];
    let oauths: [(Option<Value>, Asked); 9] = [
        (None, Asked::Absent),
        (Some(Value::Null), Asked::Absent),
        (Some(json!(true)), Asked::On),
        (Some(json!({"clientId": "c"})), Asked::On),
        (Some(json!({"enabled": true})), Asked::On),
        (Some(json!({"scopes": "a b"})), Asked::On),
        (Some(json!(false)), Asked::Off),
        (Some(json!({"enabled": false})), Asked::Off),
        (Some(json!({"enabled": false, "clientId": "c"})), Asked::Off),
    ];
    for (headers, credential) in &credentials {
        for forward in [None, Some(false), Some(true)] {
            for (oauth, asked) in &oauths {
                let mut entry = json!({"type": "http", "url": URL});
                if let Some(h) = headers {
                    entry["headers"] = h.clone();
                }
                if let Some(f) = forward {
                    entry["forwardToken"] = json!(f);
                }
                if let Some(o) = oauth {
                    entry["oauth"] = o.clone();
                }
                out.push(Kind {
                    label: entry.to_string(),
                    text: json!({"mcpServers": {"remote": entry}}).to_string(),
                    format: Format::Json,
                    credential: *credential,
                    forward: forward == Some(true),
                    asked: *asked,
                });
            }
        }
    }
    // Codex: no `oauth` key nor `forwardToken`; `scopes` asks for OAuth.
    let credentials = [
        ("", false),
        ("http_headers = { Authorization = \"Bearer x\" }", true),
        ("http_headers = { authorization = \"Bearer x\" }", true),
        ("env_http_headers = { Authorization = \"SECRET\" }", true),
        ("bearer_token_env_var = \"SECRET\"", true),
        ("http_headers = { \"X-Team\" = \"a\" }", false),
    ];
    let scopes = [
        ("", Asked::Absent),
        ("scopes = []", Asked::On),
        ("scopes = [\"a\"]", Asked::On),
    ];
    for (credential, sends) in credentials {
        for (scopes, asked) in scopes {
            let table = format!("url = \"{URL}\"\n{credential}\n{scopes}\n");
            out.push(Kind {
                label: table.replace('\n', "; "),
                text: format!("[mcp_servers.remote]\n{table}"),
                format: Format::Toml,
                credential: sends,
                forward: false,
                asked,
            });
        }
    }
    out
}
