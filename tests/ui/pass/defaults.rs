// Must compile: every form of default: a number literal, a string literal for a `String`,
// `default` alone (the type's `Default`), and an expression; an integer literal at the top of
// its type's range, and an integer literal for a float.
use disco_runtime::mcp_tool;
use serde_json::json;

#[derive(Default, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Filter {
    tag: Option<String>,
}

fn default_tags() -> Vec<String> {
    vec!["inbox".to_string()]
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(
    #[param(default = 5)] limit: u32,
    #[param(default = "x")] prefix: String,
    #[param(default = 0.5)] threshold: f64,
    #[param(default = true)] exact: bool,
    #[param(default)] filter: Filter,
    #[param(default = default_tags())] tags: Vec<String>,
    #[param(default = 2 * 60)] seconds: u64,
    #[param(default = 255)] level: u8,
    #[param(default = 2)] ratio: f32,
) -> String {
    format!(
        "{limit}{prefix}{threshold}{exact}{:?}{tags:?}{seconds}{level}{ratio}",
        filter.tag
    )
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    let tool = catalog.get("search_notes").unwrap();
    let default = |name: &str| tool.param(name).unwrap().default.clone();
    assert_eq!(default("limit"), Some(json!(5)));
    assert_eq!(default("prefix"), Some(json!("x")));
    assert_eq!(default("threshold"), Some(json!(0.5)));
    assert_eq!(default("exact"), Some(json!(true)));
    assert_eq!(default("filter"), Some(json!({ "tag": null })));
    assert_eq!(default("tags"), Some(json!(["inbox"])));
    assert_eq!(default("seconds"), Some(json!(120)));
    assert_eq!(default("level"), Some(json!(255)));
    assert_eq!(default("ratio"), Some(json!(2.0)));
    assert!(tool.params().iter().all(|p| !p.required));
}
