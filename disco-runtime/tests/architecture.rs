//! The layers of disco-runtime point one way (ARCHITECTURE.md):
//!
//! ```text
//! server -> call -> catalog -> {resolve, search} -> tool -> {text, util}
//! ```
//!
//! A module may name only modules below its own layer (and itself). `resolve` and `search` are
//! one layer and do not name each other. This test reads every source file, resolves each
//! `crate::...` and `super::...` path in code (comments are skipped) to the top-level module it
//! names, and fails on an edge against the direction, naming the file and the line.

use std::path::{Path, PathBuf};

/// The layer of each top-level module; a module may name modules of a lower layer. The crate
/// root (`lib.rs`: the re-exports and `__private_v<version>`) is the top.
const LAYERS: &[(&str, u32)] = &[
    ("text", 0),
    ("util", 0),
    ("tool", 1),
    ("resolve", 2),
    ("search", 2),
    ("catalog", 3),
    ("call", 4),
    ("server", 5),
];
const ROOT: u32 = 6;

fn layer(module: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .map_or(ROOT, |(_, l)| *l)
}

/// The module path of a source file: `catalog/view.rs` -> [catalog, view]; `catalog/mod.rs`
/// -> [catalog]; `lib.rs` -> [].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The top-level modules a path names: `crate::a::b` -> [a]; `super::x` from `catalog/view.rs`
/// -> [catalog]; a group `crate::{a::X, b}` -> [a, b] (`group` is the text from its `{`).
fn tops(module: &[String], path: &str, group: Option<&str>) -> Vec<String> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = Vec::new();
    if segments.first() == Some(&"crate") {
        segments.remove(0);
    } else {
        base = module.to_vec();
        while segments.first() == Some(&"super") {
            segments.remove(0);
            base.pop();
        }
    }
    if let Some(top) = base
        .first()
        .cloned()
        .or_else(|| segments.first().map(|s| s.to_string()))
    {
        return vec![top];
    }
    // `crate::{...}` or `super::{...}` up to the crate root: each first-level item of the
    // group names a module of its own.
    let Some(group) = group else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in group.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    out.push(std::mem::take(&mut item));
                    break;
                }
            }
            ',' if depth == 1 => {
                out.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        if depth >= 1 {
            item.push(c);
        }
    }
    out.iter()
        .filter_map(|i| {
            let first = i.trim().split("::").next()?.trim();
            let first = first.split_whitespace().next()?;
            (!first.is_empty() && first != "self").then(|| first.to_string())
        })
        .collect()
}

/// Each path in `code` (comments already removed), with the top-level module it names and
/// the byte offset where it starts.
fn targets(module: &[String], code: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = &code[i..];
        if at_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = &rest[..end];
            let group = rest[end..].starts_with('{').then(|| &rest[end..]);
            for top in tops(module, path, group) {
                out.push((i, top, path.to_string()));
            }
            i += end.max(1);
        } else {
            i += 1;
        }
    }
    out
}

/// The source without comments: `//` to the end of a line (outside string literals) and
/// `/* ... */`, each replaced by spaces so that offsets keep their lines.
fn without_comments(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let (mut i, mut in_string) = (0, false);
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        let starts_word = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == 'r' && starts_word && matches!(chars.get(i + 1), Some('#') | Some('"')) {
            // A raw string, `r#"..."#`: copied whole up to its own closing quote and hashes.
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let body_start = i + 2 + hashes;
                let rest: String = chars[body_start..].iter().collect();
                let end = rest.find(&close).map_or(chars.len(), |e| {
                    body_start + rest[..e].chars().count() + close.chars().count()
                });
                out.extend(&chars[i..end]);
                i = end;
                continue;
            }
        }
        if c == '\'' {
            // A char literal (`'"'`, `'\\''`) is copied whole, so its quote opens no string;
            // otherwise this is a lifetime.
            let len = match (chars.get(i + 1), chars.get(i + 2), chars.get(i + 3)) {
                (Some('\\'), Some(_), Some('\'')) => 4,
                (Some(_), Some('\''), _) => 3,
                _ => 1,
            };
            out.extend(&chars[i..(i + len).min(chars.len())]);
            i += len;
        } else if c == '"' {
            in_string = true;
            out.push(c);
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The edges of one file against the direction: `(line number, path, why)`.
fn violations(rel: &Path, source: &str) -> Vec<(usize, String, String)> {
    let module = module_path(rel);
    let Some(own) = module.first() else {
        return Vec::new(); // the crate root may name everything
    };
    let own_layer = layer(own);
    let code = without_comments(source);
    let mut out = Vec::new();
    for (offset, top, path) in targets(&module, &code) {
        if &top == own {
            continue;
        }
        let theirs = layer(&top);
        if theirs >= own_layer {
            let line = code[..offset].matches('\n').count() + 1;
            out.push((
                line,
                path,
                format!("`{own}` (layer {own_layer}) names `{top}` (layer {theirs})"),
            ));
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_names_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "found only {} source files", files.len());
    let mut found = Vec::new();
    let mut seen_top = std::collections::BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        if let Some(top) = module_path(rel).first() {
            seen_top.insert(top.clone());
        }
        let source = std::fs::read_to_string(file).unwrap();
        for (line, path, why) in violations(rel, &source) {
            found.push(format!("{}:{line}: `{path}`: {why}", rel.display()));
        }
    }
    // A new top-level module must be given its layer here.
    for top in &seen_top {
        assert!(
            LAYERS.iter().any(|(m, _)| m == top),
            "module `{top}` has no layer in tests/architecture.rs (and ARCHITECTURE.md)"
        );
    }
    assert!(
        found.is_empty(),
        "imports against the direction:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_edges_against_the_direction() {
    let cases = [
        // (file, line, expected to be refused)
        ("resolve/args.rs", "use crate::catalog::CatalogTool;", true),
        (
            "resolve/name/index.rs",
            "use super::super::super::search::SearchIndex;",
            true,
        ),
        (
            "search/index.rs",
            "let x = crate::resolve::name::MAX_NAME_LEN;",
            true,
        ),
        ("catalog/mod.rs", "use crate::call::CallError;", true),
        ("call/mod.rs", "pub use crate::server::Server;", true),
        ("tool/built.rs", "fn f() -> crate::Caller { todo!() }", true),
        ("text/words.rs", "use crate::tool::Caller;", true),
        ("catalog/view.rs", "use super::Catalog;", false),
        (
            "catalog/view.rs",
            "use crate::resolve::name::Outcome;",
            false,
        ),
        ("server/mod.rs", "use crate::call::CallError;", false),
        ("resolve/args.rs", "use super::polarity::opposed;", false),
        ("resolve/args.rs", "// crate::catalog in a comment", false),
        (
            "resolve/args.rs",
            "use crate::text::words::split_words;",
            false,
        ),
        (
            "lib.rs",
            "pub use server::Server; use crate::server::x;",
            false,
        ),
    ];
    for (file, line, refused) in cases {
        let found = violations(Path::new(file), line);
        assert_eq!(!found.is_empty(), refused, "{file}: {line}: {found:?}");
    }
}
