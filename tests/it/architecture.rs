//! ARCHITECTURE.md stays true: every path it names exists, and every source file of the
//! runtime (`disco-runtime/src`) and of the gateway (`disco-gateway/src`) is in a row of its
//! crate's layer table. A failure names each file and the table it is missing from, so that
//! whoever adds a file adds its row.
//!
//! How a row names a file: the first column is the layer (`call/`, `util.rs`) or, in the
//! gateway's table, the files themselves. In the runtime's table a file `L/a/b.rs` of layer
//! `L/` is named by its row when the row holds `` `a/b.rs` ``, or `` `b.rs` `` together with its
//! directory `` `a/` `` (the way the rows speak of `name/` and then of its `mod.rs`); a file
//! directly in `L/` by `` `b.rs` ``. Unit tests beside their module (`tests.rs`,
//! `tests_<subject>.rs`, their helpers in `testing.rs`, files in a `tests/` directory) are not
//! architecture, and not listed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    let path = root().join("ARCHITECTURE.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of `heading`'s section, up to the next `## `.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{heading}`"));
    let rest = &text[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// The backquoted pieces of `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, piece)| piece)
        .collect()
}

/// Every `.rs` file under `dir`, as a `/`-separated path relative to it.
fn sources(dir: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                if let Ok(rel) = path.strip_prefix(base) {
                    let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
                    out.insert(parts.join("/"));
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn is_unit_test(file: &str) -> bool {
    let mut parts = file.rsplit('/');
    let name = parts.next().unwrap_or(file);
    name == "tests.rs"
        || name == "testing.rs"
        || name.starts_with("tests_")
        || parts.any(|dir| dir == "tests")
}

/// The table's rows: (first column, the whole row).
fn rows(section: &str) -> Vec<(String, String)> {
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            (
                l.split('|').nth(1).unwrap_or_default().to_string(),
                l.to_string(),
            )
        })
        .collect()
}

/// Whether the runtime row `row` names `rel`, a file relative to its layer's directory.
fn runtime_row_names(row: &str, layer: &str, rel: &str) -> bool {
    let pieces = quoted(row);
    if pieces.contains(&rel) || pieces.contains(&format!("{layer}{rel}").as_str()) {
        return true;
    }
    match rel.rsplit_once('/') {
        None => false,
        Some((dir, name)) => {
            let dir = format!("{dir}/");
            // The directory's last part alone (`lexicon/` for `text/lexicon/`) or whole.
            let last = format!(
                "{}/",
                dir.trim_end_matches('/').rsplit('/').next().unwrap_or("")
            );
            pieces.contains(&name)
                && (pieces.contains(&dir.as_str()) || pieces.contains(&last.as_str()))
        }
    }
}

/// The files of `disco-runtime/src` no row of the runtime's table names.
fn runtime_files_missing(text: &str) -> Vec<String> {
    let heading = "## The layers of disco-runtime";
    let rows = rows(section(text, heading));
    let mut missing = Vec::new();
    for file in sources(&root().join("disco-runtime/src")) {
        if is_unit_test(&file) || file == "lib.rs" {
            continue;
        }
        let (dir, layer, rel) = match file.split_once('/') {
            Some((layer, rel)) => (format!("{layer}/"), format!("`{layer}/`"), rel.to_string()),
            None => (String::new(), format!("`{file}`"), file.clone()),
        };
        let Some((_, row)) = rows.iter().find(|(first, _)| first.trim() == layer) else {
            missing.push(format!(
                "disco-runtime/src/{file}: the table of \"{heading}\" has no row {layer} for its layer"
            ));
            continue;
        };
        let named = if file.contains('/') {
            runtime_row_names(row, &dir, &rel)
        } else {
            true
        };
        if !named {
            missing.push(format!(
                "disco-runtime/src/{file}: missing from the row {layer} of the table of \"{heading}\" (name it there as `{rel}`)"
            ));
        }
    }
    missing
}

/// The files of `disco-gateway/src` no row of the gateway's table names in its first column.
fn gateway_files_missing(text: &str) -> Vec<String> {
    let heading = "## The layers of disco-gateway";
    let named: BTreeSet<String> = rows(section(text, heading))
        .iter()
        .flat_map(|(first, _)| {
            quoted(first)
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    sources(&root().join("disco-gateway/src"))
        .into_iter()
        .filter(|file| !named.contains(file))
        .map(|file| {
            format!(
                "disco-gateway/src/{file}: missing from the first column of the table of \"{heading}\" (add a row `{file}`)"
            )
        })
        .collect()
}

#[test]
fn every_source_file_is_in_its_layer_table() {
    let text = architecture();
    let mut missing = runtime_files_missing(&text);
    missing.extend(gateway_files_missing(&text));
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name {} source file(s):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
    assert!(
        section(&text, "## The layers of disco-runtime").contains("`lib.rs`"),
        "the runtime's section says what `lib.rs` is"
    );
}

/// Every file and directory of the repository, `/`-separated from its root (build output,
/// version control and dependencies left out).
fn repository_paths() -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if matches!(name.as_str(), "target" | ".git" | "node_modules") {
                continue;
            }
            let Ok(rel) = path.strip_prefix(base) else {
                continue;
            };
            let rel: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
            let rel = rel.join("/");
            if path.is_dir() {
                out.insert(format!("{rel}/"));
                walk(base, &path, out);
            } else {
                out.insert(rel);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&root(), &root(), &mut out);
    out
}

/// A backquoted piece that is a path: a file with an extension of the repository's sources, or
/// a directory (ends with `/`), without spaces, schemes or placeholders.
fn as_path(piece: &str) -> Option<&str> {
    const EXTENSIONS: [&str; 7] = [".rs", ".py", ".md", ".toml", ".sh", ".txt", ".json"];
    let plain = !piece.is_empty()
        && piece
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    let pathlike = piece.ends_with('/') || EXTENSIONS.iter().any(|e| piece.ends_with(e));
    (plain && pathlike && piece != "/").then_some(piece)
}

#[test]
fn every_path_it_names_exists() {
    let text = architecture();
    let paths = repository_paths();
    let mut gone = BTreeSet::new();
    let named: Vec<&str> = quoted(&text).into_iter().filter_map(as_path).collect();
    assert!(named.len() > 50, "read too few paths: {named:?}");
    for piece in named {
        // Relative to the repository or to any directory in it (a row names `mod.rs` within
        // its layer, `lexicon/build.py` within `text/`).
        let exists =
            paths.contains(piece) || paths.iter().any(|p| p.ends_with(&format!("/{piece}")));
        if !exists {
            gone.insert(piece.to_string());
        }
    }
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {gone:?}"
    );
}

#[test]
fn the_checks_find_what_is_missing() {
    // A layer row without a file of the layer, one that names it in full, one by directory.
    assert!(!runtime_row_names(
        "| `resolve/` | `name/` (`mod.rs`) |",
        "resolve/",
        "name/typo.rs"
    ));
    assert!(runtime_row_names(
        "| `resolve/` | `name/typo.rs` |",
        "resolve/",
        "name/typo.rs"
    ));
    assert!(runtime_row_names(
        "| `resolve/` | `name/` (`typo.rs`) |",
        "resolve/",
        "name/typo.rs"
    ));
    assert!(!runtime_row_names(
        "| `resolve/` | `args/` (`typo.rs`) |",
        "resolve/",
        "name/typo.rs"
    ));
    assert!(runtime_row_names(
        "| `text/` | `text/mod.rs` says |",
        "text/",
        "mod.rs"
    ));
    assert_eq!(as_path("call/mod.rs"), Some("call/mod.rs"));
    assert_eq!(as_path("text/lexicon/"), Some("text/lexicon/"));
    assert_eq!(as_path("disco://status"), None);
    assert_eq!(as_path("Catalog::call_with"), None);
    assert!(is_unit_test("call/meta/tests_race.rs") && !is_unit_test("call/meta.rs"));
    assert!(is_unit_test("learn/tests/on_disk.rs") && !is_unit_test("learn/store.rs"));
}
