use super::*;
use rmcp::model::ServerJsonRpcMessage;
use serde_json::json;

/// The page rmcp makes of a `tools/list` answer holding `tools`.
fn rmcp_page(tools: Value) -> ServerResult {
    let line = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}).to_string();
    match serde_json::from_str::<ServerJsonRpcMessage>(&line).expect("a message") {
        rmcp::model::JsonRpcMessage::Response(r) => r.result,
        other => panic!("not a response: {other:?}"),
    }
}

fn admit(tools: Value) -> Admitted {
    let (entries, _) = page(rmcp_page(tools)).expect("a page");
    let mut admitted = Admitted::default();
    for (i, e) in entries.into_iter().enumerate() {
        admitted.entry(i, e);
    }
    admitted.drop_duplicates();
    admitted
}

fn served(a: &Admitted) -> Vec<String> {
    a.tools.iter().map(|t| t.name.to_string()).collect()
}

fn ok(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[test]
fn a_page_with_one_bad_entry_reaches_admission_whole() {
    // rmcp's typed list refuses the page; its catch-all keeps the JSON, entry by entry.
    let result = rmcp_page(json!([ok("a"), {"name": "b", "inputSchema": true}]));
    assert!(
        matches!(result, ServerResult::CustomResult(_)),
        "{result:?}"
    );
    let result = rmcp_page(json!([ok("a")]));
    assert!(
        matches!(result, ServerResult::ListToolsResult(_)),
        "{result:?}"
    );
}

#[test]
fn a_schema_that_is_no_object_serves_as_declaring_no_parameters() {
    let mut tools = vec![ok("good")];
    let cases = [
        ("yes", Some(json!(true))),
        ("no", Some(json!(false))),
        ("list", Some(json!([]))),
        ("text", Some(json!("object"))),
        ("null", Some(Value::Null)),
        ("missing", None),
    ];
    for (name, schema) in &cases {
        let mut entry = json!({"name": name});
        if let Some(schema) = schema {
            entry["inputSchema"] = schema.clone();
        }
        tools.push(entry);
    }
    let a = admit(Value::Array(tools));
    assert!(a.refused.is_empty(), "{:?}", a.refused);
    assert_eq!(a.tools.len(), cases.len() + 1);
    for (name, _) in cases {
        let note = a.notes.get(name).expect("a note");
        assert!(note.contains("without argument checks"), "{note}");
        let tool = a.tools.iter().find(|t| t.name == name).unwrap();
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
    }
    assert!(!a.notes.contains_key("good"));
}

#[test]
fn a_malformed_entry_is_left_out_and_named() {
    let a = admit(json!([
        ok("good"),
        "a string",
        {"inputSchema": {}},
        {"name": 42, "inputSchema": {}},
        {"name": "bad_description", "description": 7, "inputSchema": {}},
        {"name": "bad_output", "inputSchema": {}, "outputSchema": "x"},
    ]));
    assert_eq!(served(&a), ["good", "bad_output"]);
    assert!(a.notes["bad_output"].contains("outputSchema"));
    let refused: Vec<&str> = a.refused.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        refused,
        ["(entry 1)", "(entry 2)", "(entry 3)", "bad_description"]
    );
    assert!(a.refused[0].why.contains("a string"), "{:?}", a.refused[0]);
    assert!(a.refused[3].why.contains("not a valid tool"));
}

#[test]
fn names_are_held_to_the_rules_of_requests() {
    let long = "a".repeat(500);
    let bad = [
        "nul\u{0}x",
        "ansi\u{1b}[31m",
        "line\nbreak",
        "rtl\u{202e}txt",
        "zero\u{200b}width",
        "",
        long.as_str(),
    ];
    let mut tools: Vec<Value> = bad.iter().map(|n| ok(n)).collect();
    // Look-alikes are not refused here: lint and the provider compare them.
    tools.extend([
        ok("echo"),
        ok("\u{435}cho"),
        ok("\u{ff45}\u{ff43}\u{ff48}\u{ff4f}"),
    ]);
    let a = admit(Value::Array(tools));
    assert_eq!(
        served(&a),
        ["echo", "\u{435}cho", "\u{ff45}\u{ff43}\u{ff48}\u{ff4f}"]
    );
    assert_eq!(a.refused.len(), bad.len());
    for r in &a.refused {
        assert!(
            !r.tool
                .chars()
                .any(|c| c.is_control() || c == '\u{202e}' || c == '\u{200b}'),
            "shown as is: {:?}",
            r.tool
        );
        assert!(r.tool.chars().count() <= MAX_TOOL_NAME_CHARS + 1);
    }
    assert!(a.refused.iter().any(|r| r.tool == "nul\\0x"));
    assert!(a.refused.iter().any(|r| r.tool == "rtl\\u{202e}txt"));
    assert!(a.refused.iter().any(|r| r.why.contains("500 characters")));
    assert!(a.refused.iter().any(|r| r.why.contains("empty")));
}

#[test]
fn a_name_listed_twice_is_served_by_neither_definition() {
    let a = admit(json!([ok("echo"), ok("other"), ok("echo"), ok("echo")]));
    assert_eq!(served(&a), ["other"]);
    assert_eq!(a.refused.len(), 1);
    assert_eq!(a.refused[0].tool, "echo");
    assert!(a.refused[0].why.contains("listed 3 times"));
}

#[test]
fn a_tool_the_reader_could_not_read_whole_is_left_out() {
    let a = admit(json!([
        ok("fine"),
        {"name": "deep", "inputSchema": {}, "_meta": {UNREADABLE: "nested deeper than 100 levels"}},
    ]));
    assert_eq!(served(&a), ["fine"]);
    assert_eq!(a.refused[0].tool, "deep");
    assert!(a.refused[0].why.contains("deeper"));
}

#[test]
fn look_alikes_share_a_key() {
    let echo = same_name_key("echo");
    assert_eq!(same_name_key("\u{435}cho"), echo, "Cyrillic е");
    assert_eq!(
        same_name_key("\u{ff45}\u{ff43}\u{ff48}\u{ff4f}"),
        echo,
        "full-width"
    );
    assert_ne!(same_name_key("echo2"), echo);
    assert_eq!(
        same_name_key("t\u{43e}\u{43e}l_search"),
        same_name_key("tool_search")
    );
}

#[test]
fn clip_and_shown_bound_what_they_print() {
    assert_eq!(clip("abcdef", 3), "abc…");
    assert_eq!(clip("abc", 3), "abc");
    assert_eq!(clip("ééé", 2), "éé…");
    assert_eq!(
        shown(&"x".repeat(300)).chars().count(),
        MAX_TOOL_NAME_CHARS + 1
    );
    assert_eq!(shown("a\u{1b}b"), "a\\u{1b}b");
}
