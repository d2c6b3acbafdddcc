//! The rule of a group's name, and the group of a `#[mcp_tool]` that names none. The groups a
//! caller is told of are summarized by the catalog, in its `groups` module.

/// The longest group name, in characters.
pub const GROUP_MAX_CHARS: usize = 64;

/// What is wrong with a group name, or `None` when it is valid: 1 to 64 characters of
/// `A-Z a-z 0-9 _ - .`, beginning and ending with a letter or a digit. The rule
/// `#[mcp_tool(group = "...")]` checks at compile time, applied to providers' groups when a
/// catalog is built.
pub fn group_problem(group: &str) -> Option<String> {
    const RULE: &str = "a group is 1 to 64 characters of `A-Z a-z 0-9 _ - .`, beginning and \
                        ending with a letter or a digit";
    if group.is_empty() {
        return Some(format!("the group is empty; {RULE}"));
    }
    let len = group.chars().count();
    if len > GROUP_MAX_CHARS {
        let start: String = group.chars().take(24).collect();
        return Some(format!(
            "the group `{start}...` is {len} characters long; {RULE}"
        ));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if !group.chars().all(ok) {
        return Some(format!(
            "the group `{}` has characters outside `A-Z a-z 0-9 _ - .`; {RULE}",
            group.escape_debug()
        ));
    }
    let edge = |c: char| c.is_ascii_alphanumeric();
    if !group.starts_with(edge) || !group.ends_with(edge) {
        return Some(format!(
            "the group `{group}` begins or ends with a separator; {RULE}"
        ));
    }
    None
}

/// The group of a `#[mcp_tool]` that names none: the last segment of its module path that is a
/// valid group (`notes_app::tools::calendar` is `calendar`; a tool at the crate root is in the
/// crate's group), else `tools`.
pub(crate) fn module_group(module: &str) -> String {
    module
        .rsplit("::")
        .map(|segment| segment.strip_prefix("r#").unwrap_or(segment))
        .find(|segment| group_problem(segment).is_none())
        .unwrap_or("tools")
        .to_string()
}
