//! A bound on what one call's arguments may cost before any repair, coercion or validation
//! runs: the number of JSON values they hold.
//!
//! A 4 MiB request can hold a million tiny values (`["1","1",...]`). Parsing them is the
//! transport's cost; what comes after (repair, coercion, schema validation and the errors it
//! collects) is work per value, and a schema error per value is hundreds of bytes each. The
//! pipeline counts first, with a walk that stops at the limit and allocates no more than its
//! stack, and answers arguments over the budget with a tool error that says so.

use serde_json::{Map, Value};

/// The default of [`crate::CatalogBuilder::max_argument_values`].
pub const DEFAULT_MAX_ARGUMENT_VALUES: usize = 100_000;

/// How many JSON values `args` holds (every value at every depth, the object itself not
/// counted), counting up to `limit + 1` at most.
pub(crate) fn count_values(args: &Map<String, Value>, limit: usize) -> usize {
    let mut count = 0usize;
    let mut stack: Vec<&Value> = args.values().collect();
    while let Some(value) = stack.pop() {
        count += 1;
        if count > limit {
            return count;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// About how many JSON values the JSON text `bytes` holds (commas and opening brackets
/// outside strings: within one per array or object of the exact count), counting up to
/// `limit + 1` at most. For a message too large to parse without cost: no allocation.
pub(crate) fn count_values_in_text(bytes: &[u8], limit: usize) -> usize {
    let mut count = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string: to the next quote not escaped.
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
            }
            b',' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return count;
                }
            }
            _ => {}
        }
        i += 1;
    }
    count
}

/// The tool error for arguments over the budget, or `None` when they are within it.
pub(crate) fn over_budget(args: &Map<String, Value>, limit: usize) -> Option<String> {
    (count_values(args, limit) > limit).then(|| {
        format!(
            "Invalid arguments: they hold more than {limit} values, the most one call may \
             send; send less at a time"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn values_are_counted_at_every_depth_up_to_the_limit() {
        assert_eq!(count_values(&Map::new(), 10), 0);
        assert_eq!(count_values(&map(json!({"a": 1, "b": "x"})), 10), 2);
        // The array, its three items, the object inside and its one value.
        assert_eq!(count_values(&map(json!({"a": [1, 2, {"c": null}]})), 10), 5);
        let many = map(json!({"limits": vec!["1"; 1000]}));
        assert_eq!(count_values(&many, 1_000_000), 1001);
        // The walk stops just past the limit.
        assert_eq!(count_values(&many, 10), 11);
        assert!(over_budget(&many, 1000).is_some());
        assert!(over_budget(&many, 1001).is_none());
    }

    #[test]
    fn values_in_text_are_counted_outside_strings() {
        assert_eq!(count_values_in_text(b"{}", 10), 1);
        assert_eq!(count_values_in_text(br#"{"a":[1,2,3]}"#, 10), 4);
        assert_eq!(count_values_in_text(br#"{"a":"x,[{y\",\\"}"#, 10), 1);
        let many = serde_json::to_vec(&json!({"limits": vec!["1"; 1000]})).unwrap();
        assert_eq!(count_values_in_text(&many, 10_000), 1001);
        assert_eq!(count_values_in_text(&many, 10), 11);
    }
}
