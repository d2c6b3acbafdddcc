//! The promise: for every line, the typed route either declines or builds exactly the message
//! rmcp's own parse builds; and it declines no well-formed `tools/call` that names its method
//! verbatim.

use super::tools_call;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestMetaObject};

/// fastrand, seeded: the cases must be the same on every run.
struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len())]
    }
    /// One of `good` seven times in eight, else one of `bad`: most lines are valid, so that
    /// both sides of the property are met often.
    fn choose<'a>(&mut self, good: &[&'a str], bad: &[&'a str]) -> &'a str {
        if self.below(8) == 0 {
            self.pick(bad)
        } else {
            self.pick(good)
        }
    }
    fn shuffle<T>(&mut self, items: &mut [T]) {
        self.0.shuffle(items)
    }
}

/// `None` in a choice list: the key is left out.
const ABSENT: &str = "\u{0}";

fn object(rng: &mut Rng, mut pairs: Vec<(&str, String)>) -> String {
    pairs.retain(|(_, v)| v != ABSENT);
    if rng.below(3) == 0 {
        rng.shuffle(&mut pairs);
    }
    let sep = if rng.below(4) == 0 { " , " } else { "," };
    let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("{{{}}}", body.join(sep))
}

fn params(rng: &mut Rng) -> String {
    let name = rng.choose(
        &[
            r#""echo""#,
            r#""add_numbers""#,
            r#""\u0065cho""#,
            r#""quote\"d\\name""#,
            r#""""#,
        ],
        &["3", "null", r#"["echo"]"#, ABSENT],
    );
    let arguments = rng.choose(
        &[
            ABSENT,
            "{}",
            r#"{"text":"hi"}"#,
            r#"{"a":1,"b":[1,2.5,-3],"c":{"d":null,"e":"\n\u00e9\ud83d\ude00"},"big":18446744073709551615}"#,
            "null",
        ],
        &[r#"{"x":1e400}"#, "[]", r#""text""#, "7"],
    );
    let meta = rng.choose(
        &[
            ABSENT,
            ABSENT,
            r#"{"progressToken":1}"#,
            r#"{"progressToken":"tok-\"1\""}"#,
            r#"{"progressToken":2,"io.modelcontextprotocol/protocolVersion":"2025-06-18","other":{"k":[true]}}"#,
            "{}",
            "null",
        ],
        &["5", "[]"],
    );
    let extra = rng.pick(&[ABSENT, ABSENT, r#"{"nested":[1,{"z":2}]}"#, "null"]);
    let request_state = rng.choose(&[ABSENT, ABSENT, r#""state-1""#], &["5"]);
    let input_responses = rng.choose(&[ABSENT, ABSENT, "{}"], &[r#""x""#]);
    let mut pairs = vec![
        (r#""name""#, name.to_string()),
        (r#""arguments""#, arguments.to_string()),
        (r#""_meta""#, meta.to_string()),
        (r#""extraKey""#, extra.to_string()),
        (r#""requestState""#, request_state.to_string()),
        (r#""inputResponses""#, input_responses.to_string()),
    ];
    if rng.below(20) == 0 {
        pairs.push((r#""name""#, r#""other""#.to_string()));
    }
    if rng.below(20) == 0 {
        pairs.push((r#""_meta""#, r#"{"progressToken":9}"#.to_string()));
    }
    match rng.below(30) {
        0 => "null".into(),
        1 => "[]".into(),
        2 => r#""params""#.into(),
        3 => ABSENT.into(),
        _ => object(rng, pairs),
    }
}

fn line(rng: &mut Rng) -> String {
    let jsonrpc = rng.choose(&[r#""2.0""#], &[r#""1.0""#, "2.0", ABSENT]);
    let id = rng.choose(
        &[
            "1",
            "0",
            "-5",
            "9223372036854775807",
            "-9223372036854775808",
            r#""abc""#,
            r#""""#,
            r#""a\"b\u00e9""#,
        ],
        &[
            "18446744073709551615",
            "1.5",
            "1e3",
            "null",
            "true",
            "{}",
            ABSENT,
        ],
    );
    let method = rng.choose(
        &[r#""tools/call""#],
        &[
            r#""tools\/call""#,
            r#""tools/list""#,
            r#""Tools/call""#,
            "5",
            ABSENT,
        ],
    );
    let mut pairs = vec![
        (r#""jsonrpc""#, jsonrpc.to_string()),
        (r#""id""#, id.to_string()),
        (r#""params""#, params(rng)),
    ];
    // The method before or after the params (serde meets them in either order).
    let at = rng.below(pairs.len() + 1);
    pairs.insert(at, (r#""method""#, method.to_string()));
    match rng.below(12) {
        0 => pairs.push((r#""result""#, "null".into())),
        1 => pairs.push((r#""error""#, r#"{"code":1,"message":"x"}"#.into())),
        2 => pairs.push((r#""extra""#, "[1,2]".into())),
        3 => pairs.push((r#""_meta""#, "{}".into())),
        4 => pairs.push((r#""id""#, "2".into())),
        5 => pairs.push((r#""method""#, r#""tools/call""#.into())),
        6 => pairs.push((r#""jsonrpc""#, r#""2.0""#.into())),
        _ => {}
    }
    object(rng, pairs)
}

/// Compares the two parses of one line; returns whether the typed route took it.
fn agree(line: &str) -> bool {
    let fast = tools_call(line.as_bytes());
    let full = serde_json::from_slice::<ClientJsonRpcMessage>(line.as_bytes()).ok();
    let Some(fast) = fast else {
        if let Some(JsonRpcMessage::Request(r)) = &full {
            if let ClientRequest::CallToolRequest(_) = &r.request {
                // The one kind of `tools/call` left to rmcp on purpose: the method written
                // with escapes, which the byte search before the parse does not see.
                assert!(
                    !line.contains(r#""tools/call""#),
                    "rmcp reads a tools/call the typed route declined: {line}"
                );
            }
        }
        return false;
    };
    let Some(full) = full else {
        panic!("the typed route accepted what rmcp refuses: {line}");
    };
    assert_eq!(
        serde_json::to_value(&fast).ok(),
        serde_json::to_value(&full).ok(),
        "{line}"
    );
    assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line}");
    let (JsonRpcMessage::Request(f), JsonRpcMessage::Request(r)) = (&fast, &full) else {
        panic!("not both requests: {line}");
    };
    let (ClientRequest::CallToolRequest(f), ClientRequest::CallToolRequest(r)) =
        (&f.request, &r.request)
    else {
        panic!("not both tools/call: {line}");
    };
    // `_meta` lands in the extensions in both (serialisation would not tell it from the
    // params' own `meta`).
    assert_eq!(
        f.extensions.get::<RequestMetaObject>(),
        r.extensions.get::<RequestMetaObject>(),
        "{line}"
    );
    assert_eq!(f.params.meta, r.params.meta, "{line}");
    true
}

#[test]
fn the_typed_route_builds_what_rmcp_builds_or_declines() {
    let mut rng = Rng(fastrand::Rng::with_seed(0x5EED_CA11));
    let (mut taken, mut declined) = (0, 0);
    for _ in 0..30_000 {
        if agree(&line(&mut rng)) {
            taken += 1;
        } else {
            declined += 1;
        }
    }
    // Both sides of the property are exercised.
    assert!(
        taken > 1_000 && declined > 1_000,
        "{taken} taken, {declined} declined"
    );
}

#[test]
fn found_cases() {
    let taken = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        r#"{"params":{"arguments":{},"name":"echo","_meta":{"progressToken":"p"}},"method":"tools/call","id":"x","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"extra":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","_meta":null}}"#,
    ];
    for line in taken {
        assert!(agree(line), "declined: {line}");
    }
    let declined = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"result":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"error":{}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":[]}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}"#,
        // Positional forms, which serde's derived structs would read and rmcp refuses.
        r#"["2.0",1,"tools/call",{"name":"echo"}]"#,
        r#"  ["2.0",1,"tools/call",["echo",{"text":"hi"}]]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[null,"echo",{"text":"hi"}]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["echo"]}"#,
    ];
    for line in declined {
        assert!(!agree(line), "taken: {line}");
    }
}
