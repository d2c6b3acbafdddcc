//! What a refused call is told: its problems, and the parameters the tool expects.

use super::nested;
use crate::tool::built::{CatalogTool, ParamInfo};

/// Keeps hostile keys from filling an error message.
pub(super) fn clip(s: &str) -> String {
    crate::util::clip(s, 64)
}

/// `Invalid arguments for tool: <problems>. Expected parameters: ...`
pub fn explain<H>(tool: &CatalogTool<H>, problems: &[String]) -> String {
    const MAX_PROBLEMS: usize = 10;
    let shown: Vec<&str> = problems
        .iter()
        .take(MAX_PROBLEMS)
        .map(String::as_str)
        .collect();
    let mut text = format!(
        "Invalid arguments for tool `{}`: {}",
        tool.name,
        shown.join("; ")
    );
    if problems.len() > MAX_PROBLEMS {
        text.push_str(&format!(" (and {} more)", problems.len() - MAX_PROBLEMS));
    }
    text.push('.');
    text.push_str(&expected_parameters(tool));
    text
}

/// The parameter list a model needs to retry: name, type, required or not, description.
pub fn expected_parameters<H>(tool: &CatalogTool<H>) -> String {
    if tool.params.is_empty() {
        return " This tool takes no parameters: send `{}`.".to_string();
    }
    let mut text = String::from(" Expected parameters:");
    let mut left = nested::MAX_LISTED_FIELDS;
    for p in &tool.params {
        let schema = nested::resolve(p.schema(), &tool.input_schema);
        let label = crate::tool::schema::type_label(schema);
        text.push_str(&format!("\n- `{}` ({label}", p.name));
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
        nested::list_fields(
            p.schema(),
            &tool.input_schema,
            &p.name,
            &mut left,
            &mut text,
        );
    }
    text
}

/// A short type name from a parameter's schema (see [`crate::tool::schema::type_label`]).
pub fn type_label(p: &ParamInfo) -> String {
    crate::tool::schema::type_label(p.schema())
}
