//! The configuration: the `mcpServers` JSON that desktop and editor clients already use, with
//! disco's own settings under `"disco"`. `${VAR}` (and `${VAR:-default}`) in any string of a
//! server or of the `disco` key is taken from the environment. Every error names the key.
//!
//! Read by hand over `serde_json::Value` rather than with `#[derive(Deserialize)]`: serde's
//! errors name a field but not where it sits, and an operator with ten servers needs
//! `mcpServers.search.headers.Authorization`, not `unknown field`.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::headers::{bearer, header, BadHeader};

/// One upstream server.
#[derive(Clone)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
}

/// How to reach an upstream. `env` and `headers` hold secrets: this type has no `Debug`
/// that could print them, and nothing logs them.
#[derive(Clone)]
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
    /// The upstream's own names; a name two servers share is an error naming both.
    None,
}

/// What tools/list shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExposureKind {
    All,
    SearchFirst,
}

/// One bearer token of HTTP callers: who it is, and which servers and tools it may see.
#[derive(Clone)]
pub struct TokenConfig {
    pub token: String,
    pub caller: String,
    /// `None`: every server.
    pub servers: Option<Vec<String>>,
    /// Tools seen besides those of `servers`, by their downstream names.
    pub tools: Vec<String>,
}

/// disco's own settings (the `"disco"` key).
#[derive(Clone)]
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
    /// Extra aliases and keywords by downstream tool name.
    pub aliases: BTreeMap<String, Vec<String>>,
    pub keywords: BTreeMap<String, Vec<String>>,
    pub tokens: Vec<TokenConfig>,
}

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
            aliases: BTreeMap::new(),
            keywords: BTreeMap::new(),
            tokens: Vec::new(),
        }
    }
}

#[derive(Clone)]
pub struct Config {
    /// Sorted by name.
    pub servers: Vec<ServerConfig>,
    pub disco: DiscoConfig,
}

/// A configuration error: the key it concerns and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
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
    ConfigError {
        key: key.to_string(),
        message: message.into(),
    }
}

impl Config {
    /// Reads a configuration, expanding `${VAR}` with `env`.
    pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| err("", format!("not valid JSON: {e}")))?;
        let Value::Object(root) = value else {
            return Err(err("", "the configuration must be a JSON object"));
        };
        for key in root.keys() {
            if key != "mcpServers" && key != "disco" {
                return Err(err(
                    key,
                    "unknown key (expected \"mcpServers\" and, optionally, \"disco\")",
                ));
            }
        }
        let servers = match root.get("mcpServers") {
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(err("mcpServers", "must be an object of servers by name")),
            None => return Err(err("mcpServers", "missing: no servers to serve")),
        };
        let mut list = Vec::new();
        for (name, spec) in servers {
            if let Some(server) = parse_server(name, spec, env)? {
                list.push(server);
            }
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let disco = match root.get("disco") {
            None => DiscoConfig::default(),
            Some(Value::Object(d)) => parse_disco(d, env)?,
            Some(_) => return Err(err("disco", "must be an object")),
        };
        let config = Config {
            servers: list,
            disco,
        };
        config.check_names()?;
        Ok(config)
    }

    /// A configuration of one stdio server, from a command line.
    pub fn single(name: String, command: String, args: Vec<String>) -> Config {
        Config {
            servers: vec![ServerConfig {
                name,
                transport: Transport::Stdio {
                    command,
                    args,
                    env: BTreeMap::new(),
                    cwd: None,
                },
            }],
            disco: DiscoConfig::default(),
        }
    }

    fn check_names(&self) -> Result<(), ConfigError> {
        if let Namespace::Separator(sep) = &self.disco.namespace {
            for s in &self.servers {
                if s.name.contains(sep.as_str()) {
                    return Err(err(
                        &format!("mcpServers.{}", s.name),
                        format!(
                            "a server name must not contain the namespace separator `{sep}` \
                             (its tools' names would be ambiguous)"
                        ),
                    ));
                }
            }
        }
        self.check_forwarding()?;
        for t in &self.disco.tokens {
            for s in t.servers.iter().flatten() {
                if !self.servers.iter().any(|c| &c.name == s) {
                    return Err(err(
                        &format!("disco.tokens.{}.servers", t.caller),
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
                let key = format!("mcpServers.{}.headers.{k}", s.name);
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

fn parse_server(
    name: &str,
    spec: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ServerConfig>, ConfigError> {
    let key = format!("mcpServers.{name}");
    if name.is_empty() {
        return Err(err("mcpServers", "a server name must not be empty"));
    }
    let Value::Object(obj) = spec else {
        return Err(err(&key, "must be an object with `command` or `url`"));
    };
    const KEYS: [&str; 8] = [
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "type",
        "forwardToken",
    ];
    for k in obj.keys() {
        if k == "disabled" {
            continue;
        }
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                &format!("{key}.{k}"),
                format!("unknown key (expected one of {})", KEYS.join(", ")),
            ));
        }
    }
    if obj.get("disabled") == Some(&Value::Bool(true)) {
        return Ok(None);
    }
    let string = |k: &str| -> Result<Option<String>, ConfigError> {
        match obj.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => expand(s, &format!("{key}.{k}"), env).map(Some),
            Some(_) => Err(err(&format!("{key}.{k}"), "must be a string")),
        }
    };
    let map = |k: &str| -> Result<BTreeMap<String, String>, ConfigError> {
        match obj.get(k) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(name, v)| {
                    let at = format!("{key}.{k}.{name}");
                    match v {
                        Value::String(s) => Ok((name.clone(), expand(s, &at, env)?)),
                        _ => Err(err(&at, "must be a string")),
                    }
                })
                .collect(),
            Some(_) => Err(err(&format!("{key}.{k}"), "must be an object of strings")),
        }
    };
    let kind = string("type")?;
    let command = string("command")?;
    let url = string("url")?;
    let transport = match (command, url) {
        (Some(_), Some(_)) => {
            return Err(err(&key, "has both `command` and `url`: give one"));
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
                    &format!("{key}.type"),
                    format!("`{k}` does not fit a server with `command` (use \"stdio\")"),
                ));
            }
            for k in ["headers", "forwardToken"] {
                if obj.contains_key(k) {
                    return Err(err(&format!("{key}.{k}"), "only for servers with `url`"));
                }
            }
            let args = match obj.get("args") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let at = format!("{key}.args[{i}]");
                        match v {
                            Value::String(s) => expand(s, &at, env),
                            _ => Err(err(&at, "must be a string")),
                        }
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(err(&format!("{key}.args"), "must be an array of strings")),
            };
            Transport::Stdio {
                command,
                args,
                env: map("env")?,
                cwd: string("cwd")?,
            }
        }
        (None, Some(url)) => {
            if let Some(k) = kind
                .as_deref()
                .filter(|k| !matches!(*k, "http" | "streamable-http" | "streamableHttp"))
            {
                return Err(err(
                    &format!("{key}.type"),
                    format!("`{k}` is not supported (Streamable HTTP: \"http\")"),
                ));
            }
            for k in ["args", "env", "cwd"] {
                if obj.contains_key(k) {
                    return Err(err(
                        &format!("{key}.{k}"),
                        "only for servers with `command`",
                    ));
                }
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(err(
                    &format!("{key}.url"),
                    "must be an http:// or https:// URL",
                ));
            }
            let forward_token = match obj.get("forwardToken") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(err(&format!("{key}.forwardToken"), "must be true or false"))
                }
            };
            Transport::Http {
                url,
                headers: map("headers")?,
                forward_token,
            }
        }
    };
    Ok(Some(ServerConfig {
        name: name.to_string(),
        transport,
    }))
}

fn parse_disco(
    d: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<DiscoConfig, ConfigError> {
    let mut c = DiscoConfig::default();
    for (k, v) in d {
        let key = format!("disco.{k}");
        let millis = |v: &Value| -> Result<Duration, ConfigError> {
            v.as_u64()
                .filter(|&n| n > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| err(&key, "must be a positive number of milliseconds"))
        };
        match k.as_str() {
            "exposure" => {
                c.exposure = match v.as_str() {
                    Some("all") => ExposureKind::All,
                    Some("search-first") => ExposureKind::SearchFirst,
                    _ => return Err(err(&key, "must be \"all\" or \"search-first\"")),
                }
            }
            "pinned" => c.pinned = strings(v, &key)?,
            "pageSize" => {
                c.page_size = v
                    .as_u64()
                    .filter(|&n| n > 0)
                    .map(|n| n as usize)
                    .ok_or_else(|| err(&key, "must be a positive integer"))?
            }
            "callTimeoutMs" => c.call_timeout = millis(v)?,
            "startupTimeoutMs" => c.startup_timeout = millis(v)?,
            "restartInitialMs" => c.restart_initial = millis(v)?,
            "restartMaxMs" => c.restart_max = millis(v)?,
            "pingIntervalMs" => {
                c.ping_interval = match v {
                    Value::Bool(false) => None,
                    _ => Some(millis(v).map_err(|_| {
                        err(
                            &key,
                            "must be a positive number of milliseconds, or false to send no pings",
                        )
                    })?),
                }
            }
            "pingTimeoutMs" => c.ping_timeout = millis(v)?,
            "namespace" => {
                c.namespace =
                    match v.as_str() {
                        Some("none") => Namespace::None,
                        Some(sep) if !sep.is_empty() && sep.len() <= 4 => {
                            Namespace::Separator(sep.to_string())
                        }
                        _ => return Err(err(
                            &key,
                            "must be \"none\" or a separator of 1 to 4 characters (default \".\")",
                        )),
                    }
            }
            "aliases" | "keywords" => {
                let Value::Object(m) = v else {
                    return Err(err(
                        &key,
                        "must be an object: tool name -> array of strings",
                    ));
                };
                let mut out = BTreeMap::new();
                for (tool, list) in m {
                    out.insert(tool.clone(), strings(list, &format!("{key}.{tool}"))?);
                }
                if k == "aliases" {
                    c.aliases = out;
                } else {
                    c.keywords = out;
                }
            }
            "tokens" => {
                let Value::Array(items) = v else {
                    return Err(err(
                        &key,
                        "must be an array of {\"token\", \"caller\", \"servers\", \"tools\"}",
                    ));
                };
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{key}[{i}]");
                    let Value::Object(t) = item else {
                        return Err(err(&at, "must be an object"));
                    };
                    for f in t.keys() {
                        if !["token", "caller", "servers", "tools"].contains(&f.as_str()) {
                            return Err(err(
                                &format!("{at}.{f}"),
                                "unknown key (expected token, caller, servers, tools)",
                            ));
                        }
                    }
                    let token = match t.get("token") {
                        Some(Value::String(s)) => expand(s, &format!("{at}.token"), env)?,
                        _ => return Err(err(&format!("{at}.token"), "missing or not a string")),
                    };
                    if token.is_empty() {
                        return Err(err(&format!("{at}.token"), "must not be empty"));
                    }
                    let caller = match t.get("caller") {
                        Some(Value::String(s)) if !s.is_empty() => s.clone(),
                        _ => return Err(err(&format!("{at}.caller"), "missing or not a string")),
                    };
                    let servers = match t.get("servers") {
                        None => None,
                        Some(v) => Some(strings(v, &format!("{at}.servers"))?),
                    };
                    let tools = match t.get("tools") {
                        None => Vec::new(),
                        Some(v) => strings(v, &format!("{at}.tools"))?,
                    };
                    c.tokens.push(TokenConfig {
                        token,
                        caller,
                        servers,
                        tools,
                    });
                }
            }
            _ => {
                return Err(err(
                    &key,
                    "unknown key (expected exposure, pinned, pageSize, callTimeoutMs, \
                     startupTimeoutMs, restartInitialMs, restartMaxMs, pingIntervalMs, \
                     pingTimeoutMs, namespace, aliases, keywords, tokens)",
                ))
            }
        }
    }
    if c.restart_initial > c.restart_max {
        if !d.contains_key("restartInitialMs") {
            // A cap below the default first wait: the cap is every wait.
            c.restart_initial = c.restart_max;
        } else {
            return Err(err(
                "disco.restartInitialMs",
                format!(
                    "must not be above restartMaxMs ({} ms{}): the first wait before a \
                     restart is the shortest",
                    c.restart_max.as_millis(),
                    if d.contains_key("restartMaxMs") {
                        ""
                    } else {
                        ", the default"
                    }
                ),
            ));
        }
    }
    Ok(c)
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, ConfigError> {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err(key, "must be an array of strings"))
            })
            .collect(),
        _ => Err(err(key, "must be an array of strings")),
    }
}

/// `${VAR}` and `${VAR:-default}` from `env`; `$$` is a literal `$`. An unset variable without
/// a default is an error naming the key (and the variable, never its value).
pub fn expand(
    text: &str,
    key: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(err(key, "`${` without its closing `}`"));
            };
            let inner = &body[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(err(key, format!("`${{{inner}}}` is not a variable name")));
            }
            match (env(name), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {
                    return Err(err(
                        key,
                        format!("the environment variable `{name}` is not set"),
                    ))
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let got = expand(text, "k", &env);
            match want {
                Ok(s) => assert_eq!(got, Ok(s.to_string()), "{text}"),
                Err(m) => assert_eq!(got, Err(err("k", m)), "{text}"),
            }
        }
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
        for value in ["true", "false", "1"] {
            let e = forwarding(
                &format!(r#"{{"command": "x", "forwardToken": {value}}}"#),
                "[]",
            )
            .err()
            .unwrap_or_else(|| panic!("a command server took forwardToken {value}"));
            assert_eq!(e.key, "mcpServers.a.forwardToken", "{value}: {e}");
            assert!(e.message.contains("`url`"), "{e}");
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
            .split_once("expected one of ")
            .map(|(_, l)| l.trim_end_matches(')').split(", ").collect())
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
        ];
        let mut keys: Vec<&str> = accepted.iter().map(|(k, _, _)| *k).collect();
        keys.sort();
        let mut listed_sorted = listed.clone();
        listed_sorted.sort();
        assert_eq!(listed_sorted, keys, "{e}");
        for (k, v, kind) in accepted {
            let base = if kind == "url" {
                r#""url": "http://h/mcp""#
            } else {
                r#""command": "x""#
            };
            let server = if k == kind {
                format!("{{{base}}}")
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
            (r#"{"servers": {}}"#, "servers"),
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
                r#"{"mcpServers": {"a": {"command": "x", "type": "sse"}}}"#,
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
                "disco.tokens.c.servers",
            ),
        ];
        for (text, key) in cases {
            match parse(text) {
                Ok(_) => panic!("{text} was accepted"),
                Err(e) => assert_eq!(e.key, key, "{text}: {e}"),
            }
        }
    }
}
