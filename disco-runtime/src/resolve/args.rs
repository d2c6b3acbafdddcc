//! Argument repair and validation: the arguments a model sent, made into the arguments the
//! handler expects, or an error result that tells the model exactly what to send instead.

use serde_json::{Map, Value};

use crate::catalog::{CatalogTool, ParamInfo};

/// One change made to the arguments, reported in the result's `_meta`.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgFix {
    /// A key was renamed to the parameter it stands for.
    Renamed {
        from: String,
        to: String,
        rule: &'static str,
    },
}

/// The arguments ready for the handler, and what was changed to get there.
#[derive(Debug, Default)]
pub struct Prepared {
    pub arguments: Map<String, Value>,
    pub fixes: Vec<ArgFix>,
}

/// Renames declared aliases, then refuses unknown keys and missing required parameters.
pub fn prepare(tool: &CatalogTool, mut args: Map<String, Value>) -> Result<Prepared, String> {
    let mut fixes = Vec::new();
    let mut problems = Vec::new();

    let keys: Vec<String> = args.keys().cloned().collect();
    for key in keys {
        if tool.param(&key).is_some() {
            continue;
        }
        if let Some(p) = tool.params.iter().find(|p| p.aliases.contains(&key)) {
            if args.contains_key(&p.name) {
                problems.push(format!(
                    "both `{}` and its alias `{key}` were given; send only `{}`",
                    p.name, p.name
                ));
                continue;
            }
            if let Some(v) = args.remove(&key) {
                args.insert(p.name.clone(), v);
                fixes.push(ArgFix::Renamed {
                    from: key,
                    to: p.name.clone(),
                    rule: "alias",
                });
            }
        }
    }

    let unknown: Vec<&String> = args.keys().filter(|k| tool.param(k).is_none()).collect();
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.iter().map(|k| format!("`{}`", clip(k))).collect();
        problems.push(format!("unknown parameter(s) {}", list.join(", ")));
    }
    let missing: Vec<String> = tool
        .params
        .iter()
        .filter(|p| p.required && args.get(&p.name).is_none_or(Value::is_null))
        .map(|p| format!("`{}`", p.name))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "missing required parameter(s) {}",
            missing.join(", ")
        ));
    }
    if problems.is_empty() {
        Ok(Prepared {
            arguments: args,
            fixes,
        })
    } else {
        Err(explain(tool, &problems))
    }
}

/// Keeps hostile keys from filling an error message.
fn clip(s: &str) -> String {
    const MAX: usize = 64;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}…")
    }
}

/// "Invalid arguments for `tool`: <problems>. Expected parameters: ..."
pub fn explain(tool: &CatalogTool, problems: &[String]) -> String {
    let mut text = format!(
        "Invalid arguments for tool `{}`: {}.",
        tool.name,
        problems.join("; ")
    );
    text.push_str(&expected_parameters(tool));
    text
}

/// The parameter list a model needs to retry: name, type, required or not, description.
pub fn expected_parameters(tool: &CatalogTool) -> String {
    if tool.params.is_empty() {
        return " This tool takes no parameters: send `{}`.".to_string();
    }
    let mut text = String::from(" Expected parameters:");
    for p in &tool.params {
        text.push_str(&format!("\n- `{}` ({}", p.name, type_label(p)));
        text.push_str(if p.required {
            ", required"
        } else {
            ", optional"
        });
        if let Some(d) = &p.default {
            text.push_str(&format!(", default {d}"));
        }
        text.push(')');
        if let Some(d) = &p.description {
            text.push_str(": ");
            text.push_str(d);
        }
    }
    text
}

/// A short type name from a parameter's schema: `string`, `integer`, `array of string`,
/// `one of "a", "b"`.
pub fn type_label(p: &ParamInfo) -> String {
    schema_label(&p.schema, 0)
}

fn schema_label(schema: &Value, depth: usize) -> String {
    let Value::Object(obj) = schema else {
        return "any".to_string();
    };
    if let Some(Value::Array(values)) = obj.get("enum") {
        let shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
        let more = if values.len() > 8 { ", …" } else { "" };
        return format!("one of {}{more}", shown.join(", "));
    }
    match obj.get("type") {
        Some(Value::String(t)) if t == "array" && depth < 2 => match obj.get("items") {
            Some(items) => format!("array of {}", schema_label(items, depth + 1)),
            None => "array".to_string(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if obj.contains_key("anyOf") || obj.contains_key("oneOf") => {
            "one of several shapes".into()
        }
        _ => "any".to_string(),
    }
}
