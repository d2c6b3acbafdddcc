//! The fuzz targets as plain functions of bytes: libFuzzer calls them through
//! `fuzz_targets/*.rs`, and `stable_fuzz` calls them on stable Rust. Each one checks the
//! invariants the server relies on and panics when one breaks; any other panic is a bug too.

use std::sync::OnceLock;

use disco_runtime::catalog::provider::JsonCatalogProvider;
use disco_runtime::catalog::SearchOptions;
use disco_runtime::resolve::args::{normalise_key, prepare, ArgFix, Repair};
use disco_runtime::{Caller, Catalog, CatalogTool, NameRule};
use serde_json::{json, Map, Value};

#[path = "../../disco-macros/src/docs.rs"]
#[allow(dead_code)]
mod docs;

/// Tools the caller `user` may not see.
const ADMIN_ONLY: &[&str] = &["unlock_door", "drop_database", "export_payroll"];

fn visible(caller: &Caller, tool: &CatalogTool) -> bool {
    !ADMIN_ONLY.contains(&tool.name()) || caller.id() == Some("admin")
}

/// A catalog with the shapes that matter: destructive and read-only tools with close names,
/// aliases, keywords, hidden and admin-only tools, and every parameter type.
fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let tools = json!({"tools": [
            {"name": "lock_door", "description": "Lock a door of the building.",
             "inputSchema": {"type": "object", "properties": {"door": {"type": "string"}}, "required": ["door"]},
             "annotations": {"destructiveHint": true}},
            {"name": "unlock_door", "description": "Unlock a door so anyone can enter.",
             "inputSchema": {"type": "object", "properties": {"door": {"type": "string"}}, "required": ["door"]},
             "annotations": {"destructiveHint": true}},
            {"name": "drop_database", "description": "Delete the whole database.",
             "inputSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]},
             "annotations": {"destructiveHint": true}},
            {"name": "export_payroll", "description": "Export the salaries of a month.",
             "_meta": {"disco/aliases": ["payroll_export"], "disco/keywords": ["salary"]},
             "inputSchema": {"type": "object", "properties": {"month": {"type": "string", "enum": ["jan", "feb", "mar"]}}, "required": ["month"]},
             "annotations": {"readOnlyHint": true}},
            {"name": "search_papers", "description": "Search the knowledge base for papers and notes by meaning.",
             "_meta": {"disco/aliases": ["search_paper", "search_knowledgebase"], "disco/keywords": ["knowledge base", "papers"]},
             "inputSchema": {"type": "object", "properties": {
                 "query": {"type": "string", "description": "what to look for"},
                 "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                 "tags": {"type": "array", "items": {"type": "string"}},
                 "exact": {"type": "boolean"}},
               "required": ["query"]},
             "annotations": {"readOnlyHint": true}},
            {"name": "convert_units", "description": "Convert a value between units of length or mass.",
             "inputSchema": {"type": "object", "properties": {
                 "value": {"type": "number"},
                 "from_unit": {"type": "string", "enum": ["km", "mi", "kg", "lb"]},
                 "to_unit": {"type": "string", "enum": ["km", "mi", "kg", "lb"]},
                 "options": {"type": "object", "properties": {"precision": {"type": "integer", "minimum": 0, "maximum": 10}}}},
               "required": ["value", "from_unit", "to_unit"]},
             "annotations": {"readOnlyHint": true}},
            {"name": "get_weather_forecast", "description": "Get the weather forecast for a city for the next days.",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"]},
             "annotations": {"readOnlyHint": true}},
            {"name": "send_email", "description": "Send an email message to a recipient.",
             "_meta": {"disco/aliases": ["email_send", "mail"]},
             "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}, "cc": {"type": "array", "items": {"type": "string"}}}, "required": ["to", "body"]}},
            {"name": "debug_dump", "description": "Dump the internal state for debugging.",
             "_meta": {"disco/hidden": true},
             "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
        ]});
        Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools).expect("valid catalog"))
            .visibility(visible)
            .search(SearchOptions::default().enabled(true))
            .server_name("disco")
            .from_inventory()
            .expect("catalog builds")
    })
}

fn callers() -> [Caller; 2] {
    [Caller::new("user"), Caller::new("admin")]
}

// The morphology of negation, as tests/corpus/polarity/generate.py states it: affixes glued to
// the name's first word, and words put before or after it. (`in`/`im`/`il`/`ir`/`a` are left
// out: before a short word they make another word, not its negation.)
const NEGATING_AFFIXES: &[&str] = &[
    "un", "de", "dis", "non", "anti", "counter", "mis", "no", "not",
];
const NEGATING_WORDS: &[&str] = &[
    "no", "not", "never", "dont", "without", "skip", "disable", "off", "undo", "revert", "cancel",
    "unset", "stop", "non",
];

/// A few opposite forms of `name`, which reached `tool`, chosen by the input's bytes (every
/// form of every input would make each run twenty times slower): an affix glued to the first
/// word of the last namespace segment when that word is one of the tool's words (`unlock_door`,
/// `mcp__x__unlockDoor`: an affix on stray letters negates nothing of the tool), or a
/// negating word before it or at the end (`undo_lock_door`, `lock_door_off`).
fn opposite_forms(name: &str, tool: &str, data: &[u8]) -> Vec<String> {
    let start = ["__", ".", "/", ":"]
        .iter()
        .filter_map(|sep| name.rfind(sep).map(|i| i + sep.len()))
        .max()
        .unwrap_or(0);
    let (head, tail) = name.split_at(start);
    let seed = data
        .iter()
        .fold(0usize, |h, &b| h.wrapping_mul(31).wrapping_add(b as usize));
    let before = NEGATING_WORDS[(seed / 7) % NEGATING_WORDS.len()];
    let after = NEGATING_WORDS[(seed / 101) % NEGATING_WORDS.len()];
    let mut forms = vec![format!("{head}{before}_{tail}"), format!("{name}_{after}")];
    // The first word of the tail: its first letter, then lowercase letters.
    let first_len = tail
        .char_indices()
        .skip(1)
        .find(|(_, c)| !c.is_ascii_lowercase())
        .map_or(tail.len(), |(i, _)| i);
    let first = tail[..first_len].to_ascii_lowercase();
    if first.len() >= 3
        && first.chars().all(|c| c.is_ascii_lowercase())
        && tool.split('_').any(|w| w == first)
    {
        let affix = NEGATING_AFFIXES[seed % NEGATING_AFFIXES.len()];
        // Glued as one word: `unlockDoor`, not `unLockDoor`.
        forms.push(format!("{head}{affix}{first}{}", &tail[first_len..]));
    }
    forms
}

/// Tool-name resolution: a fuzzy correction never reaches a destructive tool, nothing
/// resolves to or suggests a tool the caller may not see, suggestions stay few, and no
/// resolution crosses polarity: when the name reaches a tool, its opposite forms neither
/// reach nor suggest that same tool.
pub fn name_resolution(data: &[u8]) {
    let name = String::from_utf8_lossy(data);
    let c = catalog();
    for caller in callers() {
        let r = c.resolve(&name, &caller);
        if let (Some(tool), Some(rule)) = (&r.tool, r.rule) {
            assert!(
                !(rule.is_fuzzy() && tool.is_destructive()),
                "{name:?} reached destructive {} by {}",
                tool.name(),
                rule.as_str()
            );
            assert!(
                visible(&caller, tool),
                "{name:?} resolved to invisible {}",
                tool.name()
            );
            assert!(r.suggestions.is_empty());
            if name.len() <= disco_runtime::resolve::name::MAX_NAME_LEN {
                for opposite in opposite_forms(&name, tool.name(), data) {
                    let o = c.resolve(&opposite, &caller);
                    if let (Some(t), Some(rule)) = (&o.tool, o.rule) {
                        assert!(
                            t.name() != tool.name()
                                || matches!(rule, NameRule::Exact | NameRule::Alias),
                            "{name:?} reaches {} and so does its opposite {opposite:?} ({})",
                            tool.name(),
                            rule.as_str()
                        );
                    }
                    assert!(
                        !o.suggestions.iter().any(|s| s == tool.name()),
                        "{name:?} reaches {} and its opposite {opposite:?} suggests it",
                        tool.name()
                    );
                }
            }
        }
        assert!(
            r.suggestions.len() <= 10,
            "{} suggestions",
            r.suggestions.len()
        );
        for s in &r.suggestions {
            let t = c.get(s).expect("suggestions are real tools");
            assert!(visible(&caller, t), "{name:?} suggested invisible {s}");
        }
    }
}

/// Argument repair: never panics, arguments it accepts satisfy the tool's schema, and no key
/// that negates a parameter is renamed into it.
pub fn arg_repair(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tools: Vec<&CatalogTool> = catalog().tools().iter().map(|t| &**t).collect();
    let tool = tools[pick as usize % tools.len()];
    let args: Map<String, Value> = match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            // Put the value under each parameter's name in turn.
            let mut map = Map::new();
            if let Some(p) = tool
                .params()
                .get(pick as usize % tool.params().len().max(1))
            {
                map.insert(p.name.clone(), other);
            }
            map
        }
        Err(_) => {
            // Not JSON: use the text as a key and as a value.
            let text = String::from_utf8_lossy(rest).into_owned();
            let mut map = Map::new();
            map.insert(text.clone(), Value::String(text));
            map
        }
    };
    for repair in [Repair::Safe, Repair::Strict] {
        match prepare(tool, args.clone(), repair) {
            Ok(prepared) => {
                for fix in &prepared.fixes {
                    if let ArgFix::Renamed { from, to, rule } = fix {
                        assert!(
                            !negates(from, to),
                            "{}: the negated key {from:?} was renamed to {to:?} ({rule})",
                            tool.name()
                        );
                    }
                }
                let problems = tool.validate_input(&Value::Object(prepared.arguments.clone()));
                assert!(
                    problems.is_empty(),
                    "{}: accepted {:?} as {:?} but the schema says {problems:?}",
                    tool.name(),
                    args,
                    prepared.arguments
                );
            }
            Err(message) => {
                assert!(!message.is_empty());
                assert!(
                    message.len() < 16 * 1024,
                    "error message of {} bytes",
                    message.len()
                );
            }
        }
    }
}

/// Whether `key` is `param` with a negating affix or word glued on, in any spelling
/// (`no_force`, `forceOff`, `unforce`, `Not-Force`): such a key is never taken for `param`.
fn negates(key: &str, param: &str) -> bool {
    let (key, param) = (normalise_key(key), normalise_key(param));
    if key == param || param.is_empty() {
        return false;
    }
    NEGATING_AFFIXES
        .iter()
        .chain(NEGATING_WORDS)
        .any(|n| key.strip_prefix(n) == Some(&param) || key.strip_suffix(n) == Some(&param))
}

/// Search: bounded, finite scores, best first, only tools the caller may see.
pub fn search_query(data: &[u8]) {
    let query = String::from_utf8_lossy(data);
    let c = catalog();
    let k = 1 + (data.first().copied().unwrap_or(0) as usize % 20);
    for caller in callers() {
        let hits = c.search(&query, k, &caller);
        assert!(hits.len() <= k);
        let mut last = f32::INFINITY;
        for (tool, score) in &hits {
            assert!(score.is_finite() && *score >= 0.0, "score {score}");
            assert!(*score <= last + 1e-4, "not sorted");
            last = *score;
            assert!(
                visible(&caller, tool),
                "{query:?} found invisible {}",
                tool.name()
            );
        }
    }
}

/// Doc comments: any text parses; every parameter text comes from an `# Arguments` item.
pub fn doc_comments(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let span = proc_macro2::Span::call_site();
    let lines: Vec<(String, proc_macro2::Span)> =
        text.split('\n').map(|l| (l.to_string(), span)).collect();
    let parsed = docs::parse(&lines);
    for p in &parsed.params {
        assert!(
            text.contains(p.name.as_str()),
            "parameter {:?} not in the input",
            p.name
        );
    }
    let refs: Vec<&str> = text.split('\n').collect();
    let _ = docs::reflow(&refs);
}

/// A fuzz target: any bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// The targets by name, for the stable runner.
pub const TARGETS: &[(&str, Target)] = &[
    ("name_resolution", name_resolution),
    ("arg_repair", arg_repair),
    ("search_query", search_query),
    ("doc_comments", doc_comments),
];
