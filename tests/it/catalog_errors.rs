//! The one rule on tool declarations that the macro cannot always check: whether a literal
//! default fits a type the macro cannot read (`default = "five"` on an enum; on a `u32` it is a
//! compile error, tests/ui/params/default_literal_type.rs) is known only to serde, so the
//! catalog checks it at start-up and refuses to build. This file is its own test binary, so the
//! broken tool below is seen only by these tests; they still pick it out by name, so the test
//! does not depend on which other tools the binary links.

use disco_runtime::{mcp_tool, Catalog};

/// How far to count.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Limit {
    Three,
    Ten,
}

/// Count to a number.
#[mcp_tool]
fn count_to(#[param(default = "five")] limit: Limit) -> String {
    let n = match limit {
        Limit::Three => 3,
        Limit::Ten => 10,
    };
    (1..=n)
        .map(|n: u32| n.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Repeat a text; its default fits.
#[mcp_tool]
fn repeat(#[param(default = 2)] times: u32, text: String) -> String {
    text.repeat(times as usize)
}

fn spec(name: &str) -> &'static disco_runtime::ToolSpec {
    crate::common::tools_in(module_path!())
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("tool `{name}` is not registered"))
}

#[test]
fn a_literal_default_that_does_not_fit_the_type_stops_the_catalog() {
    let err = Catalog::builder()
        .from_specs([spec("count_to"), spec("repeat")])
        .unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    let problem = err.problems()[0].to_string();
    // Names the tool, where it is declared, the parameter, the value and the type.
    assert!(problem.contains("count_to"), "{problem}");
    assert!(problem.contains("catalog_errors.rs"), "{problem}");
    assert!(problem.contains("limit"), "{problem}");
    assert!(problem.contains("\"five\""), "{problem}");
    assert!(problem.contains("Limit"), "{problem}");
}

#[test]
fn a_fitting_default_builds() {
    let catalog = Catalog::builder().from_specs([spec("repeat")]).unwrap();
    let times = catalog.get("repeat").unwrap().param("times").unwrap();
    assert_eq!(times.default, Some(serde_json::json!(2)));
}
