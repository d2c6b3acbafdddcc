//! The configuration file as written: which keys it has and the shape of each value, read by
//! serde with the path of the value at fault in every error (`mcpServers.fs.args[2]: ...`).
//! What the keys mean together (a server's transport, `${VAR}`, the rules across servers) is
//! `config.rs`'s.
//!
//! Every key is recognised here and nowhere else: the top-level keys in [`File`], a server's in
//! [`Server`], disco's own in [`Disco`], a caller's token in [`Token`]. An unknown key is an
//! error naming it and the keys expected. Another client's file is read by widening these: an
//! alias for a key another client spells its own way, a field for a key it adds (which
//! `config.rs` then reads or leaves alone), and the same types under another format's
//! deserializer for a file that is not JSON.
//!
//! The shape of each value is checked as it is read, so a value of the wrong type is refused
//! before the rules across keys are applied. Structs, maps and lists are read through
//! `shape.rs`: only their own shape is taken, and a refused value is never shown (a token or a
//! header's value may be one).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::de::{Deserialize, Deserializer};
use serde_json::Value;
use serde_path_to_error::{Path, Segment};

use super::shape::{self, present};
use super::{ConfigError, ExposureKind, Namespace};

/// The whole file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    #[serde(rename = "mcpServers", default, deserialize_with = "servers")]
    pub(super) mcp_servers: Option<Servers>,
    #[serde(default, deserialize_with = "present")]
    pub(super) disco: Option<Object<Disco>>,
}

/// One entry of `mcpServers`, as written. Which keys go together (`command` or `url`, and
/// what each allows) is `config.rs`'s.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Server {
    #[serde(default, deserialize_with = "present")]
    pub(super) command: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(super) args: Option<Strings>,
    #[serde(default, deserialize_with = "present")]
    pub(super) env: Option<Secrets>,
    #[serde(default, deserialize_with = "present")]
    pub(super) cwd: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(super) url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(super) headers: Option<Secrets>,
    #[serde(rename = "type", default, deserialize_with = "present")]
    pub(super) kind: Option<String>,
    #[serde(default, deserialize_with = "flag")]
    pub(super) forward_token: Option<bool>,
    /// Written by the clients that keep a server without running it. Only `true` leaves the
    /// server out; any other value is ignored, and nothing else of a server left out is read
    /// (its variables may be unset).
    #[serde(default)]
    pub(super) disabled: Option<Value>,
}

/// The `disco` key: disco's own settings, each `None` when not given.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Disco {
    #[serde(default, deserialize_with = "exposure")]
    pub(super) exposure: Option<ExposureKind>,
    #[serde(default, deserialize_with = "present")]
    pub(super) pinned: Option<Strings>,
    #[serde(default, deserialize_with = "page_size")]
    pub(super) page_size: Option<usize>,
    #[serde(default, deserialize_with = "millis")]
    pub(super) call_timeout_ms: Option<Duration>,
    #[serde(default, deserialize_with = "millis")]
    pub(super) startup_timeout_ms: Option<Duration>,
    #[serde(default, deserialize_with = "millis")]
    pub(super) restart_initial_ms: Option<Duration>,
    #[serde(default, deserialize_with = "millis")]
    pub(super) restart_max_ms: Option<Duration>,
    /// `Some(None)`: `false`, no pings.
    #[serde(default, deserialize_with = "ping_interval")]
    pub(super) ping_interval_ms: Option<Option<Duration>>,
    #[serde(default, deserialize_with = "millis")]
    pub(super) ping_timeout_ms: Option<Duration>,
    #[serde(default, deserialize_with = "namespace")]
    pub(super) namespace: Option<Namespace>,
    #[serde(default, deserialize_with = "page_size")]
    pub(super) max_tools: Option<usize>,
    #[serde(default, deserialize_with = "page_size")]
    pub(super) max_message_bytes: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    pub(super) aliases: Option<ToolWords>,
    #[serde(default, deserialize_with = "present")]
    pub(super) keywords: Option<ToolWords>,
    #[serde(default, deserialize_with = "present")]
    pub(super) tokens: Option<Tokens>,
}

/// One entry of `disco.tokens`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Token {
    #[serde(default, deserialize_with = "present")]
    pub(super) token: Option<Secret>,
    #[serde(default, deserialize_with = "present")]
    pub(super) caller: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(super) servers: Option<Strings>,
    #[serde(default, deserialize_with = "present")]
    pub(super) tools: Option<Strings>,
}

/// A struct of the file, read from a JSON object only; anything else is refused with
/// [`Must::MUST`].
pub(super) struct Object<T>(pub(super) T);

/// What a struct of the file must be, said when something else is written in its place.
pub(super) trait Must {
    const MUST: &'static str;
}

impl Must for File {
    const MUST: &'static str = "the configuration must be a JSON object";
}

impl Must for Server {
    const MUST: &'static str = "must be an object with `command` or `url`";
}

impl Must for Disco {
    const MUST: &'static str = "must be an object";
}

impl Must for Token {
    const MUST: &'static str = "must be an object";
}

impl<'de, T: Deserialize<'de> + Must> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::object(d, T::MUST).map(Object)
    }
}

/// A string that may be a secret (a value of `env` or `headers`, a token): any other value is
/// refused without being shown.
pub(super) struct Secret(pub(super) String);

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::scalar(d, "must be a string", |v| match v {
            Value::String(s) => Some(Secret(s)),
            _ => None,
        })
    }
}

/// `env` or `headers`: names and their secret values.
pub(super) struct Secrets(pub(super) BTreeMap<String, Secret>);

impl<'de> Deserialize<'de> for Secrets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::object(d, "must be an object of strings").map(Secrets)
    }
}

/// An array of strings.
pub(super) struct Strings(pub(super) Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::array(d, "must be an array of strings").map(Strings)
    }
}

/// `aliases` or `keywords`: words by downstream tool name.
pub(super) struct ToolWords(pub(super) BTreeMap<String, Strings>);

impl<'de> Deserialize<'de> for ToolWords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::object(d, "must be an object: tool name -> array of strings").map(ToolWords)
    }
}

/// `disco.tokens`.
pub(super) struct Tokens(pub(super) Vec<Object<Token>>);

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::array(
            d,
            "must be an array of {\"token\", \"caller\", \"servers\", \"tools\"}",
        )
        .map(Tokens)
    }
}

/// `mcpServers`, in the order the file lists them: under `"namespace": "none"` the server
/// listed first keeps a name two servers offer. A name given twice is refused (JSON readers
/// differ on which of the two counts).
pub(super) struct Servers(pub(super) Vec<(String, Object<Server>)>);

impl<'de> Deserialize<'de> for Servers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = Servers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of servers by name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Servers, A::Error> {
                let mut servers: Vec<(String, Object<Server>)> = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if servers.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "server `{name}` is given twice"
                        )));
                    }
                    let server = map.next_value()?;
                    servers.push((name, server));
                }
                Ok(Servers(servers))
            }
        }
        d.deserialize_map(InOrder)
    }
}

fn servers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Servers>, D::Error> {
    shape::object(d, "must be an object of servers by name").map(Some)
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    shape::scalar(d, "must be true or false", |v| v.as_bool()).map(Some)
}

fn exposure<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ExposureKind>, D::Error> {
    shape::scalar(d, "must be \"all\" or \"search-first\"", |v| {
        match v.as_str()? {
            "all" => Some(ExposureKind::All),
            "search-first" => Some(ExposureKind::SearchFirst),
            _ => None,
        }
    })
    .map(Some)
}

fn namespace<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Namespace>, D::Error> {
    shape::scalar(
        d,
        "must be \"none\" or a separator of 1 to 4 characters (default \".\")",
        |v| match v.as_str()? {
            "none" => Some(Namespace::None),
            sep if !sep.is_empty() && sep.len() <= 4 => Some(Namespace::Separator(sep.into())),
            _ => None,
        },
    )
    .map(Some)
}

/// A whole number above zero.
fn positive(v: &Value) -> Option<u64> {
    v.as_u64().filter(|&n| n > 0)
}

fn page_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    shape::scalar(d, "must be a positive integer", |v| {
        positive(&v).and_then(|n| usize::try_from(n).ok())
    })
    .map(Some)
}

fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    shape::scalar(d, "must be a positive number of milliseconds", |v| {
        positive(&v).map(Duration::from_millis)
    })
    .map(Some)
}

fn ping_interval<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Duration>>, D::Error> {
    shape::scalar(
        d,
        "must be a positive number of milliseconds, or false to send no pings",
        |v| match v {
            Value::Bool(false) => Some(None),
            v => positive(&v).map(|n| Some(Duration::from_millis(n))),
        },
    )
    .map(Some)
}

/// Reads a JSON text. An error names the path of the value at fault (empty for the whole
/// file); a text that is not JSON says where it stops being JSON.
pub(super) fn read_json(text: &str) -> Result<File, ConfigError> {
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let read = Object::<File>::deserialize(serde_path_to_error::Deserializer::new(
        &mut json, &mut track,
    ));
    match read.and_then(|file| json.end().map(|()| file)) {
        Ok(Object(file)) => Ok(file),
        Err(e) => Err(error(&track.path(), &e)),
    }
}

/// The error of a read that failed at `path`.
fn error(path: &Path, e: &serde_json::Error) -> ConfigError {
    let key = key_of(path);
    let message = if e.is_data() {
        // The path says where; serde_json's line and column would say it twice.
        let text = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        text.strip_suffix(&at).unwrap_or(&text).to_string()
    } else {
        format!("not valid JSON: {e}")
    };
    ConfigError { key, message }
}

/// A path written as the configuration's keys are, `mcpServers.fs.args[2]`; the whole file is
/// the empty path. A key the text broke off inside (not JSON) is left out.
fn key_of(path: &Path) -> String {
    let mut key = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: name } | Segment::Enum { variant: name } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(name);
            }
            Segment::Unknown => break,
        }
    }
    key
}
