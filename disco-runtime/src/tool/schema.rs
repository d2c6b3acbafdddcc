//! JSON Schemas for tool inputs and outputs.
//!
//! Schemas are generated with schemars (JSON Schema 2020-12) and, unless a tool or the server
//! asks for the full form, emitted in the *portable* form that every client in the field
//! accepts: no `$ref`/`$defs` (inlined; a recursive type keeps `$defs` because it cannot be
//! inlined, and [`BuiltSchema::recursive`] says so), no type arrays with `"null"` and no
//! `anyOf` null branches (`Option<T>` means optional, not nullable), no `$schema` URL, and no
//! schemars-specific integer `format`s (the range stays as `minimum`/`maximum`).
//!
//! Output schemas keep their null types: a `None` field serializes as `null`, and clients
//! validate structured content against the output schema with full JSON Schema validators,
//! whereas the input-side restrictions come from model providers' function-calling APIs.

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::spec::ParamSpec;

/// A JSON object: what MCP requires every tool schema to be.
pub type JsonObject = Map<String, Value>;

/// Which form of JSON Schema to emit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemaMode {
    /// Inlined, no null types, no `$schema`: accepted by every client.
    #[default]
    Portable,
    /// JSON Schema 2020-12 as schemars generates it, with `$schema`, `$defs` and
    /// `additionalProperties: false` on the input object.
    Full,
}

/// The `$schema` URL of JSON Schema 2020-12, which schemas in the full form declare.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A schema ready for tools/list.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltSchema {
    /// The schema, an object with `"type": "object"` at its root.
    pub schema: JsonObject,
    /// A recursive type forced `$defs` to stay in a portable schema.
    pub recursive: bool,
}

/// The schemars generator for `mode`: JSON Schema 2020-12, with subschemas inlined for the
/// portable form.
pub fn generator(mode: SchemaMode) -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = mode == SchemaMode::Portable)
        .into_generator()
}

/// The schema of a `T` used as a parameter type (what `ParamSpec::schema` points at).
pub fn schema_of<T: schemars::JsonSchema>(gen: &mut SchemaGenerator) -> Schema {
    gen.subschema_for::<T>()
}

/// The input schema of a tool: an object with one property per JSON parameter.
pub fn input_schema(params: &[ParamSpec], mode: SchemaMode) -> Result<BuiltSchema, String> {
    let mut gen = generator(mode);
    let mut properties = Map::new();
    let mut required = Vec::new();
    // The flattened parameter, its fields, and the definition its struct's schema refers to.
    let mut flattened: Option<(&ParamSpec, Vec<String>, Option<String>)> = None;
    for p in params {
        let mut schema = (p.schema)(&mut gen).to_value();
        if p.flatten {
            if let Some((first, _, _)) = &flattened {
                return Err(format!(
                    "parameters `{}` and `{}` are both flattened: one tool takes the fields of \
                     one struct at its top level; nest the other under its name",
                    first.name, p.name
                ));
            }
            let fields = flatten_fields(p, &schema, &gen)?;
            let mut names = Vec::new();
            for (name, field, is_required) in fields {
                if is_required {
                    required.push(Value::String(name.clone()));
                }
                names.push(name.clone());
                properties.insert(name, field);
            }
            flattened = Some((p, names, local_definition(&schema).map(str::to_string)));
            continue;
        }
        if let Value::Object(obj) = &mut schema {
            if let Some(d) = p.description {
                obj.insert("description".into(), Value::String(d.to_string()));
            }
            if let Some(default) = p.default {
                match default() {
                    Ok(Some(v)) => {
                        obj.insert("default".into(), v);
                    }
                    Ok(None) => {}
                    Err(err) => {
                        return Err(format!("the default of parameter `{}`: {err}", p.name))
                    }
                }
            }
        }
        if p.required {
            required.push(Value::String(p.name.to_string()));
        }
        properties.insert(p.name.to_string(), schema);
    }
    if let Some((flat, fields, _)) = &flattened {
        // A key means one thing: a field that is also another parameter's name or alias could
        // be either, and neither the schema nor the handler could tell which.
        for other in params.iter().filter(|o| !o.flatten) {
            for key in std::iter::once(&other.name).chain(other.aliases) {
                if fields.iter().any(|f| f == key) {
                    let what = if *key == other.name {
                        format!("parameter `{key}`")
                    } else {
                        format!("alias `{key}` of parameter `{}`", other.name)
                    };
                    return Err(format!(
                        "field `{key}` of the flattened parameter `{}` has the name of {what}: \
                         a model sending `{key}` would be ambiguous; rename one of them",
                        flat.name
                    ));
                }
            }
        }
    }
    let mut root = Map::new();
    if mode == SchemaMode::Full {
        root.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    }
    root.insert("type".into(), Value::String("object".into()));
    root.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    if mode == SchemaMode::Full {
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
    let mut defs = gen.take_definitions(true);
    if let Some((_, _, Some(name))) = &flattened {
        // The flattened struct's own definition is needed only if something else refers to it
        // (a field of its own type, another parameter of that type).
        let reference = Value::String(format!("#/$defs/{name}"));
        let used = |v: &Value| refers_to(v, &reference);
        if !root.values().any(used) && !defs.values().any(used) {
            defs.remove(name);
        }
    }
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Ok(finish(root, mode, Nulls::Strip))
}

/// The fields of a flattened parameter's struct: (name, schema, required), in the order its
/// schema lists them, each with its own description. The struct's schema may be inline or a
/// `$ref` to its definition (the full form keeps structs in `$defs`).
fn flatten_fields(
    p: &ParamSpec,
    schema: &Value,
    gen: &SchemaGenerator,
) -> Result<Vec<(String, Value, bool)>, String> {
    let resolved = match local_definition(schema) {
        Some(name) => gen.definitions().get(name).unwrap_or(schema),
        None => schema,
    };
    let not_a_struct = || {
        format!(
            "the flattened parameter `{}` is not a struct with named fields (its schema is {}): \
             only a struct's fields can be the tool's parameters",
            p.name,
            crate::util::clip(&resolved.to_string(), 120)
        )
    };
    let obj = resolved.as_object().ok_or_else(not_a_struct)?;
    if obj.get("type") != Some(&Value::String("object".into())) {
        return Err(not_a_struct());
    }
    let Some(Value::Object(props)) = obj.get("properties") else {
        return Err(not_a_struct());
    };
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Ok(props
        .iter()
        .map(|(name, field)| {
            (
                name.clone(),
                field.clone(),
                required.contains(&name.as_str()),
            )
        })
        .collect())
}

/// `Name` for a schema that is only `{"$ref": "#/$defs/Name"}`.
fn local_definition(schema: &Value) -> Option<&str> {
    let obj = schema.as_object()?;
    let reference = obj.get("$ref")?.as_str()?;
    (obj.len() == 1)
        .then(|| reference.strip_prefix("#/$defs/"))
        .flatten()
}

/// Whether `value` holds `reference` as a `$ref` anywhere.
fn refers_to(value: &Value, reference: &Value) -> bool {
    match value {
        Value::Object(obj) => {
            obj.get("$ref") == Some(reference) || obj.values().any(|v| refers_to(v, reference))
        }
        Value::Array(items) => items.iter().any(|v| refers_to(v, reference)),
        _ => false,
    }
}

/// The output schema of a tool from the schema of its `Json<T>`. Returns the schema and
/// whether values must be wrapped as `{"result": value}` (when `T` is not an object).
pub fn output_schema(schema: Schema, mode: SchemaMode) -> (BuiltSchema, bool) {
    let mut root = match schema.to_value() {
        Value::Object(obj) => obj,
        // `true`/`false` schemas: anything, or nothing.
        other => {
            let mut obj = Map::new();
            if other == Value::Bool(false) {
                obj.insert("not".into(), Value::Object(Map::new()));
            }
            obj
        }
    };
    let is_object = root.get("type") == Some(&Value::String("object".into()));
    let wrap = !is_object;
    if wrap {
        let defs = root.remove("$defs");
        let meta = root.remove("$schema");
        let mut wrapped = Map::new();
        if let Some(meta) = meta {
            wrapped.insert("$schema".into(), meta);
        }
        wrapped.insert("type".into(), Value::String("object".into()));
        let mut props = Map::new();
        props.insert("result".into(), Value::Object(root));
        wrapped.insert("properties".into(), Value::Object(props));
        wrapped.insert(
            "required".into(),
            Value::Array(vec![Value::String("result".into())]),
        );
        if let Some(defs) = defs {
            wrapped.insert("$defs".into(), defs);
        }
        root = wrapped;
    }
    if mode == SchemaMode::Portable {
        root.remove("$schema");
    }
    (finish(root, mode, Nulls::Keep), wrap)
}

#[derive(Clone, Copy, PartialEq)]
enum Nulls {
    Strip,
    Keep,
}

fn finish(mut root: JsonObject, mode: SchemaMode, nulls: Nulls) -> BuiltSchema {
    if mode == SchemaMode::Full {
        return BuiltSchema {
            schema: root,
            recursive: false,
        };
    }
    root.remove("$schema");
    let mut value = Value::Object(std::mem::take(&mut root));
    make_portable(&mut value, nulls);
    // `make_portable` never changes the kind of the root value.
    let root = match value {
        Value::Object(root) => root,
        _ => Map::new(),
    };
    let recursive = root.get("$defs").is_some_and(|d| match d {
        Value::Object(m) => !m.is_empty(),
        _ => false,
    });
    BuiltSchema {
        schema: root,
        recursive,
    }
}

const SCHEMARS_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128",
    "uint", "int", "float", "double",
];

/// Rewrites one schema (recursively) into the portable form.
fn make_portable(value: &mut Value, nulls: Nulls) {
    match value {
        Value::Object(obj) => {
            obj.remove("$schema");
            if nulls == Nulls::Strip {
                strip_nulls(obj);
            }
            if let Some(Value::String(f)) = obj.get("format") {
                if SCHEMARS_FORMATS.contains(&f.as_str()) {
                    obj.remove("format");
                }
            }
            for (k, v) in obj.iter_mut() {
                match k.as_str() {
                    // Maps from names to schemas.
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" => {
                        if let Value::Object(map) = v {
                            map.values_mut().for_each(|s| make_portable(s, nulls));
                        }
                    }
                    // Values, not schemas: left as the author wrote them.
                    "enum" | "const" | "default" | "examples" => {}
                    _ => make_portable(v, nulls),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|s| make_portable(s, nulls)),
        _ => {}
    }
}

/// `Option<T>` means "may be absent", which the `required` list already says; the null type
/// is what some model providers reject.
fn strip_nulls(obj: &mut JsonObject) {
    // ["string", "null"] -> "string"
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        } else if types.is_empty() {
            obj.remove("type");
        }
    }
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    if obj.get("nullable") == Some(&Value::Bool(true)) {
        obj.remove("nullable");
    }
    // enum [.., null] -> without null
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        if values.len() > 1 {
            values.retain(|v| !v.is_null());
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            let before = branches.len();
            branches.retain(|b| !is_null_schema(b));
            if branches.len() == 1 && before > 1 {
                // Option<Struct>: merge the one remaining branch into its parent.
                let only = branches.remove(0);
                obj.remove(key);
                if let Value::Object(inner) = only {
                    for (k, v) in inner {
                        obj.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
}

fn is_null_schema(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.get("type") == Some(&Value::String("null".into())) && o.len() <= 2,
        _ => false,
    }
}

/// A short, readable type for a schema: `string`, `integer (≥ 0, ≤ 255)`, `array of string`,
/// `one of "a", "b"`. Used in documentation tables and in the parameter lists of error
/// messages; the exact schema is always available beside it.
pub fn type_label(schema: &Value) -> String {
    let Some(obj) = schema.as_object() else {
        return if schema == &Value::Bool(false) {
            "nothing".into()
        } else {
            "any".into()
        };
    };
    if let Some(Value::Array(values)) = obj.get("enum") {
        const SHOWN: usize = 12;
        let mut shown: Vec<String> = values.iter().take(SHOWN).map(compact).collect();
        if values.len() > SHOWN {
            shown.push(format!("… ({} in all)", values.len()));
        }
        return format!("one of {}", shown.join(", "));
    }
    if let Some(c) = obj.get("const") {
        return format!("exactly {}", compact(c));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            let labels: Vec<String> = branches.iter().map(type_label).collect();
            return labels.join(" or ");
        }
    }
    if obj.contains_key("$ref") {
        return "see the input schema".into();
    }
    let base = match obj.get("type") {
        Some(Value::String(t)) if t == "array" => match obj.get("items") {
            Some(items) => format!("array of {}", type_label(items)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".into(),
    };
    let mut bounds = Vec::new();
    if let Some(min) = obj.get("minimum") {
        bounds.push(format!("≥ {}", compact(min)));
    }
    if let Some(max) = obj.get("maximum") {
        bounds.push(format!("≤ {}", compact(max)));
    }
    if let Some(Value::String(format)) = obj.get("format") {
        bounds.push(format.clone());
    }
    if bounds.is_empty() {
        base
    } else {
        format!("{base} ({})", bounds.join(", "))
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
