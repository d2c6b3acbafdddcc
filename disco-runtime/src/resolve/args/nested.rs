//! Objects inside the arguments: the schema of a nested object (inline, or a `$ref` into the
//! input schema's `$defs`, as the full schema form and recursive types keep them), the fields
//! of an object parameter sent flat beside it, and the nested fields a refusal lists.
//!
//! Repair inside nested objects is bounded twice over: in depth ([`MAX_DEPTH`] levels below a
//! parameter) and in the keys looked at per call ([`MAX_NESTED_KEYS`]). The call's values are
//! bounded before repair starts (`tool/budget.rs`); what costs per key here is the matching of
//! a key against an object's fields, and that is what the second bound caps.

use serde_json::{Map, Value};

use super::{coerce, enum_value, normalise_key, opposite_param, opposite_problem, Field};
use crate::tool::schema::{type_label, JsonObject};

/// How deep below a parameter repair looks: `issue.priority` is 1, `issue.assignee.name` 2.
pub(super) const MAX_DEPTH: usize = 4;
/// How many keys of nested objects one call's repair looks at in all; past it, the rest are
/// left as sent, for the schema to judge.
pub(super) const MAX_NESTED_KEYS: usize = 4_096;
/// `$ref`s followed in a row before a schema is taken as it is.
const MAX_REFS: usize = 8;
/// Nested fields listed in a refusal's expected parameters, in all.
pub(super) const MAX_LISTED_FIELDS: usize = 24;
/// How deep the expected parameters list nested fields: `issue.title`, `issue.assignee.name`.
const MAX_LISTED_DEPTH: usize = 2;

const NO_ALIASES: &[String] = &[];

/// `schema` with its local `$ref`s followed (`#/$defs/Name`, `#/definitions/Name`).
pub(super) fn resolve<'a>(schema: &'a Value, root: &'a JsonObject) -> &'a Value {
    let mut current = schema;
    for _ in 0..MAX_REFS {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let target = ["$defs", "definitions"].iter().find_map(|section| {
            let name = reference.strip_prefix(&format!("#/{section}/"))?;
            root.get(*section)?.get(name)
        });
        match target {
            Some(t) => current = t,
            None => break,
        }
    }
    current
}

/// `Option<T>` in the full form is `anyOf: [T, null]`: the one branch that is not `null`.
fn without_null<'a>(schema: &'a Value, root: &'a JsonObject) -> &'a Value {
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let mut kept = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            if let (Some(only), None) = (kept.next(), kept.next()) {
                if branches.len() == 2 {
                    return resolve(only, root);
                }
            }
        }
    }
    schema
}

/// An object schema with named fields (a struct's).
pub(super) struct ObjectSchema<'a> {
    properties: &'a Map<String, Value>,
    required: Vec<&'a str>,
}

impl<'a> ObjectSchema<'a> {
    pub(super) fn fields(&self) -> Vec<Field<'a>> {
        self.properties
            .iter()
            .map(|(name, schema)| Field {
                name,
                aliases: NO_ALIASES,
                schema,
                required: self.required.contains(&name.as_str()),
            })
            .collect()
    }

    /// The field `key` names as it is or in another spelling (case, separators), when it
    /// names exactly one.
    fn field_for(&self, key: &str) -> Option<&'a str> {
        if let Some((name, _)) = self.properties.get_key_value(key) {
            return Some(name);
        }
        if key.len() > super::MAX_KEY_LEN {
            return None;
        }
        let norm = normalise_key(key);
        let mut matching = self
            .properties
            .keys()
            .filter(|name| normalise_key(name) == norm);
        match (matching.next(), matching.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }
}

/// The named fields of `schema`, when it is an object schema that has some.
pub(super) fn object_schema<'a>(
    schema: &'a Value,
    root: &'a JsonObject,
) -> Option<ObjectSchema<'a>> {
    let schema = without_null(resolve(schema, root), root);
    let object_type = match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        Some(_) => false,
    };
    let properties = schema.get("properties")?.as_object()?;
    if !object_type || properties.is_empty() {
        return None;
    }
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Some(ObjectSchema {
        properties,
        required,
    })
}

/// The schema of the items of a list whose items are objects with named fields.
pub(super) fn items_schema<'a>(schema: &'a Value, root: &'a JsonObject) -> Option<&'a Value> {
    let schema = without_null(resolve(schema, root), root);
    let items = schema.get("items")?;
    object_schema(items, root).map(|_| items)
}

/// Whether the repair rules would change anything inside the nested objects of `args` (a key
/// that is no field as sent, `null` for an optional field, a value of the wrong type or an
/// allowed value in another spelling), within the same bounds as the repair itself.
pub(super) fn needs_repair(
    params: &[crate::tool::built::ParamInfo],
    args: &Map<String, Value>,
    root: &JsonObject,
) -> bool {
    let mut budget = MAX_NESTED_KEYS;
    params.iter().any(|p| {
        args.get(&p.name)
            .is_some_and(|v| value_needs_repair(v, resolve(p.schema(), root), root, 1, &mut budget))
    })
}

fn value_needs_repair(
    value: &Value,
    schema: &Value,
    root: &JsonObject,
    depth: usize,
    budget: &mut usize,
) -> bool {
    if depth > MAX_DEPTH || *budget == 0 {
        return false;
    }
    match value {
        Value::Object(obj) => {
            let Some(object) = object_schema(schema, root) else {
                return false;
            };
            if obj.len() > *budget {
                *budget = 0;
                return false;
            }
            *budget -= obj.len();
            obj.iter().any(|(key, v)| match object.properties.get(key) {
                None => true,
                Some(field) => {
                    let field = resolve(field, root);
                    (v.is_null() && !object.required.contains(&key.as_str()))
                        || coerce(v, field).is_some()
                        || enum_value(v, field).is_some()
                        || value_needs_repair(v, field, root, depth + 1, budget)
                }
            })
        }
        Value::Array(items) => match items_schema(schema, root) {
            Some(item) => items
                .iter()
                .any(|i| value_needs_repair(i, item, root, depth, budget)),
            None => false,
        },
        _ => false,
    }
}

/// The object parameters not given, with their fields.
fn missing_objects<'a>(
    params: &[Field<'a>],
    given: &Map<String, Value>,
    root: &'a JsonObject,
) -> Vec<(&'a str, ObjectSchema<'a>)> {
    params
        .iter()
        .filter(|p| !given.contains_key(p.name))
        .filter_map(|p| Some((p.name, object_schema(p.schema, root)?)))
        .collect()
}

/// The one object parameter that was not given and that every unknown key is a field of (as
/// sent, or in another spelling), when no such key is a field of another object parameter
/// not given, and none states the opposite of one of its fields.
pub(super) fn wrap_target<'a>(
    params: &[Field<'a>],
    given: &Map<String, Value>,
    unknown: &[(String, Value)],
    root: &'a JsonObject,
) -> Option<&'a str> {
    let candidates = missing_objects(params, given, root);
    let mut target: Option<usize> = None;
    for (key, _) in unknown {
        let mut owners = candidates
            .iter()
            .enumerate()
            .filter(|(_, (_, object))| object.field_for(key).is_some());
        let (Some((only, (_, object))), None) = (owners.next(), owners.next()) else {
            return None;
        };
        if target.is_some_and(|t| t != only) || opposite_param(key, &object.fields()).is_some() {
            return None;
        }
        target = Some(only);
    }
    target.map(|t| candidates[t].0)
}

/// The problem for an unknown key that states the opposite of a field of an object parameter
/// not given (`no_urgent` beside a missing `issue` that has `urgent`).
pub(super) fn opposite_field(
    params: &[Field<'_>],
    given: &Map<String, Value>,
    key: &str,
    root: &JsonObject,
) -> Option<String> {
    missing_objects(params, given, root)
        .iter()
        .find_map(|(name, object)| {
            let fields = object.fields();
            let field = opposite_param(key, &fields)?;
            Some(opposite_problem(key, "", &field, &format!("{name}.")))
        })
}

/// For unknown keys that are fields of object parameters not given: which, and how to send
/// them (` (`title`, `priority` are fields of `issue`: ...)`); empty when none is.
pub(super) fn flat_fields_hint(
    params: &[Field<'_>],
    given: &Map<String, Value>,
    unknown: &[(String, Value)],
    root: &JsonObject,
) -> String {
    const SHOWN: usize = 10;
    let mut parts = Vec::new();
    let mut example = None;
    for (name, object) in missing_objects(params, given, root) {
        let keys: Vec<String> = unknown
            .iter()
            .filter_map(|(k, _)| object.field_for(k))
            .take(SHOWN)
            .map(|f| format!("`{f}`"))
            .collect();
        if let Some(first) = keys.first() {
            let verb = if keys.len() == 1 {
                "is a field"
            } else {
                "are fields"
            };
            parts.push(format!("{} {verb} of `{name}`", keys.join(", ")));
            example.get_or_insert_with(|| {
                format!("`\"{name}\": {{\"{}\": ...}}`", first.trim_matches('`'))
            });
        }
    }
    match example {
        Some(example) => format!(
            " ({}: send them inside it, as {example}, not beside it)",
            parts.join("; ")
        ),
        None => String::new(),
    }
}

/// [`type_label`] of a schema, with the items of a list looked up when they are a `$ref`.
fn label(schema: &Value, root: &JsonObject) -> String {
    let list = schema.get("type").and_then(Value::as_str) == Some("array");
    match schema.get("items") {
        Some(items) if list && items.get("$ref").is_some() => {
            let items = without_null(resolve(items, root), root);
            format!("array of {}", type_label(items))
        }
        _ => type_label(schema),
    }
}

/// The fields of an object parameter for the expected-parameters list, one line each
/// (`- `issue.title` (string, required)`), to a bounded depth, and while `left` lines remain.
pub(super) fn list_fields(
    schema: &Value,
    root: &JsonObject,
    path: &str,
    left: &mut usize,
    text: &mut String,
) {
    list_fields_at(schema, root, path, 1, left, text);
}

fn list_fields_at(
    schema: &Value,
    root: &JsonObject,
    path: &str,
    depth: usize,
    left: &mut usize,
    text: &mut String,
) {
    let Some(object) = object_schema(schema, root) else {
        return;
    };
    let fields = object.fields();
    for (i, f) in fields.iter().enumerate() {
        if *left == 0 {
            text.push_str(&format!(
                "\n- … and {} more field(s) of `{path}` (see the input schema)",
                fields.len() - i
            ));
            return;
        }
        *left -= 1;
        let schema = without_null(resolve(f.schema, root), root);
        let required = if f.required { "required" } else { "optional" };
        text.push_str(&format!(
            "\n- `{path}.{}` ({}, {required})",
            crate::util::clip(f.name, 64),
            label(schema, root)
        ));
        // The field's own words first; a struct's doc comment describes its type.
        if let Some(d) = f
            .schema
            .get("description")
            .or_else(|| schema.get("description"))
            .and_then(Value::as_str)
        {
            text.push_str(": ");
            text.push_str(&crate::util::clip(d, 200));
        }
        if depth < MAX_LISTED_DEPTH {
            let nested = format!("{path}.{}", f.name);
            list_fields_at(schema, root, &nested, depth + 1, left, text);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{args, tool};
    use super::super::*;
    use super::{MAX_DEPTH, MAX_LISTED_FIELDS, MAX_NESTED_KEYS};
    use crate::tool::built::MetaKind;

    /// An issue tracker's `file_issue`: one object parameter, its priority and assignee as
    /// `$ref`s into `$defs` when `full`, inline otherwise; with `broken`, one more property
    /// whose pattern does not compile, so the tool has no validator.
    fn file_issue(full: bool, broken: bool) -> CatalogTool<MetaKind> {
        let priority = json!({"type": "string", "enum": ["low", "high"]});
        let person = json!({
            "type": "object",
            "properties": {"display_name": {"type": "string"}, "is_admin": {"type": "boolean"}},
            "required": ["display_name"]
        });
        let issue = |priority: Value, person: Value| {
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "priority": priority,
                    "estimate_hours": {"type": "integer"},
                    "urgent": {"type": "boolean"},
                    "assignee": person
                },
                "required": ["title", "priority"]
            })
        };
        let mut schema = if full {
            json!({
                "type": "object",
                "properties": {"issue": {"$ref": "#/$defs/Issue"}},
                "required": ["issue"],
                "$defs": {
                    "Issue": issue(json!({"$ref": "#/$defs/Priority"}),
                                   json!({"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]})),
                    "Priority": priority,
                    "Person": person
                }
            })
        } else {
            json!({
                "type": "object",
                "properties": {"issue": issue(priority, person)},
                "required": ["issue"]
            })
        };
        if broken {
            schema["properties"]["note"] = json!({"type": "string", "pattern": "("});
        }
        let t = tool(schema);
        assert_eq!(t.validates_input(), !broken);
        t
    }

    fn every_form() -> Vec<CatalogTool<MetaKind>> {
        let mut tools = Vec::new();
        for full in [false, true] {
            for broken in [false, true] {
                tools.push(file_issue(full, broken));
            }
        }
        tools
    }

    const FIELDS: [(&str, &str); 5] = [
        ("title", "\"Login fails\""),
        ("priority", "\"high\""),
        ("estimate_hours", "3"),
        ("urgent", "true"),
        ("assignee", "{\"display_name\": \"Ada\"}"),
    ];

    fn spell(key: &str, style: usize) -> String {
        match style {
            0 => key.to_string(),
            1 => key.to_uppercase(),
            2 => key.replace('_', "-"),
            _ => {
                let mut out = String::new();
                let mut upper = false;
                for c in key.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.extend(c.to_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// Every subset of the fields, sent flat in every key style: wrapped into `issue` (then
    /// judged as if sent nested), with and without a validator, inline and behind `$ref`s.
    #[test]
    fn fields_sent_flat_are_wrapped_into_their_one_object() {
        for t in every_form() {
            for subset in 1u32..(1 << FIELDS.len()) {
                for style in 0..4 {
                    let mut sent = Map::new();
                    for (i, (field, value)) in FIELDS.iter().enumerate() {
                        if subset & (1 << i) != 0 {
                            sent.insert(spell(field, style), serde_json::from_str(value).unwrap());
                        }
                    }
                    let what = format!("{} {}", Value::Object(sent.clone()), t.validates_input());
                    let result = prepare(&t, sent.clone(), Repair::Safe);
                    let complete = subset & 0b11 == 0b11;
                    if !complete && t.validates_input() {
                        let err = result.expect_err(&what);
                        assert!(
                            err.contains("\"title\"") || err.contains("\"priority\""),
                            "{what}: {err}"
                        );
                        continue;
                    }
                    let p = result.unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(p.arguments.len(), 1, "{what}");
                    let issue = p.arguments["issue"].as_object().unwrap();
                    for (i, (field, value)) in FIELDS.iter().enumerate() {
                        let expected: Option<Value> =
                            (subset & (1 << i) != 0).then(|| serde_json::from_str(value).unwrap());
                        assert_eq!(issue.get(*field), expected.as_ref(), "{what}");
                    }
                    let mut keys: Vec<&String> = sent.keys().collect();
                    keys.sort();
                    match &p.fixes[0] {
                        ArgFix::Wrapped {
                            keys: wrapped,
                            into,
                        } => {
                            let mut wrapped: Vec<&String> = wrapped.iter().collect();
                            wrapped.sort();
                            assert_eq!((wrapped, into.as_str()), (keys, "issue"), "{what}");
                        }
                        other => panic!("{what}: {other:?}"),
                    }
                    let renamed = p
                        .fixes
                        .iter()
                        .filter(|f| {
                            matches!(
                                f,
                                ArgFix::Renamed {
                                    rule: "spelling",
                                    ..
                                }
                            )
                        })
                        .count();
                    let differing = sent.keys().filter(|k| !issue.contains_key(*k)).count();
                    assert_eq!(renamed, differing, "{what}: {:?}", p.fixes);
                }
            }
        }
    }

    /// Never wrapped: a key that is no field, a key that negates a field, a field two missing
    /// objects have, a strict policy; the refusal says where the fields go.
    #[test]
    fn fields_sent_flat_are_refused_when_not_certain() {
        for t in every_form() {
            let base = || args(json!({"title": "x", "priority": "high"}));
            for extra in ["colour", "labels", "tittle_text"] {
                let mut sent = base();
                sent.insert(extra.into(), json!(1));
                let err = prepare(&t, sent, Repair::Safe).unwrap_err();
                assert!(err.contains(&format!("`{extra}`")), "{err}");
                assert!(err.contains("are fields of `issue`"), "{err}");
                assert!(err.contains("`\"issue\": {\""), "{err}");
            }
            for negated in [
                "no_urgent",
                "urgent_off",
                "not_urgent",
                "unurgent",
                "NoUrgent",
            ] {
                for value in [json!(true), json!(false)] {
                    let mut sent = base();
                    sent.insert(negated.into(), value);
                    let err = prepare(&t, sent, Repair::Safe).unwrap_err();
                    assert!(
                        err.contains(&format!(
                            "`{negated}` states the opposite of the boolean parameter `issue.urgent`"
                        )),
                        "{err}"
                    );
                }
            }
            assert!(prepare(&t, base(), Repair::Strict).is_err());
        }
        // Two object parameters not given, both with a `title`.
        let object = |fields: &[&str]| {
            let props: Map<String, Value> = fields
                .iter()
                .map(|f| (f.to_string(), json!({"type": "string"})))
                .collect();
            json!({"type": "object", "properties": props})
        };
        let t = tool(json!({
            "type": "object",
            "properties": {"issue": object(&["title", "body"]), "board": object(&["title", "owner"])},
        }));
        for sent in [
            json!({"title": "x"}),
            json!({"title": "x", "body": "y"}),
            json!({"Title": "x", "owner": "y"}),
        ] {
            let err = prepare(&t, args(sent.clone()), Repair::Safe).unwrap_err();
            assert!(err.contains("unknown parameter(s)"), "{sent}: {err}");
        }
        // Each key of one object only, with the other given: wrapped.
        let p = prepare(
            &t,
            args(json!({"body": "y", "board": {"title": "b"}})),
            Repair::Safe,
        )
        .unwrap();
        assert_eq!(p.arguments["issue"], json!({"body": "y"}));
        // The given object is not a target.
        let err = prepare(
            &t,
            args(json!({"owner": "y", "board": {"title": "b"}})),
            Repair::Safe,
        )
        .unwrap_err();
        assert!(err.contains("unknown parameter(s) `owner`"), "{err}");
    }

    /// Keys and values inside a nested object are repaired as at the top level and reported
    /// under their path; the outcome is the same whichever way through `prepare` they go.
    #[test]
    fn nested_keys_and_values_are_repaired_with_their_path() {
        for t in every_form() {
            let sent = args(json!({"issue": {
                "Title": "x", "PRIORITY": "HIGH", "estimateHours": "3", "urgent": null,
                "assignee": {"displayName": "Ada", "is-admin": "false"}
            }}));
            let p = prepare(&t, sent.clone(), Repair::Safe).unwrap();
            assert_eq!(
                p.arguments["issue"],
                json!({"title": "x", "priority": "high", "estimate_hours": 3,
                       "assignee": {"display_name": "Ada", "is_admin": false}})
            );
            let fixes: Vec<Value> = p.fixes.iter().map(ArgFix::to_json).collect();
            for fix in [
                json!({"kind": "renamed", "from": "issue.Title", "to": "issue.title", "rule": "spelling"}),
                json!({"kind": "renamed", "from": "issue.assignee.is-admin", "to": "issue.assignee.is_admin", "rule": "spelling"}),
                json!({"kind": "coerced", "param": "issue.priority", "from": "HIGH", "to": "high", "rule": "enum_case"}),
                json!({"kind": "coerced", "param": "issue.estimate_hours", "from": "3", "to": 3, "rule": "string_to_integer"}),
                json!({"kind": "coerced", "param": "issue.assignee.is_admin", "from": "false", "to": false, "rule": "string_to_boolean"}),
                json!({"kind": "dropped_null", "param": "issue.urgent"}),
            ] {
                assert!(fixes.contains(&fix), "{fix} not in {fixes:?}");
            }
            // Strict: nothing inside is touched.
            let strict = prepare(&t, sent, Repair::Strict);
            if t.validates_input() {
                assert!(strict.is_err());
            } else {
                assert!(strict.unwrap().fixes.is_empty());
            }
            // Each case: the short way for arguments as declared gives what the rules give.
            for case in [
                json!({"issue": {"title": "x", "priority": "high"}}),
                json!({"issue": {"title": "x", "priority": "HIGH"}}),
                json!({"issue": {"Title": "x", "priority": "high"}}),
                json!({"issue": {"title": "x", "priority": "high", "urgent": null}}),
                json!({"issue": {"title": "x", "priority": "high", "estimate_hours": "2"}}),
                json!({"issue": {"title": "x", "priority": "high", "extra": 1}}),
                json!({"issue": {"title": "x", "priority": "high", "assignee": {"name": "A"}}}),
                json!({"issue": {"title": 5, "priority": "high", "no_urgent": true}}),
            ] {
                for repair in [Repair::Safe, Repair::Strict] {
                    let a = prepare(&t, args(case.clone()), repair).map(|p| p.arguments);
                    let b = repair_and_check(&t, args(case.clone()), repair).map(|p| p.arguments);
                    assert_eq!(a, b, "{case} {repair:?}");
                }
            }
        }
    }

    /// A recursive schema: repairs reach [`MAX_DEPTH`] levels below the parameter and no
    /// further, and the keys looked at are bounded whatever the arguments hold.
    #[test]
    fn nested_repair_is_bounded_in_depth_and_keys() {
        let t = tool(json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {
                "type": "object",
                "properties": {"label": {"type": "string"}, "child": {"$ref": "#/$defs/Node"}}
            }}
        }));
        let mut value = json!({"Label": "leaf"});
        for _ in 0..8 {
            value = json!({"Label": "x", "child": value});
        }
        let p = prepare(&t, args(json!({ "node": value })), Repair::Safe).unwrap();
        let renamed = p
            .fixes
            .iter()
            .filter(|f| matches!(f, ArgFix::Renamed { .. }))
            .count();
        assert_eq!(renamed, MAX_DEPTH, "{:?}", p.fixes);
        let mut node = &p.arguments["node"];
        for depth in 1..=9 {
            let expected = if depth <= MAX_DEPTH { "label" } else { "Label" };
            assert!(node.get(expected).is_some(), "depth {depth}: {node}");
            node = &node["child"];
        }
        // A list of more objects than the key budget: repaired up to it, the rest left.
        let t = tool(json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object", "properties": {"count": {"type": "integer"}}
            }}}
        }));
        let items: Vec<Value> = (0..MAX_NESTED_KEYS + 10)
            .map(|_| json!({"Count": "1"}))
            .collect();
        let p = prepare(&t, args(json!({ "items": items })), Repair::Safe).unwrap();
        let repaired = p.arguments["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i.get("count") == Some(&json!(1)))
            .count();
        assert_eq!(repaired, MAX_NESTED_KEYS);
    }

    /// The expected parameters list nested fields with their types, up to a bound.
    #[test]
    fn expected_parameters_list_nested_fields_up_to_a_bound() {
        for t in every_form() {
            let text = expected_parameters(&t);
            for line in [
                "- `issue` (object, required)",
                "- `issue.title` (string, required)",
                "- `issue.priority` (one of \"low\", \"high\", required)",
                "- `issue.assignee` (object, optional)",
                "- `issue.assignee.display_name` (string, required)",
            ] {
                assert!(text.contains(line), "{line} not in {text}");
            }
        }
        let props: Map<String, Value> = (0..60)
            .map(|i| {
                (
                    format!("field_{i:02}"),
                    json!({"type": "string", "description": "d".repeat(500)}),
                )
            })
            .collect();
        let t = tool(json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": props}, "b": {"type": "object", "properties": props}}
        }));
        let text = expected_parameters(&t);
        let nested = text
            .lines()
            .filter(|l| l.starts_with("- `a.") || l.starts_with("- `b."))
            .count();
        assert_eq!(nested, MAX_LISTED_FIELDS, "{text}");
        assert!(text.contains("… and 36 more field(s) of `a`"), "{text}");
        assert!(text.len() < 8_000, "{} bytes", text.len());
    }
}
