//! The input and output schemas the catalog publishes, as snapshots: nested structs, an enum,
//! a `Vec`, a map, an `Option`, integer ranges, a recursive type, and the full 2020-12 form.

use std::collections::HashMap;

use disco_runtime::{mcp_tool, Catalog, Json, SchemaMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::tools_in;

/// Where an order goes.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Address {
    /// Street and number.
    street: String,
    city: String,
    /// Postal code, if the country has them.
    postcode: Option<String>,
}

/// How fast to ship.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Speed {
    Standard,
    Express,
}

#[derive(Deserialize, Serialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u8,
}

#[derive(Serialize, JsonSchema)]
struct Receipt {
    order_id: u64,
    total_cents: i64,
    note: Option<String>,
}

/// Place an order for delivery and return its receipt.
///
/// # Arguments
/// * `lines` - what to order
/// * `address` - where to deliver it
/// * `speed` - how fast to ship
/// * `gift_note` - a note to print on the packing slip
/// * `tags` - free-form labels and their values
#[mcp_tool(destructive = false)]
fn place_order(
    lines: Vec<Line>,
    address: Address,
    #[param(default = "standard")] speed: Speed,
    gift_note: Option<String>,
    tags: HashMap<String, String>,
    retries: Option<u8>,
) -> Json<Receipt> {
    let _ = (lines, address, speed, gift_note, tags, retries);
    Json(Receipt {
        order_id: 1,
        total_cents: 0,
        note: None,
    })
}

/// A folder tree, to show that recursive types keep `$defs`.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Folder {
    name: String,
    children: Vec<Folder>,
}

/// Count the folders in a tree and return the count.
#[mcp_tool(read_only)]
fn count_folders(root: Folder) -> String {
    fn count(f: &Folder) -> usize {
        1 + f.children.iter().map(count).sum::<usize>()
    }
    count(&root).to_string()
}

/// Place an order, described in full JSON Schema 2020-12 form.
#[mcp_tool(full_schema, destructive = false)]
fn place_order_full(address: Address, speed: Option<Speed>) -> String {
    let _ = (address, speed);
    "ok".into()
}

fn schemas(catalog: &Catalog, name: &str) -> serde_json::Value {
    let tool = catalog.get(name).unwrap();
    serde_json::json!({
        "inputSchema": *tool.input_schema(),
        "outputSchema": tool.output_schema(),
        "recursive": tool.recursive_schema(),
    })
}

/// This module's tools (the binary holds other modules' too).
fn catalog() -> Catalog {
    Catalog::builder()
        .from_specs(tools_in(module_path!()))
        .unwrap()
}

#[test]
fn portable_schema_of_nested_types() {
    let c = catalog();
    insta::assert_json_snapshot!(schemas(&c, "place_order"));
}

#[test]
fn recursive_types_keep_defs() {
    let c = catalog();
    insta::assert_json_snapshot!(schemas(&c, "count_folders"));
}

#[test]
fn full_schema_per_tool() {
    let c = catalog();
    insta::assert_json_snapshot!(schemas(&c, "place_order_full"));
}

#[test]
fn full_schema_server_wide() {
    let c = Catalog::builder()
        .schema_mode(SchemaMode::Full)
        .from_specs(tools_in(module_path!()))
        .unwrap();
    let s = schemas(&c, "place_order");
    assert_eq!(
        s["inputSchema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(s["inputSchema"]["additionalProperties"], false);
    assert!(s["inputSchema"]["$defs"].is_object());
}

/// No `$ref`, no `$schema`, no `null` types anywhere in a portable input schema.
#[test]
fn portable_schemas_have_no_field_rejected_in_the_field() {
    let c = catalog();
    for tool in c.tools() {
        if tool.recursive_schema() || tool.name().ends_with("_full") {
            continue;
        }
        let text = serde_json::to_string(tool.input_schema()).unwrap();
        assert!(!text.contains("$ref"), "{}: {text}", tool.name());
        assert!(!text.contains("$schema"), "{}: {text}", tool.name());
        assert!(!text.contains("\"null\""), "{}: {text}", tool.name());
    }
}
