//! The layers of disco-runtime point one way (ARCHITECTURE.md):
//!
//! ```text
//! server -> {call, learn} -> catalog -> {resolve, search} -> tool -> {text, util}
//! ```
//!
//! A module may name only modules below its own layer (and itself). `resolve` and `search` are
//! one layer and do not name each other. This test reads every source file, resolves each
//! `crate::...` and `super::...` path in code (comments are skipped) to the top-level module it
//! names (`architecture/scan.rs`, which disco-gateway's architecture test reads too), and fails
//! on an edge against the direction, naming the file and the line.

use std::path::Path;

#[path = "architecture/scan.rs"]
mod scan;

#[path = "architecture/lengths.rs"]
mod lengths;

use scan::Layers;

/// The layer of each top-level module; a module may name modules of a lower layer. The crate
/// root (`lib.rs`: the re-exports and `__private_v<version>`) is the top.
const LAYERS: Layers = Layers {
    modules: &[
        ("text", 0),
        ("util", 0),
        ("tool", 1),
        ("resolve", 2),
        ("search", 2),
        ("catalog", 3),
        ("call", 4),
        ("learn", 4),
        ("server", 5),
    ],
};

#[test]
fn every_module_names_only_the_layers_below_it() {
    LAYERS.assert_one_way(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), 21);
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
        // A name for the root would hide every path through it: refused in every file.
        (
            "tool/built.rs",
            "use crate as disco;\nfn f() -> disco::server::Server { todo!() }",
            true,
        ),
        ("lib.rs", "use crate as disco;", true),
        ("lib.rs", "extern crate self as disco_runtime;", true),
        ("catalog/view.rs", "use super   as catalog;", true),
        (
            "server/mod.rs",
            "pub(crate) use crate::call::CallError;",
            false,
        ),
    ];
    LAYERS.assert_cases(&cases);
}

#[test]
fn no_engine_function_is_longer_than_the_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long = lengths::long_engine_functions(&src, lengths::MAX_FN_LINES);
    let report: Vec<String> = long
        .iter()
        .map(|(file, line, name, n)| format!("src/{file}:{line}: `{name}` is {n} lines"))
        .collect();
    assert!(
        report.is_empty(),
        "functions of {:?} over {} lines: split each into named steps\n{}",
        lengths::ENGINE_DIRS,
        lengths::MAX_FN_LINES,
        report.join("\n")
    );
}

#[test]
fn the_length_check_counts_from_fn_to_brace_and_leaves_tests_out() {
    let body = |n: usize| "    let _ = 0;\n".repeat(n);
    // `fn` line + body + closing brace: 80 lines pass, 81 do not.
    let at_limit = format!("/// doc\n/// doc\nfn fits() {{\n{}}}\n", body(78));
    let over = format!("fn long() {{\n{}}}\n", body(79));
    // (source, the functions found: line, name, lines)
    type Found<'a> = Vec<(usize, &'a str, usize)>;
    let cases: Vec<(String, Found)> = vec![
        (at_limit.clone(), vec![]),
        (over.clone(), vec![(1, "long", 81)]),
        (
            format!(
                "struct S;\nimpl S {{\n    {}\n}}\n",
                over.replace('\n', "\n    ")
            ),
            vec![(3, "S::long", 81)],
        ),
        (
            format!("mod inner {{\n{over}}}\n"),
            vec![(2, "inner::long", 81)],
        ),
        (format!("trait T {{\n{over}}}\n"), vec![(2, "T::long", 81)]),
        (format!("#[cfg(test)]\nmod tests {{\n{over}}}\n"), vec![]),
        (format!("#[test]\n{over}"), vec![]),
        (format!("{at_limit}{over}"), vec![(83, "long", 81)]),
    ];
    for (source, expected) in cases {
        let found = lengths::long_functions("x.rs", &source, lengths::MAX_FN_LINES)
            .unwrap_or_else(|e| panic!("{e}\n{source}"));
        let found: Found = found
            .iter()
            .map(|(_, line, name, n)| (*line, name.as_str(), *n))
            .collect();
        assert_eq!(found, expected, "{source}");
    }
}
