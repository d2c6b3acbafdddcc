//! The configuration: the file a desktop or editor client already keeps its MCP servers in,
//! read as it is (see `clients.rs` for whose, and the guide's "Configuration" for what each
//! key does here), with disco's own settings under `"disco"`. `${VAR}` (and
//! `${VAR:-default}`, `${env:VAR}`) in any string of a server and in `disco.tokens[].token` is
//! taken from the environment, and VS Code's `${input:ID}` from `DISCO_INPUT_<ID>`. Every error
//! names the path of its key (`mcpServers.search.headers.Authorization`) and never shows a
//! secret; what the gateway leaves out (another client's key, a top-level key of the client's
//! own) is a warning naming its key.
//!
//! `file.rs` reads the file as written (its keys, the shape of each value) with serde;
//! here is what it means: each server's transport and the rules across keys and servers.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::headers::{bearer, header, BadHeader};

pub mod clients;
mod expand;
mod file;
mod formats;
mod oauth;
mod shape;

use expand::{expand, Secrecy};
pub use oauth::{OAuthConfig, SignIn};

/// Where `${VAR}` is read from: the value of a variable by its name, `None` when it is unset.
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One upstream server. Equal entries are the same server to a reload (upstream/reload.rs).
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    /// The path of its entry in the file (`mcpServers.fs`, VS Code's `servers.fs`, Codex's
    /// `mcp_servers.fs`), for what is said of it.
    pub key: String,
    pub transport: Transport,
}

/// How to reach an upstream. `env` and `headers` hold secrets: this type has no `Debug`
/// that could print them, and nothing logs them.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// `"forwardToken": true`: each downstream caller's calls go over a connection of its
        /// own that carries the caller's bearer token instead of the configured
        /// `Authorization` (forward.rs).
        forward_token: bool,
        /// Whether the gateway signs in to it with OAuth as the user who ran
        /// `disco-gateway login <server>`, instead of sending a static `Authorization`.
        oauth: SignIn,
    },
}

impl Transport {
    /// What the log may say of it: the command and its arguments, or the URL (never the env
    /// or the headers).
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                let mut s = command.clone();
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s
            }
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("transport", &self.transport.describe())
            .finish_non_exhaustive()
    }
}

/// How upstream tools are named downstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Namespace {
    /// `server{sep}tool` (default `.`, the MCP naming rule's advice for aggregators).
    Separator(String),
    /// The upstream's own names; of two servers offering one name (or names that read the
    /// same), the one listed first in the configuration keeps it (provider.rs).
    None,
}

/// What tools/list shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExposureKind {
    All,
    SearchFirst,
}

/// What the gateway does with a tool whose definition is not the one approved (pins.rs):
/// `disco.onChange`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnChange {
    /// Out of tools/list and search; a call answers how to approve it (the default).
    Hold,
    /// Served as it is now; the change is logged.
    Serve,
}

/// One bearer token of HTTP callers: who it is, and which servers and tools it may see.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenConfig {
    pub token: String,
    pub caller: String,
    /// `None`: every server.
    pub servers: Option<Vec<String>>,
    /// Tools seen besides those of `servers`, by their downstream names.
    pub tools: Vec<String>,
}

/// disco's own settings (the `"disco"` key).
#[derive(Clone, PartialEq)]
pub struct DiscoConfig {
    pub exposure: ExposureKind,
    pub pinned: Vec<String>,
    pub page_size: usize,
    pub call_timeout: Duration,
    pub startup_timeout: Duration,
    pub restart_initial: Duration,
    pub restart_max: Duration,
    /// How often a running upstream is pinged; `None` when pings are off.
    pub ping_interval: Option<Duration>,
    /// How long a ping may take before it counts as missed.
    pub ping_timeout: Duration,
    pub namespace: Namespace,
    /// The most tools one server may list (`disco.maxTools`): one that lists more is refused,
    /// with a log line saying so, and the others serve.
    pub max_tools: usize,
    /// The largest message read from an upstream (`disco.maxMessageBytes`): a call whose
    /// answer is larger gets a tool error naming both sizes at once.
    pub max_message_bytes: usize,
    /// Extra aliases and keywords by downstream tool name.
    pub aliases: BTreeMap<String, Vec<String>>,
    pub keywords: BTreeMap<String, Vec<String>>,
    pub tokens: Vec<TokenConfig>,
    /// Where the gateway keeps its state (`disco.dataDir`); `None`: the default (pins.rs,
    /// `state_dir`).
    pub data_dir: Option<std::path::PathBuf>,
    pub on_change: OnChange,
    /// The rate limit per HTTP caller (`disco.rateLimit`); `None`: none.
    pub rate_limit: Option<disco_runtime::RateLimit>,
    /// `disco.metrics.listen`: the address of the Prometheus endpoint (`GET /metrics`);
    /// `None`: none is served.
    pub metrics: Option<std::net::SocketAddr>,
    /// `disco.semantic`: the directory of the semantic model `tool_search` ranks by besides
    /// the keywords (feature `semantic`; search.rs); `None`: keywords alone.
    pub semantic: Option<std::path::PathBuf>,
    /// `disco.learning.postgres`: the connection string of the PostgreSQL database a fleet of
    /// gateways keeps its discovery events in (feature `learning-postgres`; learning.rs),
    /// `${VAR}` expanded as a secret; `None`: `learning.sqlite` in the state directory.
    pub learning_postgres: Option<String>,
}

/// The operator's words for the tools, by downstream tool name: the aliases a call may use
/// (`disco.aliases`) and the keywords search weighs (`disco.keywords`). Unlike the rest of the
/// `disco` section they are read again with the configuration file, since that is where
/// `disco-gateway report`'s findings are pasted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    pub aliases: BTreeMap<String, Vec<String>>,
    pub keywords: BTreeMap<String, Vec<String>>,
}

impl Labels {
    /// Those `disco` gives.
    pub fn of(disco: &DiscoConfig) -> Labels {
        Labels {
            aliases: disco.aliases.clone(),
            keywords: disco.keywords.clone(),
        }
    }
}

impl DiscoConfig {
    /// Every alias leads to one tool, as the catalog requires (catalog/conflicts.rs): an alias
    /// that is its own tool's name, a meta-tool's name, or given twice (to one tool or to two)
    /// is refused here, naming its key, so that no file is taken whose catalog cannot be built
    /// (at start, or while the gateway serves: follow.rs keeps the running configuration).
    /// An alias that is another tool's name is no error: that tool is left out (provider.rs).
    fn check_aliases(&self) -> Result<(), ConfigError> {
        let search = disco_runtime::catalog::SearchOptions::default();
        let reserved = [search.search_name, search.execute_name];
        let mut given: BTreeMap<&str, String> = BTreeMap::new();
        for (tool, aliases) in &self.aliases {
            for (j, alias) in aliases.iter().enumerate() {
                let key = format!("disco.aliases.{tool}[{j}]");
                if alias == tool {
                    return Err(err(&key, format!("`{alias}` is the tool's own name")));
                }
                if reserved.contains(alias) {
                    return Err(err(
                        &key,
                        format!("`{alias}` is the name of a gateway tool"),
                    ));
                }
                if let Some(first) = given.insert(alias, key.clone()) {
                    return Err(err(&key, format!("`{alias}` is already given at {first}")));
                }
            }
        }
        Ok(())
    }
}

/// `disco.maxTools` by default: more than any server known lists, and within the gateway's
/// memory ceiling (79 MB resident at 5,000 tools, release: BENCHMARKS.md, "disco-gateway:
/// memory per upstream tool").
pub const DEFAULT_MAX_TOOLS: usize = 5_000;

impl Default for DiscoConfig {
    fn default() -> Self {
        DiscoConfig {
            exposure: ExposureKind::All,
            pinned: Vec::new(),
            page_size: 100,
            call_timeout: Duration::from_secs(60),
            startup_timeout: Duration::from_secs(10),
            restart_initial: Duration::from_millis(500),
            restart_max: Duration::from_secs(30),
            ping_interval: Some(Duration::from_secs(30)),
            ping_timeout: Duration::from_secs(10),
            namespace: Namespace::Separator(".".into()),
            max_tools: DEFAULT_MAX_TOOLS,
            max_message_bytes: crate::wire::MAX_LINE_BYTES,
            aliases: BTreeMap::new(),
            keywords: BTreeMap::new(),
            tokens: Vec::new(),
            data_dir: None,
            on_change: OnChange::Hold,
            rate_limit: None,
            metrics: None,
            semantic: None,
            learning_postgres: None,
        }
    }
}

#[derive(Clone)]
pub struct Config {
    /// In the order of the file: under `"namespace": "none"` the first keeps a name two
    /// servers offer.
    pub servers: Vec<ServerConfig>,
    pub disco: DiscoConfig,
    /// What the file says that the gateway leaves out, for the log.
    pub warnings: Vec<ConfigWarning>,
    /// The servers of the file that are not served (`"disabled": true`, or a kind the gateway
    /// does not serve), by name: `login` tells them from a name the file does not have.
    pub left_out: Vec<String>,
}

/// A configuration error: the JSON path of the key it concerns (`mcpServers.fs.args[2]`; empty
/// for the whole file) and what is wrong, never a secret's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
    /// The error refuses one server, not the file: a `${input:ID}` whose variable is unset.
    server_only: bool,
}

impl ConfigError {
    fn new(key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.to_string(),
            message: message.into(),
            server_only: false,
        }
    }
}

/// What the gateway leaves out of a configuration it serves: a key it does not read (named,
/// with why) or a server it does not serve (with why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// What a configuration file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// JSON, with comments and trailing commas (JSONC, as VS Code writes it).
    #[default]
    Json,
    /// TOML: Codex's `config.toml`.
    Toml,
}

impl Format {
    /// The format of the file at `path`: TOML when it ends in `.toml`, else JSON.
    pub fn of(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Format::Toml,
            _ => Format::Json,
        }
    }
}

/// Where a configuration's text comes from, for what its entries point at.
#[derive(Clone, Copy, Default)]
pub struct Origin<'a> {
    pub format: Format,
    /// The directory of the file: a relative `envFile` is found from it (else from the
    /// working directory).
    pub dir: Option<&'a std::path::Path>,
    /// The project the gateway serves: of `~/.claude.json`'s `projects`, the entry of this
    /// directory is read (with the file's own `mcpServers`), as Claude Code does.
    pub project: Option<&'a std::path::Path>,
    /// Gemini CLI's settings, where a server's `url` is a legacy SSE server's (its Streamable
    /// HTTP servers are written `httpUrl`): such a server is not served, with a warning.
    pub gemini: bool,
}

impl<'a> Origin<'a> {
    /// The origin of the file at `path`: its format by its name, its directory, and whether it
    /// is Gemini CLI's settings. No project.
    ///
    /// Gemini CLI's settings are `settings.json` in a `.gemini` directory (the user's, a
    /// project's: <https://geminicli.com/docs/tools/mcp-server/>), and its system settings
    /// and system defaults, `settings.json` and `system-defaults.json` in `/etc/gemini-cli`
    /// (Linux), `/Library/Application Support/GeminiCli` (macOS) or `C:\ProgramData\gemini-cli`
    /// (Windows): <https://geminicli.com/docs/reference/configuration/>, "Settings files".
    pub fn of(path: &'a std::path::Path) -> Origin<'a> {
        let name = path.file_name().and_then(|n| n.to_str());
        let dir = path
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str());
        let gemini = matches!(
            (dir, name),
            (Some(".gemini"), Some("settings.json"))
                | (
                    Some("gemini-cli" | "GeminiCli"),
                    Some("settings.json" | "system-defaults.json")
                )
        );
        Origin {
            format: Format::of(path),
            dir: path.parent(),
            project: None,
            gemini,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(key, message)
}

impl Config {
    /// Reads a JSON configuration, expanding `${VAR}` with `env`.
    pub fn parse(text: &str, env: Vars) -> Result<Config, ConfigError> {
        Config::read(text, env, Origin::default())
    }

    /// Reads a configuration from `origin` (its format, where it is), expanding `${VAR}` with
    /// `env`.
    pub fn read(text: &str, env: Vars, origin: Origin) -> Result<Config, ConfigError> {
        let json = match origin.format {
            Format::Json => formats::jsonc(text),
            Format::Toml => std::borrow::Cow::Owned(formats::toml_to_json(text)?),
        };
        let project = origin.project.map(|p| p.to_string_lossy().into_owned());
        let file = file::read(&json, origin.format, project.as_deref(), origin.gemini)?;
        Config::from_file(file, env, origin)
    }

    /// The configuration a file says, its variables expanded and its rules checked.
    fn from_file(file: file::File, vars: Vars, origin: Origin) -> Result<Config, ConfigError> {
        let Some(entries) = file.servers else {
            return Err(err(
                match origin.format {
                    Format::Json => "mcpServers",
                    Format::Toml => "mcp_servers",
                },
                "missing: no servers to serve",
            ));
        };
        let mut warnings = file.warnings;
        let mut servers = Vec::new();
        for entry in entries {
            if entry.name.is_empty() {
                return Err(err(&entry.section, "a server name must not be empty"));
            }
            match server(&entry, vars, origin, &mut warnings) {
                Ok(s) => servers.push(s),
                // This server alone is refused; the others serve.
                Err(e) if e.server_only => warnings.push(ConfigWarning {
                    key: e.key,
                    message: format!("`{}` is not served: {}", entry.name, e.message),
                }),
                Err(e) => return Err(e),
            }
        }
        let disco = match file.disco {
            None => DiscoConfig::default(),
            Some(d) => disco(d, vars)?,
        };
        let config = Config {
            servers,
            disco,
            warnings,
            left_out: file.left_out,
        };
        config.check_names()?;
        Ok(config)
    }

    /// A configuration of one stdio server, from a command line.
    pub fn single(name: String, command: String, args: Vec<String>) -> Config {
        Config {
            servers: vec![ServerConfig {
                key: format!("mcpServers.{name}"),
                name,
                transport: Transport::Stdio {
                    command,
                    args,
                    env: BTreeMap::new(),
                    cwd: None,
                },
            }],
            disco: DiscoConfig::default(),
            warnings: Vec::new(),
            left_out: Vec::new(),
        }
    }

    fn check_names(&self) -> Result<(), ConfigError> {
        if let Namespace::Separator(sep) = &self.disco.namespace {
            for s in &self.servers {
                if s.name.contains(sep.as_str()) {
                    return Err(err(
                        &s.key,
                        format!(
                            "a server name must not contain the namespace separator `{sep}` \
                             (its tools' names would be ambiguous)"
                        ),
                    ));
                }
            }
        }
        self.check_forwarding()?;
        self.disco.check_aliases()?;
        for (i, t) in self.disco.tokens.iter().enumerate() {
            for (j, s) in t.servers.iter().flatten().enumerate() {
                if !self.servers.iter().any(|c| &c.name == s) {
                    return Err(err(
                        &format!("disco.tokens[{i}].servers[{j}]"),
                        format!("no server is named `{s}`"),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Config {
    /// The first server that forwards its callers' tokens, if any does.
    pub fn forwarding_server(&self) -> Option<&str> {
        self.servers
            .iter()
            .find(|s| {
                matches!(
                    s.transport,
                    Transport::Http {
                        forward_token: true,
                        ..
                    }
                )
            })
            .map(|s| s.name.as_str())
    }

    /// A forwarded call carries the token of its caller, and the gateway knows a caller by
    /// name only: with two tokens for one caller, which one to send would be a guess.
    fn check_forwarding(&self) -> Result<(), ConfigError> {
        let Some(server) = self.forwarding_server() else {
            return Ok(());
        };
        for (j, t) in self.disco.tokens.iter().enumerate() {
            if let Some(i) = self.disco.tokens[..j]
                .iter()
                .position(|o| o.caller == t.caller)
            {
                return Err(err(
                    &format!("disco.tokens[{j}].caller"),
                    format!(
                        "caller `{}` already has a token (disco.tokens[{i}]): \
                         `mcpServers.{server}.forwardToken` sends each caller's own token \
                         upstream, so each caller needs exactly one token",
                        t.caller
                    ),
                ));
            }
            // The token goes upstream in a header: one that cannot be a header's value is
            // said here, not on each call. The error names the key, never the token.
            if bearer(&t.token).is_none() {
                return Err(err(
                    &format!("disco.tokens[{j}].token"),
                    format!(
                        "`mcpServers.{server}.forwardToken` sends this token upstream in a \
                         header, and it is not a valid header value (no control characters)"
                    ),
                ));
            }
        }
        for s in &self.servers {
            let Transport::Http {
                headers,
                forward_token: true,
                ..
            } = &s.transport
            else {
                continue;
            };
            // Each caller's connection is opened with them: a bad one is said once, here.
            for (k, v) in headers {
                let key = format!("{}.headers.{k}", s.key);
                match header(k, v) {
                    Ok(_) => {}
                    Err(BadHeader::Name) => return Err(err(&key, "not a valid header name")),
                    Err(BadHeader::Value) => {
                        return Err(err(
                            &key,
                            "not a valid header value (no control characters)",
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

/// One server of the file (a disabled one is not read, file.rs): its transport from `command`
/// (stdio) or its URL (Streamable HTTP: `url`, Windsurf's `serverUrl`, Gemini CLI's
/// `httpUrl`), with what each allows.
fn server(
    entry: &file::Entry,
    vars: Vars,
    origin: Origin,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<ServerConfig, ConfigError> {
    let key = format!("{}.{}", entry.section, entry.name);
    let s = &entry.server;
    let at = |k: &str| format!("{key}.{k}");
    let text = |k: &str, v: &Option<file::Text>| {
        v.as_ref()
            .map(|v| expand(&v.0, &at(k), vars, Secrecy::Plain))
            .transpose()
    };
    let kind = text("type", &s.kind)?;
    let command = text("command", &s.command)?;
    // Gemini CLI takes `httpUrl` (Streamable HTTP) over `url` (SSE) when an entry has both: so
    // does the gateway, saying that `url` is not read.
    let gemini_both = origin.gemini && s.url.is_some() && s.http_url.is_some();
    if gemini_both {
        warnings.push(ConfigWarning {
            key: at("url"),
            message: "not read: Gemini CLI connects to `httpUrl` (Streamable HTTP) when both \
                      are given"
                .into(),
        });
    }
    let urls: Vec<(&str, &file::Text)> = [
        ("url", &s.url),
        ("serverUrl", &s.server_url),
        ("httpUrl", &s.http_url),
    ]
    .into_iter()
    .filter(|(k, _)| !(gemini_both && *k == "url"))
    .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
    .collect();
    if let [(first, _), (second, _), ..] = urls[..] {
        return Err(err(
            &key,
            format!("has both `{first}` and `{second}`: give one"),
        ));
    }
    let url = match urls.first() {
        Some((k, v)) => Some((*k, expand(&v.0, &at(k), vars, Secrecy::Plain)?)),
        None => None,
    };
    let transport = match (command, url) {
        (Some(_), Some((k, _))) => {
            return Err(err(&key, format!("has both `command` and `{k}`: give one")));
        }
        (None, None) => {
            return Err(err(
                &key,
                "has neither `command` (a stdio server) nor `url` (a Streamable HTTP server)",
            ))
        }
        (Some(command), None) => {
            if let Some(k) = kind.as_deref().filter(|k| *k != "stdio") {
                return Err(err(
                    &at("type"),
                    format!("`{k}` does not fit a server with `command` (use \"stdio\")"),
                ));
            }
            only(
                &at,
                "a URL",
                [
                    ("headers", s.headers.is_some()),
                    ("forwardToken", s.forward_token.is_some()),
                    ("http_headers", s.http_headers.is_some()),
                    ("env_http_headers", s.env_http_headers.is_some()),
                    ("bearer_token_env_var", s.bearer_token_env_var.is_some()),
                    ("oauth", s.oauth.is_some()),
                    ("scopes", s.scopes.is_some()),
                ],
            )?;
            let args = s.args.as_ref().map(|a| a.0.as_slice()).unwrap_or_default();
            let args = args
                .iter()
                .enumerate()
                .map(|(i, a)| expand(a, &format!("{key}.args[{i}]"), vars, Secrecy::Plain))
                .collect::<Result<_, _>>()?;
            let mut env = match &s.env_file {
                Some(path) => env_file(&at("envFile"), path, vars, origin)?,
                None => BTreeMap::new(),
            };
            // `env` is written beside the server: it wins over the file's values.
            env.extend(secrets(&at("env"), &s.env, vars)?);
            // Codex's `env_vars`: these of the gateway's own variables too (an unset one is
            // not set), under what `env` says.
            for name in s.env_vars.iter().flat_map(|n| n.0.iter()) {
                if let (false, Some(value)) = (env.contains_key(name), vars(name)) {
                    env.insert(name.clone(), value);
                }
            }
            Transport::Stdio {
                command,
                args,
                env,
                cwd: text("cwd", &s.cwd)?,
            }
        }
        (None, Some((url_key, url))) => {
            if let Some(k) = kind
                .as_deref()
                .filter(|k| !matches!(*k, "http" | "streamable-http" | "streamableHttp"))
            {
                return Err(err(
                    &at("type"),
                    format!("`{k}` is not supported (Streamable HTTP: \"http\")"),
                ));
            }
            only(
                &at,
                "`command`",
                [
                    ("args", s.args.is_some()),
                    ("env", s.env.is_some()),
                    ("envFile", s.env_file.is_some()),
                    ("env_vars", s.env_vars.is_some()),
                    ("cwd", s.cwd.is_some()),
                ],
            )?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(err(&at(url_key), "must be an http:// or https:// URL"));
            }
            let mut headers = secrets(&at("headers"), &s.headers, vars)?;
            headers.extend(secrets(&at("http_headers"), &s.http_headers, vars)?);
            // Codex's headers whose values are the named variables' values.
            for (name, var) in s.env_http_headers.iter().flat_map(|h| &h.0) {
                let k = format!("{key}.env_http_headers.{name}");
                headers.insert(name.clone(), variable(&k, &var.0, vars)?);
            }
            if let Some(var) = &s.bearer_token_env_var {
                let token = variable(&at("bearer_token_env_var"), &var.0, vars)?;
                headers.insert("Authorization".into(), format!("Bearer {token}"));
            }
            let forward_token = s.forward_token.unwrap_or(false);
            let mut asked = match &s.oauth {
                None | Some(serde_json::Value::Null) => None,
                Some(value) => {
                    let (oauth, said) = oauth::read(&at("oauth"), value, vars)?;
                    warnings.extend(said);
                    Some(oauth)
                }
            };
            // Codex's `scopes`: the server signs in with OAuth (`codex mcp login`), as here.
            if let (None | Some(None), Some(scopes)) = (&asked, &s.scopes) {
                asked = Some(Some(OAuthConfig {
                    scopes: scopes.0.clone(),
                    ..OAuthConfig::default()
                }));
            }
            let authorization = headers
                .keys()
                .find(|k| k.eq_ignore_ascii_case("authorization"));
            let (oauth, said) = oauth::sign_in(
                &at("oauth"),
                &entry.name,
                asked,
                forward_token,
                authorization.map(String::as_str),
            )?;
            warnings.extend(said);
            Transport::Http {
                url,
                headers,
                forward_token,
                oauth,
            }
        }
    };
    Ok(ServerConfig {
        name: entry.name.clone(),
        key,
        transport,
    })
}

/// The value of the environment variable `name`, for `key` (never shown).
fn variable(key: &str, name: &str, vars: Vars) -> Result<String, ConfigError> {
    vars(name).ok_or_else(|| err(key, format!("the environment variable `{name}` is not set")))
}

/// The variables of an `envFile` (`KEY=VALUE` lines, as Cursor and VS Code read them): its
/// path expanded, a relative one found from the configuration's directory. An error names the
/// file and what is wrong, never a line of it (its values are secrets).
fn env_file(
    key: &str,
    path: &file::Text,
    vars: Vars,
    origin: Origin,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let path = expand(&path.0, key, vars, Secrecy::Plain)?;
    let full = match origin.dir {
        Some(dir) => dir.join(&path),
        None => std::path::PathBuf::from(&path),
    };
    // dotenvy reads the format as the dotenv tools do (quotes, `export`, comments), which a
    // hand-written reader would only approximate.
    // A file that is not there (yet) refuses its server alone; the others serve.
    let lines = dotenvy::from_path_iter(&full).map_err(|e| ConfigError {
        server_only: true,
        ..err(
            key,
            format!("cannot read `{}`: {}", full.display(), said(&e)),
        )
    })?;
    lines
        .map(|line| line.map_err(|e| err(key, format!("`{}`: {}", full.display(), said(&e)))))
        .collect()
}

/// What went wrong reading an env file, without the line at fault.
fn said(e: &dotenvy::Error) -> String {
    match e {
        dotenvy::Error::LineParse(_, at) => {
            format!("not a `KEY=VALUE` line (at byte {at} of the line; not shown: it may hold a secret)")
        }
        dotenvy::Error::Io(e) => e.to_string(),
        dotenvy::Error::EnvVar(e) => e.to_string(),
        _ => "not readable".to_string(),
    }
}

/// Refuses the first of `given` that is there: a key only for servers with `what`.
fn only<const N: usize>(
    at: &dyn Fn(&str) -> String,
    what: &str,
    given: [(&str, bool); N],
) -> Result<(), ConfigError> {
    match given.iter().find(|(_, there)| *there) {
        Some((k, _)) => Err(err(&at(k), format!("only for servers with {what}"))),
        None => Ok(()),
    }
}

/// `env` or `headers`, each value expanded (an error names the entry, never its value).
fn secrets(
    key: &str,
    given: &Option<file::Secrets>,
    vars: Vars,
) -> Result<BTreeMap<String, String>, ConfigError> {
    given
        .iter()
        .flat_map(|s| &s.0)
        .map(|(name, v)| {
            let value = expand(&v.0, &format!("{key}.{name}"), vars, Secrecy::Secret)?;
            Ok((name.clone(), value))
        })
        .collect()
}

/// The `disco` key over the defaults.
fn disco(d: file::Disco, vars: Vars) -> Result<DiscoConfig, ConfigError> {
    let default = DiscoConfig::default();
    let restart_max = d.restart_max_ms.unwrap_or(default.restart_max);
    let restart_initial = match d.restart_initial_ms {
        // A cap below the default first wait: the cap is every wait.
        None => default.restart_initial.min(restart_max),
        Some(initial) if initial > restart_max => {
            return Err(err(
                "disco.restartInitialMs",
                format!(
                    "must not be above restartMaxMs ({} ms{}): the first wait before a \
                     restart is the shortest",
                    restart_max.as_millis(),
                    if d.restart_max_ms.is_some() {
                        ""
                    } else {
                        ", the default"
                    }
                ),
            ));
        }
        Some(initial) => initial,
    };
    let words = |w: Option<file::ToolWords>| -> BTreeMap<String, Vec<String>> {
        w.map(|w| w.0.into_iter().map(|(tool, s)| (tool, s.0)).collect())
            .unwrap_or_default()
    };
    let tokens = d.tokens.map(|t| t.0).unwrap_or_default();
    Ok(DiscoConfig {
        exposure: d.exposure.unwrap_or(default.exposure),
        pinned: d.pinned.map(|p| p.0).unwrap_or(default.pinned),
        page_size: d.page_size.unwrap_or(default.page_size),
        call_timeout: d.call_timeout_ms.unwrap_or(default.call_timeout),
        startup_timeout: d.startup_timeout_ms.unwrap_or(default.startup_timeout),
        restart_initial,
        restart_max,
        ping_interval: d.ping_interval_ms.unwrap_or(default.ping_interval),
        ping_timeout: d.ping_timeout_ms.unwrap_or(default.ping_timeout),
        namespace: d.namespace.unwrap_or(default.namespace),
        max_tools: d.max_tools.unwrap_or(default.max_tools),
        max_message_bytes: d.max_message_bytes.unwrap_or(default.max_message_bytes),
        aliases: words(d.aliases),
        keywords: words(d.keywords),
        tokens: tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| token(&format!("disco.tokens[{i}]"), t.0, vars))
            .collect::<Result<_, _>>()?,
        data_dir: d
            .data_dir
            .map(|dir| absolute(&dir.0, "disco.dataDir", vars))
            .transpose()?,
        on_change: d.on_change.unwrap_or(default.on_change),
        rate_limit: d.rate_limit,
        metrics: match d.metrics.map(|m| m.0.listen) {
            None => None,
            Some(None) => return Err(err("disco.metrics.listen", "missing")),
            Some(Some(listen)) => {
                let at = "disco.metrics.listen";
                let addr = expand(&listen.0, at, vars, Secrecy::Plain)?;
                Some(
                    addr.parse().map_err(|_| {
                        err(at, "must be an address and port, such as 127.0.0.1:9464")
                    })?,
                )
            }
        },
        semantic: d
            .semantic
            .map(|dir| absolute(&dir.0, "disco.semantic", vars))
            .transpose()?,
        learning_postgres: match d.learning.map(|l| l.0.postgres) {
            None => None,
            Some(None) => return Err(err("disco.learning.postgres", "missing")),
            Some(Some(text)) => {
                let at = "disco.learning.postgres";
                let connection = expand(&text.0, at, vars, Secrecy::Secret)?;
                if connection.trim().is_empty() {
                    return Err(err(at, "must not be empty"));
                }
                Some(connection)
            }
        },
    })
}

/// A directory of the `disco` key: `${VAR}` expanded, and absolute, since the gateway's
/// working directory is whatever its client's is.
fn absolute(text: &str, at: &str, vars: Vars) -> Result<std::path::PathBuf, ConfigError> {
    let dir = expand(text, at, vars, Secrecy::Plain)?;
    if !std::path::Path::new(&dir).is_absolute() {
        return Err(err(
            at,
            "must be an absolute path (the gateway's working directory is its client's)",
        ));
    }
    Ok(dir.into())
}

/// One caller's token; the token expanded, neither it nor the caller empty.
fn token(at: &str, t: file::Token, vars: Vars) -> Result<TokenConfig, ConfigError> {
    let key = |k: &str| format!("{at}.{k}");
    let token = match t.token {
        Some(token) => expand(&token.0, &key("token"), vars, Secrecy::Secret)?,
        None => return Err(err(&key("token"), "missing")),
    };
    if token.is_empty() {
        return Err(err(&key("token"), "must not be empty"));
    }
    let caller = match t.caller.map(|c| c.0) {
        Some(caller) if !caller.is_empty() => caller,
        Some(_) => return Err(err(&key("caller"), "must not be empty")),
        None => return Err(err(&key("caller"), "missing")),
    };
    Ok(TokenConfig {
        token,
        caller,
        servers: t.servers.map(|s| s.0),
        tools: t.tools.map(|s| s.0).unwrap_or_default(),
    })
}

#[cfg(test)]
pub(crate) mod tests;
