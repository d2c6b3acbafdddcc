use super::keys::{closeness_score, singular_key};
use super::values::enum_key;
use super::*;
use crate::tool::built::MetaKind;
use serde_json::json;

pub(super) fn tool(schema: Value) -> CatalogTool<MetaKind> {
    let Value::Object(schema) = schema else {
        panic!("a schema is an object")
    };
    let def = crate::tool::provider::DynamicTool::new(rmcp::model::Tool::new(
        "t",
        "a test tool",
        std::sync::Arc::new(schema),
    ));
    // Argument repair reads a tool's schema alone: how it runs is nothing to it.
    CatalogTool::from_dynamic(def, MetaKind::Search).expect("a valid tool")
}

fn outcome(result: Result<Prepared, String>) -> Result<(Value, usize), String> {
    result.map(|p| (Value::Object(p.arguments), p.fixes.len()))
}

/// Arguments sent exactly as declared skip the repair rules: the outcome must be the one
/// the rules give, for valid arguments and for ones only the schema's limits refuse.
#[test]
fn arguments_sent_as_declared_come_out_as_the_repair_rules_leave_them() {
    let t = tool(json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "x": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
            "free": {}
        },
        "required": ["n"]
    }));
    let cases = [
        json!({"n": 3}),
        json!({"n": 3, "x": 2.5, "tags": ["a"], "mode": "a", "free": [1]}),
        json!({"n": 0}),
        json!({"n": 3, "mode": "c"}),
        json!({"n": 3.0}),
        json!({"n": "3"}),
        json!({"n": 3, "tags": "a"}),
        json!({"n": 3, "x": null}),
        json!({"n": 3, "mode": null}),
        json!({"x": 1}),
        json!({"n": 3, "nn": 1}),
        json!({"N": 3}),
    ];
    for case in cases {
        let Value::Object(args) = case.clone() else {
            unreachable!()
        };
        for repair in [Repair::Safe, Repair::Strict] {
            assert_eq!(
                outcome(prepare(&t, args.clone(), repair)),
                outcome(repair_and_check(&t, args.clone(), repair)),
                "{case} ({repair:?})"
            );
        }
    }
    // The short way is taken only when nothing is to be repaired.
    let Value::Object(float) = json!({"n": 3.0}) else {
        unreachable!()
    };
    assert_eq!(
        outcome(prepare(&t, float, Repair::Safe)),
        Ok((json!({"n": 3}), 1))
    );
}

fn remove_directory() -> CatalogTool<MetaKind> {
    tool(json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "force": {"type": "boolean"},
            "recursive": {"type": "boolean"},
            "max_price": {"type": "number"},
            "include_tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["path"]
    }))
}

pub(super) fn args(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else {
        unreachable!()
    };
    map
}

/// A negated flag is the call the model meant to be safe: it is never the flag.
#[test]
fn keys_that_negate_a_parameter_are_answered_never_repaired() {
    let t = remove_directory();
    for (key, param) in [
        ("no_force", "force"),
        ("noforce", "force"),
        ("force_no", "force"),
        ("unforce", "force"),
        ("un_force", "force"),
        ("NoForce", "force"),
        ("forceOff", "force"),
        ("force_off", "force"),
        ("not_force", "force"),
        ("dont_force", "force"),
        ("without_force", "force"),
        ("skip_force", "force"),
        ("nonforce", "force"),
        ("no_recursive", "recursive"),
        ("recursive_no", "recursive"),
        ("norecursive", "recursive"),
        ("unrecursive", "recursive"),
        ("non_recursive", "recursive"),
        ("min_price", "max_price"),
        ("exclude_tags", "include_tags"),
    ] {
        for value in [
            json!(true),
            json!(false),
            json!("true"),
            json!(1),
            json!(["x"]),
        ] {
            for repair in [Repair::Safe, Repair::Strict] {
                let sent = args(json!({"path": "/data", key: value}));
                let err = prepare(&t, sent, repair).expect_err(key);
                assert!(
                    err.contains(&format!("`{key}` states the opposite")) && err.contains(param),
                    "{key}: {err}"
                );
            }
        }
    }
    let err = prepare(
        &t,
        args(json!({"path": "/", "no_force": true})),
        Repair::Safe,
    )
    .unwrap_err();
    // The model is never told what to send: a key read wrongly must not become advice to
    // send the opposite of what was meant.
    assert!(!err.contains("send"), "{err}");
    let err = prepare(&t, args(json!({"path": "/", "min_price": 3})), Repair::Safe).unwrap_err();
    assert!(err.contains("`max_price` (number)"), "{err}");
}

#[test]
fn a_boolean_is_reached_by_a_misspelling_only_with_a_boolean_value() {
    let t = remove_directory();
    let p = prepare(
        &t,
        args(json!({"path": "/", "recursiv": true})),
        Repair::Safe,
    )
    .unwrap();
    assert_eq!(p.arguments.get("recursive"), Some(&json!(true)));
    let p = prepare(
        &t,
        args(json!({"path": "/", "forse": "false"})),
        Repair::Safe,
    )
    .unwrap();
    assert_eq!(p.arguments.get("force"), Some(&json!(false)));
    for sent in [
        json!({"path": "/", "recursiv": "yes"}),
        json!({"path": "/", "recursiv": 1}),
        json!({"path": "/", "nforce": true}),
        json!({"path": "/", "reforce": true}),
    ] {
        assert!(
            prepare(&t, args(sent.clone()), Repair::Safe).is_err(),
            "{sent}"
        );
    }
    // A change of prefix is another key, and fused opposites are opposites.
    let t2 = tool(json!({
        "type": "object",
        "properties": {"limit": {"type": "integer"}, "min_price": {"type": "number"},
                       "stops": {"type": "array"}, "no_of_adults": {"type": "integer"},
                       "location": {"type": "string"}}
    }));
    for sent in [
        json!({"relimit": 3}),
        json!({"unlimit": 3}),
        json!({"maxprice": 3}),
        json!({"MaxPrice": 3}),
    ] {
        assert!(
            prepare(&t2, args(sent.clone()), Repair::Safe).is_err(),
            "{sent}"
        );
    }
    // Nouns that look like negating verbs, and parameters with a `no` of their own, do not
    // make a misspelled key an opposite.
    let p = prepare(
        &t2,
        args(json!({"stpos": [], "loction": "Paris"})),
        Repair::Safe,
    )
    .unwrap();
    assert!(p.arguments.contains_key("stops") && p.arguments.contains_key("location"));
    // The plural of another parameter is that parameter, whatever its opposite says.
    let t = tool(json!({
        "type": "object",
        "properties": {"start_location": {"type": "string"}, "end_location": {"type": "string"}}
    }));
    let p = prepare(&t, args(json!({"end_locations": "LA"})), Repair::Safe).unwrap();
    assert_eq!(p.arguments.get("end_location"), Some(&json!("LA")));
}

#[test]
fn keys_normalise_across_styles() {
    assert_eq!(normalise_key("maxResults"), "maxresults");
    assert_eq!(normalise_key("Max-Results"), "maxresults");
    assert_eq!(normalise_key("max_results"), "maxresults");
    assert_eq!(normalise_key("max results"), "maxresults");
}

#[test]
fn closeness_prefers_typos_and_plurals() {
    assert!(closeness_score("query", "qeury") >= 80);
    assert_eq!(singular_key("tags"), singular_key("tag"));
    assert_eq!(singular_key("boxes"), singular_key("box"));
    assert_eq!(
        singular_key("initialVelocities"),
        singular_key("initial_velocity")
    );
    assert_eq!(singular_key("start_cities"), singular_key("startCity"));
    assert_ne!(singular_key("class"), singular_key("cla"));
    assert_eq!(closeness_score("id", "ip"), 0);
    assert_eq!(closeness_score("limit", "offset"), 0);
}

#[test]
fn coercions_follow_the_schema() {
    let int = json!({"type": "integer"});
    assert_eq!(coerce(&json!("5"), &int).unwrap().0, json!(5));
    assert_eq!(coerce(&json!(5.0), &int).unwrap().0, json!(5));
    assert!(coerce(&json!(5.5), &int).is_none());
    assert!(coerce(&json!("five"), &int).is_none());
    let boolean = json!({"type": "boolean"});
    assert_eq!(coerce(&json!("TRUE"), &boolean).unwrap().0, json!(true));
    assert!(coerce(&json!("yes"), &boolean).is_none());
    let arr = json!({"type": "array", "items": {"type": "string"}});
    assert_eq!(coerce(&json!("a"), &arr).unwrap().0, json!(["a"]));
    assert_eq!(
        coerce(&json!("[\"a\",\"b\"]"), &arr).unwrap().0,
        json!(["a", "b"])
    );
    let ints = json!({"type": "array", "items": {"type": "integer"}});
    assert_eq!(coerce(&json!("7"), &ints).unwrap().0, json!([7]));
    assert_eq!(coerce(&json!(7), &ints).unwrap().0, json!([7]));
    let obj = json!({"type": "object"});
    assert_eq!(
        coerce(&json!("{\"a\":1}"), &obj).unwrap().0,
        json!({"a": 1})
    );
    assert!(coerce(&json!("[1]"), &obj).is_none());
    let string = json!({"type": "string"});
    assert_eq!(coerce(&json!(12), &string).unwrap().0, json!("12"));
    assert!(coerce(&json!("ok"), &string).is_none());
}

/// Every spelling of an allowed value that differs from it only by case and separators
/// becomes that value, through `enum` and through `oneOf` consts alike; a spelling that two
/// allowed values share, or that no value has, is left for the schema to refuse.
#[test]
fn enum_values_are_repaired_only_when_one_matches() {
    let values = [
        "high",
        "low",
        "in_progress",
        "done",
        "readOnly",
        "read-write",
        "A",
        "a",
        "x",
    ];
    let spellings = |v: &str| -> Vec<String> {
        let words: Vec<String> = crate::text::words::split_words(v);
        let mut out = vec![
            v.to_uppercase(),
            v.to_lowercase(),
            words.join("_"),
            words.join("-"),
            words.join(" "),
            words.join("").to_uppercase(),
        ];
        out.retain(|s| s != v);
        out
    };
    let as_enum = json!({"type": "string", "enum": values});
    let as_one_of =
        json!({"oneOf": values.iter().map(|v| json!({"const": v})).collect::<Vec<_>>()});
    let key = |s: &str| enum_key(s);
    for schema in [&as_enum, &as_one_of] {
        for v in values {
            assert_eq!(
                enum_value(&json!(v), schema),
                None,
                "{v} is allowed as sent"
            );
            let twins = values.iter().filter(|o| key(o) == key(v)).count();
            for sent in spellings(v) {
                if values.contains(&sent.as_str()) {
                    continue;
                }
                let got = enum_value(&json!(sent), schema);
                if twins == 1 {
                    assert_eq!(got, Some(json!(v)), "{sent} for {v}");
                } else {
                    assert_eq!(got, None, "{sent}: {twins} values match");
                }
            }
        }
        for other in ["highest", "hgh", "progress", "", "b", "done!"] {
            assert_eq!(enum_value(&json!(other), schema), None, "{other}");
        }
        assert_eq!(enum_value(&json!(5), schema), None);
    }
    // Signs, digits and dots are part of a value, not separators: a value without one of
    // them is a different value, never repaired into the one that has it.
    let signed = [
        (vec!["+1", "-1", "laugh"], vec!["1", " 1", "1 "]),
        (vec!["UTC+5", "UTC-5"], vec!["UTC5", "utc 5", "UTC_5"]),
        (
            vec!["-created_at", "name"],
            vec!["created_at", "CREATED_AT", "created at"],
        ),
        (vec!["1.0", "2.0"], vec!["10", "1_0", "1-0"]),
        (vec!["-", "."], vec!["", " ", "_"]),
        (vec!["asc", "-asc"], vec!["ASC_", "_asc", "--asc"]),
    ];
    for (allowed, sent) in signed {
        let schema = json!({"type": "string", "enum": allowed});
        for s in sent {
            assert_eq!(enum_value(&json!(s), &schema), None, "{s} for {allowed:?}");
        }
    }
    // Generated: dropping or adding any character that is not a separator between two
    // letters never meets an allowed value.
    for v in ["-1", "+1", "UTC-5", "v1.2", "-created_at", "a-b", "x_y z"] {
        let schema = json!({"enum": [v]});
        let chars: Vec<char> = v.chars().collect();
        for i in 0..chars.len() {
            let between_letters = i > 0
                && chars[i - 1].is_alphabetic()
                && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
            if between_letters && matches!(chars[i], '_' | '-' | ' ') {
                continue;
            }
            let dropped: String = chars
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, c)| c)
                .collect();
            assert_eq!(
                enum_value(&json!(dropped), &schema),
                None,
                "{dropped} for {v}"
            );
        }
        for extra in ['-', '+', '.', '_'] {
            let added = format!("{extra}{v}");
            assert_eq!(enum_value(&json!(added), &schema), None, "{added} for {v}");
        }
    }
    // Not a list of values: nothing to repair to.
    assert_eq!(enum_value(&json!("HIGH"), &json!({"type": "string"})), None);
    let mixed = json!({"oneOf": [{"const": "high"}, {"type": "integer"}]});
    assert_eq!(enum_value(&json!("HIGH"), &mixed), None);
}

#[test]
fn an_enum_value_in_another_case_is_repaired_and_reported() {
    let t = tool(json!({
        "type": "object",
        "properties": {"priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]}},
        "required": ["priority"]
    }));
    let p = prepare(
        &t,
        json!({"priority": "HIGH"}).as_object().unwrap().clone(),
        Repair::Safe,
    )
    .unwrap();
    assert_eq!(p.arguments["priority"], json!("high"));
    assert_eq!(
        p.fixes[0].to_json(),
        json!({"kind": "coerced", "param": "priority", "from": "HIGH", "to": "high", "rule": "enum_case"})
    );
    // Strict checks only.
    let err = prepare(
        &t,
        json!({"priority": "HIGH"}).as_object().unwrap().clone(),
        Repair::Strict,
    )
    .unwrap_err();
    // The refusal names every allowed value, not the first two.
    for v in ["low", "medium", "high", "urgent"] {
        assert!(err.contains(&format!("\"{v}\"")), "{v} missing from: {err}");
    }
    assert!(!err.contains("other candidates"), "{err}");
}

/// Without a compiled input schema the same arguments are repaired alike, whether or not
/// something else in them takes the slower path.
#[test]
fn an_enum_value_is_repaired_alike_on_both_paths() {
    for pattern in [None, Some("(")] {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "p": {"type": "string", "enum": ["high", "low"]},
                "q": {"type": "string"}
            }
        });
        if let Some(bad) = pattern {
            // A pattern that does not compile: the tool is kept, unvalidated.
            schema["properties"]["q"]["pattern"] = json!(bad);
        }
        let t = tool(schema);
        assert_eq!(t.validates_input(), pattern.is_none());
        for args in [json!({"p": "HIGH"}), json!({"p": "HIGH", "q": null})] {
            let p = prepare(&t, args.as_object().unwrap().clone(), Repair::Safe).unwrap();
            assert_eq!(p.arguments["p"], json!("high"), "{args} ({pattern:?})");
        }
    }
}

#[test]
fn a_long_list_of_allowed_values_is_shown_up_to_a_bound() {
    let values: Vec<String> = (0..60).map(|i| format!("value_{i:02}")).collect();
    let t = tool(json!({
        "type": "object",
        "properties": {"v": {"type": "string", "enum": values}},
    }));
    let err = prepare(
        &t,
        json!({"v": "x".repeat(5_000)}).as_object().unwrap().clone(),
        Repair::Safe,
    )
    .unwrap_err();
    let line = err.lines().next().unwrap();
    assert!(
        line.contains("\"value_00\"") && line.contains("\"value_49\""),
        "{line}"
    );
    assert!(!line.contains("\"value_50\""), "{line}");
    assert!(line.contains("(60 in all)"), "{line}");
    assert!(line.len() < 1_500, "{} bytes", line.len());
}
