//! `${VAR}` and `${VAR:-default}` in the configuration's strings, from the environment; also
//! `${env:VAR}` (VS Code's and Cursor's spelling of `${VAR}`) and VS Code's `${input:ID}`,
//! which VS Code asks its user for and the gateway reads from `DISCO_INPUT_<ID>`.

use super::{err, ConfigError, Vars};

/// The environment variable `${input:ID}` is read from: `DISCO_INPUT_` and the ID in upper
/// case, each character other than an ASCII letter or digit written `_`.
pub(crate) fn input_variable(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("DISCO_INPUT_{id}")
}

/// Whether an error may quote the string being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Secrecy {
    /// A command, an argument, a URL, a directory: an error quotes what it cannot read.
    Plain,
    /// A value of `env` or `headers`, a token: an error says what is wrong, never a part of it
    /// (what sits between `${` and `}` may be the secret itself, written with a `$` in it).
    Secret,
}

/// `${VAR}` and `${VAR:-default}` from `env`; `$$` is a literal `$`. An unset variable without
/// a default is an error naming the key (and the variable, never its value).
pub(super) fn expand(
    text: &str,
    key: &str,
    env: Vars,
    secrecy: Secrecy,
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
            if let Some(id) = inner.strip_prefix("input:") {
                let var = input_variable(id);
                match env(&var) {
                    Some(v) => out.push_str(&v),
                    None => {
                        return Err(ConfigError {
                            server_only: true,
                            ..err(
                                key,
                                format!(
                                    "`${{input:{id}}}` is read from the environment variable \
                                     `{var}`, which is not set"
                                ),
                            )
                        })
                    }
                }
                rest = &body[end + 1..];
                continue;
            }
            if let Some(value) = predefined(inner, key, env, secrecy) {
                out.push_str(&value?);
                rest = &body[end + 1..];
                continue;
            }
            let inner = inner.strip_prefix("env:").unwrap_or(inner);
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(err(
                    key,
                    match secrecy {
                        Secrecy::Plain => format!("`${{{inner}}}` is not a variable name"),
                        Secrecy::Secret => "a `${...}` in this value is not a variable name \
                                            (not shown: the value is a secret)"
                            .to_string(),
                    },
                ));
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

/// VS Code's predefined variables that a server's entry may use (its variables reference,
/// <https://code.visualstudio.com/docs/reference/variables-reference>; Cursor reads them too):
/// `${userHome}` is `HOME`; `${workspaceFolder}` the gateway's working directory (the folder
/// the client starts it in), `${workspaceFolderBasename}` its last name; `${pathSeparator}`
/// and `${/}` the platform's separator. Another of VS Code's forms (`${config:NAME}`,
/// `${command:ID}`) refuses its server alone: the gateway cannot know its value. `None` for
/// anything else (a variable of the environment).
fn predefined(
    inner: &str,
    key: &str,
    env: Vars,
    secrecy: Secrecy,
) -> Option<Result<String, ConfigError>> {
    let server_only = |message: String| ConfigError {
        server_only: true,
        ..err(key, message)
    };
    let here = || {
        std::env::current_dir().map_err(|e| {
            server_only(format!(
                "`${{{inner}}}` is the gateway's working directory, which cannot be read: {e}"
            ))
        })
    };
    Some(match inner {
        "userHome" => env("HOME").ok_or_else(|| {
            server_only("`${userHome}` is read from `HOME`, which is not set".into())
        }),
        "workspaceFolder" => here().map(|d| d.to_string_lossy().into_owned()),
        "workspaceFolderBasename" => here().map(|d| {
            d.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        "pathSeparator" | "/" => Ok(std::path::MAIN_SEPARATOR_STR.to_string()),
        _ => {
            let (kind, rest) = inner.split_once(':')?;
            let vs_code = !kind.is_empty()
                && kind.chars().all(|c| c.is_ascii_alphabetic())
                && !matches!(kind, "env" | "input")
                && !rest.starts_with('-');
            if !vs_code {
                return None;
            }
            Err(server_only(match secrecy {
                Secrecy::Plain => {
                    format!("`${{{inner}}}` is VS Code's, and the gateway cannot read it")
                }
                Secrecy::Secret => format!(
                    "a `${{{kind}:...}}` in this value is VS Code's, and the gateway cannot read it"
                ),
            }))
        }
    })
}
