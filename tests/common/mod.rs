pub mod http;
pub mod named;

/// The `#[mcp_tool]`s declared in `module` (a `module_path!()`) and in the modules inside it:
/// a test's own tools, whatever else its binary's inventory holds.
#[allow(dead_code)] // Binaries that start a `Server` serve their whole inventory instead.
pub fn tools_in(module: &str) -> impl Iterator<Item = &'static disco_runtime::ToolSpec> + '_ {
    disco_runtime::tool::registered().filter(move |s| {
        s.origin
            .module
            .strip_prefix(module)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}
