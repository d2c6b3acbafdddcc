//! A URL server's `"oauth"`: the gateway signs in to it with OAuth 2.1 (the authorization code
//! with PKCE, `disco-gateway login <server>`) instead of sending static headers.
//!
//! The key is the one the clients already write: Claude Code's `oauth` (`clientId`,
//! `callbackPort`, `scopes` as one space-separated string, `authServerMetadataUrl`;
//! <https://code.claude.com/docs/en/mcp>), VS Code's (`clientId`;
//! <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>) and Gemini CLI's
//! (`enabled`, `clientId`, `clientSecret`, `scopes` as an array, and its endpoints;
//! <https://geminicli.com/docs/tools/mcp-server/>). `true` asks for OAuth with dynamic client
//! registration (RFC 7591) and the scopes the server advertises; `false` for none.
//!
//! No key is needed for that: every one of these clients signs in to a remote server that
//! answers 401 with its protected-resource metadata (RFC 9728), its entry a URL and nothing
//! more. Claude Code ("Authenticate with remote MCP servers", `/mcp`;
//! <https://code.claude.com/docs/en/mcp>), Cursor (<https://cursor.com/docs/context/mcp>),
//! VS Code (<https://code.visualstudio.com/docs/copilot/customization/mcp-servers>), Windsurf
//! ("OAuth support for each transport type"; <https://docs.windsurf.com/windsurf/cascade/mcp>),
//! Gemini CLI ("Automatic OAuth discovery": "you can omit the OAuth configuration";
//! <https://geminicli.com/docs/tools/mcp-server/>) and Codex (`codex mcp login <server>`;
//! <https://developers.openai.com/codex/mcp>). So a URL server with no credentials of its own
//! and OAuth not turned off is [`SignIn::WhenSignedIn`]: `disco-gateway login` signs in to it,
//! and its tokens, once there, are used as a configured OAuth server's.

use serde_json::Value;

use super::expand::{expand, Secrecy};
use super::{err, ConfigError, ConfigWarning, Vars};

/// How the gateway signs in to one server. `client_secret` is a secret: this type has no
/// `Debug`, and nothing logs it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A client registered with the authorization server beforehand; `None`: the gateway
    /// registers itself (RFC 7591) at `login`.
    pub client_id: Option<String>,
    /// The secret of a confidential `client_id`.
    pub client_secret: Option<String>,
    /// The scopes asked for; empty: those the server's metadata advertises.
    pub scopes: Vec<String>,
    /// The loopback port `login` listens on for the redirect; `None`: any free one.
    pub callback_port: Option<u16>,
}

/// Whether and how the gateway signs in to a URL server with OAuth.
#[derive(Clone, PartialEq, Eq)]
pub enum SignIn {
    /// Its entry asks for OAuth (`"oauth"`, Codex's `scopes`): every connection signs in, and
    /// without tokens the server is not up ("sign in with `disco-gateway login`").
    Configured(OAuthConfig),
    /// Its entry has no credentials of its own (no `Authorization` header, not
    /// `forwardToken`) and does not turn OAuth off: called without credentials until
    /// `disco-gateway login` writes its tokens, then as a configured OAuth server with
    /// [`OAuthConfig::default`] (discovery, dynamic registration, the advertised scopes).
    WhenSignedIn,
    /// Never: its entry sends its own `Authorization`, forwards each caller's token, or turns
    /// OAuth off (`"oauth": false`, Gemini CLI's `"enabled": false`).
    Never,
}

impl SignIn {
    /// What a connection signs in with when it signs in.
    pub fn config(&self) -> Option<OAuthConfig> {
        match self {
            SignIn::Configured(config) => Some(config.clone()),
            SignIn::WhenSignedIn => Some(OAuthConfig::default()),
            SignIn::Never => None,
        }
    }
}

/// How a URL server signs in, from what its entry says: `asked` its `oauth` as [`read`] read
/// it (`None`: no key; `Some(None)`: turned off), `forward_token`, and the `Authorization`
/// header its entry sends, if any. `key` is its `oauth` key, for what is said of it.
pub(super) fn sign_in(
    key: &str,
    server: &str,
    asked: Option<Option<OAuthConfig>>,
    forward_token: bool,
    authorization: Option<&str>,
) -> Result<(SignIn, Option<ConfigWarning>), ConfigError> {
    let config = match asked {
        Some(None) => return Ok((SignIn::Never, None)),
        None if forward_token || authorization.is_some() => return Ok((SignIn::Never, None)),
        None => return Ok((SignIn::WhenSignedIn, None)),
        Some(Some(config)) => config,
    };
    // Each is a different identity upstream: the caller's own token, or the user who signed
    // in; the gateway cannot send both.
    if forward_token {
        return Err(err(
            key,
            "cannot go with `forwardToken`: a server is called either with each caller's own \
             token or as the user signed in with `disco-gateway login`, not both",
        ));
    }
    // A token written in the file is what the file's own client sends too: it is kept, and
    // the sign-in left out.
    if let Some(k) = authorization {
        let warning = ConfigWarning {
            key: key.to_string(),
            message: format!(
                "not read: `headers.{k}` is sent instead (remove it to sign in with \
                 `disco-gateway login {server}`)"
            ),
        };
        return Ok((SignIn::Never, Some(warning)));
    }
    Ok((SignIn::Configured(config), None))
}

/// The keys of an `oauth` object the gateway reads.
const READ: &[&str] = &[
    "enabled",
    "clientId",
    "clientSecret",
    "scopes",
    "callbackPort",
];

/// The keys other clients define that the gateway leaves out, with why.
const IGNORED: &[(&str, &str)] = &[
    ("authServerMetadataUrl", DISCOVERED),
    ("authorizationUrl", DISCOVERED),
    ("tokenUrl", DISCOVERED),
    ("registrationUrl", DISCOVERED),
    ("issuer", DISCOVERED),
    (
        "redirectUri",
        "the gateway's redirect is its own loopback listener (`callbackPort`)",
    ),
    (
        "audiences",
        "the gateway asks for the server's own resource (RFC 8707)",
    ),
    (
        "tokenParamName",
        "the gateway sends the token in the `Authorization` header",
    ),
];

const DISCOVERED: &str = "the gateway discovers the authorization server from the MCP server \
                          (RFC 9728, then RFC 8414)";

/// Reads the `oauth` value at `key`: `None` when it asks for no OAuth (`false`, or Gemini
/// CLI's `"enabled": false`). Keys other clients define that the gateway does not read are
/// warnings; any other key is an error naming it. A value is never shown (`clientSecret` may
/// be one).
pub(super) fn read(
    key: &str,
    value: &Value,
    vars: Vars,
) -> Result<(Option<OAuthConfig>, Vec<ConfigWarning>), ConfigError> {
    const MUST: &str = "must be true, false or an object such as {\"clientId\": \"...\", \
                        \"scopes\": [\"...\"]}";
    let obj = match value {
        Value::Bool(true) => return Ok((Some(OAuthConfig::default()), Vec::new())),
        Value::Bool(false) => return Ok((None, Vec::new())),
        Value::Object(obj) => obj,
        _ => return Err(err(key, MUST)),
    };
    let at = |k: &str| format!("{key}.{k}");
    let mut warnings = Vec::new();
    for k in obj.keys() {
        if READ.contains(&k.as_str()) {
            continue;
        }
        match IGNORED.iter().find(|(name, _)| name == k) {
            Some((_, why)) => warnings.push(ConfigWarning {
                key: at(k),
                message: format!("not read: {why}"),
            }),
            None => {
                return Err(err(
                    &at(k),
                    format!(
                        "unknown key (an `oauth` object has {})",
                        READ.iter()
                            .map(|r| format!("`{r}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        }
    }
    if let Some(enabled) = obj.get("enabled") {
        match enabled {
            Value::Bool(true) => {}
            Value::Bool(false) => return Ok((None, warnings)),
            _ => return Err(err(&at("enabled"), "must be true or false")),
        }
    }
    let text = |k: &str, secrecy: Secrecy| -> Result<Option<String>, ConfigError> {
        match obj.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                let v = expand(s, &at(k), vars, secrecy)?;
                if v.is_empty() {
                    return Err(err(&at(k), "must not be empty"));
                }
                Ok(Some(v))
            }
            Some(_) => Err(err(&at(k), "must be a string")),
        }
    };
    let client_id = text("clientId", Secrecy::Plain)?;
    let client_secret = text("clientSecret", Secrecy::Secret)?;
    if client_secret.is_some() && client_id.is_none() {
        return Err(err(
            &at("clientSecret"),
            "needs `clientId`: a secret belongs to a client registered beforehand",
        ));
    }
    let scopes = match obj.get("scopes") {
        None => Vec::new(),
        // Claude Code's: one space-separated string.
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        // Gemini CLI's: an array.
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) if !s.is_empty() && !s.contains(char::is_whitespace) => {
                    Ok(s.clone())
                }
                _ => Err(err(
                    &format!("{key}.scopes[{i}]"),
                    "must be a scope: a string without spaces",
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(err(
                &at("scopes"),
                "must be an array of strings, or one space-separated string",
            ))
        }
    };
    let callback_port = match obj.get("callbackPort") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p > 0)
                .ok_or_else(|| err(&at("callbackPort"), "must be a port, 1 to 65535"))?,
        ),
    };
    Ok((
        Some(OAuthConfig {
            client_id,
            client_secret,
            scopes,
            callback_port,
        }),
        warnings,
    ))
}
