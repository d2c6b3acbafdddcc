//! The layers of disco-gateway point one way: ARCHITECTURE.md, "The layers of disco-gateway",
//! draws them and says why; [`LAYERS`] holds them here, and `the_diagram_is_the_layers` checks
//! that the two agree.
//!
//! A module may name only modules of a lower layer (and itself, and its own children); the
//! modules of one layer do not name each other. The crate roots (`lib.rs`, the binary's
//! `main.rs`) are above them all. The paths are read as disco-runtime's architecture test reads
//! them, by the same code. ARCHITECTURE.md's table names every source file and only files that
//! exist, and its diagram is these layers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[path = "../../disco-runtime/tests/architecture/scan.rs"]
mod scan;

use scan::Layers;

/// The layer of each top-level module; a module may name modules of a lower layer.
const LAYERS: Layers = Layers {
    modules: &[
        ("headers", 0),
        ("relay", 0),
        ("wire", 0),
        ("text", 0),
        ("metrics", 0),
        ("admit", 1),
        ("call", 1),
        ("config", 1),
        ("pins", 1),
        ("client", 2),
        ("adopt", 2),
        ("oauth", 2),
        ("forward", 3),
        ("upstream", 4),
        ("provider", 5),
        ("follow", 6),
        ("search", 5),
        ("learning", 5),
        ("lint", 6),
    ],
};

/// Where the gateway's layers are told.
const SECTION: &str = "## The layers of disco-gateway";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The gateway's section of ARCHITECTURE.md, up to the next section.
fn section() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let start = text
        .find(SECTION)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{SECTION}`"));
    let rest = &text[start + SECTION.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn every_module_names_only_the_layers_below_it() {
    LAYERS.assert_one_way(&src(), 10);
}

/// Every source file is in the table's first column, and every file named there exists.
#[test]
fn the_table_names_every_source_file() {
    let src = src();
    let mut files = Vec::new();
    scan::sources(&src, &mut files);
    let on_disk: BTreeSet<String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            rel.iter()
                .map(|p| p.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    let mut named = BTreeSet::new();
    for row in section().lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap_or_default();
        for (i, piece) in first.split('`').enumerate() {
            if i % 2 == 1 && piece.ends_with(".rs") {
                named.insert(piece.to_string());
            }
        }
    }
    let missing: Vec<_> = on_disk.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "source files ARCHITECTURE.md's table of the gateway does not name: {missing:?}"
    );
    let gone: Vec<_> = named.difference(&on_disk).collect();
    assert!(
        gone.is_empty(),
        "files ARCHITECTURE.md's table of the gateway names that do not exist: {gone:?}"
    );
}

/// The diagram of ARCHITECTURE.md is the layers of this test: each `──▶` steps down a layer,
/// `{ a , b }` is one layer.
#[test]
fn the_diagram_is_the_layers() {
    let section = section();
    let diagram = section
        .lines()
        .find(|l| l.contains("──▶"))
        .expect("the gateway's section has no diagram");
    let steps: Vec<&str> = diagram.split("──▶").collect();
    let mut drawn = BTreeSet::new();
    for (i, step) in steps.iter().enumerate() {
        let layer = (steps.len() - 1 - i) as u32;
        for module in step.trim().trim_matches(['{', '}']).split(',') {
            drawn.insert((module.trim().to_string(), layer));
        }
    }
    let tested: BTreeSet<(String, u32)> = LAYERS
        .modules
        .iter()
        .map(|(m, l)| (m.to_string(), *l))
        .collect();
    assert_eq!(drawn, tested, "the diagram: {diagram}");
}

/// Connections open in one place, `client.rs` (ARCHITECTURE.md): no other source file starts a
/// child, builds an HTTP transport, wraps one in the relay or initializes a client. The unit
/// tests of a module (`*/tests.rs`) drive its parts directly and are left out.
#[test]
fn connections_open_in_client_rs() {
    const OPENING: [&str; 6] = [
        "Command::new",
        "ChildStdio::spawn",
        "StreamableHttpClientTransport",
        "Relay::new",
        "Relay::beside",
        "serve_with_ct",
    ];
    let elsewhere = found_outside_tests(&OPENING, &["client.rs"]);
    assert!(
        elsewhere.is_empty(),
        "connections opened outside client.rs: {elsewhere:?}"
    );
}

/// A lock is taken in one way, the runtime's (`disco_runtime::util::{lock, read, write}`: a
/// poisoned lock taken as it is): no source file takes a std lock's result by hand (see
/// [`locks_by_hand`]). The unit tests (`*/tests.rs`), where a panic is the point, are left out.
#[test]
fn locks_are_taken_through_the_runtimes_helpers() {
    let by_hand = found_in_sources(&[], locks_by_hand);
    assert!(by_hand.is_empty(), "locks taken by hand: {by_hand:?}");
}

/// The places in `code` (comments left out) where a std lock's result is taken by hand:
/// `.lock()`, `.read()` or `.write()` directly followed by `.unwrap()`, `.expect(`, `.ok()` or
/// `?`, and any `unwrap_or_else(` whose argument mentions `into_inner`. Tokio's locks
/// (`.lock().await`) are not. A method of the same name and no argument that the file defines
/// itself (`fn read(&self)`, as oauth.rs's token file) is told apart by its receiver: `self`,
/// or a value made in place by a path (`TokenFile::new(..)`).
fn locks_by_hand(code: &str) -> Vec<String> {
    let code = squeeze(code);
    let mut found = Vec::new();
    for method in ["lock", "read", "write"] {
        let call = format!(".{method}()");
        let own = ["&self", "&mut self"]
            .iter()
            .any(|s| code.contains(&format!("fn {method}({s})")));
        for (at, _) in code.match_indices(&call) {
            let after = &code[at + call.len()..];
            let Some(taken) = [".unwrap()", ".expect(", ".ok()", "?"]
                .into_iter()
                .find(|t| after.starts_with(t))
            else {
                continue;
            };
            let receiver = receiver(&code[..at]);
            let made_here = receiver.split("::").next().is_some_and(|head| {
                head.starts_with(char::is_uppercase)
                    && receiver.contains("::")
                    && !["Mutex", "RwLock"].contains(&head)
            });
            if own && (receiver == "self" || made_here) {
                continue;
            }
            found.push(format!("{receiver}{call}{taken}"));
        }
    }
    for (at, _) in code.match_indices("unwrap_or_else(") {
        let rest = &code[at + "unwrap_or_else(".len()..];
        let mut depth = 1usize;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(rest.len(), |(i, _)| i);
        if rest[..end].contains("into_inner") {
            found.push(format!("unwrap_or_else({})", &rest[..end]));
        }
    }
    found
}

/// `code` with white space dropped beside punctuation and squeezed to one space between words,
/// so that a chain broken over lines reads as one.
fn squeeze(code: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(code.len());
    let mut space = false;
    for c in code.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && word(c) && out.ends_with(word) {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// The receiver of a method called at the end of `before`: back over names, paths, fields and
/// balanced brackets to where the expression starts.
fn receiver(before: &str) -> &str {
    let mut depth = 0usize;
    let mut start = before.len();
    for (i, c) in before.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c if c.is_alphanumeric() || "_.:&".contains(c) => {}
            _ => break,
        }
        start = i;
    }
    before[start..].trim_start_matches('&')
}

#[test]
fn the_lock_rule_finds_what_is_taken_by_hand() {
    // Every method, every way of taking its result, also broken over lines.
    for method in ["lock", "read", "write"] {
        for taken in [".unwrap()", ".expect(\"held\")", ".ok()", "?"] {
            for gap in ["", "\n        "] {
                let code =
                    format!("fn f(s: &S) {{ let g = s.state{gap}.{method}(){gap}{taken}; }}");
                assert_eq!(locks_by_hand(&code).len(), 1, "{code}");
                // A file with a method of that name of its own: a lock's field is still found.
                let own = format!("fn {method}(&self) -> R {{ todo!() }}\n{code}");
                assert_eq!(locks_by_hand(&own).len(), 1, "{own}");
            }
        }
    }
    for code in [
        "let g = m.lock().unwrap_or_else(PoisonError::into_inner);",
        "let g = m.read().unwrap_or_else(|e| e.into_inner());",
        "let g = m\n    .write()\n    .unwrap_or_else(|poisoned| {\n        poisoned.into_inner()\n    });",
    ] {
        assert_eq!(locks_by_hand(code).len(), 1, "{code}");
    }
    // Not a std lock's result taken by hand.
    for code in [
        "let g = self.conn.lock().await;",
        "let g = write.lock().await.take();",
        "let g = disco_runtime::util::lock(&self.m);",
        "let v = x.unwrap_or_else(|| 0);",
        "fn read(&self) -> R { todo!() }\nlet k = self.read()?.map(|k| k.0);",
        "fn read(&self) -> R { todo!() }\nlet k = self\n    .read()\n    .ok();",
        "fn read(&self) -> R { todo!() }\nlet k = TokenFile::new(p, r).read().ok()??;",
    ] {
        assert_eq!(locks_by_hand(code), Vec::<String>::new(), "{code}");
    }
}

/// The `words` found in the source files (comments and white space left out, so that a chain
/// broken over lines is found too), as `file: word`, but in the unit tests of a module
/// (`*/tests.rs`, which drive its parts directly) and in the files `except` names.
fn found_outside_tests(words: &[&str], except: &[&str]) -> Vec<String> {
    found_in_sources(except, |code| {
        let code: String = code.split_whitespace().collect();
        words
            .iter()
            .filter(|w| code.contains(*w))
            .map(|w| w.to_string())
            .collect()
    })
}

/// What `find` finds in each source file (comments left out), as `file: what`, but in the unit
/// tests of a module (`*/tests.rs`) and in the files `except` names.
fn found_in_sources(except: &[&str], find: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let src = src();
    let mut files = Vec::new();
    scan::sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel.ends_with("tests.rs") || except.iter().any(|e| rel == Path::new(e)) {
            continue;
        }
        let code = scan::without_comments(&std::fs::read_to_string(file).unwrap());
        for what in find(&code) {
            found.push(format!("{}: {what}", rel.display()));
        }
    }
    found
}

/// This test reads files outside the package (the runtime's scanner, ARCHITECTURE.md): the
/// package leaves it out, or a packaged copy would not build.
#[test]
fn the_package_leaves_this_test_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert!(
        manifest
            .lines()
            .any(|l| l.starts_with("exclude = [") && l.contains("\"tests/architecture.rs\"")),
        "disco-gateway's Cargo.toml does not exclude tests/architecture.rs from the package"
    );
}

#[test]
fn the_check_finds_edges_against_the_direction() {
    let cases = [
        // (file, line, expected to be refused)
        ("config.rs", "use crate::forward::BadHeader;", true),
        (
            "forward.rs",
            "use crate::upstream::{open_http, Calls};",
            true,
        ),
        ("config.rs", "use crate::call::Calls;", true),
        ("call.rs", "use crate::client::Client;", true),
        (
            "headers.rs",
            "use crate::config::{ServerConfig, Transport};",
            true,
        ),
        (
            "client/tests.rs",
            "let hub = crate::upstream::Hub::new(s, d);",
            true,
        ),
        ("upstream.rs", "use crate::forward::Forwarded;", false),
        (
            "forward.rs",
            "use crate::client::{open_http, InitFailure};",
            false,
        ),
        (
            "config/file.rs",
            "use super::{ConfigError, Namespace};",
            false,
        ),
        (
            "config/file.rs",
            "use super::shape::{self, present};",
            false,
        ),
        (
            "forward/tests.rs",
            "crate::config::Config::parse(text, &|_| None)",
            false,
        ),
        ("main.rs", "use disco_gateway::upstream::Hub;", false),
        ("lib.rs", "pub mod provider; mod wire;", false),
        // Groups, and paths through a parent.
        (
            "call.rs",
            "use crate::{relay::Heard,\n upstream::Hub};",
            true,
        ),
        (
            "config.rs",
            "use crate::{headers::{bearer, header}, client};",
            true,
        ),
        ("call.rs", "use super::client::Client;", true),
        ("client/tests.rs", "use super::super::upstream::Hub;", true),
        ("config/file.rs", "use super::super::call::Calls;", true),
        (
            "upstream.rs",
            "use crate::{client::{self, Endpoint}, forward::Forwarded, relay::Heard};",
            false,
        ),
        ("client/tests.rs", "use super::super::relay::Heard;", false),
        // A name for the root would hide every path through it: refused in every file.
        (
            "relay.rs",
            "use crate as gateway;\nuse gateway::upstream::Hub;",
            true,
        ),
        ("lib.rs", "extern crate self as gateway;", true),
    ];
    LAYERS.assert_cases(&cases);
}

/// The longest a gateway source file may be: one past it is split along a seam of its own.
const MAX_LINES: usize = 1000;

/// No source file of the gateway (`src/**/*.rs`, the unit tests beside their modules too) is
/// longer than [`MAX_LINES`].
#[test]
fn no_source_file_is_over_the_line_limit() {
    let src = src();
    let mut files = Vec::new();
    scan::sources(&src, &mut files);
    assert!(files.len() >= 10, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "gateway source files over {MAX_LINES} lines: {long:?}"
    );
}
