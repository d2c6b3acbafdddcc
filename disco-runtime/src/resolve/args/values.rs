//! Values of the wrong JSON type or spelling that can only mean one thing for the
//! parameter's schema (rules 4 and 5 of the module above).

use serde_json::Value;

pub(super) fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The one allowed value a string differs from only by case and by the separators between its
/// words (`"HIGH"` for `"high"`, `"in-progress"` for `"in_progress"`: see [`enum_key`]), when the schema lists its values (`enum`, or
/// `oneOf`/`anyOf` branches of one `const` each). None when the value is allowed as sent, or
/// when no value or more than one matches so (`"A"` with both `"a"` and `"A"` allowed).
pub(super) fn enum_value(value: &Value, schema: &Value) -> Option<Value> {
    let Value::String(sent) = value else {
        return None;
    };
    let options: Vec<&Value> = match schema.get("enum") {
        Some(Value::Array(values)) => values.iter().collect(),
        _ => ["oneOf", "anyOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array))?
            .iter()
            .map(|branch| branch.get("const"))
            .collect::<Option<Vec<&Value>>>()?,
    };
    if options.contains(&value) {
        return None;
    }
    let wanted = enum_key(sent);
    let mut matching = options
        .iter()
        .filter(|o| o.as_str().is_some_and(|o| enum_key(o) == wanted));
    match (matching.next(), matching.next()) {
        (Some(only), None) => Some((*only).clone()),
        _ => None,
    }
}

/// An allowed value's spelling key: lower case, and without the `_`, `-` and spaces that stand
/// between two letters (`in-progress`, `In Progress`, `inProgress` -> `inprogress`). Every
/// other character is kept: a leading `-` sorts descending or is a sign, `+5`/`-5` and `1.0`/`10`
/// are different values, and `-` alone is a value of its own.
pub(super) fn enum_key(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let joins_letters = matches!(c, '_' | '-' | ' ')
            && i > 0
            && chars[i - 1].is_alphabetic()
            && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
        if !joins_letters {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The value converted to what the schema expects, when the conversion is unambiguous.
pub(super) fn coerce(value: &Value, schema: &Value) -> Option<(Value, &'static str)> {
    if has_declared_type(value, schema) {
        return None;
    }
    let types = schema_types(schema);
    let wants = |t: &str| types.contains(&t);
    match value {
        Value::String(s) => {
            let t = s.trim();
            if wants("integer") {
                if let Ok(i) = t.parse::<i64>() {
                    return Some((Value::from(i), "string_to_integer"));
                }
                if let Ok(u) = t.parse::<u64>() {
                    return Some((Value::from(u), "string_to_integer"));
                }
            }
            if wants("number") {
                // "10" is the integer 10, which a number schema accepts as it is.
                if let Ok(i) = t.parse::<i64>() {
                    return Some((Value::from(i), "string_to_number"));
                }
                if let Some(n) = t.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                    return Some((Value::Number(n), "string_to_number"));
                }
            }
            if wants("boolean") {
                match t.to_ascii_lowercase().as_str() {
                    "true" => return Some((Value::Bool(true), "string_to_boolean")),
                    "false" => return Some((Value::Bool(false), "string_to_boolean")),
                    _ => {}
                }
            }
            if wants("object") || wants("array") {
                if let Ok(parsed) = serde_json::from_str::<Value>(t) {
                    let ok = (wants("object") && parsed.is_object())
                        || (wants("array") && parsed.is_array());
                    if ok {
                        return Some((parsed, "json_string_decoded"));
                    }
                }
            }
            if wants("array") {
                let item = schema.get("items").unwrap_or(&Value::Null);
                let inner = coerce(value, item).map(|(v, _)| v);
                let element = inner.unwrap_or_else(|| value.clone());
                if item.is_null() || schema_types(item).iter().any(|t| matches_type(&element, t)) {
                    return Some((Value::Array(vec![element]), "wrapped_in_array"));
                }
            }
            None
        }
        Value::Number(n) if wants("string") => {
            Some((Value::String(n.to_string()), "number_to_string"))
        }
        Value::Number(n) if wants("integer") => {
            // 3.0 -> 3
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15)
                .then(|| (Value::from(f as i64), "float_to_integer"))
        }
        Value::Bool(_) | Value::Number(_) | Value::Object(_) if wants("array") => {
            let item = schema.get("items").unwrap_or(&Value::Null);
            let ok = item.is_null() || schema_types(item).iter().any(|t| matches_type(value, t));
            ok.then(|| (Value::Array(vec![value.clone()]), "wrapped_in_array"))
        }
        _ => None,
    }
}

/// Whether `value` has one of the types `schema` declares (or the schema declares none):
/// then there is nothing to coerce.
pub(super) fn has_declared_type(value: &Value, schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => matches_type(value, t),
        Some(Value::Array(ts)) => {
            let mut declared = ts.iter().filter_map(Value::as_str).peekable();
            declared.peek().is_none() || declared.any(|t| matches_type(value, t))
        }
        _ => true,
    }
}

pub(super) fn matches_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}
