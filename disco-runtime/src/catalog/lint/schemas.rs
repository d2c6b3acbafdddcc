//! Input and output schemas: `$ref`, nullable branches, dialects, the root type, and schemas
//! that could not be compiled or were read in an older draft.

use super::*;

pub(super) const KNOWN_DIALECTS: &[&str] = &[
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
];

#[derive(Default)]
pub(super) struct SchemaScan {
    pub(super) refs: Vec<String>,
    pub(super) nullable: Vec<String>,
    pub(super) dialects: Vec<String>,
}

/// Walks a schema, skipping keywords whose values are data, not schemas.
pub(super) fn scan(value: &Value, path: &str, found: &mut SchemaScan) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj {
                let here = format!("{path}/{k}");
                match k.as_str() {
                    "$ref" => found
                        .refs
                        .push(format!("{path} -> {}", v.as_str().unwrap_or("?"))),
                    "$schema" => {
                        let s = v.as_str().unwrap_or("");
                        if !KNOWN_DIALECTS.contains(&s) {
                            found.dialects.push(format!("{path}: {v}"));
                        }
                    }
                    "type" => {
                        if let Value::Array(types) = v {
                            if types.iter().any(|t| t == "null") {
                                found.nullable.push(format!("{here} = {v}"));
                            }
                        }
                    }
                    "anyOf" | "oneOf" => {
                        if let Value::Array(branches) = v {
                            if branches
                                .iter()
                                .any(|b| b.get("type") == Some(&Value::String("null".into())))
                            {
                                found.nullable.push(format!("{here} has a null branch"));
                            }
                        }
                    }
                    _ => {}
                }
                match k.as_str() {
                    "enum" | "const" | "default" | "examples" | "$ref" | "$schema" | "type" => {}
                    _ => scan(v, &here, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                scan(v, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

pub(super) fn at_most_three(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(3)
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > 3 {
        text.push_str(&format!(" and {} more", items.len() - 3));
    }
    text
}

pub(super) fn schema_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
    received_schema_notes(tool, out);
    let input = Value::Object((*tool.input_schema).clone());
    let mut found = SchemaScan::default();
    scan(&input, "", &mut found);
    out.extend(input_refs(tool, &found.refs));
    out.extend(input_nullable(tool, &found.nullable));
    let mut dialects = found.dialects;
    let output = tool
        .output_schema
        .as_ref()
        .map(|o| Value::Object((**o).clone()));
    let mut out_found = SchemaScan::default();
    if let Some(o) = &output {
        scan(o, "", &mut out_found);
        dialects.extend(out_found.dialects.iter().map(|d| format!("output {d}")));
    }
    out.extend(dialect(tool, &dialects));
    for (which, schema) in [("input", Some(&input)), ("output", output.as_ref())] {
        out.extend(schema.and_then(|schema| not_object(tool, which, schema)));
    }
    out.extend(output_refs(tool, &out_found.refs));
}

/// What could not be done with the schemas as received, and how older drafts were read.
fn received_schema_notes(tool: &CatalogTool, out: &mut Vec<Finding>) {
    let name = Some(tool.name.as_str());
    for problem in &tool.schema_problems {
        out.push(finding(
            name,
            Severity::Warning,
            "schema-uncompiled",
            format!("the tool is served, but {problem}"),
            "fix the schema (the message says where the validator stopped), or declare the \
             draft it is written in with `$schema`"
                .into(),
        ));
    }
    for note in &tool.schema_notes {
        out.push(finding(
            name,
            Severity::Info,
            "schema-older-draft",
            note.clone(),
            "declare the draft with `$schema`, or rewrite the schema in draft 2020-12".into(),
        ));
    }
}

/// `$ref`s in the input schema (at `refs`).
fn input_refs(tool: &CatalogTool, refs: &[String]) -> Option<Finding> {
    if refs.is_empty() {
        return None;
    }
    let cause = if tool.recursive_schema {
        "a recursive parameter type keeps `$defs`, because it cannot be inlined"
    } else {
        "the tool uses the full schema form (`full_schema`), which keeps `$defs`"
    };
    Some(finding(
        Some(&tool.name),
        Severity::Error,
        "schema-ref",
        format!(
            "the input schema uses `$ref` ({}); {cause}. Clients in the field that turn \
             tool schemas into function-calling definitions reject or mangle `$ref`",
            at_most_three(refs)
        ),
        "use a non-recursive parameter type (e.g. a flat list with parent ids instead of a \
         tree), or drop `full_schema` so schemas are inlined"
            .into(),
    ))
}

/// Nullable types in the input schema (at `nullable`).
fn input_nullable(tool: &CatalogTool, nullable: &[String]) -> Option<Finding> {
    if nullable.is_empty() {
        return None;
    }
    Some(finding(
        Some(&tool.name),
        Severity::Error,
        "schema-nullable",
        format!(
            "the input schema allows `null` ({}); some model providers reject type arrays \
             with \"null\" in function parameters",
            at_most_three(nullable)
        ),
        "use the portable schema form (no `full_schema`): an `Option<T>` field becomes an \
         optional `T`, not a nullable one"
            .into(),
    ))
}

/// `$schema` dialects clients may not support, in either schema.
fn dialect(tool: &CatalogTool, dialects: &[String]) -> Option<Finding> {
    if dialects.is_empty() {
        return None;
    }
    Some(finding(
        Some(&tool.name),
        Severity::Error,
        "schema-dialect",
        format!(
            "`$schema` names a dialect clients may not support ({}); draft-07 and 2020-12 \
             are the ones MCP clients are known to handle",
            at_most_three(dialects)
        ),
        "remove the `$schema` keyword or set it to https://json-schema.org/draft/2020-12/schema"
            .into(),
    ))
}

/// The `which` ("input", "output") schema's root that is not an object type.
fn not_object(tool: &CatalogTool, which: &str, schema: &Value) -> Option<Finding> {
    if schema.get("type") == Some(&Value::String("object".into())) {
        return None;
    }
    Some(finding(
        Some(&tool.name),
        Severity::Error,
        "schema-not-object",
        format!(
            "the {which} schema's root is not `\"type\": \"object\"`, which MCP \
             requires of tool {which} schemas"
        ),
        format!("make the {which} an object type (a struct)"),
    ))
}

/// `$ref`s in the output schema (at `refs`).
fn output_refs(tool: &CatalogTool, refs: &[String]) -> Option<Finding> {
    if refs.is_empty() {
        return None;
    }
    Some(finding(
        Some(&tool.name),
        Severity::Warning,
        "output-schema-ref",
        format!(
            "the output schema uses `$ref` ({}): clients that display or convert output \
             schemas without a full JSON Schema resolver cannot follow it",
            at_most_three(refs)
        ),
        "use a non-recursive output type, or drop `full_schema`".into(),
    ))
}
