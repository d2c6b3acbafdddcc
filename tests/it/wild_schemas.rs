//! Schemas as other servers publish them: older drafts, `definitions`, no root `type`, a
//! `$schema` that names no draft, and schemas no validator can compile. The catalog of
//! fixtures/catalogs/wild-schemas.json loads whole; each tool is validated with the draft its
//! schema is written in, and a tool whose schema cannot be compiled is still served, with its
//! arguments left to the tool, and reported by `lint`.

use std::path::Path;

use disco_runtime::catalog::lint::{self, LintOptions, Severity};
use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::Catalog;
use serde_json::{json, Value};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/catalogs/wild-schemas.json"
);

fn catalog() -> Catalog {
    let provider = JsonCatalogProvider::from_file(Path::new(FIXTURE)).expect("the fixture reads");
    Catalog::builder()
        .provider(provider)
        .from_specs([])
        .unwrap_or_else(|e| panic!("the catalog of wild schemas does not load: {e}"))
}

/// Whether the arguments got through to the (description-only) tool, or were refused with an
/// error result.
async fn accepted(catalog: &Catalog, tool: &str, arguments: Value) -> bool {
    let result = catalog
        .call(tool, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("`{tool}` is not callable: {e}"));
    result.is_error != Some(true)
}

#[tokio::test]
async fn every_tool_of_the_wild_catalog_is_served() {
    let catalog = catalog();
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).expect("JSON");
    let names: Vec<&str> = fixture["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in &names {
        assert!(catalog.get(name).is_some(), "`{name}` left the catalog");
    }
    assert_eq!(catalog.tools().len(), names.len());
}

/// (tool, arguments, accepted?): each schema is read in its own draft, so the rule of that
/// draft decides, on both sides of each bound.
#[tokio::test]
async fn each_schema_is_validated_with_its_own_draft() {
    let catalog = catalog();
    let cases = [
        // draft-04, declared: `exclusiveMinimum: true` makes `minimum` exclusive.
        ("set_volume", json!({"level": 0}), false),
        ("set_volume", json!({"level": 0.5}), true),
        ("set_volume", json!({"level": 12}), false),
        // draft-04 forms without `$schema`: read as draft-04 all the same.
        ("set_brightness", json!({"level": 0}), false),
        ("set_brightness", json!({"level": 3}), true),
        // draft-07 tuple `items` and no root `type`.
        ("move_point", json!({"point": [1, 2]}), true),
        ("move_point", json!({"point": [1, "2"]}), false),
        ("move_point", json!({"point": [1, 2, 3]}), false),
        // `definitions` reached through `$ref`, draft-06 declared.
        ("count_words", json!({"text": "two words"}), true),
        ("count_words", json!({"text": ""}), false),
        // A `$schema` that names no draft: validated as the current one.
        ("echo_custom", json!({"message": "hi"}), true),
        ("echo_custom", json!({}), false),
        // Plain 2020-12.
        ("add_numbers", json!({"a": 1, "b": 2}), true),
        ("add_numbers", json!({"a": "x", "b": 2}), false),
    ];
    for (tool, arguments, expected) in cases {
        assert_eq!(
            accepted(&catalog, tool, arguments.clone()).await,
            expected,
            "`{tool}` with {arguments}"
        );
    }
}

/// A schema that cannot be compiled leaves the checks to the tool: the call reaches it; `lint` says why, and nothing else of the tool is lost.
#[tokio::test]
async fn a_schema_that_cannot_be_compiled_leaves_the_checks_to_the_tool() {
    let catalog = catalog();
    let findings = lint::lint(&catalog, &LintOptions::default());
    let calls = [
        ("find_files", json!({"glob": "*.rs"})),
        ("resize_image", json!({"width": 3})),
        ("ping_host", json!({})),
    ];
    for (tool, arguments) in calls {
        let entry = catalog.get(tool).unwrap();
        assert_eq!(
            entry.schema_problems().len(),
            1,
            "{tool}: {:?}",
            entry.schema_problems()
        );
        assert!(
            findings.iter().any(|f| f.code == "schema-uncompiled"
                && f.tool.as_deref() == Some(tool)
                && f.severity == Severity::Warning),
            "no schema-uncompiled finding for {tool}"
        );
        assert!(accepted(&catalog, tool, arguments).await, "{tool} refused");
    }
    assert!(catalog.get("find_files").unwrap().annotations().read_only == Some(true));
    // The tools that compile have no such finding.
    for tool in [
        "set_volume",
        "set_brightness",
        "move_point",
        "count_words",
        "add_numbers",
    ] {
        assert!(
            !findings
                .iter()
                .any(|f| f.code == "schema-uncompiled" && f.tool.as_deref() == Some(tool)),
            "{tool} reported as uncompiled"
        );
    }
    // The older forms read without `$schema` are reported as information.
    for tool in ["set_brightness", "move_point"] {
        assert!(
            findings.iter().any(|f| f.code == "schema-older-draft"
                && f.tool.as_deref() == Some(tool)
                && f.severity == Severity::Info),
            "no schema-older-draft finding for {tool}"
        );
    }
}

/// The draft a schema declares is the one used, even when an older one would accept it: a
/// 2020-12 schema with a boolean bound is broken, not draft-04.
#[tokio::test]
async fn a_declared_draft_is_never_second_guessed() {
    let provider = JsonCatalogProvider::from_value(&json!([{
        "name": "declared_2020",
        "description": "A 2020-12 schema written with a draft-04 bound.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}
        }
    }]))
    .unwrap();
    let catalog = Catalog::builder()
        .provider(provider)
        .from_specs([])
        .unwrap();
    let tool = catalog.get("declared_2020").unwrap();
    assert_eq!(
        tool.schema_problems().len(),
        1,
        "{:?}",
        tool.schema_problems()
    );
    assert!(accepted(&catalog, "declared_2020", json!({"n": 0})).await);
}
