//! The configuration file as written: which keys it has and the shape of each value, read by
//! serde with the path of the value at fault in every error (`mcpServers.fs.args[2]: ...`).
//! What the keys mean together (a server's transport, `${VAR}`, the rules across servers) is
//! `config.rs`'s.
//!
//! Every key is recognised here and nowhere else: the top-level keys in [`Top`], a server's in
//! [`Keys`] and [`Server`], disco's own in [`Disco`], a caller's token in [`Token`]. An unknown
//! key is an error naming it and the keys expected; a key given twice is an error naming it.
//! Another client's file is read by widening these: an alias for a key another client spells
//! its own way, a field for a key it adds (which `config.rs` then reads or leaves alone).
//!
//! The file is read in order, and its first mistake is the error: the shape of each value is
//! checked as it is read, before the rules across keys are applied. A server is read in two
//! steps, its keys and then its values, because a server left out with `"disabled": true` has
//! its keys checked (a misspelt key is a mistake wherever it is) and its values not read at all
//! (they may be variables that are not set here, or values only another client reads).
//! Structs, maps and lists are read through `shape.rs`: only their own shape is taken, each key
//! of an object once, and a refused value is never shown (a token or a header's value may be
//! one).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::Value;
use serde_path_to_error::{Path, Segment};

use super::shape::{self, present, InObject};
use super::{ConfigError, ExposureKind, Namespace, OnChange};

/// The whole file.
pub(super) struct File {
    /// Each server that is not disabled, in the file's order; `None` when the key is absent.
    pub(super) mcp_servers: Option<Vec<(String, Server)>>,
    pub(super) disco: Option<Disco>,
}

/// The top-level keys.
#[derive(serde::Deserialize)]
#[serde(field_identifier)]
enum Top {
    #[serde(rename = "mcpServers")]
    McpServers,
    #[serde(rename = "disco")]
    Disco,
}

/// A server's keys alone, read before anything else of it (see the module's docs). The same
/// keys as [`Server`]; `tests.rs` holds the two lists together. Its fields are there to be
/// recognised, and only `disabled` is read.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Keys {
    #[serde(default)]
    command: Option<IgnoredAny>,
    #[serde(default)]
    args: Option<IgnoredAny>,
    #[serde(default)]
    env: Option<IgnoredAny>,
    #[serde(default)]
    cwd: Option<IgnoredAny>,
    #[serde(default)]
    url: Option<IgnoredAny>,
    #[serde(default)]
    headers: Option<IgnoredAny>,
    #[serde(rename = "type", default)]
    kind: Option<IgnoredAny>,
    #[serde(default)]
    forward_token: Option<IgnoredAny>,
    /// Written by the clients that keep a server without running it. Only `true` leaves the
    /// server out; any other value is ignored.
    #[serde(default)]
    disabled: Option<Value>,
}

/// One entry of `mcpServers` that is not disabled, as written. Which keys go together
/// (`command` or `url`, and what each allows) is `config.rs`'s.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Server {
    #[serde(default, deserialize_with = "present")]
    pub(super) command: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) args: Option<Strings>,
    #[serde(default, deserialize_with = "present")]
    pub(super) env: Option<Secrets>,
    #[serde(default, deserialize_with = "present")]
    pub(super) cwd: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) url: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) headers: Option<Secrets>,
    #[serde(rename = "type", default, deserialize_with = "present")]
    pub(super) kind: Option<Text>,
    #[serde(default, deserialize_with = "flag")]
    pub(super) forward_token: Option<bool>,
    /// Read in [`Keys`]; here it is only allowed.
    #[serde(rename = "disabled", default)]
    _disabled: Option<IgnoredAny>,
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
    #[serde(default, deserialize_with = "present")]
    pub(super) data_dir: Option<Text>,
    #[serde(default, deserialize_with = "on_change")]
    pub(super) on_change: Option<OnChange>,
    #[serde(default, deserialize_with = "rate_limit")]
    pub(super) rate_limit: Option<disco_runtime::RateLimit>,
}

/// One entry of `disco.tokens`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Token {
    #[serde(default, deserialize_with = "present")]
    pub(super) token: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) caller: Option<Text>,
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

impl Must for Keys {
    const MUST: &'static str = Server::MUST;
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

/// A string. Any other value is refused without being shown: any string of the file may be a
/// secret (a token, a value of `env` or `headers`, an argument that carries a key).
pub(super) struct Text(pub(super) String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::scalar(d, "must be a string", |v| match v {
            Value::String(s) => Some(Text(s)),
            _ => None,
        })
    }
}

/// `env` or `headers`: names and their secret values.
pub(super) struct Secrets(pub(super) BTreeMap<String, Text>);

impl<'de> Deserialize<'de> for Secrets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::object(d, "must be an object of strings").map(Secrets)
    }
}

/// An array of strings.
pub(super) struct Strings(pub(super) Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items: Vec<Text> = shape::array(d, "must be an array of strings")?;
        Ok(Strings(items.into_iter().map(|t| t.0).collect()))
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

fn on_change<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OnChange>, D::Error> {
    shape::scalar(d, "must be \"hold\" or \"serve\"", |v| {
        match v.as_str()? {
            "hold" => Some(OnChange::Hold),
            "serve" => Some(OnChange::Serve),
            _ => None,
        }
    })
    .map(Some)
}

/// `{"perSecond": n, "burst": n}`: `perSecond` a positive number, `burst` a positive integer
/// (default: one second's worth, at least 1).
fn rate_limit<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<disco_runtime::RateLimit>, D::Error> {
    shape::scalar(
        d,
        "must be {\"perSecond\": a positive number, \"burst\": a positive integer (optional)}",
        |v| {
            let obj = v.as_object()?;
            if obj.keys().any(|k| k != "perSecond" && k != "burst") {
                return None;
            }
            let per_second = obj
                .get("perSecond")?
                .as_f64()
                .filter(|r| *r > 0.0 && r.is_finite())?;
            let burst = match obj.get("burst") {
                Some(b) => u32::try_from(b.as_u64().filter(|b| *b > 0)?).ok()?,
                None => per_second.ceil().min(f64::from(u32::MAX)) as u32,
            };
            Some(disco_runtime::RateLimit::new(per_second, burst))
        },
    )
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

/// Reads a configuration's JSON text. An error names the path of the value at fault (empty for
/// the whole file); a text that is not JSON says where it stops being JSON.
pub(super) fn read_json(text: &str) -> Result<File, ConfigError> {
    let found = Cell::new(None);
    let file = InObject {
        must: File::MUST,
        seed: FileReader { found: &found },
    };
    // A server's error is found by a read of its own and kept in `found`; what stopped the
    // read of the file is only its echo.
    read(text, "", file).map_err(|e| found.take().unwrap_or(e))
}

/// Reads `text` with `seed`, the whole text and nothing after it; an error's path is put after
/// `at`, the path of the text in the file.
fn read<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    at: &str,
    seed: S,
) -> Result<S::Value, ConfigError> {
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let read = seed.deserialize(serde_path_to_error::Deserializer::new(
        &mut json, &mut track,
    ));
    read.and_then(|value| json.end().map(|()| value))
        .map_err(|e| error(at, &track.path(), &e))
}

/// Reads the top-level object into a [`File`].
struct FileReader<'a> {
    /// Where the error of a server is kept (see [`read_json`]).
    found: &'a Cell<Option<ConfigError>>,
}

impl<'de> DeserializeSeed<'de> for FileReader<'_> {
    type Value = File;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<File, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FileReader<'_> {
    type Value = File;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(File::MUST)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<File, A::Error> {
        let mut file = File {
            mcp_servers: None,
            disco: None,
        };
        // Each key once (shape.rs): nothing here is set twice.
        while let Some(key) = map.next_key()? {
            match key {
                Top::McpServers => {
                    let servers = InObject {
                        must: "must be an object of servers by name",
                        seed: ServersReader { found: self.found },
                    };
                    file.mcp_servers = Some(map.next_value_seed(servers)?);
                }
                Top::Disco => file.disco = Some(map.next_value::<Object<Disco>>()?.0),
            }
        }
        Ok(file)
    }
}

/// Reads `mcpServers`: each entry as it comes, its keys, then, unless it is disabled, its
/// values. An entry is kept as written (its JSON text) while its keys are read, and each step
/// is a read of its own, so its error is put in `found` and the read of the file stopped.
struct ServersReader<'a> {
    found: &'a Cell<Option<ConfigError>>,
}

impl<'de> DeserializeSeed<'de> for ServersReader<'_> {
    type Value = Vec<(String, Server)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ServersReader<'_> {
    type Value = Vec<(String, Server)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of servers by name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut servers = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            let entry: Box<RawValue> = map.next_value()?;
            match server(&name, &entry) {
                Ok(Some(server)) => servers.push((name, server)),
                Ok(None) => {}
                Err(e) => {
                    let said = e.to_string();
                    self.found.set(Some(e));
                    return Err(A::Error::custom(said));
                }
            }
        }
        Ok(servers)
    }
}

/// One entry of `mcpServers`, `name`'s, from its JSON text; `None` when it is disabled.
fn server(name: &str, entry: &RawValue) -> Result<Option<Server>, ConfigError> {
    let at = format!("mcpServers.{name}");
    let keys: Object<Keys> = read(entry.get(), &at, PhantomData)?;
    if keys.0.disabled == Some(Value::Bool(true)) {
        return Ok(None);
    }
    let server: Object<Server> = read(entry.get(), &at, PhantomData)?;
    Ok(Some(server.0))
}

/// The error of a read of the text at `at` that failed at `path` inside it.
fn error(at: &str, path: &Path, e: &serde_json::Error) -> ConfigError {
    let inside = key_of(path);
    let key = if at.is_empty() || inside.is_empty() || inside.starts_with('[') {
        format!("{at}{inside}")
    } else {
        format!("{at}.{inside}")
    };
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
