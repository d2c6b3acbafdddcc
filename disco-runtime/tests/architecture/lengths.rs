//! The length of the engines' functions: a function of `resolve/`, `search/` or `catalog/`
//! says its formula in named steps, each a function of its own, so none is longer than
//! [`MAX_FN_LINES`]. Read with `syn` (a function is counted from its `fn` to its closing
//! brace, so doc comments and attributes are not), leaving out unit tests: files of tests
//! (`tests.rs`, `tests_<subject>.rs`, `testing.rs`, a `tests/` directory), `#[cfg(test)]`
//! modules and `#[test]` functions.

use std::path::Path;

use proc_macro2::Span;
use syn::spanned::Spanned;

/// The most lines a function of the engines may take.
pub const MAX_FN_LINES: usize = 80;

/// The directories of `src` whose functions are held to [`MAX_FN_LINES`].
pub const ENGINE_DIRS: &[&str] = &["resolve", "search", "catalog"];

/// A function over the limit: `(path in src, line of its fn, name, lines)`.
pub type Long = (String, usize, String, usize);

/// The functions of `source` (the file at `rel`) over `max` lines.
pub fn long_functions(rel: &str, source: &str, max: usize) -> Result<Vec<Long>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("{rel}: {e}"))?;
    let mut out = Vec::new();
    items(rel, &file.items, "", max, &mut out);
    Ok(out)
}

/// Every function over the limit in the engine directories of `src`.
pub fn long_engine_functions(src: &Path, max: usize) -> Vec<Long> {
    let mut out = Vec::new();
    for dir in ENGINE_DIRS {
        let mut files = Vec::new();
        rust_files(&src.join(dir), &mut files);
        files.sort();
        for path in files {
            let rel = path
                .strip_prefix(src)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            if is_unit_test(&rel) {
                continue;
            }
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.extend(long_functions(&rel, &source, max).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Files of unit tests, as ARCHITECTURE.md leaves them out of its tables.
fn is_unit_test(rel: &str) -> bool {
    let mut parts = rel.rsplit('/');
    let name = parts.next().unwrap_or(rel);
    name == "tests.rs"
        || name == "testing.rs"
        || name.starts_with("tests_")
        || parts.any(|dir| dir == "tests")
}

/// `#[test]`, `#[cfg(test)]` (alone, not in `all`/`any`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

fn lines(from: Span, to: Span) -> usize {
    to.end().line + 1 - from.start().line
}

fn check(
    rel: &str,
    name: String,
    attrs: &[syn::Attribute],
    fn_token: Span,
    block: &syn::Block,
    max: usize,
    out: &mut Vec<Long>,
) {
    if is_test(attrs) {
        return;
    }
    let n = lines(fn_token, block.brace_token.span.close());
    if n > max {
        out.push((rel.to_string(), fn_token.start().line, name, n));
    }
}

fn items(rel: &str, items_: &[syn::Item], owner: &str, max: usize, out: &mut Vec<Long>) {
    for item in items_ {
        match item {
            syn::Item::Fn(f) => check(
                rel,
                format!("{owner}{}", f.sig.ident),
                &f.attrs,
                f.sig.fn_token.span(),
                &f.block,
                max,
                out,
            ),
            syn::Item::Impl(i) if !is_test(&i.attrs) => {
                let ty = match &*i.self_ty {
                    syn::Type::Path(p) => p
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                for member in &i.items {
                    if let syn::ImplItem::Fn(f) = member {
                        check(
                            rel,
                            format!("{owner}{ty}::{}", f.sig.ident),
                            &f.attrs,
                            f.sig.fn_token.span(),
                            &f.block,
                            max,
                            out,
                        );
                    }
                }
            }
            syn::Item::Trait(t) if !is_test(&t.attrs) => {
                for member in &t.items {
                    if let syn::TraitItem::Fn(f) = member {
                        if let Some(block) = &f.default {
                            check(
                                rel,
                                format!("{owner}{}::{}", t.ident, f.sig.ident),
                                &f.attrs,
                                f.sig.fn_token.span(),
                                block,
                                max,
                                out,
                            );
                        }
                    }
                }
            }
            syn::Item::Mod(m) if !is_test(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    items(rel, inner, &format!("{owner}{}::", m.ident), max, out);
                }
            }
            _ => {}
        }
    }
}
