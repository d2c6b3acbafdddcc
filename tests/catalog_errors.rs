//! The one rule on tool declarations that the macro cannot check: whether a literal default
//! (`default = "five"`) fits the parameter's type is known only to serde, so the catalog checks
//! it at start-up and refuses to build. This file is its own test binary, so the broken tool
//! below is seen only by these tests; they still pick it out by name, so the test does not
//! depend on which other tools the binary links.

use disco_runtime::{mcp_tool, Catalog};

/// Count to a number.
#[mcp_tool]
fn count_to(#[param(default = "five")] limit: u32) -> String {
    (1..=limit)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Repeat a text; its default fits.
#[mcp_tool]
fn repeat(#[param(default = 2)] times: u32, text: String) -> String {
    text.repeat(times as usize)
}

fn spec(name: &str) -> &'static disco_runtime::ToolSpec {
    disco_runtime::tool::registered()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("tool `{name}` is not registered"))
}

#[test]
fn a_literal_default_that_does_not_fit_the_type_stops_the_catalog() {
    let err = Catalog::builder()
        .from_specs([spec("count_to"), spec("repeat")])
        .unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    let problem = &err.problems[0];
    // Names the tool, where it is declared, the parameter, the value and the type.
    assert!(problem.contains("count_to"), "{problem}");
    assert!(problem.contains("catalog_errors.rs"), "{problem}");
    assert!(problem.contains("limit"), "{problem}");
    assert!(problem.contains("\"five\""), "{problem}");
    assert!(problem.contains("u32"), "{problem}");
}

#[test]
fn a_fitting_default_builds() {
    let catalog = Catalog::builder().from_specs([spec("repeat")]).unwrap();
    let times = catalog.get("repeat").unwrap().param("times").unwrap();
    assert_eq!(times.default, Some(serde_json::json!(2)));
}
