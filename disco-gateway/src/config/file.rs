//! The configuration file as written: which keys it has and the shape of each value, read by
//! serde with the path of the value at fault in every error (`mcpServers.fs.args[2]: ...`).
//! What the keys mean together (a server's transport, `${VAR}`, the rules across servers) is
//! `config.rs`'s.
//!
//! Every key is recognised here and nowhere else: the top-level keys in [`FileReader`], a
//! server's by `clients.rs` (whose lists say which keys each client defines) and read into
//! [`Server`], disco's own in [`Disco`], a caller's token in [`Token`]. In `disco`, an unknown
//! key is an error naming it and the keys expected; in a server, a key no client defines is
//! such an error, and a key another client defines that the gateway does not read is a
//! warning naming it; a top-level key of a client's own file is a warning. A key given twice
//! is an error naming it.
//!
//! The file is read in order, and its first mistake is the error: the shape of each value is
//! checked as it is read, before the rules across keys are applied. A server is read in two
//! steps, its keys and then its values, because a server left out with `"disabled": true` has
//! its keys checked (a misspelt key is a mistake wherever it is) and its values not read at all
//! (they may be variables that are not set here, or values only another client reads).
//! Structs, maps and lists are read through `shape.rs`: only their own shape is taken, each key
//! of an object once, and a refused value is never shown (a token or a header's value may be
//! one).

use std::cell::{Cell, RefCell};
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

use super::clients::{self, Use};
use super::shape::{self, present, InObject};
use super::{ConfigError, ConfigWarning, ExposureKind, Format, Namespace, OnChange};

/// The whole file.
pub(super) struct File {
    /// Each server that is served, in the file's order; `None` when the file has no section
    /// of servers.
    pub(super) servers: Option<Vec<Entry>>,
    pub(super) disco: Option<Disco>,
    /// What the file says that the gateway leaves out.
    pub(super) warnings: Vec<ConfigWarning>,
    /// The servers not served (disabled, or skipped with a warning), by name.
    pub(super) left_out: Vec<String>,
}

/// One server of the file, with the path of the section it is in (`mcpServers`, VS Code's
/// `servers`, Codex's `mcp_servers`, `projects./home/me/app.mcpServers`).
pub(super) struct Entry {
    pub(super) section: String,
    pub(super) name: String,
    pub(super) server: Server,
}

/// One server entry that is not disabled, as written; its keys were checked by
/// [`KeysReader`], so each key here is one the gateway reads, and the others (which it
/// ignores) are skipped. Which keys go together (`command` or a URL, and what each allows) is
/// `config.rs`'s.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Server {
    #[serde(default, deserialize_with = "present")]
    pub(super) command: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) args: Option<Strings>,
    #[serde(default, deserialize_with = "env")]
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
    /// Cursor's and VS Code's file of `KEY=VALUE` lines for the server's environment.
    #[serde(default, deserialize_with = "present")]
    pub(super) env_file: Option<Text>,
    /// Windsurf's `url`.
    #[serde(default, deserialize_with = "present")]
    pub(super) server_url: Option<Text>,
    /// Gemini CLI's Streamable HTTP `url` (its own `url` is SSE, not served: [`KeysReader`]).
    #[serde(default, deserialize_with = "present")]
    pub(super) http_url: Option<Text>,
    /// Codex's `headers`.
    #[serde(rename = "http_headers", default, deserialize_with = "present")]
    pub(super) http_headers: Option<Secrets>,
    /// Codex: headers whose values are the named environment variables' values.
    #[serde(rename = "env_http_headers", default, deserialize_with = "present")]
    pub(super) env_http_headers: Option<Secrets>,
    /// Codex: the names of the gateway's environment variables a stdio server is given
    /// besides the ones every server is (client.rs).
    #[serde(rename = "env_vars", default, deserialize_with = "present")]
    pub(super) env_vars: Option<Strings>,
    /// Codex: the environment variable whose value is sent as `Authorization: Bearer ...`.
    #[serde(rename = "bearer_token_env_var", default, deserialize_with = "present")]
    pub(super) bearer_token_env_var: Option<Text>,
    /// Codex: the scopes `codex mcp login` asks for. The server signs in with OAuth
    /// (`disco-gateway login`), asking for these; an empty list asks for those the server
    /// advertises.
    #[serde(default, deserialize_with = "present")]
    pub(super) scopes: Option<Strings>,
    /// OAuth instead of static headers: `true`, `false` or an object, read by `oauth.rs`.
    #[serde(default)]
    pub(super) oauth: Option<Value>,
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
    #[serde(default, deserialize_with = "present")]
    pub(super) metrics: Option<Object<Metrics>>,
    #[serde(default, deserialize_with = "present")]
    pub(super) semantic: Option<Text>,
    #[serde(default, deserialize_with = "present")]
    pub(super) learning: Option<Object<Learning>>,
}

/// `disco.learning`: where discovery events are kept when not in the state directory.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Learning {
    #[serde(default, deserialize_with = "present")]
    pub(super) postgres: Option<Text>,
}

/// `disco.metrics`: where Prometheus scrapes the gateway's counters.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Metrics {
    #[serde(default, deserialize_with = "present")]
    pub(super) listen: Option<Text>,
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

impl Must for Disco {
    const MUST: &'static str = "must be an object";
}

impl Must for Metrics {
    const MUST: &'static str = "must be an object with `listen`";
}

impl Must for Learning {
    const MUST: &'static str = "must be an object with `postgres`";
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

/// A value of `env`: a string, or (as VS Code's MCP configuration reference documents) a
/// number, its decimal text, or null, the name left out.
struct EnvValue(Option<Text>);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shape::scalar(d, "must be a string (or a number, or null)", |v| match v {
            Value::String(s) => Some(EnvValue(Some(Text(s)))),
            Value::Number(n) => Some(EnvValue(Some(Text(n.to_string())))),
            Value::Null => Some(EnvValue(None)),
            _ => None,
        })
    }
}

/// A server's `env`: its [`EnvValue`]s, a null one left out.
fn env<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Secrets>, D::Error> {
    let values: BTreeMap<String, EnvValue> = shape::object(d, "must be an object of strings")?;
    let set = values
        .into_iter()
        .filter_map(|(k, v)| v.0.map(|t| (k, t)))
        .collect();
    Ok(Some(Secrets(set)))
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

/// Reads a configuration's JSON text, written as `format` says (a TOML file was made JSON;
/// its keys are still its own); of `~/.claude.json`'s `projects`, the entry of `project` is
/// read; `gemini`: Gemini CLI's settings, where `url` is a legacy SSE server's. An error names
/// the path of the value at fault (empty for the whole file); a text that is not JSON says
/// where it stops being JSON.
pub(super) fn read(
    text: &str,
    format: Format,
    project: Option<&str>,
    gemini: bool,
) -> Result<File, ConfigError> {
    let reading = Reading {
        format,
        gemini,
        project,
        found: Cell::new(None),
        warnings: RefCell::new(Vec::new()),
        disabled: RefCell::new(None),
        left_out: RefCell::new(Vec::new()),
    };
    let file = InObject {
        must: File::MUST,
        seed: FileReader { reading: &reading },
    };
    // A server's error is found by a read of its own and kept in `found`; what stopped the
    // read of the file is only its echo.
    let mut file = read_at(text, "", file).map_err(|e| reading.found.take().unwrap_or(e))?;
    file.warnings = reading.warnings.take();
    file.left_out = reading.left_out.take();
    Ok(file)
}

/// What the read of one file carries along.
struct Reading<'a> {
    format: Format,
    /// Gemini CLI's settings: a server's `url` is a legacy SSE server's.
    gemini: bool,
    project: Option<&'a str>,
    /// Where the error of a server is kept (see [`read`]).
    found: Cell<Option<ConfigError>>,
    warnings: RefCell<Vec<ConfigWarning>>,
    /// Claude Code's `disabledMcpServers` of the project read: where, and the names.
    disabled: RefCell<Option<(String, Vec<String>)>>,
    /// The servers not served, by name.
    left_out: RefCell<Vec<String>>,
}

impl Reading<'_> {
    fn warn(&self, key: String, message: impl Into<String>) {
        self.warnings.borrow_mut().push(ConfigWarning {
            key,
            message: message.into(),
        });
    }
}

/// Reads `text` with `seed`, the whole text and nothing after it; an error's path is put after
/// `at`, the path of the text in the file.
fn read_at<'de, S: DeserializeSeed<'de>>(
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
    reading: &'a Reading<'a>,
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
        let reading = self.reading;
        let mut file = File {
            servers: None,
            disco: None,
            warnings: Vec::new(),
            left_out: Vec::new(),
        };
        let mut gemini: Option<Mcp> = None;
        // Each key once (shape.rs): nothing here is set twice.
        while let Some(key) = map.next_key::<String>()? {
            match (reading.format, key.as_str()) {
                // Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI; VS Code; Codex.
                (Format::Json, "mcpServers" | "servers") | (Format::Toml, "mcp_servers") => {
                    let servers = map.next_value_seed(servers_in(key.clone(), reading))?;
                    add(&mut file, servers, reading);
                }
                // VS Code's prompts for `${input:ID}`: the gateway reads `DISCO_INPUT_<ID>`.
                (Format::Json, "inputs") => {
                    map.next_value::<IgnoredAny>()?;
                }
                // Gemini CLI's `mcp.allowed` and `mcp.excluded`: the servers it starts.
                (Format::Json, "mcp") => {
                    let mcp = map.next_value::<Object<Mcp>>()?.0;
                    if mcp.allowed.is_some() || mcp.excluded.is_some() {
                        gemini = Some(mcp);
                    } else {
                        reading.warn(key, "not read by the gateway (the client's own setting)");
                    }
                }
                (Format::Json, "projects") => {
                    let servers = map.next_value_seed(ProjectsReader { reading })?;
                    add(&mut file, servers, reading);
                }
                (_, "disco") => file.disco = Some(map.next_value::<Object<Disco>>()?.0),
                _ => {
                    if let Some(meant) = misspelt(reading.format, &key) {
                        let error = ConfigError::new(
                            &key,
                            format!(
                                "unknown top-level key (did you mean `{meant}`?): a section the \
                                 gateway reads, misspelt, would be left out (its servers, or \
                                 its tokens with them the HTTP endpoint's authentication)"
                            ),
                        );
                        let said = error.to_string();
                        reading.found.set(Some(error));
                        return Err(A::Error::custom(said));
                    }
                    map.next_value::<IgnoredAny>()?;
                    reading.warn(key, "not read by the gateway (the client's own setting)");
                }
            }
        }
        if let (Some((at, names)), Some(servers)) = (reading.disabled.take(), file.servers.as_mut())
        {
            servers.retain(|e| {
                let off = names.contains(&e.name);
                if off {
                    reading.warn(
                        format!("{}.{}", e.section, e.name),
                        format!("not served: Claude Code's `{at}` names it"),
                    );
                    reading.left_out.borrow_mut().push(e.name.clone());
                }
                !off
            });
        }
        if let (Some(mcp), Some(servers)) = (gemini, file.servers.as_mut()) {
            servers.retain(|e| {
                let named =
                    |list: &Option<Strings>| list.as_ref().is_some_and(|l| l.0.contains(&e.name));
                let why = if named(&mcp.excluded) {
                    "Gemini CLI's `mcp.excluded` names it"
                } else if mcp.allowed.is_some() && !named(&mcp.allowed) {
                    "Gemini CLI's `mcp.allowed` does not name it"
                } else {
                    return true;
                };
                reading.warn(
                    format!("{}.{}", e.section, e.name),
                    format!("not served: {why}"),
                );
                reading.left_out.borrow_mut().push(e.name.clone());
                false
            });
        }
        Ok(file)
    }
}

/// The top-level key of the gateway's that `key` (not one itself) is a misspelling of: within
/// a Damerau-Levenshtein distance of 2 of it, or the same but for case. The clients' own
/// settings (Gemini CLI's `mcp`, `ui`, `tools`, Codex's `model`, ...) are none of them.
fn misspelt(format: Format, key: &str) -> Option<&'static str> {
    let keys: &[&'static str] = match format {
        Format::Json => &["disco", "mcpServers", "servers", "mcp_servers"],
        Format::Toml => &["disco", "mcp_servers", "mcpServers"],
    };
    keys.iter()
        .filter(|k| **k != key)
        .map(|k| (strsim::damerau_levenshtein(k, key), *k))
        .filter(|(d, k)| *d <= 2 || k.eq_ignore_ascii_case(key))
        .min()
        .map(|(_, k)| k)
}

/// Gemini CLI's `mcp` settings (<https://geminicli.com/docs/tools/mcp-server/>): the
/// servers it starts, by name, `excluded` over `allowed`; its other keys are its own.
#[derive(serde::Deserialize)]
struct Mcp {
    #[serde(default, deserialize_with = "present")]
    allowed: Option<Strings>,
    #[serde(default, deserialize_with = "present")]
    excluded: Option<Strings>,
}

impl Must for Mcp {
    const MUST: &'static str = "must be an object (Gemini CLI's `mcp` settings)";
}

/// Adds the servers of one section to the file's. A name given in two sections is served from
/// one, in the place of the first, and the other is a warning: a project's entry of
/// `~/.claude.json` over the user's (Claude Code's order, wherever the two stand in the
/// file), else the later section's.
fn add(file: &mut File, servers: Vec<Entry>, reading: &Reading) {
    let rank = |e: &Entry| e.section.starts_with("projects.");
    let all = file.servers.get_or_insert_with(Vec::new);
    for entry in servers {
        match all.iter_mut().find(|e| e.name == entry.name) {
            Some(earlier) => {
                // The earlier one stays only when it is a project's and this one is not.
                let keep = rank(earlier) && !rank(&entry);
                let (served, left) = if keep {
                    (&*earlier, &entry)
                } else {
                    (&entry, &*earlier)
                };
                reading.warn(
                    format!("{}.{}", left.section, left.name),
                    format!(
                        "not served: `{}.{}` is a server of the same name, and is served",
                        served.section, served.name
                    ),
                );
                if !keep {
                    *earlier = entry;
                }
            }
            None => all.push(entry),
        }
    }
}

/// The reader of a section of servers at `section`.
fn servers_in<'a>(section: String, reading: &'a Reading<'a>) -> InObject<ServersReader<'a>> {
    InObject {
        must: "must be an object of servers by name",
        seed: ServersReader { section, reading },
    }
}

/// Reads `~/.claude.json`'s `projects`: the servers of the one project the gateway serves, and
/// nothing of the others.
struct ProjectsReader<'a> {
    reading: &'a Reading<'a>,
}

impl<'de> DeserializeSeed<'de> for ProjectsReader<'_> {
    type Value = Vec<Entry>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        InObject {
            must: "must be an object of projects by directory",
            seed: Projects(self.reading),
        }
        .deserialize(d)
    }
}

struct Projects<'a>(&'a Reading<'a>);

impl<'de> DeserializeSeed<'de> for Projects<'_> {
    type Value = Vec<Entry>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Projects<'_> {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of projects by directory")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut servers = Vec::new();
        while let Some(dir) = map.next_key::<String>()? {
            if Some(dir.as_str()) == self.0.project {
                let project = InObject {
                    must: "must be an object",
                    seed: Project {
                        at: format!("projects.{dir}"),
                        reading: self.0,
                    },
                };
                servers = map.next_value_seed(project)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(servers)
    }
}

/// One project of `~/.claude.json`: its `mcpServers`; its other keys are Claude Code's own
/// record of the project, not read.
struct Project<'a> {
    at: String,
    reading: &'a Reading<'a>,
}

impl<'de> DeserializeSeed<'de> for Project<'_> {
    type Value = Vec<Entry>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Project<'_> {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut servers = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "mcpServers" {
                let section = format!("{}.mcpServers", self.at);
                servers = map.next_value_seed(servers_in(section, self.reading))?;
            } else if key == "disabledMcpServers" {
                // The servers turned off in this project (Claude Code's `/mcp`), by name.
                let names = map.next_value::<Strings>()?;
                *self.reading.disabled.borrow_mut() = Some((format!("{}.{key}", self.at), names.0));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(servers)
    }
}

/// Reads a section of servers: each entry as it comes, its keys, then, unless it is disabled
/// or skipped, its values. An entry is kept as written (its JSON text) while its keys are
/// read, and each step is a read of its own, so its error is put in `found` and the read of
/// the file stopped.
struct ServersReader<'a> {
    section: String,
    reading: &'a Reading<'a>,
}

impl<'de> DeserializeSeed<'de> for ServersReader<'_> {
    type Value = Vec<Entry>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ServersReader<'_> {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of servers by name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut servers = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            let entry: Box<RawValue> = map.next_value()?;
            let at = format!("{}.{name}", self.section);
            match server(&at, &entry, self.reading) {
                Ok(Some(server)) => servers.push(Entry {
                    section: self.section.clone(),
                    name,
                    server,
                }),
                Ok(None) => self.reading.left_out.borrow_mut().push(name),
                Err(e) => {
                    let said = e.to_string();
                    self.reading.found.set(Some(e));
                    return Err(A::Error::custom(said));
                }
            }
        }
        Ok(servers)
    }
}

/// One server entry at `at`, from its JSON text; `None` when it is disabled or skipped.
fn server(at: &str, entry: &RawValue, reading: &Reading) -> Result<Option<Server>, ConfigError> {
    let keys = InObject {
        must: Server::MUST,
        seed: KeysReader {
            format: reading.format,
            gemini: reading.gemini,
        },
    };
    let keys = read_at(entry.get(), at, keys)?;
    if keys.disabled {
        return Ok(None);
    }
    for (key, why) in keys.ignored {
        let whose = clients::defined_by(reading.format, &key);
        reading.warn(
            format!("{at}.{key}"),
            format!("{whose}'s key, not read by the gateway: {why}"),
        );
    }
    if let Some((key, why)) = keys.skipped {
        reading.warn(format!("{at}.{key}"), format!("not served: {why}"));
        return Ok(None);
    }
    let server: Object<Server> = read_at(entry.get(), at, PhantomData)?;
    Ok(Some(server.0))
}

/// What the keys of a server entry say before its values are read.
struct Keys {
    /// `"disabled": true`, or Codex's `enabled = false`: the server is left out, its values
    /// not read (they may be variables not set here, or values only another client reads).
    /// Any other value than a boolean is an error.
    disabled: bool,
    /// A server the gateway cannot serve as the client would, left out with a warning: its
    /// key, and why.
    skipped: Option<(&'static str, &'static str)>,
    /// The keys the gateway does not read, with why.
    ignored: Vec<(String, &'static str)>,
}

const SSE: &str = "a legacy SSE server (the gateway's MCP client, rmcp, speaks Streamable HTTP \
                   and stdio only)";
const GEMINI_SSE: &str = "a legacy SSE server: in Gemini CLI's settings `url` is SSE (a \
                          Streamable HTTP server is written `httpUrl`), and the gateway's MCP \
                          client, rmcp, speaks Streamable HTTP and stdio only";
const WS: &str = "a WebSocket server (the gateway's MCP client, rmcp, speaks Streamable HTTP and \
                  stdio only)";
const SANDBOXED: &str = "the client runs it in its sandbox, and the gateway would run it in \
                         none; serve it from the client, or remove `sandboxEnabled`";

/// Reads a server entry's keys: each one a client defines, or an error naming it.
struct KeysReader {
    format: Format,
    /// Gemini CLI's settings: `url` (unless `type` says `http`, or `httpUrl` is given too) is a
    /// legacy SSE server.
    gemini: bool,
}

impl<'de> DeserializeSeed<'de> for KeysReader {
    type Value = Keys;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Keys, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for KeysReader {
    type Value = Keys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Server::MUST)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
        let mut keys = Keys {
            disabled: false,
            skipped: None,
            ignored: Vec::new(),
        };
        // Gemini CLI's `url`, and whether `type` says it is Streamable HTTP.
        let (mut url, mut http) = (false, false);
        while let Some((key, used)) = map.next_key_seed(KeyReader {
            format: self.format,
        })? {
            match (self.format, key.as_str()) {
                // A boolean: `"disabled": "true"` is a mistake to show, not a server to serve.
                (Format::Json, "disabled") => keys.disabled |= map.next_value::<bool>()?,
                (Format::Toml, "enabled") => keys.disabled |= !map.next_value::<bool>()?,
                (Format::Json, "type") => {
                    let kind = map.next_value::<Value>()?;
                    http = matches!(kind.as_str(), Some("http" | "streamable-http"));
                    keys.skipped = keys.skipped.or(match kind.as_str() {
                        Some("sse") => Some(("type", SSE)),
                        // Claude Code's WebSocket transport.
                        Some("ws") => Some(("type", WS)),
                        _ => None,
                    });
                }
                // VS Code's sandbox of a stdio server (its MCP configuration reference): served
                // here, the server would run with none, so it is not served.
                (Format::Json, "sandboxEnabled") => {
                    if map.next_value::<Value>()? == Value::Bool(true) {
                        keys.skipped = keys.skipped.or(Some(("sandboxEnabled", SANDBOXED)));
                    }
                }
                _ => {
                    url |= key == "url";
                    // Gemini CLI's Streamable HTTP server, which it takes over `url`.
                    http |= key == "httpUrl";
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if let Use::Ignored(why) = used {
                keys.ignored.push((key, why));
            }
        }
        if self.gemini && url && !http {
            keys.skipped = keys.skipped.or(Some(("url", GEMINI_SSE)));
        }
        Ok(keys)
    }
}

/// One key of a server entry, with what the gateway does with it; a key no client defines is
/// refused here, while the key is read, so that the error is at its path.
struct KeyReader {
    format: Format,
}

impl<'de> DeserializeSeed<'de> for KeyReader {
    type Value = (String, Use);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(d)?;
        match clients::classify(self.format, &key) {
            Some(used) => Ok((key, used)),
            None => Err(D::Error::custom(clients::unknown(self.format, &key))),
        }
    }
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
    ConfigError::new(&key, message)
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
