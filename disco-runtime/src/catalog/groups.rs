//! Groups of tools: what a client that defers tools, and a model that has not searched yet, are
//! told of the catalog. Each tool has one group (`#[mcp_tool(group = "...")]`, its module, or
//! its provider's name); a caller's view of the catalog summarizes its groups in the server's
//! `instructions` and in `tool_search`'s description, and each tools/list entry names its group
//! in `_meta`.
//!
//! Everything here is computed from the tools the caller may see: a group whose tools are all
//! hidden from a caller is not named to it, and no word of a tool it cannot see is shown.

use std::collections::{BTreeMap, HashMap};

use super::{CatalogTool, View};
use crate::search::SearchOptions;
use crate::text::words::{singular, split_words};
pub use crate::tool::group::{group_problem, GROUP_MAX_CHARS};

/// The `_meta` key of a tools/list entry that names the groups the tool belongs to, as the
/// MCP primitive grouping proposal defines it (SEP-2084, "MCP Primitive Grouping Server
/// Capability", seps/2084-primitive-groups.md of modelcontextprotocol/modelcontextprotocol,
/// section "Reserved `_meta` Property for All Primitives"): an array of group names, e.g.
/// `"_meta": {"io.modelcontextprotocol/groups": ["arithmetic"]}`. A disco tool is in one group,
/// so the array has one name.
pub const GROUPS_META_KEY: &str = "io.modelcontextprotocol/groups";

/// The most bytes of the `instructions` the server writes: Codex uses a server's instructions
/// as the description of its deferred tools and cuts them at 4 KiB.
pub const INSTRUCTIONS_MAX_BYTES: usize = 4096;

/// The most bytes of the group list in `tool_search`'s description.
pub const SEARCH_GROUPS_MAX_BYTES: usize = 1024;

/// Words shown per group in the instructions.
const WORDS_PER_GROUP: usize = 5;

/// A word longer than this is not shown (never cut): identifiers and URLs, not words.
const WORD_MAX_BYTES: usize = 24;

/// One group as a caller sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupSummary {
    /// The group's name.
    pub name: String,
    /// How many of its tools the caller may use.
    pub tools: usize,
    /// A few words that say what its tools are about, most telling first (see
    /// [`View::groups`]).
    pub words: Vec<String>,
}

/// Function words and the words every tool description uses; never shown as a group's words.
/// A list of its own: the search analyzer's lists are tuned for ranking, not for display.
const NOT_SHOWN: &[&str] = &[
    "about", "after", "all", "also", "and", "any", "are", "based", "been", "before", "being",
    "but", "can", "does", "each", "either", "for", "from", "given", "has", "have", "how", "into",
    "its", "may", "more", "most", "must", "not", "one", "only", "other", "our", "over", "own",
    "per", "returns", "return", "same", "should", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "tool", "tools", "use",
    "used", "uses", "using", "via", "was", "were", "what", "when", "where", "which", "while",
    "who", "will", "with", "within", "without", "you", "your",
];

/// Words by comparison key (the singular): the form first written, and a weight.
type Words = HashMap<String, (String, u32)>;

/// The words of one tool that may describe its group, by comparison key (the singular), with
/// the form first written and the weight: 2 for a word of the name or the keywords, 1 for a
/// word of the description's first sentence only.
fn tool_words(tool: &CatalogTool, group_keys: &[String]) -> Words {
    let mut out: Words = HashMap::new();
    let mut add = |word: String, weight: u32| {
        if word.len() < 3
            || word.len() > WORD_MAX_BYTES
            || word.chars().all(|c| c.is_numeric())
            || NOT_SHOWN.contains(&word.as_str())
        {
            return;
        }
        let key = singular(&word);
        if group_keys.contains(&key) {
            return;
        }
        let entry = out.entry(key).or_insert((word, 0));
        entry.1 = entry.1.max(weight);
    };
    for word in split_words(&tool.name) {
        add(word, 2);
    }
    for keyword in &tool.keywords {
        for word in split_words(keyword) {
            add(word, 2);
        }
    }
    let first_sentence = tool
        .description
        .split_inclusive(['.', '\n'])
        .next()
        .unwrap_or("");
    for word in split_words(first_sentence) {
        add(word, 1);
    }
    out
}

/// Groups in the order they are shown: most tools first, then by name; with their words when
/// `words` (the costly part: every tool's text is split).
fn summarize(tools: &[&CatalogTool], with_words: bool) -> Vec<GroupSummary> {
    // group -> (tools, words with their weights summed over the group's tools)
    let mut groups: BTreeMap<&str, (usize, Words)> = BTreeMap::new();
    for tool in tools {
        let Some(group) = tool.group.as_deref() else {
            continue;
        };
        let (count, words) = groups.entry(group).or_default();
        *count += 1;
        if !with_words {
            continue;
        }
        let keys: Vec<String> = split_words(group).iter().map(|w| singular(w)).collect();
        for (key, (form, weight)) in tool_words(tool, &keys) {
            let entry = words.entry(key).or_insert((form, 0));
            entry.1 += weight;
        }
    }
    // In how many groups each word appears: a word of every group tells one group from
    // another less than a word of one.
    let mut spread: HashMap<&str, usize> = HashMap::new();
    for (_, words) in groups.values() {
        for key in words.keys() {
            *spread.entry(key.as_str()).or_default() += 1;
        }
    }
    let total = groups.len() as f64;
    let mut out: Vec<GroupSummary> = groups
        .iter()
        .map(|(name, (count, words))| {
            let mut ranked: Vec<(f64, &str)> = words
                .iter()
                .map(|(key, (form, weight))| {
                    let idf = (1.0 + total / spread[key.as_str()] as f64).ln();
                    (f64::from(*weight) * idf, form.as_str())
                })
                .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            GroupSummary {
                name: name.to_string(),
                tools: *count,
                words: ranked
                    .into_iter()
                    .take(WORDS_PER_GROUP)
                    .map(|(_, w)| w.to_string())
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.tools.cmp(&a.tools).then(a.name.cmp(&b.name)));
    out
}

/// `N tools` / `1 tool`.
fn tools_count(n: usize) -> String {
    if n == 1 {
        "1 tool".to_string()
    } else {
        format!("{n} tools")
    }
}

/// The first line of the instructions: how many tools, in how many groups.
fn instructions_header(groups: &[GroupSummary], tools: usize, ungrouped: usize) -> String {
    if groups.is_empty() {
        format!("{}, none of them in a group.\n", tools_count(ungrouped))
    } else {
        format!(
            "{} in {} {}. Each line is a group, its number of tools and words from its \
             tools' names and descriptions:\n",
            tools_count(tools),
            groups.len(),
            if groups.len() == 1 { "group" } else { "groups" },
        )
    }
}

/// The last line of the instructions with search on: how to find a tool and call it.
fn search_how_to(search: &SearchOptions) -> String {
    format!(
        "Not every tool may be listed. To find one, call `{s}` with what you want to do \
         in plain words, e.g. {{\"query\": \"convert miles to km\"}}: it returns the \
         best tools with their input schemas. Then call the tool by its name, or \
         through `{e}` with {{\"name\": \"...\", \"arguments\": {{...}}}}.\n",
        s = search.search_name,
        e = search.execute_name,
    )
}

/// One line per group, in order, as many as fit in `room` bytes, then one line that counts
/// those left (room for it is kept whatever it ends up counting).
fn group_lines(groups: &[GroupSummary], search: &SearchOptions, room: usize) -> String {
    let reserve =
        groups_left_line(search, groups.len(), groups.iter().map(|g| g.tools).sum()).len();
    let mut body = String::new();
    let mut shown = 0;
    for group in groups {
        let line = group_line(group);
        let left_after = groups.len() - shown - 1;
        let needed = body.len() + line.len() + if left_after > 0 { reserve } else { 0 };
        if needed > room {
            break;
        }
        body.push_str(&line);
        shown += 1;
    }
    if shown < groups.len() {
        let tools_left: usize = groups[shown..].iter().map(|g| g.tools).sum();
        body.push_str(&groups_left_line(search, groups.len() - shown, tools_left));
    }
    body
}

/// `- name (tools): words`.
fn group_line(group: &GroupSummary) -> String {
    let mut line = format!("- {} ({})", group.name, group.tools);
    if !group.words.is_empty() {
        line.push_str(": ");
        line.push_str(&group.words.join(", "));
    }
    line.push('\n');
    line
}

/// The line that counts the groups not shown, and says how to find their tools.
fn groups_left_line(search: &SearchOptions, groups_left: usize, tools_left: usize) -> String {
    let how = if search.enabled {
        format!(": find them with `{}`", search.search_name)
    } else {
        String::new()
    };
    format!(
        "- and {groups_left} more {} ({}){how}\n",
        if groups_left == 1 { "group" } else { "groups" },
        tools_count(tools_left)
    )
}

impl View<'_> {
    /// The groups of the tools this caller may use, most tools first: those it may see that
    /// tools/list shows, and, with search on, those `tool_search` finds (hidden ones too).
    ///
    /// The words of a group are drawn from its tools' names and keywords (weight 2) and the
    /// first sentence of their descriptions (weight 1), each counted once per tool, compared
    /// in the singular; words of the group's own name, function words, numbers and words of
    /// under 3 or over 24 bytes are left out. A word's weight summed over the group's tools is
    /// multiplied by `ln(1 + groups / groups with the word)`, so that a word of one group
    /// ranks above one that every group has; ties go alphabetically.
    pub fn groups(&self) -> Vec<GroupSummary> {
        summarize(&self.usable_tools(), true)
    }

    /// The `instructions` a server writes for this caller when its author gave none: the
    /// groups, with their counts and words, one line each, and how to use `tool_search` and
    /// `execute_tool` when search is on; at most [`INSTRUCTIONS_MAX_BYTES`] bytes, made of
    /// whole lines (groups that do not fit are counted on a last line, and tools without a
    /// group on a line of their own). `None` when the caller may use no tool.
    pub fn instructions(&self) -> Option<String> {
        let usable = self.usable_tools();
        let groups = summarize(&usable, true);
        let tools: usize = groups.iter().map(|g| g.tools).sum();
        let ungrouped = usable.len() - tools;
        if usable.is_empty() {
            return None;
        }
        let search = &self.catalog().config.search;
        let header = instructions_header(&groups, tools, ungrouped);
        // Tools from providers that give no group are counted, never left out.
        let ungrouped_line = if ungrouped > 0 && !groups.is_empty() {
            format!("Also {} without a group.\n", tools_count(ungrouped))
        } else {
            String::new()
        };
        let footer = if search.enabled {
            search_how_to(search)
        } else {
            String::new()
        };
        let fixed = header.len() + ungrouped_line.len() + footer.len();
        let body = group_lines(
            &groups,
            search,
            INSTRUCTIONS_MAX_BYTES.saturating_sub(fixed),
        );
        let mut text = header + &body + &ungrouped_line + &footer;
        // The fixed texts hold the names the author gave the meta-tools: should they ever
        // outgrow the bound, whole lines go.
        while text.len() > INSTRUCTIONS_MAX_BYTES {
            let cut = text[..text.len() - 1].rfind('\n').map_or(0, |i| i + 1);
            text.truncate(cut);
        }
        let text = text.trim_end().to_string();
        (!text.is_empty()).then_some(text)
    }

    /// `tool_search`'s description for this caller: the catalog's, with the groups the caller
    /// may search named after it (whole entries, at most [`SEARCH_GROUPS_MAX_BYTES`] bytes).
    pub fn search_description(&self, base: &str) -> String {
        // Names and counts only: this is part of every first page of tools/list.
        let groups = summarize(&self.usable_tools(), false);
        if groups.is_empty() {
            return base.to_string();
        }
        let mut list = String::new();
        let mut shown = 0;
        for (i, group) in groups.iter().enumerate() {
            let entry = format!("{} ({})", group.name, group.tools);
            // ", " before it, and room for ", and N more" after, unless it is the last.
            let more = if i + 1 < groups.len() {
                format!(", and {} more", groups.len()).len()
            } else {
                0
            };
            if list.len() + 2 + entry.len() + more > SEARCH_GROUPS_MAX_BYTES {
                break;
            }
            if !list.is_empty() {
                list.push_str(", ");
            }
            list.push_str(&entry);
            shown += 1;
        }
        if shown < groups.len() {
            list.push_str(&format!(", and {} more", groups.len() - shown));
        }
        format!("{base} Tool groups (tools): {list}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, JsonCatalogProvider, SearchOptions};
    use crate::tool::group::module_group;
    use crate::tool::Caller;
    use serde_json::{json, Value};

    /// A catalog of provider tools, each `(name, group, description, keywords)`.
    fn catalog(tools: &[(String, Option<String>, String, Vec<String>)], search: bool) -> Catalog {
        let tools: Vec<Value> = tools
            .iter()
            .map(|(name, group, description, keywords)| {
                let mut meta = json!({"disco/keywords": keywords});
                if let Some(g) = group {
                    meta[GROUPS_META_KEY] = json!([g]);
                }
                json!({"name": name, "description": description,
                       "inputSchema": {"type": "object"}, "_meta": meta})
            })
            .collect();
        Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&json!(tools)).expect("valid"))
            .search(SearchOptions::default().enabled(search))
            .from_specs([])
            .expect("catalog builds")
    }

    /// Checks one instructions text against the groups it summarizes: within the bound, made of
    /// whole lines, the groups shown in order with all their words, the rest counted.
    fn check(text: &str, groups: &[GroupSummary], search: bool) {
        assert!(text.len() <= INSTRUCTIONS_MAX_BYTES, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        let total: usize = groups.iter().map(|g| g.tools).sum();
        assert!(
            lines[0].starts_with(&format!("{} in {} group", tools_count(total), groups.len())),
            "{}",
            lines[0]
        );
        let mut shown = 0;
        let mut counted = 0;
        let mut rest = None;
        for line in &lines[1..] {
            if let Some(item) = line.strip_prefix("- and ") {
                rest = Some(item.to_string());
                continue;
            }
            if let Some(item) = line.strip_prefix("- ") {
                assert!(rest.is_none(), "a group after the last line: {line}");
                let group = &groups[shown];
                let mut expected = format!("{} ({})", group.name, group.tools);
                if !group.words.is_empty() {
                    expected.push_str(": ");
                    expected.push_str(&group.words.join(", "));
                }
                assert_eq!(item, expected, "a group line cut or out of order");
                shown += 1;
                counted += group.tools;
                continue;
            }
            if line.starts_with("Also ") && line.ends_with(" without a group.") {
                continue;
            }
            assert!(
                search && line.contains("tool_search"),
                "a stray line: {line:?}"
            );
        }
        match rest {
            Some(rest) => {
                let left = groups.len() - shown;
                let noun = if left == 1 { "group" } else { "groups" };
                assert!(
                    rest.starts_with(&format!(
                        "{left} more {noun} ({})",
                        tools_count(total - counted)
                    )),
                    "{rest}"
                );
            }
            None => assert_eq!(shown, groups.len(), "groups left out without a count"),
        }
        assert_eq!(search, text.contains("execute_tool"), "{text}");
    }

    /// Words of every kind a description has: short and long, other scripts, digits.
    const WORDS: &[&str] = &[
        "calendar",
        "invoice",
        "Überweisung",
        "日本語の説明",
        "repository",
        "x",
        "42",
        "ab",
        "supercalifragilisticexpialidocious",
        "naïve",
        "kubernetes",
        "pull",
        "request",
        "issue",
        "café",
        "résumé",
        "ledger",
        "the",
        "tools",
        "Москва",
    ];

    /// Generated catalogs, from one group to thousands, with group names up to the longest
    /// allowed and words of every length and script: the instructions keep their promises.
    #[test]
    fn instructions_stay_within_4_kib_in_whole_lines() {
        let mut rng = synth::Rng::new(7);
        let alphabet: Vec<char> = ('a'..='z')
            .chain('0'..='9')
            .chain(['_', '-', '.'])
            .collect();
        let mut checked = 0;
        for groups_n in [1usize, 2, 3, 10, 40, 100, 400, 1000] {
            for search in [true, false] {
                let mut tools = Vec::new();
                let mut names = Vec::new();
                for g in 0..groups_n {
                    let len = 1 + rng.below(GROUP_MAX_CHARS);
                    let mut name: String = (0..len).map(|_| *rng.pick(&alphabet)).collect();
                    // Valid: a letter or a digit at both ends, and unique.
                    name.replace_range(..1, "g");
                    name = format!("{name}.{g}");
                    if name.chars().count() > GROUP_MAX_CHARS {
                        name = format!("g{g}");
                    }
                    names.push(name);
                }
                let tools_n = groups_n + rng.below(groups_n + 1);
                for t in 0..tools_n {
                    let group = if t < groups_n {
                        names[t].clone()
                    } else {
                        rng.pick(&names).clone()
                    };
                    let words: Vec<&str> =
                        (0..1 + rng.below(12)).map(|_| *rng.pick(WORDS)).collect();
                    let keywords = vec![rng.pick(WORDS).to_string()];
                    tools.push((
                        format!("{}_{t}", rng.pick(&["get", "list", "create_item", "sync"])),
                        Some(group),
                        words.join(" "),
                        keywords,
                    ));
                }
                let c = catalog(&tools, search);
                let anyone = Caller::anonymous();
                let view = c.for_caller(&anyone);
                let groups = view.groups();
                assert_eq!(groups.len(), groups_n);
                let text = view.instructions().expect("instructions");
                check(&text, &groups, search);
                let described = view.search_description("Find tools.");
                check_search_description(&described, &groups);
                checked += 1;
            }
        }
        assert_eq!(checked, 16);
    }

    /// The groups `tool_search`'s description names: whole entries in order, within the
    /// bound, the ones left out counted, and none left out that would have fitted.
    fn check_search_description(described: &str, groups: &[GroupSummary]) {
        let list = described
            .strip_prefix("Find tools. Tool groups (tools): ")
            .and_then(|l| l.strip_suffix('.'))
            .expect("the base, then the groups");
        assert!(
            list.len() <= SEARCH_GROUPS_MAX_BYTES,
            "{} bytes",
            list.len()
        );
        let (shown, more) = match list.rsplit_once(", and ") {
            Some((shown, more)) if more.ends_with(" more") => (shown, Some(more)),
            _ => (list, None),
        };
        let entries: Vec<String> = groups
            .iter()
            .map(|g| format!("{} ({})", g.name, g.tools))
            .collect();
        let n = shown.split(", ").count();
        assert_eq!(shown, entries[..n].join(", "), "whole entries, in order");
        match more {
            Some(more) => {
                assert_eq!(more, format!("{} more", groups.len() - n));
                // The next entry did not fit beside the count of the rest.
                let next = format!("{shown}, {}, and {} more", entries[n], groups.len());
                assert!(next.len() > SEARCH_GROUPS_MAX_BYTES, "{next}");
            }
            None => assert_eq!(n, groups.len()),
        }
    }

    /// Groups that all fit are all shown, each with its count; the words say what the tools
    /// are about, and not the group's own name.
    #[test]
    fn small_catalogs_show_every_group_with_telling_words() {
        let tool = |name: &str, group: &str, description: &str| {
            (
                name.to_string(),
                Some(group.to_string()),
                description.to_string(),
                Vec::new(),
            )
        };
        let c = catalog(
            &[
                tool("add_note", "notes", "Add a note to the journal."),
                tool("search_notes", "notes", "Search the journal for a phrase."),
                tool(
                    "create_event",
                    "calendar",
                    "Create a calendar event with invitees.",
                ),
                tool("list_events", "calendar", "List the events of a day."),
                tool(
                    "cancel_event",
                    "calendar",
                    "Cancel an event and tell the invitees.",
                ),
            ],
            true,
        );
        let anyone = Caller::anonymous();
        let view = c.for_caller(&anyone);
        let groups = view.groups();
        assert_eq!(groups[0].name, "calendar");
        assert_eq!(groups[0].tools, 3);
        assert_eq!(groups[0].words[0], "event");
        assert!(
            groups[0].words.contains(&"invitees".to_string()),
            "{groups:?}"
        );
        assert!(!groups[0].words.contains(&"calendar".to_string()));
        assert_eq!(groups[1].name, "notes");
        assert!(
            groups[1].words.contains(&"journal".to_string()),
            "{groups:?}"
        );
        assert!(!groups[1].words.iter().any(|w| w == "note" || w == "the"));
        let text = view.instructions().unwrap();
        check(&text, &groups, true);
        assert!(text.contains("- calendar (3): event"), "{text}");
        let described = view.search_description("Find tools.");
        assert_eq!(
            described,
            "Find tools. Tool groups (tools): calendar (3), notes (2)."
        );
    }

    /// Tools without a group are counted on a line of their own; with no group at all, the
    /// instructions still say how many tools there are and, with search on, how to search.
    #[test]
    fn tools_without_a_group_are_counted_not_left_out() {
        for search in [true, false] {
            for (grouped, ungrouped) in [(0usize, 1usize), (0, 5), (1, 1), (3, 2), (4, 0)] {
                let tools: Vec<_> = (0..grouped + ungrouped)
                    .map(|i| {
                        let group = (i < grouped).then(|| format!("g{}", i % 2));
                        (
                            format!("tool_{i}"),
                            group,
                            "Does a thing.".to_string(),
                            Vec::new(),
                        )
                    })
                    .collect();
                let c = catalog(&tools, search);
                let anyone = Caller::anonymous();
                let view = c.for_caller(&anyone);
                let text = view.instructions().expect("instructions");
                let groups = view.groups();
                if grouped > 0 {
                    check(&text, &groups, search);
                    assert_eq!(
                        text.contains(&format!("Also {} without a group.", tools_count(ungrouped))),
                        ungrouped > 0,
                        "{text}"
                    );
                } else {
                    assert!(
                        text.starts_with(&format!("{}, none of them", tools_count(ungrouped))),
                        "{text}"
                    );
                }
                assert_eq!(text.contains("tool_search"), search, "{text}");
            }
        }
    }

    /// Without search, hidden tools are not counted: nothing would find them.
    #[test]
    fn without_search_only_listed_tools_count() {
        let tools = json!([
            {"name": "a", "description": "A.", "inputSchema": {"type": "object"},
             "_meta": {"io.modelcontextprotocol/groups": ["one"]}},
            {"name": "b", "description": "B.", "inputSchema": {"type": "object"},
             "_meta": {"io.modelcontextprotocol/groups": ["two"], "disco/hidden": true}}
        ]);
        for (search, expected) in [(true, 2), (false, 1)] {
            let c = Catalog::builder()
                .provider(JsonCatalogProvider::from_value(&tools).unwrap())
                .search(SearchOptions::default().enabled(search))
                .from_specs([])
                .unwrap();
            let groups = c.for_caller(&Caller::anonymous()).groups();
            assert_eq!(groups.len(), expected, "search {search}: {groups:?}");
        }
    }

    /// A provider that sets each tool's group itself, as the gateway does (the upstream's
    /// name), whatever the tool's `_meta` declares.
    struct Grouped(Vec<crate::catalog::DynamicTool>);

    impl crate::catalog::ToolProvider for Grouped {
        fn tools(&self) -> Vec<crate::catalog::DynamicTool> {
            self.0.clone()
        }
        fn call(
            &self,
            _: &str,
            _: serde_json::Map<String, Value>,
            _: crate::tool::Context,
        ) -> crate::tool::BoxFuture {
            Box::pin(async { rmcp::model::CallToolResult::success(Vec::new()) })
        }
    }

    /// tools/list's groups are the tool's group first, then every group name the tool
    /// declared itself, in its order, each once (an entry that is not a string is dropped);
    /// with no declared list, the group alone. Generated: declared lists of up to four from a
    /// small alphabet that holds the group itself, a repeat, a name no rule allows and a
    /// non-string.
    #[test]
    fn declared_groups_follow_the_tools_own() {
        let alphabet = [
            json!("fs"),
            json!("files"),
            json!("admin"),
            json!(" bad "),
            json!(7),
        ];
        let mut lists: Vec<Option<Vec<Value>>> = vec![None];
        for n in 0..=4u32 {
            for code in 0..alphabet.len().pow(n) {
                let mut c = code;
                let list = (0..n)
                    .map(|_| {
                        let v = alphabet[c % alphabet.len()].clone();
                        c /= alphabet.len();
                        v
                    })
                    .collect();
                lists.push(Some(list));
            }
        }
        let tools: Vec<crate::catalog::DynamicTool> = lists
            .iter()
            .enumerate()
            .map(|(i, declared)| {
                let mut raw = json!({"name": format!("t{i}"), "description": "D.",
                                     "inputSchema": {"type": "object"}});
                if let Some(list) = declared {
                    raw["_meta"] = json!({ GROUPS_META_KEY: list });
                }
                let mut def =
                    crate::catalog::DynamicTool::new(serde_json::from_value(raw).unwrap());
                def.group = Some("fs".into());
                def
            })
            .collect();
        let c = Catalog::builder()
            .provider(Grouped(tools))
            .from_specs([])
            .unwrap();
        let (listed, total) = c.list_page(&Caller::anonymous(), 0, usize::MAX);
        assert_eq!(total, lists.len());
        for (i, declared) in lists.iter().enumerate() {
            let tool = listed.iter().find(|t| t.name == format!("t{i}")).unwrap();
            let got = tool.meta.as_ref().unwrap()[GROUPS_META_KEY]
                .as_array()
                .unwrap()
                .clone();
            let mut want = vec![json!("fs")];
            for g in declared.iter().flatten().filter(|g| g.is_string()) {
                if !want.contains(g) {
                    want.push(g.clone());
                }
            }
            assert_eq!(got, want, "declared {declared:?}");
        }
    }

    /// A group's name finds its tools: for each of several catalogs of three groups whose
    /// tools never say their group's name, a search for the name ranks that group's tools
    /// first.
    #[test]
    fn a_search_for_a_group_finds_its_tools() {
        let shapes = [
            (
                "calendar",
                ["create_event", "cancel_event", "list_invitees"],
            ),
            ("mail", ["send_message", "archive_thread", "read_inbox"]),
            (
                "billing",
                ["charge_card", "refund_payment", "issue_invoice"],
            ),
            ("notes", ["write_page", "tag_page", "delete_page"]),
            (
                "Pull-Requests",
                ["open_review", "merge_branch", "close_review"],
            ),
        ];
        for rotation in 0..shapes.len() {
            let chosen: Vec<_> = (0..3)
                .map(|i| shapes[(rotation + i) % shapes.len()])
                .collect();
            let mut tools = Vec::new();
            for (group, names) in &chosen {
                for name in names {
                    let words = name.replace('_', " ");
                    tools.push((
                        name.to_string(),
                        Some(group.to_string()),
                        format!("Does this: {words}."),
                        Vec::new(),
                    ));
                }
            }
            let c = catalog(&tools, true);
            for (group, names) in &chosen {
                let found: Vec<String> = c
                    .search(&group.to_lowercase(), 3, &Caller::anonymous())
                    .into_iter()
                    .map(|(tool, _)| tool.name.clone())
                    .collect();
                let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                let mut got = found.clone();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{group}: {found:?}");
            }
        }
    }

    /// A catalog with no tool the caller may use has nothing to say.
    #[test]
    fn no_tools_no_instructions() {
        let c = catalog(&[], true);
        assert_eq!(c.for_caller(&Caller::anonymous()).instructions(), None);
    }

    #[test]
    fn group_names_follow_the_rule() {
        for good in [
            "notes",
            "a",
            "Pull-Requests",
            "v1.2",
            "x_y",
            &"g".repeat(64),
        ] {
            assert_eq!(group_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "user management",
            "notes/",
            "_notes",
            "notes-",
            "café",
            "a\nb",
            &"g".repeat(65),
        ] {
            assert!(group_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn a_module_path_gives_its_last_valid_segment() {
        assert_eq!(module_group("notes_app::tools::calendar"), "calendar");
        assert_eq!(module_group("notes_app"), "notes_app");
        assert_eq!(module_group("notes_app::r#type"), "type");
        assert_eq!(module_group("notes_app::café"), "notes_app");
        assert_eq!(module_group("_x::__private"), "tools");
    }
}
