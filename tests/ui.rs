//! The compile-time rules of `#[mcp_tool]`: every rule has a case under `tests/ui/<category>/`
//! with the compiler's output checked in beside it, so a change to a message or to where it
//! points shows up in review. `tests/ui/pass/` holds the shapes that must keep compiling.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test --test ui`, then read
//! them: the point of this suite is that each message is clear and underlines the mistake.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    for category in [
        "description",
        "names",
        "params",
        "types",
        "shapes",
        "keys",
        "annotations",
        "accumulation",
        "groups",
    ] {
        t.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
}
