//! Every lint finding, shown on a deliberately bad catalog. Each module below is one bad
//! catalog; `catalog("module")` builds it from the tools declared in that module only, so the
//! bad tools of one test never reach another.

use disco_runtime::catalog::lint::{self, ExampleRequest, Finding, LintOptions, Severity};
use disco_runtime::{mcp_tool, Catalog};

fn catalog(module: &str) -> Catalog {
    let path = format!("{}::{module}", module_path!());
    let specs = disco_runtime::tool::registered().filter(|s| s.origin.module == path);
    Catalog::builder()
        .from_specs(specs)
        .unwrap_or_else(|e| panic!("catalog `{module}` does not build: {e}"))
}

fn run(module: &str) -> Vec<Finding> {
    lint::lint(&catalog(module), &LintOptions::default())
}

/// The finding with this code for this tool; panics with every finding when there is none.
fn find<'a>(findings: &'a [Finding], code: &str, tool: Option<&str>) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.code == code && f.tool.as_deref() == tool)
        .unwrap_or_else(|| {
            let all: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
            panic!("no `{code}` for {tool:?} in:\n{}", all.join("\n"))
        })
}

fn has(findings: &[Finding], code: &str, tool: Option<&str>) -> bool {
    findings
        .iter()
        .any(|f| f.code == code && f.tool.as_deref() == tool)
}

// ------------------------------------------------------------------ descriptions

mod vague {
    use super::*;

    /// Works with an item.
    #[mcp_tool(read_only)]
    fn item(id: u32) -> String {
        id.to_string()
    }

    /// Look up the weather for a city by name.
    ///
    /// # Arguments
    /// * `city` - the city's name, e.g. `Lyon`
    #[mcp_tool(read_only)]
    fn weather(city: String) -> String {
        city
    }
}

#[test]
fn a_description_of_four_words_is_an_error() {
    let findings = run("vague");
    let f = find(&findings, "description-short", Some("item"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.problem.contains("4 word(s)"), "{f}");
}

#[test]
fn a_description_of_nine_words_is_a_warning() {
    let findings = run("vague");
    let f = find(&findings, "description-short", Some("weather"));
    assert_eq!(f.severity, Severity::Warning);
}

#[test]
fn a_description_that_does_not_say_what_comes_back_is_flagged() {
    let findings = run("vague");
    let f = find(&findings, "description-no-returns", Some("weather"));
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.fix.contains("Returns"));
}

#[test]
fn a_parameter_without_description_is_flagged() {
    let findings = run("vague");
    let f = find(&findings, "param-no-description", Some("item"));
    assert!(f.problem.contains("`id`"), "{f}");
    assert!(!has(&findings, "param-no-description", Some("weather")));
}

mod neighbours {
    use super::*;

    /// Fetch the order with the given number from the shop's database. Returns its lines,
    /// prices and total.
    ///
    /// # Arguments
    /// * `number` - the order number
    #[mcp_tool(read_only)]
    fn fetch_order(number: u32) -> String {
        number.to_string()
    }

    /// Fetch the invoice with the given number from the shop's database. Returns its lines,
    /// prices and total.
    ///
    /// # Arguments
    /// * `number` - the invoice number
    #[mcp_tool(read_only)]
    fn fetch_invoice(number: u32) -> String {
        number.to_string()
    }

    /// Count the words of a text and return the number, ignoring punctuation and spaces.
    ///
    /// # Arguments
    /// * `text` - the text to count
    #[mcp_tool(read_only)]
    fn count_words(text: String) -> String {
        text.split_whitespace().count().to_string()
    }
}

#[test]
fn neighbours_must_say_when_to_use_which() {
    let findings = run("neighbours");
    let f = find(&findings, "description-no-when", Some("fetch_order"));
    assert!(f.problem.contains("`fetch_invoice`"), "{f}");
    find(&findings, "description-no-when", Some("fetch_invoice"));
    // A tool without neighbours need not compare itself with anything.
    assert!(!has(&findings, "description-no-when", Some("count_words")));
}

#[test]
fn near_duplicate_descriptions_are_flagged_once_per_pair() {
    let findings = run("neighbours");
    let f = find(&findings, "descriptions-similar", Some("fetch_invoice"));
    assert!(f.problem.contains("`fetch_order`"), "{f}");
    assert_eq!(
        findings
            .iter()
            .filter(|f| f.code == "descriptions-similar")
            .count(),
        1
    );
}

// ------------------------------------------------------------------------- names

mod names {
    use super::*;

    /// Lock the front door. Returns the door's new state. Use this when the user leaves.
    #[mcp_tool(idempotent, destructive = false)]
    fn lock_door() -> String {
        "locked".into()
    }

    /// Unlock the front door. Returns the door's new state. Use this when a guest arrives.
    #[mcp_tool(idempotent)]
    fn unlock_door() -> String {
        "unlocked".into()
    }

    /// Delete one file from the workspace. Returns the deleted path. Use this to remove a file.
    ///
    /// # Arguments
    /// * `path` - the file's path
    #[mcp_tool(aliases("delete_files"))]
    fn delete_file(path: String) -> String {
        path
    }

    /// Move one file to the trash, so it can be restored. Returns the new path. Use this
    /// rather than deleting when unsure.
    ///
    /// # Arguments
    /// * `path` - the file's path
    #[mcp_tool(destructive = false, aliases("Delete-File", "trash_file"))]
    fn remove_file(path: String) -> String {
        path
    }

    /// Show the status of the build. Returns its stage and progress. Use this while waiting.
    #[mcp_tool(read_only)]
    fn build_status() -> String {
        "ok".into()
    }

    /// Show the status of the build, as a chart. Returns an image. Use this to show progress.
    #[mcp_tool(read_only)]
    fn status_build() -> String {
        "ok".into()
    }
}

#[test]
fn names_one_slip_apart_are_confusable() {
    let findings = run("names");
    let f = find(&findings, "names-confusable", Some("lock_door"));
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.problem.contains("`unlock_door`"), "{f}");
    assert!(f.problem.contains("2 edit(s)"), "{f}");
    // unlock_door is destructive: the finding says the guard applies.
    assert!(f.problem.contains("destructive"), "{f}");
}

#[test]
fn names_with_the_same_words_in_another_order_are_equivalent() {
    let findings = run("names");
    let f = find(&findings, "names-equivalent", Some("build_status"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.problem.contains("`status_build`"), "{f}");
}

#[test]
fn an_alias_that_is_a_spelling_of_another_tool_shadows_it() {
    let findings = run("names");
    let f = find(&findings, "alias-shadows", Some("remove_file"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.problem.contains("`Delete-File`"), "{f}");
    assert!(f.problem.contains("the name of `delete_file`"), "{f}");
}

#[test]
fn an_alias_that_only_changes_the_plural_is_redundant() {
    let findings = run("names");
    let f = find(&findings, "alias-redundant", Some("delete_file"));
    assert_eq!(f.severity, Severity::Info);
    assert!(f.problem.contains("`delete_files`"), "{f}");
}

// ----------------------------------------------------------------------- schemas

mod schemas {
    use super::*;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    pub struct Filter {
        /// Only items with this tag.
        pub tag: Option<String>,
    }

    /// Search items with a filter. Returns the matching items. Use this to narrow a list.
    ///
    /// # Arguments
    /// * `filter` - which items to keep
    #[mcp_tool(read_only, full_schema)]
    fn filtered(filter: Filter) -> String {
        filter.tag.unwrap_or_default()
    }

    /// A folder tree.
    #[derive(Deserialize, JsonSchema)]
    pub struct Tree {
        /// The folder's name.
        pub name: String,
        /// Its subfolders.
        pub children: Vec<Tree>,
    }

    /// Create a folder tree in one call. Returns how many folders were made. Use this for
    /// nested folders.
    ///
    /// # Arguments
    /// * `tree` - the folders to create
    #[mcp_tool(destructive = false)]
    fn make_tree(tree: Tree) -> String {
        format!("{} and {} subfolders", tree.name, tree.children.len())
    }

    /// A date written the old way.
    #[derive(Deserialize)]
    pub struct OldDate(pub String);

    impl JsonSchema for OldDate {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "OldDate".into()
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "$schema": "http://json-schema.org/draft-04/schema#",
                "type": "string"
            })
        }
    }

    /// Parse a date written the old way. Returns it as ISO 8601. Use this for legacy records.
    ///
    /// # Arguments
    /// * `date` - the date
    #[mcp_tool(read_only, full_schema)]
    fn old_date(date: OldDate) -> String {
        date.0
    }

    /// Return a number. Use this to see what a non-object output schema looks like.
    #[mcp_tool(read_only)]
    fn clean_number() -> disco_runtime::Json<u32> {
        disco_runtime::Json(1)
    }
}

#[test]
fn refs_in_an_input_schema_are_errors() {
    let findings = run("schemas");
    let f = find(&findings, "schema-ref", Some("filtered"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.problem.contains("full_schema"), "{f}");
}

#[test]
fn a_recursive_type_keeps_refs_even_in_the_portable_form() {
    let findings = run("schemas");
    let f = find(&findings, "schema-ref", Some("make_tree"));
    assert!(f.problem.contains("recursive"), "{f}");
}

#[test]
fn a_nullable_type_in_an_input_schema_is_an_error() {
    let findings = run("schemas");
    let f = find(&findings, "schema-nullable", Some("filtered"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.problem.contains("null"), "{f}");
}

#[test]
fn an_unknown_schema_dialect_is_an_error() {
    let findings = run("schemas");
    let f = find(&findings, "schema-dialect", Some("old_date"));
    assert!(f.problem.contains("draft-04"), "{f}");
    // 2020-12, which full_schema writes at the root, is accepted.
    assert!(!has(&findings, "schema-dialect", Some("filtered")));
}

#[test]
fn portable_schemas_pass() {
    let findings = run("schemas");
    for code in [
        "schema-ref",
        "schema-nullable",
        "schema-dialect",
        "schema-not-object",
    ] {
        assert!(!has(&findings, code, Some("clean_number")), "{code}");
    }
}

// ------------------------------------------------------------------------ tokens

mod many {
    use super::*;

    macro_rules! tools {
        ($($name:ident)*) => {$(
            /// Report one sensor of the plant by its position in the control room. Returns
            /// the reading with its unit and time. Use this when an operator asks for it.
            #[mcp_tool(read_only)]
            fn $name() -> String {
                stringify!($name).into()
            }
        )*};
    }

    tools!(
        alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
        oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber
        basalt cobalt dune ember fjord glacier harbor iris jade kelp lagoon meadow nectar onyx
        prairie
    );
}

#[test]
fn more_than_forty_listed_tools_advise_search_first_exposure() {
    let c = catalog("many");
    assert_eq!(c.tools().len(), 42);
    let findings = lint::lint(&c, &LintOptions::default());
    let f = find(&findings, "catalog-too-large", None);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.problem.contains("42 tools"), "{f}");
    assert!(f.problem.contains("30-50"), "{f}");
    assert!(f.fix.contains("tool_search"), "{f}");
}

#[test]
fn the_token_cost_is_always_reported_and_a_heavy_tool_is_a_warning() {
    let findings = run("vague");
    let f = find(&findings, "token-cost", None);
    assert_eq!(f.severity, Severity::Info);
    assert!(f.problem.contains("2 tool(s)"), "{f}");
    assert!(!has(&findings, "catalog-too-large", None));

    let strict = LintOptions {
        max_tool_tokens: 10,
        max_listed_tokens: 20,
        ..LintOptions::default()
    };
    let findings = lint::lint(&catalog("vague"), &strict);
    find(&findings, "tool-token-cost", Some("weather"));
    find(&findings, "catalog-too-large", None);
}

// ---------------------------------------------------------------------- requests

#[test]
fn example_requests_that_search_ranks_wrong_are_reported() {
    let requests = lint::parse_requests(
        "# comment\n\
         {\"query\": \"how many words are in this text\", \"expected\": \"count_words\"}\n\
         \n\
         {\"query\": \"invoice number 12\", \"expected\": \"fetch_order\"}\n\
         {\"query\": \"zebra migration statistics\", \"expected\": \"count_words\"}\n\
         {\"query\": \"anything\", \"expected\": \"no_such_tool\"}\n",
    )
    .unwrap();
    assert_eq!(requests.len(), 4);
    let options = LintOptions {
        requests,
        ..LintOptions::default()
    };
    let findings = lint::lint(&catalog("neighbours"), &options);
    let misranked: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.code == "search-misranked")
        .collect();
    assert_eq!(misranked.len(), 2, "{findings:#?}");
    let f = find(&findings, "search-misranked", Some("fetch_order"));
    assert!(f.problem.contains("ranks `fetch_invoice` first"), "{f}");
    let f = find(&findings, "search-misranked", Some("count_words"));
    assert!(f.problem.contains("finds nothing"), "{f}");
    assert_eq!(f.severity, Severity::Warning);
    let f = find(&findings, "request-unknown-tool", None);
    assert_eq!(f.severity, Severity::Error);
}

#[test]
fn a_bad_requests_line_names_its_line() {
    let err = lint::parse_requests("{\"query\": \"a\", \"expected\": \"b\"}\n{\"query\": 1}\n")
        .unwrap_err();
    assert!(err.starts_with("line 2:"), "{err}");
}

// ------------------------------------------------------------------------- shape

#[test]
fn findings_are_sorted_and_printable() {
    let findings = run("names");
    let tools: Vec<Option<&str>> = findings.iter().map(|f| f.tool.as_deref()).collect();
    let mut sorted = tools.clone();
    sorted.sort_by_key(|t| (t.is_none(), *t));
    assert_eq!(tools, sorted);
    let text = findings[0].to_string();
    assert!(text.contains("\n  fix: "), "{text}");
    assert_eq!(lint::worst(&findings), Some(Severity::Error));
}

#[test]
fn a_well_described_catalog_has_no_warnings() {
    let c = catalog("neighbours");
    // count_words alone: the neighbours' findings are about the pair.
    let findings: Vec<Finding> = lint::lint(&c, &LintOptions::default())
        .into_iter()
        .filter(|f| f.tool.as_deref() == Some("count_words"))
        .collect();
    assert_eq!(lint::worst(&findings), None, "{findings:#?}");
    let _ = ExampleRequest {
        query: String::new(),
        expected: String::new(),
    };
}

// ------------------------------------------------------------------ annotations

#[test]
fn a_tool_that_states_no_annotations_is_told_it_loses_name_correction() {
    // Every combination a tools/list entry can state. The finding must appear exactly for the
    // tools that name correction treats as destructive without their author having said so.
    let hints = [None, Some(false), Some(true)];
    let mut entries = Vec::new();
    for (i, read_only) in hints.iter().enumerate() {
        for (j, destructive) in hints.iter().enumerate() {
            let mut annotations = serde_json::Map::new();
            if let Some(r) = read_only {
                annotations.insert("readOnlyHint".into(), serde_json::json!(r));
            }
            if let Some(d) = destructive {
                annotations.insert("destructiveHint".into(), serde_json::json!(d));
            }
            entries.push(serde_json::json!({
                "name": format!("tool_{i}_{j}"),
                "description": "Change one record of the ledger and return the changed record.",
                "inputSchema": {"type": "object"},
                "annotations": annotations,
            }));
        }
    }
    let provider = disco_runtime::catalog::provider::JsonCatalogProvider::from_value(
        &serde_json::Value::Array(entries),
    )
    .unwrap();
    let catalog = Catalog::builder()
        .provider(provider)
        .from_specs([])
        .unwrap();
    let findings = lint::lint(&catalog, &LintOptions::default());
    for tool in catalog.tools() {
        let expected = tool.is_destructive() && tool.annotations().destructive != Some(true);
        let found = has(&findings, "annotations-missing", Some(tool.name()));
        assert_eq!(found, expected, "{} {:?}", tool.name(), tool.annotations());
        if found {
            let f = find(&findings, "annotations-missing", Some(tool.name()));
            assert_eq!(f.severity, Severity::Info);
            assert!(
                f.problem.contains("name correction will not guess it"),
                "{f}"
            );
            assert!(f.fix.contains("destructive = false"), "{f}");
        }
    }
    // Two of the nine: nothing stated, and `readOnlyHint: false` alone.
    assert_eq!(
        findings
            .iter()
            .filter(|f| f.code == "annotations-missing")
            .count(),
        2
    );
}

#[test]
fn an_empty_catalog_is_an_error_that_says_where_tools_must_live() {
    let empty = Catalog::builder().from_specs([]).unwrap();
    let findings = lint::lint(&empty, &LintOptions::default());
    let f = find(&findings, "catalog-empty", None);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.fix.contains("library crate"), "{f}");
    assert_eq!(lint::worst(&findings), Some(Severity::Error));
    // One tool is enough not to be empty.
    assert!(!has(&run("vague"), "catalog-empty", None));
}
