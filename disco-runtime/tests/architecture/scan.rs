//! What the architecture tests read (disco-runtime's `tests/architecture.rs` and
//! disco-gateway's): every `crate::...` and `super::...` path in the code of a crate's source
//! files (comments are skipped), resolved to the top-level module it names, and the paths that
//! go against the crate's layers.

use std::path::{Path, PathBuf};

/// The layers of one crate: a module may name modules of a lower layer (and itself, and its
/// own children), never one of its own layer or above. The crate roots (`lib.rs`, `main.rs`)
/// are above every layer.
pub struct Layers {
    pub modules: &'static [(&'static str, u32)],
}

impl Layers {
    /// The layer of a top-level module; one without a layer is above them all.
    fn of(&self, module: &str) -> u32 {
        self.modules
            .iter()
            .find(|(m, _)| *m == module)
            .map_or(u32::MAX, |(_, l)| *l)
    }

    /// The edges of one file against the direction, and its aliases of the crate's root (in
    /// every file, the roots too): `(line number, path, why)`.
    fn violations(&self, rel: &Path, source: &str) -> Vec<(usize, String, String)> {
        let code = without_comments(source);
        let line = |offset: usize| code[..offset].matches('\n').count() + 1;
        let mut out: Vec<_> = aliases(&code)
            .into_iter()
            .map(|(offset, alias)| {
                let why = "a name for the crate's root or a parent hides the paths through it \
                           from this check: write `crate::` or `super::`";
                (line(offset), alias, why.to_string())
            })
            .collect();
        let module = module_path(rel);
        let Some(own) = module.first() else {
            return out; // a crate root may name everything
        };
        let own_layer = self.of(own);
        for (offset, top, path) in targets(&module, &code) {
            if &top == own {
                continue;
            }
            let theirs = self.of(&top);
            if theirs >= own_layer {
                out.push((
                    line(offset),
                    path,
                    format!("`{own}` (layer {own_layer}) names `{top}` (layer {theirs})"),
                ));
            }
        }
        out
    }

    /// Fails unless every source file under `src` (at least `at_least` of them) names only
    /// modules of lower layers, and every top-level module has a layer. A failure names each
    /// path against the direction with its file and line.
    pub fn assert_one_way(&self, src: &Path, at_least: usize) {
        let mut files = Vec::new();
        sources(src, &mut files);
        assert!(
            files.len() >= at_least,
            "found only {} source files",
            files.len()
        );
        let mut against = Vec::new();
        let mut tops = std::collections::BTreeSet::new();
        for file in &files {
            let rel = file.strip_prefix(src).unwrap();
            if let Some(top) = module_path(rel).first() {
                tops.insert(top.clone());
            }
            let source = std::fs::read_to_string(file).unwrap();
            for (line, path, why) in self.violations(rel, &source) {
                against.push(format!("{}:{line}: `{path}`: {why}", rel.display()));
            }
        }
        // A new top-level module must be given its layer (and its place in ARCHITECTURE.md).
        let unlayered: Vec<_> = tops
            .iter()
            .filter(|top| !self.modules.iter().any(|(m, _)| m == top))
            .collect();
        assert!(
            unlayered.is_empty(),
            "modules without a layer in tests/architecture.rs (and ARCHITECTURE.md): {unlayered:?}"
        );
        assert!(
            against.is_empty(),
            "imports against the direction:\n{}",
            against.join("\n")
        );
    }

    /// Fails unless each `(file, line of code, refused)` is refused, or let through, as it says.
    pub fn assert_cases(&self, cases: &[(&str, &str, bool)]) {
        for (file, line, refused) in cases {
            let found = self.violations(Path::new(file), line);
            assert_eq!(!found.is_empty(), *refused, "{file}: {line}: {found:?}");
        }
    }
}

/// Every `.rs` file under `dir`, in order.
pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// The module path of a source file: `catalog/view.rs` -> [catalog, view]; `catalog/mod.rs`
/// -> [catalog]; the crate roots `lib.rs` and `main.rs` -> [].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    let root = parts.is_empty() && matches!(stem, "lib" | "main");
    if stem != "mod" && !root {
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

/// Each `crate as x`, `super as x` and `extern crate self as x` in `code` (comments already
/// removed): paths through `x` would name modules this check never sees. With the offset where
/// each starts.
fn aliases(code: &str) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for word in ["crate", "super"] {
        for (i, _) in code.match_indices(word) {
            let after = i + word.len();
            let alone = (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
                && bytes.get(after).is_some_and(|b| b.is_ascii_whitespace());
            if !alone {
                continue;
            }
            let mut words = code[after..].split_whitespace();
            let aliased = match words.next() {
                Some("as") => true,
                Some("self") => word == "crate" && words.next() == Some("as"),
                _ => false,
            };
            if aliased {
                let end = code[i..].find([';', '\n']).map_or(code.len(), |e| i + e);
                out.push((i, code[i..end].to_string()));
            }
        }
    }
    out
}

/// The source without comments: `//` to the end of a line (outside string literals) and
/// `/* ... */`, each replaced by spaces so that offsets keep their lines.
pub fn without_comments(source: &str) -> String {
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
