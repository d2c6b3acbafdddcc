//! The keys of a server entry that each client's own documentation defines, and what the
//! gateway does with each: reads it, or leaves it out with a warning saying why. A key that no
//! client defines is a mistake (`comand`), refused naming it.
//!
//! Each list is the client's documentation as read, cited beside it; the tests hold every key
//! of every list to a use, and every use to a client.

use super::Format;

/// What the gateway does with a key of a server entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Read: it means the same to the gateway as to the client.
    Read,
    /// Not read, with the reason; the configuration says so in a warning naming the key.
    Ignored(&'static str),
}

/// A client whose configuration files the gateway reads, with the keys of a server entry its
/// documentation defines.
pub struct Client {
    pub name: &'static str,
    pub format: Format,
    /// Where the client documents its file.
    pub docs: &'static str,
    pub keys: &'static [&'static str],
}

/// Every client the gateway reads the files of.
pub const CLIENTS: &[Client] = &[
    Client {
        name: "Claude Desktop",
        format: Format::Json,
        // https://modelcontextprotocol.io/quickstart/user
        docs: "https://modelcontextprotocol.io/quickstart/user",
        keys: &["command", "args", "env"],
    },
    Client {
        name: "Claude Code",
        format: Format::Json,
        // https://code.claude.com/docs/en/mcp (`.mcp.json`, and `~/.claude.json`'s
        // `mcpServers` and `projects.<dir>.mcpServers`)
        docs: "https://code.claude.com/docs/en/mcp",
        keys: &[
            "type",
            "command",
            "args",
            "env",
            "cwd",
            "url",
            "headers",
            "headersHelper",
            "oauth",
        ],
    },
    Client {
        name: "Cursor",
        format: Format::Json,
        // https://cursor.com/docs/mcp
        docs: "https://cursor.com/docs/mcp",
        keys: &[
            "type", "command", "args", "env", "envFile", "url", "headers", "auth",
        ],
    },
    Client {
        name: "Windsurf",
        format: Format::Json,
        // https://docs.windsurf.com/windsurf/cascade/mcp
        docs: "https://docs.windsurf.com/windsurf/cascade/mcp",
        keys: &[
            "command",
            "args",
            "env",
            "serverUrl",
            "url",
            "headers",
            "disabled",
            "disabledTools",
        ],
    },
    Client {
        name: "Gemini CLI",
        format: Format::Json,
        // https://geminicli.com/docs/tools/mcp-server/
        docs: "https://geminicli.com/docs/tools/mcp-server/",
        keys: &[
            "type",
            "command",
            "args",
            "env",
            "cwd",
            "url",
            "httpUrl",
            "headers",
            "timeout",
            "trust",
            "description",
            "includeTools",
            "excludeTools",
            "oauth",
            "authProviderType",
            "targetAudience",
            "targetServiceAccount",
        ],
    },
    Client {
        name: "VS Code",
        format: Format::Json,
        // https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
        docs: "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
        keys: &[
            "type",
            "command",
            "args",
            "env",
            "envFile",
            "cwd",
            "url",
            "headers",
            "dev",
            "oauth",
            "sandboxEnabled",
            "sandbox",
        ],
    },
    Client {
        name: "disco-gateway",
        format: Format::Json,
        docs: "docs/guide/src/gateway.md",
        keys: &[
            "type",
            "command",
            "args",
            "env",
            "cwd",
            "url",
            "headers",
            "disabled",
            "forwardToken",
            "oauth",
        ],
    },
    Client {
        name: "Codex",
        format: Format::Toml,
        // https://developers.openai.com/codex/mcp (`[mcp_servers.<name>]` in
        // `~/.codex/config.toml`)
        docs: "https://developers.openai.com/codex/mcp",
        keys: &[
            "command",
            "args",
            "env",
            "env_vars",
            "cwd",
            "url",
            "bearer_token_env_var",
            "http_headers",
            "env_http_headers",
            "enabled",
            "required",
            "startup_timeout_sec",
            "startup_timeout_ms",
            "tool_timeout_sec",
            "enabled_tools",
            "disabled_tools",
            "scopes",
            "oauth_resource",
            "default_tools_approval_mode",
            "tools",
            "experimental_environment",
        ],
    },
];

const TIMEOUT: &str =
    "the gateway's own timeouts are `disco.callTimeoutMs` and `disco.startupTimeoutMs`";
const TOOLS: &str =
    "to hide a server's tools from callers, give them `disco.tokens` with the tools they may see";
const OAUTH: &str = "the gateway sends the static `headers`, or signs in with OAuth \
                     (`disco-gateway login`) as `oauth` says, or when the server asks";
const SANDBOX: &str = "the gateway runs its servers in no sandbox of its own";
const APPROVAL: &str = "the gateway asks no one before a call: its callers' clients do";

/// What the gateway does with each key of a JSON file's server entry.
const JSON_USE: &[(&str, Use)] = &[
    ("type", Use::Read),
    ("command", Use::Read),
    ("args", Use::Read),
    ("env", Use::Read),
    ("envFile", Use::Read),
    ("cwd", Use::Read),
    ("url", Use::Read),
    ("serverUrl", Use::Read),
    ("httpUrl", Use::Read),
    ("headers", Use::Read),
    ("disabled", Use::Read),
    ("forwardToken", Use::Read),
    (
        "headersHelper",
        Use::Ignored("the gateway runs no command to make headers: give `headers`"),
    ),
    // OAuth sign-in (oauth.rs), as Claude Code, VS Code and Gemini CLI write it.
    ("oauth", Use::Read),
    // A server VS Code runs sandboxed (`"sandboxEnabled": true`) is not served (file.rs).
    ("sandboxEnabled", Use::Ignored(SANDBOX)),
    ("sandbox", Use::Ignored(SANDBOX)),
    ("auth", Use::Ignored(OAUTH)),
    ("authProviderType", Use::Ignored(OAUTH)),
    ("targetAudience", Use::Ignored(OAUTH)),
    ("targetServiceAccount", Use::Ignored(OAUTH)),
    ("disabledTools", Use::Ignored(TOOLS)),
    ("includeTools", Use::Ignored(TOOLS)),
    ("excludeTools", Use::Ignored(TOOLS)),
    ("timeout", Use::Ignored(TIMEOUT)),
    ("trust", Use::Ignored(APPROVAL)),
    (
        "description",
        Use::Ignored("the gateway shows each tool's own description"),
    ),
    (
        "dev",
        Use::Ignored("the gateway does not watch or debug its servers"),
    ),
];

/// What the gateway does with each key of a TOML (Codex) file's server entry.
const TOML_USE: &[(&str, Use)] = &[
    ("command", Use::Read),
    ("args", Use::Read),
    ("env", Use::Read),
    // Passed to the server besides the variables every stdio server is given (client.rs).
    ("env_vars", Use::Read),
    ("cwd", Use::Read),
    ("url", Use::Read),
    ("bearer_token_env_var", Use::Read),
    ("http_headers", Use::Read),
    ("env_http_headers", Use::Read),
    ("enabled", Use::Read),
    (
        "required",
        Use::Ignored("the gateway serves the other servers when one fails"),
    ),
    ("startup_timeout_sec", Use::Ignored(TIMEOUT)),
    ("startup_timeout_ms", Use::Ignored(TIMEOUT)),
    ("tool_timeout_sec", Use::Ignored(TIMEOUT)),
    ("enabled_tools", Use::Ignored(TOOLS)),
    ("disabled_tools", Use::Ignored(TOOLS)),
    // Codex signs in with OAuth to a server that has `scopes`: the gateway does too.
    ("scopes", Use::Read),
    (
        "oauth_resource",
        Use::Ignored("the gateway asks for the server's own resource (RFC 8707)"),
    ),
    ("default_tools_approval_mode", Use::Ignored(APPROVAL)),
    ("tools", Use::Ignored(APPROVAL)),
    (
        "experimental_environment",
        Use::Ignored("the gateway starts its servers on its own machine"),
    ),
];

pub fn uses(format: Format) -> &'static [(&'static str, Use)] {
    match format {
        Format::Json => JSON_USE,
        Format::Toml => TOML_USE,
    }
}

/// What the gateway does with `key` of a server entry; `None` when no client defines it.
pub fn classify(format: Format, key: &str) -> Option<Use> {
    uses(format)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, u)| *u)
}

/// The clients whose documentation defines `key` of a server entry, by name.
pub fn defined_by(format: Format, key: &str) -> String {
    let names: Vec<&str> = CLIENTS
        .iter()
        .filter(|c| c.format == format && c.keys.contains(&key))
        .map(|c| c.name)
        .collect();
    names.join(", ")
}

/// The error for a key no client defines: it, the key it is nearest to, and the keys read.
pub fn unknown(format: Format, key: &str) -> String {
    let nearest = uses(format)
        .iter()
        .map(|(k, _)| (strsim::damerau_levenshtein(k, key), *k))
        .filter(|(d, _)| *d <= 2)
        .min();
    let read: Vec<String> = uses(format)
        .iter()
        .filter(|(_, u)| *u == Use::Read)
        .map(|(k, _)| format!("`{k}`"))
        .collect();
    let hint = match nearest {
        Some((_, k)) => format!(" (did you mean `{k}`?)"),
        None => String::new(),
    };
    format!(
        "unknown key `{key}`{hint}: no client's documentation defines it; a server's keys are {}",
        read.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of every client has a use in its format, and every use is of a client's key.
    #[test]
    fn every_documented_key_has_a_use_and_every_use_a_client() {
        for c in CLIENTS {
            for k in c.keys {
                assert!(
                    classify(c.format, k).is_some(),
                    "{}'s `{k}` ({}) has no use",
                    c.name,
                    c.docs
                );
            }
        }
        for format in [Format::Json, Format::Toml] {
            for (k, _) in uses(format) {
                assert!(
                    CLIENTS
                        .iter()
                        .any(|c| c.format == format && c.keys.contains(k)),
                    "`{k}` is in no client's list"
                );
            }
        }
    }
}
