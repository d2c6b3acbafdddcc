//! The README's Quickstart is `disco-runtime/examples/quickstart.rs` word for word, so it is
//! the code that clippy (`-D warnings`) builds and the crate docs include; and its tools are
//! what the lint and `Server::check` accept: no warning, no redundant alias, every write saying
//! whether it can destroy data, its state registered.

use disco_runtime::catalog::lint::{self, LintOptions, Severity};
use disco_runtime::Catalog;

#[allow(dead_code)]
#[path = "../../disco-runtime/examples/quickstart.rs"]
mod quickstart;

#[test]
fn the_quickstart_in_the_readme_is_the_example() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/disco-runtime/examples/quickstart.rs"
    ))
    .unwrap();
    let section = &readme[readme.find("## Quickstart").expect("a Quickstart section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &section[start..start + section[start..].find("```\n").unwrap()];
    assert_eq!(block.replace("\r\n", "\n"), example.replace("\r\n", "\n"));
}

#[test]
fn the_quickstart_tools_pass_the_lint_and_start() {
    let path = format!("{}::quickstart", module_path!());
    let specs = disco_runtime::tool::registered().filter(|s| s.origin.module == path);
    let catalog = Catalog::builder().from_specs(specs).unwrap();
    assert_eq!(catalog.tools().len(), 2);
    let findings = lint::lint(&catalog, &LintOptions::default());
    let shown: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
    assert!(
        lint::worst(&findings) < Some(Severity::Warning),
        "{}",
        shown.join("\n")
    );
    for code in ["alias-redundant", "annotations-missing"] {
        assert!(
            findings.iter().all(|f| f.code != code),
            "{}",
            shown.join("\n")
        );
    }
}
