use super::*;
use crate::resolve::vocab::is_known_word;
use crate::text::words::{singular, split_words};

fn index(names: &[(&str, bool)]) -> NameIndex {
    NameIndex::new(names.iter().map(|&(name, destructive)| NameEntry {
        name,
        aliases: &[],
        destructive,
    }))
}

fn all(_: usize) -> bool {
    true
}

fn resolve(ix: &NameIndex, name: &str) -> Resolution {
    ix.resolve(name, &all, Policy::Safe, None)
}

fn resolved(ix: &NameIndex, name: &str) -> Option<(usize, Rule)> {
    match resolve(ix, name).outcome {
        Outcome::Resolved { index, rule } => Some((index, rule)),
        Outcome::Unknown => None,
    }
}

/// server-filesystem's tools, and whether each is destructive.
const FILESYSTEM: &[(&str, bool)] = &[
    ("read_file", false),
    ("read_text_file", false),
    ("read_media_file", false),
    ("read_multiple_files", false),
    ("write_file", true),
    ("edit_file", true),
    ("create_directory", false),
    ("list_directory", false),
    ("list_directory_with_sizes", false),
    ("directory_tree", false),
    ("move_file", true),
    ("search_files", false),
    ("get_file_info", false),
    ("list_allowed_directories", false),
];

fn filesystem() -> NameIndex {
    index(FILESYSTEM)
}

#[test]
fn precomputed_typo_neighbours_change_nothing() {
    // The neighbours computed at build time are a cache of the lookup made per request:
    // an index without them must resolve and suggest exactly the same.
    let names = [
        ("read_file", false),
        ("read_files", false),
        ("list_children", false),
        ("list_child_nodes", false),
        ("get_child", false),
        ("lock_door", true),
        ("unlock_door", true),
        ("search_papers", false),
        ("search_paper_notes", false),
        ("delete_directory", true),
        ("create_directory", false),
        ("get_weather_forecast", false),
        ("get_ecosystem_report", false),
    ];
    let cached = index(&names);
    let mut uncached = index(&names);
    uncached.typo_neighbours.clear();
    for request in [
        "list_childrens",
        "list_chidlren",
        "list_child",
        "get_childs",
        "read_fiel",
        "raed_files",
        "lock_dor",
        "unlok_door",
        "serch_papers",
        "search_paper_note",
        "creat_directory",
        "delete_directry",
        "get_wether_forecast",
        "get_unecosystem_report",
        "weather_forecast_get",
        "frobnicate_files",
    ] {
        for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
            assert_eq!(
                cached.resolve(request, &all, policy, None),
                uncached.resolve(request, &all, policy, None),
                "{request} under {policy:?}"
            );
        }
    }
}

#[test]
fn packed_typo_neighbours_are_the_lookups_they_replace() {
    // For every spelling of a catalog whose words have many neighbours (numbers one digit
    // apart) besides ordinary ones, the precomputed neighbours read back as the lookup made
    // in full: the same spellings, in the same order, with the same distances.
    let numbered: Vec<String> = (0..3_000).map(|i| format!("tool_{i}")).collect();
    let names: Vec<(&str, bool)> = numbered
        .iter()
        .map(|n| (n.as_str(), false))
        .chain(FILESYSTEM.iter().copied())
        .collect();
    let ix = index(&names);
    let (mut typos, mut others) = (0, 0);
    for (id, (text, _)) in ix.spellings.iter().enumerate() {
        let mut full = Vec::new();
        ix.typo_lookup(text, &mut |s, d| full.push((s, d)));
        let mut packed = Vec::new();
        assert!(ix
            .typo_neighbours
            .each(id as u32, &mut |s, d| packed.push((s, d))));
        assert_eq!(packed, full, "{text}");
        typos += full.iter().filter(|(_, d)| d.is_some()).count();
        others += full.iter().filter(|(_, d)| d.is_none()).count();
    }
    // Both kinds were read back: typos with their distance, and spellings that are not.
    assert!(typos > 0 && others > 0, "{typos} typos, {others} others");
    assert!(!ix
        .typo_neighbours
        .each(ix.spellings.len() as u32, &mut |_, _| ()));
}

#[test]
fn exact_and_rule_names() {
    let ix = filesystem();
    assert_eq!(resolved(&ix, "read_file"), Some((0, Rule::Exact)));
    assert_eq!(resolved(&ix, "write_file"), Some((4, Rule::Exact)));
    assert_eq!(Rule::WordOrder.as_str(), "word_order");
    assert_eq!(Rule::NamespacePrefix.as_str(), "namespace_prefix");
    assert_eq!(Rule::Namespace.as_str(), "namespace");
    assert!(Rule::Typo.is_fuzzy() && !Rule::Plural.is_fuzzy());
    assert!(Rule::Namespace.is_fuzzy() && !Rule::NamespacePrefix.is_fuzzy());
}

#[test]
fn spelling_equivalents_reach_destructive_tools() {
    let ix = filesystem();
    assert_eq!(resolved(&ix, "WRITE_FILE"), Some((4, Rule::Case)));
    assert_eq!(resolved(&ix, "write-file"), Some((4, Rule::Separators)));
    assert_eq!(resolved(&ix, "writeFile"), Some((4, Rule::Separators)));
    assert_eq!(resolved(&ix, "WriteFile"), Some((4, Rule::Separators)));
    assert_eq!(resolved(&ix, "write file"), Some((4, Rule::Separators)));
    assert_eq!(resolved(&ix, "write.file"), Some((4, Rule::Separators)));
    assert_eq!(resolved(&ix, "write_files"), Some((4, Rule::Plural)));
    assert_eq!(resolved(&ix, "file_write"), Some((4, Rule::WordOrder)));
    assert_eq!(resolved(&ix, "read_multiple_file"), Some((3, Rule::Plural)));
    assert_eq!(
        resolved(&ix, "list_directories_with_size"),
        Some((8, Rule::Plural))
    );
}

#[test]
fn namespace_prefixes() {
    let ix = filesystem();
    for name in [
        "mcp__filesystem__read_text_file",
        "filesystem__read_text_file",
        "filesystem.read_text_file",
        "filesystem/read_text_file",
        "functions.read_text_file",
        "default_api.read_text_file",
        "mcp__filesystem__readTextFile",
    ] {
        assert_eq!(
            resolved(&ix, name),
            Some((1, Rule::NamespacePrefix)),
            "{name}"
        );
        assert_eq!(
            ix.resolve(name, &all, Policy::Safe, Some("filesystem"))
                .outcome,
            Outcome::Resolved {
                index: 1,
                rule: Rule::NamespacePrefix
            },
            "{name}"
        );
    }
    // Known server name: another server's namespace is not stripped.
    let r = ix.resolve(
        "github__read_text_file",
        &all,
        Policy::Safe,
        Some("filesystem"),
    );
    assert!(!matches!(
        r.outcome,
        Outcome::Resolved {
            rule: Rule::NamespacePrefix,
            ..
        }
    ));
    // The server's self-reported name may be longer than the client's label.
    let r = ix.resolve(
        "mcp__filesystem__read_file",
        &all,
        Policy::Safe,
        Some("secure-filesystem-server"),
    );
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            index: 0,
            rule: Rule::NamespacePrefix
        }
    );
    // A negation is never a namespace.
    let lock = index(&[("lock_door", false)]);
    assert_eq!(resolved(&lock, "not.lock_door"), None);
    assert_eq!(resolved(&lock, "no__lock_door"), None);
}

fn tracker() -> NameIndex {
    let aliases = vec!["find_issues".to_string()];
    NameIndex::new([
        NameEntry {
            name: "search_issues",
            aliases: &aliases,
            destructive: false,
        },
        NameEntry {
            name: "create_issue",
            aliases: &[],
            destructive: true,
        },
        NameEntry {
            name: "delete_issue",
            aliases: &[],
            destructive: true,
        },
        NameEntry {
            name: "get_issue",
            aliases: &[],
            destructive: false,
        },
        NameEntry {
            name: "get_issue_comments",
            aliases: &[],
            destructive: false,
        },
        NameEntry {
            name: "lock_door",
            aliases: &[],
            destructive: false,
        },
    ])
}

/// The server's own name, as `Server` sets it from the package: not the label a user gives it.
const PACKAGE: Option<&str> = Some("issue-desk");

/// Claude Code calls a tool `mcp__<label>__<tool>` with the label given to `claude mcp add`,
/// which the server cannot know: behind `mcp__`, any one segment is a namespace, but only for
/// the tiers that name a tool exactly or by its spelling.
#[test]
fn user_labels_behind_mcp_resolve_by_spelling_only() {
    let ix = tracker();
    // The tail by every tier that may follow an unknown label, with the tool it names.
    let spelled = [
        ("delete_issue", 2),
        ("find_issues", 0),
        ("DELETE_ISSUE", 2),
        ("deleteIssue", 2),
        ("DeleteIssue", 2),
        ("delete-issue", 2),
        ("delete_issues", 2),
        ("issue_delete", 2),
        ("get_issues_comment", 4),
        ("comments_issue_get", 4),
    ];
    // Fuzzy variants: each is corrected without a label (all but the destructive one) and is
    // never corrected behind an unknown label.
    let fuzzy = [
        ("serach_issues", 0, Rule::Typo),
        ("get_isue_comments", 4, Rule::Typo),
        ("lookup_issues", 0, Rule::Synonym),
        ("fetch_issue_comments", 4, Rule::Synonym),
        ("get_issue_comments_details", 4, Rule::ExtraWord),
        ("delte_issue", 2, Rule::Typo),
    ];
    for label in ["tracker", "work", "Tracker", "my-tracker", "gh2", "issues"] {
        for server in [PACKAGE, None] {
            for (tail, tool) in spelled {
                let name = format!("mcp__{label}__{tail}");
                assert_eq!(
                    ix.resolve(&name, &all, Policy::Safe, server).outcome,
                    Outcome::Resolved {
                        index: tool,
                        rule: Rule::NamespacePrefix
                    },
                    "{name} ({server:?})"
                );
                // Policies: namespace prefixes are tier 3, past `Strict` and `Off`.
                for policy in [Policy::Strict, Policy::Off] {
                    let r = ix.resolve(&name, &all, policy, server);
                    assert_eq!(r.outcome, Outcome::Unknown, "{name} ({policy:?})");
                }
            }
            for (tail, tool, rule) in fuzzy {
                let name = format!("mcp__{label}__{tail}");
                let r = ix.resolve(&name, &all, Policy::Safe, server);
                assert_eq!(r.outcome, Outcome::Unknown, "{name} ({server:?})");
                assert!(r.suggestions.contains(&tool), "{name}: {:?}", r.suggestions);
                let bare = ix.resolve(tail, &all, Policy::Safe, server).outcome;
                if tool == 2 {
                    assert_eq!(bare, Outcome::Unknown, "{tail}");
                } else {
                    assert_eq!(bare, Outcome::Resolved { index: tool, rule }, "{tail}");
                }
            }
        }
    }
    // Behind a segment the server knows (a client prefix, its own name), fuzzy still applies.
    for name in [
        "mcp__issue_desk__serach_issues",
        "mcp__desk__serach_issues",
        "functions.serach_issues",
        "mcp__tools__serach_issues",
    ] {
        let outcome = ix.resolve(name, &all, Policy::Safe, PACKAGE).outcome;
        assert!(
            matches!(outcome, Outcome::Resolved { index: 0, rule } if rule.is_fuzzy()),
            "{name}: {outcome:?}"
        );
    }
    // The found case.
    assert_eq!(
        ix.resolve("mcp__tracker__delete_issue", &all, Policy::Safe, PACKAGE)
            .outcome,
        Outcome::Resolved {
            index: 2,
            rule: Rule::NamespacePrefix
        }
    );
    // Only `mcp` and `__` open a label: with a known server name another segment is still
    // another server's namespace, and a label is one segment.
    for name in [
        "tracker__delete_issue",
        "tracker.delete_issue",
        "mcp.tracker.delete_issue",
        "mcp__tracker.delete_issue",
        "MCP__tracker__delete_issue",
        "mcp__tracker__work__delete_issue",
        "github__mcp__delete_issue",
    ] {
        let r = ix.resolve(name, &all, Policy::Safe, PACKAGE);
        assert_eq!(r.outcome, Outcome::Unknown, "{name}");
    }
    // A label that negates or states an opposite is not a namespace.
    for label in [
        "undo", "not", "no", "un", "de", "revert", "cancel", "disable", "unlock", "never",
    ] {
        for server in [PACKAGE, None] {
            let name = format!("mcp__{label}__lock_door");
            let r = ix.resolve(&name, &all, Policy::Safe, server);
            assert_eq!(r.outcome, Outcome::Unknown, "{name} ({server:?})");
        }
    }
    // An opposite behind a label is still an opposite.
    let r = ix.resolve("mcp__tracker__unlock_door", &all, Policy::Safe, PACKAGE);
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(!r.suggestions.contains(&5), "{:?}", r.suggestions);
}

/// A hidden tool stays hidden behind a label: the result is that of the visible tools alone.
#[test]
fn user_labels_never_reveal_hidden_tools() {
    let ix = tracker();
    let hide_delete = |i: usize| i != 2;
    for name in [
        "mcp__tracker__delete_issue",
        "mcp__tracker__DeleteIssue",
        "mcp__tracker__issues_delete",
        "mcp__tracker__delte_issue",
    ] {
        let r = ix.resolve(name, &hide_delete, Policy::Safe, PACKAGE);
        assert_eq!(r.outcome, Outcome::Unknown, "{name}");
        assert!(!r.suggestions.contains(&2), "{name}: {:?}", r.suggestions);
    }
}

#[test]
fn dotted_tool_names_are_not_namespaces() {
    let ix = index(&[
        ("math.factorial", false),
        ("factorial", false),
        ("math.gcd", false),
    ]);
    assert_eq!(resolved(&ix, "math.factorial"), Some((0, Rule::Exact)));
    assert_eq!(resolved(&ix, "Math.Factorial"), Some((0, Rule::Case)));
    assert_eq!(
        resolved(&ix, "functions.math.factorial"),
        Some((0, Rule::NamespacePrefix))
    );
    assert_eq!(resolved(&ix, "math_gcd"), Some((2, Rule::Separators)));
}

#[test]
fn aliases_and_policies() {
    let aliases = vec![
        "search_paper".to_string(),
        "search_knowledgebase".to_string(),
    ];
    let ix = NameIndex::new([
        NameEntry {
            name: "search_papers",
            aliases: &aliases,
            destructive: false,
        },
        NameEntry {
            name: "delete_paper",
            aliases: &[],
            destructive: true,
        },
    ]);
    let r = ix.resolve("search_knowledgebase", &all, Policy::Strict, None);
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            index: 0,
            rule: Rule::Alias
        }
    );
    let r = ix.resolve("searchKnowledgebase", &all, Policy::Safe, None);
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            index: 0,
            rule: Rule::Separators
        }
    );
    let r = ix.resolve("search_knowledgebase", &all, Policy::Off, None);
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions, vec![0]);
    let r = ix.resolve("SEARCH_PAPERS", &all, Policy::Strict, None);
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions.first(), Some(&0));
    let r = ix.resolve("search_paperz", &all, Policy::Strict, None);
    assert_eq!(r.outcome, Outcome::Unknown);
}

#[test]
fn typos_synonyms_and_words_on_safe_tools() {
    let ix = filesystem();
    assert_eq!(resolved(&ix, "read_fiel"), Some((0, Rule::Typo)));
    assert_eq!(resolved(&ix, "serach_files"), Some((11, Rule::Typo)));
    assert_eq!(resolved(&ix, "get_file_infos"), Some((12, Rule::Plural)));
    assert_eq!(resolved(&ix, "fetch_file_info"), Some((12, Rule::Synonym)));
    assert_eq!(resolved(&ix, "find_files"), Some((11, Rule::Synonym)));
    assert_eq!(
        resolved(&ix, "list_directory_sizes"),
        Some((8, Rule::DroppedWord))
    );
    assert_eq!(
        resolved(&ix, "directory_tree_tool"),
        Some((9, Rule::ExtraWord))
    );
    assert_eq!(
        resolved(&ix, "get_file_info_details"),
        Some((12, Rule::ExtraWord))
    );
    assert_eq!(resolved(&ix, "raedtextfile"), Some((1, Rule::Typo)));
}

#[test]
fn destructive_tools_are_suggested_not_fuzzily_corrected() {
    let ix = filesystem();
    let r = resolve(&ix, "wirte_file");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions.first(), Some(&4));
    let r = resolve(&ix, "modify_file");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(r.suggestions.contains(&5));
}

#[test]
fn never_across_opposites() {
    let ix = index(&[
        ("lock_door", false),
        ("create_user", false),
        ("enable_logging", false),
        ("add_item", false),
        ("subscribe", false),
        ("grant_access", false),
        ("import_data", false),
        ("upload_file", false),
    ]);
    for name in [
        "unlock_door",
        "unlockDoor",
        "unlockdoor",
        "UnlockDoor",
        "door_unlock",
        "unlock_doors",
        "delete_user",
        "remove_user",
        "disable_logging",
        "remove_item",
        "delete_item",
        "unsubscribe",
        "revoke_access",
        "export_data",
        "download_file",
        "not_lock_door",
        "lock_door_not",
        "un_lock_door",
        "dont_lock_door",
    ] {
        let r = resolve(&ix, name);
        assert_eq!(r.outcome, Outcome::Unknown, "{name} must not be corrected");
    }
    // The opposite itself is not suggested either.
    assert!(!resolve(&ix, "unlock_door").suggestions.contains(&0));
    // But a lone typo near both sides is resolved to the right side only when clear.
    let both = index(&[("lock_door", false), ("unlock_door", false)]);
    assert_eq!(resolved(&both, "unlock_dor"), Some((1, Rule::Typo)));
    assert_eq!(resolved(&both, "lock_dor"), Some((0, Rule::Typo)));
    assert_eq!(resolved(&both, "unlock_doorr"), Some((1, Rule::Typo)));
    assert_eq!(resolved(&both, "unlock_door"), Some((1, Rule::Exact)));
}

/// The cases found by trying names nobody had written into a test: a `re-` verb against its
/// `de-`/`un-` opposite is two letters away, which a long word's typo allowance covered.
#[test]
fn a_change_of_prefix_is_never_a_typo() {
    let pairs = [
        ("reactivate_account", "deactivate_account"),
        ("reinstall_package", "uninstall_package"),
        ("reinstall_app", "deinstall_app"),
        ("resubscribe_newsletter", "unsubscribe_newsletter"),
        ("reregister_device", "deregister_device"),
        ("recompress_archive", "decompress_archive"),
        ("requeue_job", "dequeue_job"),
        ("reselect_item", "deselect_item"),
        ("rearchive_project", "unarchive_project"),
        ("dequeue_vehicle", "enqueue_vehicle"),
        ("sync_data", "async_data"),
        ("async_data", "sync_data"),
        ("reinstall_package", "install_package"),
        ("deinstall_app", "uninstall_app"),
        ("reactivte_account", "deactivate_account"),
        ("unlcok_door", "lock_door"),
    ];
    for (request, tool) in pairs {
        let ix = index(&[(tool, false), ("search_files", false)]);
        for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
            let r = ix.resolve(request, &all, policy, None);
            assert_eq!(
                r.outcome,
                Outcome::Unknown,
                "{request} -> {tool} ({policy:?})"
            );
        }
    }
    // Opposed prefixes are not suggested either; a mere change of prefix may be.
    let ix = index(&[("deactivate_account", false)]);
    assert!(resolve(&ix, "reactivate_account").suggestions.is_empty());
    let ix = index(&[("install_package", false)]);
    assert_eq!(resolve(&ix, "reinstall_package").suggestions, vec![0]);
}

#[test]
fn negating_words_are_never_extra() {
    let ix = index(&[
        ("unlock_door", false),
        ("enable_feature", false),
        ("grant_access", false),
    ]);
    for request in [
        "undo_unlock_door",
        "revert_unlock_door",
        "cancel_unlock_door",
        "unlock_door_undo",
        "skip_unlock_door",
        "never_unlock_door",
        "enable_feature_off",
        "disable_enable_feature",
        "undo_grant_access",
        "grant_access_rollback",
        "no_grant_access",
    ] {
        let r = resolve(&ix, request);
        assert_eq!(r.outcome, Outcome::Unknown, "{request}");
        assert!(r.suggestions.is_empty(), "{request}: {:?}", r.suggestions);
    }
    // A namespace is never a negation: `undo__unlock_door` is not `unlock_door`.
    for request in ["undo__unlock_door", "cancel.grant_access"] {
        assert_eq!(resolved(&ix, request), None, "{request}");
    }
    // The same letters are the same words, the negation with them: `un.lock_door` is
    // `unlock_door` cut elsewhere, as `poweroff` is `power_off`.
    assert_eq!(resolved(&ix, "un.lock_door"), Some((0, Rule::Separators)));
}

#[test]
fn fused_words_keep_their_prefixes() {
    let ix = index(&[
        ("enqueue_vehicle", false),
        ("async_fetch", false),
        ("sync_data", false),
        ("lock_door", false),
    ]);
    for request in [
        "dequeuevehicle",
        "DequeueVehicle",
        "syncfetch",
        "sync_fetch",
        "asyncdata",
        "asyncData",
        "unlockdoor",
        "relockdoor",
    ] {
        let r = resolve(&ix, request);
        assert_eq!(r.outcome, Outcome::Unknown, "{request}");
    }
    for (request, opposite) in [("dequeuevehicle", 0), ("unlockdoor", 3), ("syncfetch", 1)] {
        let r = resolve(&ix, request);
        assert!(
            !r.suggestions.contains(&opposite),
            "{request}: {:?}",
            r.suggestions
        );
    }
}

#[test]
fn suggestions_never_list_the_opposite() {
    let ix = index(&[
        ("lock_door", false),
        ("unlock_door", false),
        ("start_server", false),
    ]);
    let hide_lock = |i: usize| i != 0;
    let r = ix.resolve("relock_door", &hide_lock, Policy::Safe, None);
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(!r.suggestions.contains(&1), "{:?}", r.suggestions);
    for request in [
        "halt_server",
        "shutdown_server",
        "stop_server",
        "kill_server",
    ] {
        let r = resolve(&ix, request);
        assert_eq!(r.outcome, Outcome::Unknown, "{request}");
        assert!(
            !r.suggestions.contains(&2),
            "{request}: {:?}",
            r.suggestions
        );
    }
}

#[test]
fn names_are_text_not_bytes() {
    let ix = index(&[("lock_door", true), ("get_weather", false)]);
    for request in [
        "lock_door\u{0}",
        "lock_door\n",
        "lock\r_door",
        "lock_door\u{7f}",
        "lock\u{200b}_door",
        "lock_door\u{202e}",
        "lock_door\u{2028}",
        "get_weather\u{0}",
    ] {
        for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
            let r = ix.resolve(request, &all, policy, None);
            assert_eq!(r.outcome, Outcome::Unknown, "{request:?} ({policy:?})");
        }
    }
    // Compatibility folding: the Kelvin sign is K, full-width letters are letters.
    assert_eq!(resolved(&ix, "loc\u{212a}_door"), Some((0, Rule::Case)));
    assert_eq!(
        resolved(&ix, "\u{ff4c}\u{ff4f}\u{ff43}\u{ff4b}_door"),
        Some((0, Rule::Case))
    );
    // A combining mark belongs to its letter: `do\u{301}or` is not `do` + `or`, so the
    // destructive tool is only suggested.
    let r = resolve(&ix, "lock_do\u{301}or");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions, vec![0]);
    assert_eq!(split_words("do\u{301}or"), ["do\u{301}or"]);
}

#[test]
fn recovery_is_kept() {
    let ix = index(&[
        ("get_papers", false),
        ("delete_file", true),
        ("get_weather_forecast", false),
        ("unlock_door", false),
        ("deactivate_account", false),
    ]);
    assert_eq!(resolved(&ix, "get_paper"), Some((0, Rule::Plural)));
    let r = resolve(&ix, "delte_file");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions.first(), Some(&1));
    assert_eq!(resolved(&ix, "get_weather_forcast"), Some((2, Rule::Typo)));
    assert_eq!(resolved(&ix, "unlock_dor"), Some((3, Rule::Typo)));
    assert_eq!(resolved(&ix, "deactivte_account"), Some((4, Rule::Typo)));
    assert_eq!(resolved(&ix, "deactivate_acount"), Some((4, Rule::Typo)));
}

#[test]
fn another_object_is_not_a_typo() {
    let ix = index(&[
        ("delete_file", false),
        ("get_car", false),
        ("read_graph", false),
    ]);
    assert_eq!(resolved(&ix, "delete_user"), None);
    assert_eq!(resolved(&ix, "get_cat"), None);
    assert_eq!(resolved(&ix, "read_file"), None);
}

#[test]
fn close_runner_up_means_suggest() {
    let ix = index(&[("search_files", false), ("search_nodes", false)]);
    let r = resolve(&ix, "search");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions, vec![0, 1]);
    // Two tools equivalent to the request: ambiguous.
    let ix = index(&[("read_file", false), ("ReadFile", false), ("other", false)]);
    let r = resolve(&ix, "READ-FILE");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert_eq!(r.suggestions, vec![0, 1]);
}

#[test]
fn hidden_tools_never_leak() {
    let ix = index(&[
        ("read_file", false),
        ("ReadFile", false),
        ("admin_reset", false),
    ]);
    let hide_1 = |i: usize| i != 1;
    // The hidden twin does not make the visible tool ambiguous.
    let r = ix.resolve("READ-FILE", &hide_1, Policy::Safe, None);
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            index: 0,
            rule: Rule::Separators
        }
    );
    // A hidden tool is not reachable by exact name, equivalence or fuzzy.
    let hide_2 = |i: usize| i != 2;
    for name in ["admin_reset", "ADMIN_RESET", "admin_rest", "adminReset"] {
        let r = ix.resolve(name, &hide_2, Policy::Safe, None);
        assert_eq!(r.outcome, Outcome::Unknown, "{name}");
        assert!(!r.suggestions.contains(&2), "{name}");
    }
}

/// Resolving with a visibility filter equals resolving against the visible tools only: not
/// even a hidden tool's words decide whether a label carries polarity.
#[test]
fn visibility_is_the_same_as_a_smaller_catalog() {
    let names = [
        "read_file",
        "read_files",
        "readFile",
        "write_file",
        "list_directory",
        "list_directory_with_sizes",
        "search_files",
        "search_nodes",
        "lock_door",
        "unlock_door",
        "get_file_info",
        "fetch_file",
        "delete_entities",
        "create_entities",
        "arm_alarm",
    ];
    let requests = [
        "read_file",
        "READ_FILE",
        "read-files",
        "raed_file",
        "search",
        "serach_files",
        "unlock_dor",
        "lock_dor",
        "get_file",
        "fetch_file_info",
        "delete_entity",
        "create_entitie",
        "list_directory_sizes",
        "functions.read_file",
        "list_dirs",
        "mcp__work__read_file",
        "mcp__work__READ-FILE",
        "mcp__work__raed_file",
        "mcp__work__files_read",
        "mcp__work__unlock_door",
        "work__search_files",
        "work.serach_files",
        // `disarm` negates a word of the hidden `arm_alarm` only.
        "mcp__disarm__read_file",
    ];
    same_as_the_visible_tools_alone(&names, &requests, "file-server");
}

/// Resolving with a visibility filter equals resolving against the visible tools only, for
/// 200 random masks over `names` (at most 32), every request, with and without `server`.
fn same_as_the_visible_tools_alone(names: &[&str], requests: &[&str], server: &str) {
    let full = index(&names.iter().map(|&n| (n, false)).collect::<Vec<_>>());
    let mut seed = 0x9e37_79b9_u32;
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let mask = seed;
        same_under_mask(
            &full,
            names,
            &move |i| mask & (1 << i) != 0,
            requests,
            server,
        );
    }
}

/// `full` (the index of `names`) resolving under `visible` answers what an index of the
/// visible names alone answers, for every request, with and without `server`.
fn same_under_mask(
    full: &NameIndex,
    names: &[&str],
    visible: &dyn Fn(usize) -> bool,
    requests: &[&str],
    server: &str,
) {
    let entries: Vec<(usize, &str)> = names
        .iter()
        .copied()
        .enumerate()
        .filter(|&(i, _)| visible(i))
        .collect();
    let small = index(&entries.iter().map(|&(_, n)| (n, false)).collect::<Vec<_>>());
    for (request, server) in requests
        .iter()
        .flat_map(|&r| [(r, None), (r, Some(server))])
    {
        let a = full.resolve(request, visible, Policy::Safe, server);
        let b = small.resolve(request, &all, Policy::Safe, server);
        let map = |r: Resolution| Resolution {
            outcome: match r.outcome {
                Outcome::Resolved { index, rule } => Outcome::Resolved {
                    index: entries[index].0,
                    rule,
                },
                Outcome::Unknown => Outcome::Unknown,
            },
            suggestions: r.suggestions.into_iter().map(|i| entries[i].0).collect(),
        };
        assert_eq!(
            a,
            map(b),
            "request {request} ({server:?}), {} of {} visible",
            entries.len(),
            names.len()
        );
    }
}

/// The same on a catalog large enough that common words pass the fuzzy tier's scan limit:
/// which request word counts as rare, and whether a common one is scanned, follows the
/// visible tools only. Hundreds of tools share `sync`, `report`, `ledger` or `export`; the
/// masks hide whole groups, alternate tools, or a pseudo-random half.
#[test]
fn visibility_is_the_same_as_a_smaller_catalog_past_the_scan_limit() {
    let mut seed = 0x2545_f491_u32;
    let mut word = || {
        (0..6)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                char::from(b'a' + (seed % 26) as u8)
            })
            .collect::<String>()
    };
    let mut names: Vec<String> = Vec::new();
    for pattern in [
        "sync_{}_report",
        "{}_ledger_export",
        "sync_ledger_{}",
        "report_{}",
    ] {
        for _ in 0..300 {
            names.push(pattern.replace("{}", &word()));
        }
    }
    let groups = names.len();
    for name in [
        "sync_ledger_report",
        "export_ledger_report",
        "sync_export",
        "ledger_report_summary",
    ] {
        names.push(name.to_string());
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let requests = [
        "sync_ledgr_report",
        "sync_ledger_reprot",
        "ledger_sync_report",
        "export_ledger_reprot",
        "sync_exprot",
        "ledger_report_sumary",
        "report_ledger",
        "sync_report",
        "ledger_export",
        "get_sync_ledger_report",
    ];
    let full = index(&names.iter().map(|&n| (n, false)).collect::<Vec<_>>());
    let masks: [&dyn Fn(usize) -> bool; 7] = [
        &|_| true,
        &|i| i >= 300,
        &|i| !(300..600).contains(&i),
        &|i| !(600..900).contains(&i),
        &|i| i >= groups || i % 2 == 0,
        &|i| !(300..900).contains(&i),
        &|i| i >= groups || (i.wrapping_mul(2_654_435_761) >> 7) % 2 == 0,
    ];
    for visible in masks {
        same_under_mask(&full, &names, visible, &requests, "books");
    }
}

#[test]
fn suggestions_are_few_and_relevant() {
    let ix = filesystem();
    let r = resolve(&ix, "read");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(!r.suggestions.is_empty() && r.suggestions.len() <= 3);
    assert!(r.suggestions.iter().all(|&i| i <= 3));
    let r = resolve(&ix, "send_email");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(r.suggestions.len() <= 3);
}

#[test]
fn no_panics_on_hostile_input() {
    let ix = filesystem();
    let long = "a".repeat(MAX_NAME_LEN + 1);
    let long_words = "read_file_".repeat(100);
    for name in [
        "",
        " ",
        "_",
        "__",
        ".",
        "::",
        "/",
        "\u{0}",
        "\u{7}\u{1b}[31m",
        "ÉCRIRE_FICHIER",
        "读取文件",
        "read_fïle",
        "🙂🙂🙂",
        "ǅemal",
        "İstanbul",
        "ß",
        "A",
        "AB",
        "URLs",
        "mcp__",
        "__read_file",
        "read_file__",
        "a.b.c.d.e.f",
        // Namespaces and relational words.
        "mcp_",
        "mcp0_",
        "MCP7_think",
        "mcp__x__mcp0_",
        "é-ü_think",
        "-_think",
        "a--",
        "--think",
        "___",
        "x:::y",
        "读取.文件",
        "é.get_rate",
        "to",
        "to_to_to",
        "by_to_from",
        "tocopylocalremote",
        "copyremotetolocalé",
        "ŝto_ĉu",
        long.as_str(),
        long_words.as_str(),
    ] {
        for ix in [
            &ix,
            &namespaced(),
            &index(&[("copy_local_to_remote", false)]),
        ] {
            for server in [None, Some("é-server"), Some("_")] {
                let r = ix.resolve(name, &all, Policy::Safe, server);
                assert!(r.suggestions.len() <= 3);
                if name.len() > MAX_NAME_LEN {
                    assert_eq!(r, Resolution::unknown(Vec::new()));
                }
            }
        }
    }
    // Tool names as hostile as requests.
    let odd = index(&[
        ("mcp_", false),
        ("-_x", false),
        ("é-ü_to_ö", false),
        ("to", false),
        ("a.", false),
        (".b", false),
    ]);
    for name in ["x", "to", "ö_to_é-ü", "b", "a", "mcp"] {
        assert!(resolve(&odd, name).suggestions.len() <= 3);
    }
    // A version is no namespace.
    let versions = index(&[("gpt-4.1", false), ("list_files", false)]);
    assert_eq!(resolve(&versions, "1").outcome, Outcome::Unknown);
    let empty = NameIndex::new(std::iter::empty());
    assert!(empty.is_empty());
    assert_eq!(resolve(&empty, "x"), Resolution::unknown(Vec::new()));
}

/// Common words (`get`, `details`) take the bounded path; corrections stay exact.
#[test]
fn large_catalogs_with_common_words() {
    let objects = [
        "invoice",
        "customer",
        "shipment",
        "warehouse",
        "employee",
        "payroll",
        "contract",
        "supplier",
        "quotation",
        "campaign",
    ];
    let mut names = Vec::new();
    for verb in ["get", "list", "count", "export"] {
        for object in objects {
            for n in 0..40 {
                names.push(format!("{verb}_{object}{n}_details"));
            }
        }
    }
    names.push("get_weather_details".to_string());
    let entries: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), false)).collect();
    let ix = index(&entries);
    let weather = names.len() - 1;
    assert_eq!(
        resolved(&ix, "get_waether_details"),
        Some((weather, Rule::Typo))
    );
    assert_eq!(
        resolved(&ix, "fetch_weather_details"),
        Some((weather, Rule::Synonym))
    );
    assert_eq!(
        resolved(&ix, "GetWeatherDetail"),
        Some((weather, Rule::Plural))
    );
    let r = resolve(&ix, "get_details");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(r.suggestions.len() <= 3);
    // Another object with common words around it is still not a typo.
    assert_eq!(resolved(&ix, "get_forecast_details"), None);
}

#[test]
fn words_and_singulars() {
    assert_eq!(split_words("getHTTPServer"), ["get", "http", "server"]);
    assert_eq!(split_words("listURLs"), ["list", "urls"]);
    assert_eq!(
        split_words("get-annotated message"),
        ["get", "annotated", "message"]
    );
    assert_eq!(split_words("v2Api"), ["v2", "api"]);
    for (plural, one) in [
        ("entities", "entity"),
        ("directories", "directory"),
        ("files", "file"),
        ("matches", "match"),
        ("sizes", "size"),
        ("aliases", "alias"),
        ("status", "status"),
        ("addresses", "address"),
        ("urls", "url"),
        ("photos", "photo"),
    ] {
        assert_eq!(singular(plural), singular(one), "{plural}");
    }
}

/// A label behind `mcp__` that carries polarity is never a namespace, whatever the list it
/// comes from: built here from the morphology (every negating prefix on every word of the
/// tool, every word and synonym of the opposites table against its opposite, in the plural
/// and inflected) rather than from a list of labels.
#[test]
fn labels_that_carry_polarity_are_never_namespaces() {
    use crate::resolve::polarity::OPPOSITES;
    use crate::resolve::vocab::SYNONYMS;
    // The regular English inflections: `creates`, `created`, `creating`, `stopped`.
    let inflect = |w: &str| {
        let vowel = |c: char| "aeiou".contains(c);
        let c: Vec<char> = w.chars().collect();
        let n = c.len();
        let (past, ing) = if let Some(base) = w.strip_suffix('e') {
            (format!("{w}d"), format!("{base}ing"))
        } else if (3..=4).contains(&n)
            && !vowel(c[n - 1])
            && !"wxy".contains(c[n - 1])
            && vowel(c[n - 2])
            && !vowel(c[n - 3])
        {
            (format!("{w}{}ed", c[n - 1]), format!("{w}{}ing", c[n - 1]))
        } else {
            (format!("{w}ed"), format!("{w}ing"))
        };
        vec![w.to_string(), format!("{w}s"), past, ing, w.to_uppercase()]
    };
    let mut cases: Vec<(String, String)> = Vec::new();
    // A negated word of the tool: `mcp__undelete__delete_file`, `mcp__disarm__arm_alarm`.
    for tool in [
        "delete_file",
        "arm_alarm",
        "lock_door",
        "start_server",
        "grant_access",
    ] {
        for word in split_words(tool) {
            for prefix in [
                "un", "de", "dis", "non", "anti", "counter", "mis", "no", "not",
            ] {
                for label in [format!("{prefix}{word}"), format!("{prefix}_{word}")] {
                    cases.push((label, tool.to_string()));
                }
            }
        }
    }
    // The opposite of the tool's verb, or a synonym of it: `mcp__halt__start_server`.
    for &(a, b) in OPPOSITES {
        for (verb, other) in [(a, b), (b, a)] {
            let tool = format!("{other}_thing");
            let synonyms = SYNONYMS
                .iter()
                .filter(|&&(_, head)| head == verb)
                .map(|&(w, _)| w);
            for word in std::iter::once(verb).chain(synonyms) {
                for label in inflect(word) {
                    // A form the rules make that English reads as a word of its own (`news`
                    // from `new`) is not an inflection of it.
                    let lower = label.to_lowercase();
                    if lower != word
                        && crate::text::lexicon::is_english(&lower)
                        && !crate::text::lexicon::same_lemma(&lower, word)
                    {
                        continue;
                    }
                    cases.push((label, tool.clone()));
                }
            }
        }
    }
    let mut checked = 0;
    for (label, tool) in &cases {
        let ix = index(&[(tool.as_str(), false)]);
        let name = format!("mcp__{label}__{tool}");
        // The label words that merely restate the tool's own words are not what is tested.
        if split_words(label)
            .iter()
            .all(|w| split_words(tool).contains(w))
        {
            continue;
        }
        for server in [Some("tracker"), None] {
            // Strict and Off never strip a namespace; Safe is the policy that may.
            let r = ix.resolve(&name, &all, Policy::Safe, server);
            assert_eq!(r.outcome, Outcome::Unknown, "{name} ({server:?})");
            checked += 1;
        }
    }
    assert!(checked > 2_000, "{checked}");
    // The label is still stripped when it carries nothing: the control.
    let ix = index(&[("delete_file", false)]);
    let r = ix.resolve(
        "mcp__files__delete_file",
        &all,
        Policy::Safe,
        Some("tracker"),
    );
    assert!(
        matches!(r.outcome, Outcome::Resolved { .. }),
        "{:?}",
        r.outcome
    );
}

/// Word order is meaning where a relational word stands between (`relation.rs`): a request
/// that moves a relational word's neighbours, or swaps words across it, is an opposite at
/// every tier; one that keeps them is the same name. Joined words and repeated words are read
/// as a reader would.
#[test]
fn relational_words_keep_their_neighbours() {
    let ix = index(&[
        ("copy_local_to_remote", true),
        ("convert_usd_to_eur", false),
        ("get_activity_by_price_range", false),
        ("list_files", false),
        ("export_sales_report_to_pdf", false),
        ("EmailByNylas", false),
        ("copy_local_big_file_to_new_remote_folder", false),
        ("add_license_to_license_group", false),
    ]);
    for (request, tool) in [
        // Tier 3's words in another order.
        ("copy_remote_to_local", 0),
        ("CopyRemoteToLocal", 0),
        ("remote-to-local-copy", 0),
        ("local_copy_remote_to", 0),
        ("convert_eur_to_usd", 1),
        ("eur_to_usd_convert", 1),
        ("to_convert_usd_eur", 1),
        ("get_price_range_by_activity", 2),
        ("range_price_by_activity_get", 2),
        ("get_activity_by_range_price", 2),
        ("export_sales_to_report_pdf", 4),
        // The fuzzy tier's bag of words: a typo, an extra word, a dropped word.
        ("copy_remote_to_locl", 0),
        ("convert_eur_to_usd_rate", 1),
        ("get_price_range_by_activty", 2),
        ("get_price_by_activity", 2),
        ("price_by_activity_range", 2),
        // Joined: `byemailnylas` is by, email, nylas.
        ("byemailnylas", 5),
        ("nylasbyemail", 5),
        ("nylas_byemail", 5),
        // Words that trade sides two places away from `to` still swap the relation.
        ("copy_remote_big_file_to_new_local_folder", 6),
        // Copies of a repeated word are one word, and still on the wrong side.
        ("add_license_group_to_license", 7),
    ] {
        for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
            let r = ix.resolve(request, &all, policy, None);
            assert_eq!(r.outcome, Outcome::Unknown, "{request} ({policy:?})");
            assert!(
                !r.suggestions.contains(&tool),
                "{request}: {:?}",
                r.suggestions
            );
        }
    }
    // Kept: the words on either side of the relational word stay its neighbours.
    for (request, tool, rule) in [
        ("local_to_remote_copy", 0, Rule::WordOrder),
        ("usd_to_eur_convert", 1, Rule::WordOrder),
        ("activity_by_price_range_get", 2, Rule::WordOrder),
        ("sales_export_report_to_pdf", 4, Rule::WordOrder),
        ("convert_usd_to_eur_rate", 1, Rule::ExtraWord),
        ("convert_usd_eur", 1, Rule::DroppedWord),
        ("get_activity_by_price_rnage", 2, Rule::Typo),
        ("emailbynylas", 5, Rule::Case),
        // A word moved around the phrase, one way across `to`, is the same name.
        (
            "local_big_file_to_new_remote_folder_copy",
            6,
            Rule::WordOrder,
        ),
        // Copies of a repeated word: however they were paired, the relation is kept.
        ("license_to_license_group_add", 7, Rule::WordOrder),
        ("add_licnese_to_license_group", 7, Rule::Typo),
    ] {
        assert_eq!(resolved(&ix, request), Some((tool, rule)), "{request}");
    }
    // Without the relational word, neighbours the other way round are not corrected (which
    // way `eur_usd` reads is a convention), but may be suggested.
    let r = resolve(&ix, "convert_eur_usd");
    assert_eq!(r.outcome, Outcome::Unknown);
    assert!(r.suggestions.contains(&1), "{:?}", r.suggestions);
    // Both directions in one catalog: each request is the one it says, and a typo in one is
    // not made unclear by the other.
    let both = index(&[
        ("convert_celsius_to_fahrenheit", false),
        ("convert_fahrenheit_to_celsius", false),
    ]);
    for (request, tool, rule) in [
        ("celsius_to_fahrenheit_convert", 0, Rule::WordOrder),
        ("fahrenheit_to_celsius_convert", 1, Rule::WordOrder),
        ("convert_celsius_to_fahrenhiet", 0, Rule::Typo),
        ("convert_fahrenheit_to_celcius", 1, Rule::Typo),
    ] {
        assert_eq!(resolved(&both, request), Some((tool, rule)), "{request}");
    }
}

/// Tools of several namespaces, as a gateway or a client names them.
fn namespaced() -> NameIndex {
    index(&[
        ("number_analysis.prime_factors", false),
        ("currency_conversion.get_rate", false),
        ("biology.get_cell_info", false),
        ("maps.get_distance_duration", false),
        ("mcp0_think", false),
        ("codebase-memory-mcp_search_graph", false),
        ("tool--product--search_product_list", false),
        ("mcp__Memory__read_graph", false),
        ("github.search_issues", false),
        ("jira.search_issues", false),
        ("github.create_issue", true),
        ("github.delete_issue", true),
        ("home.lock_door", false),
        ("sports.get_current", false),
        ("get_current_time", false),
        ("math.factorial", false),
        ("factorial", false),
        ("list_files", false),
    ])
}

/// A dropped or changed namespace (`namespace.rs`): the rest of the name is exactly one
/// visible tool's, at the tier of a dropped word.
#[test]
fn a_dropped_or_changed_namespace() {
    let ix = namespaced();
    for (request, tool) in [
        // Dropped.
        ("prime_factors", 0),
        ("get_rate", 1),
        ("think", 4),
        ("search_graph", 5),
        ("search_product_list", 6),
        // Spelled otherwise behind it: case, separators, number.
        ("GetRate", 1),
        ("get-rates", 1),
        // Changed, or behind a client's prefix or label.
        ("bio.get_cell_info", 2),
        ("gmaps.get_distance_duration", 3),
        ("memory:read_graph", 7),
        ("currency_convertion.get_rate", 1),
        ("functions.get_rate", 1),
        ("mcp__work__prime_factors", 0),
        ("mcp1_think", 4),
        ("_n__search_graph", 5),
        ("other-server_get_rate", 1),
        // Among tools that end alike, the one whose namespace the request spells.
        ("githb.search_issues", 8),
        ("jiar.search_issues", 9),
    ] {
        for server in [None, Some("gateway")] {
            assert_eq!(
                ix.resolve(request, &all, Policy::Safe, server).outcome,
                Outcome::Resolved {
                    index: tool,
                    rule: Rule::Namespace
                },
                "{request} ({server:?})"
            );
        }
        // A fuzzy-tier rule: past `Strict` and `Off`.
        for policy in [Policy::Strict, Policy::Off] {
            let r = ix.resolve(request, &all, policy, None);
            assert_eq!(r.outcome, Outcome::Unknown, "{request} ({policy:?})");
        }
    }
    // The server's own name joined by one `_` is a namespace too.
    let r = ix.resolve(
        "my_gateway_get_rate",
        &all,
        Policy::Safe,
        Some("my-gateway"),
    );
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            index: 1,
            rule: Rule::Namespace
        }
    );
}

/// What the namespace rule must not correct.
#[test]
fn a_namespace_rule_that_does_not_apply() {
    let ix = namespaced();
    let unknown = |request: &str, server: Option<&str>| {
        let r = ix.resolve(request, &all, Policy::Safe, server);
        assert_eq!(r.outcome, Outcome::Unknown, "{request} ({server:?})");
        r.suggestions
    };
    for server in [None, Some("gateway")] {
        // Two visible tools end alike: both are suggested, first.
        assert!(unknown("search_issues", server).starts_with(&[8, 9]));
        assert!(unknown("gitlab.search_issues", server).starts_with(&[8, 9]));
        // A destructive tool is suggested first, and nothing else corrected in its place.
        assert_eq!(unknown("delete_issue", server).first(), Some(&11));
        assert_eq!(unknown("githb.create_issue", server).first(), Some(&10));
        // A namespace the caller sees is not a mistake for another (`github.` is visible),
        // not even misspelled.
        unknown("github.get_rate", server);
        unknown("githb.get_rate", server);
        unknown("mcp__GitHub__prime_factors", server);
        let hide = |i: usize| i != 8;
        let r = ix.resolve("github.search_issues", &hide, Policy::Safe, server);
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(!r.suggestions.contains(&8), "{:?}", r.suggestions);
        // Without any visible `github.` tool, `github.` is a label the model got wrong.
        let hide = |i: usize| !(8..=11).contains(&i) || i == 9;
        let r = ix.resolve("github.search_issues", &hide, Policy::Safe, server);
        assert_eq!(
            r.outcome,
            Outcome::Resolved {
                index: 9,
                rule: Rule::Namespace
            }
        );
        // A namespace that carries polarity is no namespace.
        for request in ["undo.lock_door", "unlock.lock_door", "mcp__not__lock_door"] {
            assert!(!unknown(request, server).contains(&12), "{request}");
        }
        // Another tool is as close as a dropped word: not clear, whatever stands before.
        for request in ["get_current", "mcp__work__get_current", "xyz.get_current"] {
            let r = unknown(request, server);
            assert!(r.contains(&13) && r.contains(&14), "{request}: {r:?}");
        }
    }
    // A tool without a namespace ends alike too: two tools, unless the label is stripped.
    assert!(unknown("calc.factorial", Some("gateway")).starts_with(&[15, 16]));
    assert_eq!(
        resolved(&ix, "calc.factorial"),
        Some((16, Rule::NamespacePrefix))
    );
    // A tool without a namespace is no tool of this rule: another server's namespace before
    // it is not stripped (a stray word is the fuzzy tier's business).
    let plain = index(&[("search_issues", false), ("create_issue", true)]);
    for request in ["github__search_issues", "github__create_issue"] {
        let r = plain.resolve(request, &all, Policy::Safe, Some("tracker"));
        assert!(
            !matches!(r.outcome, Outcome::Resolved { rule, .. } if !rule.is_fuzzy() || rule == Rule::Namespace),
            "{request}: {:?}",
            r.outcome
        );
    }
    // The rule names a tool only when its namespace is the part that was wrong: a namespace
    // that carries polarity on the tool's side is part of its meaning.
    let polar = index(&[("undo.lock_door", false), ("list_files", false)]);
    assert_eq!(resolve(&polar, "lock_door").outcome, Outcome::Unknown);
}

/// The namespace rule sees visible tools only: with a visibility filter, every request
/// resolves as against the visible tools alone (a hidden `github.` tool does not make
/// `github.search_issues` "another namespace", a hidden tool that ends alike does not make the
/// request ambiguous).
#[test]
fn namespaces_of_hidden_tools_are_hidden() {
    let names = [
        "github.search_issues",
        "jira.search_issues",
        "github.create_issue",
        "currency_conversion.get_rate",
        "fx.get_rate",
        "math.factorial",
        "factorial",
        "mcp0_think",
        "home.lock_door",
        "sports.get_current",
        "get_current_time",
        "biology.get_cell_info",
        "bio.get_cell_info_v2",
        "undo.list_files",
        "list_files",
    ];
    let requests = [
        "search_issues",
        "github.search_issues",
        "githb.search_issues",
        "gitlab.search_issues",
        "get_rate",
        "fx.get_rate",
        "currency.get_rate",
        "calc.factorial",
        "factorial",
        "think",
        "lock_door",
        "undo.lock_door",
        "get_current",
        "bio.get_cell_info",
        "mcp__work__get_rate",
        "functions.think",
        "list_files",
        "lock.list_files",
    ];
    same_as_the_visible_tools_alone(&names, &requests, "gateway");
}

/// The README's table of server-filesystem behind the gateway (`fs.` before every tool).
#[test]
fn the_gateway_table_of_the_readme() {
    let names: Vec<(String, bool)> = (FILESYSTEM.iter())
        .map(|&(n, d)| (format!("fs.{n}"), d))
        .collect();
    let entries: Vec<(&str, bool)> = names.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let ix = index(&entries);
    let gateway = Some("disco-gateway");
    let resolve = |name: &str| ix.resolve(name, &all, Policy::Safe, gateway);
    let at = |rule: Rule, index: usize| Outcome::Resolved { index, rule };
    assert_eq!(resolve("fs.directory_tre").outcome, at(Rule::Typo, 9));
    assert_eq!(resolve("read_text_file").outcome, at(Rule::Namespace, 1));
    assert_eq!(resolve("fs.Write-File").outcome, at(Rule::Separators, 4));
    for name in ["fs.writ_file", "write_file"] {
        let r = resolve(name);
        assert_eq!(r.outcome, Outcome::Unknown, "{name}");
        assert_eq!(r.suggestions.first(), Some(&4), "{name}");
    }
}

/// Fused names: the same letters as a tool's name are that tool, negations included
/// (`poweroff` is `power_off`); a fused request that is itself a word stays whole (`offset` is
/// no `off_set`), whatever the catalog.
#[test]
fn fused_names_are_segmented_only_into_the_same_words() {
    let ix = index(&[
        ("power_off", false),
        ("stop_server", false),
        ("disable_wifi", false),
        ("off_set", false),
        ("down_load", false),
        ("shut_down", false),
        ("log_in", false),
    ]);
    for (request, tool) in [
        ("poweroff", 0),
        ("stopserver", 1),
        ("disablewifi", 2),
        ("POWEROFF", 0),
    ] {
        assert_eq!(resolved(&ix, request).map(|r| r.0), Some(tool), "{request}");
    }
    for request in ["offset", "download", "shutdown", "login"] {
        assert_eq!(resolved(&ix, request), None, "{request}");
    }
}

/// Review cases: a full prefix before a word the lexicon lacks is still a prefix
/// (`tokenize` is never `detokenize`); a hidden tool's word never decides whether a request
/// word negates one (`write_disarm_file` beside a hidden `arm_alarm`); inflected opposites are
/// never suggested (`get_created_items` never offers `get_deleted_items`); WordNet's exception
/// lists hold (`liver` is no form of `live`).
#[test]
fn review_cases_of_the_rules_of_meaning() {
    let ix = index(&[("detokenize_text", false), ("retokenize_text", false)]);
    assert_eq!(resolved(&ix, "tokenize_text"), None);
    let ix = index(&[("write_file", false), ("arm_alarm", false)]);
    let visible = |t: usize| t == 0;
    let smaller = index(&[("write_file", false)]);
    for request in ["write_disarm_file", "write_file_disarm"] {
        assert_eq!(
            ix.resolve(request, &visible, Policy::Safe, None),
            smaller.resolve(request, &|_| true, Policy::Safe, None),
            "{request}"
        );
    }
    let ix = index(&[
        ("get_deleted_items", false),
        ("list_stopped_instances", false),
    ]);
    for request in ["get_created_items", "list_started_instances"] {
        let r = resolve(&ix, request);
        assert_eq!(r.outcome, Outcome::Unknown, "{request}");
        assert!(r.suggestions.is_empty(), "{request}: {:?}", r.suggestions);
    }
    let ix = index(&[("get_live_panel", false)]);
    assert_eq!(resolved(&ix, "get_liver_panel"), None);
}

/// A misspelled opposite is no stray word to drop, and a namespace in front changes nothing:
/// for opposed pairs, every single-letter typo of one side that is no word and at least as
/// close to it as to the declared side, written beside the declared tool's other words with a
/// namespace before them (the declared word itself among them) or the declared word after,
/// never resolves to the declared tool nor is suggested for it.
#[test]
fn a_misspelled_opposite_beside_more_words_never_crosses() {
    let pairs = [
        ("server", "client"),
        ("interspecies", "intraspecies"),
        ("payer", "payee"),
        ("include", "exclude"),
        ("increment", "decrement"),
        ("upload", "download"),
    ];
    let mut cases = 0;
    for (a, b) in pairs {
        for (declared, opposite) in [(a, b), (b, a)] {
            let tool = format!("get_{declared}_events");
            let ix = index(&[(tool.as_str(), false), ("track_parcel", false)]);
            for typo in single_letter_typos(opposite) {
                if typo == declared
                    || is_known_word(&typo)
                    || strsim::osa_distance(&typo, opposite) > strsim::osa_distance(&typo, declared)
                {
                    continue;
                }
                for request in [
                    format!("{declared}.get_{typo}_events"),
                    format!("mcp__tools__get_{typo}_events"),
                    format!("tools.get_{typo}_events"),
                    format!("get_{typo}_{declared}_events"),
                ] {
                    cases += 1;
                    let r = resolve(&ix, &request);
                    assert_eq!(r.outcome, Outcome::Unknown, "{request} resolved to {tool}");
                    assert!(!r.suggestions.contains(&0), "{request} suggests {tool}");
                }
            }
        }
    }
    assert!(cases > 1_000, "only {cases} cases");
}

/// Every string one deletion, substitution (lowercase ASCII), insertion or transposition
/// away from `word`.
fn single_letter_typos(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = std::collections::BTreeSet::new();
    for i in 0..=chars.len() {
        for c in 'a'..='z' {
            let mut v = chars.clone();
            v.insert(i, c);
            out.insert(v.iter().collect::<String>());
            if i < chars.len() {
                let mut v = chars.clone();
                v[i] = c;
                out.insert(v.iter().collect::<String>());
            }
        }
        if i < chars.len() {
            let mut v = chars.clone();
            v.remove(i);
            out.insert(v.iter().collect::<String>());
        }
        if i + 1 < chars.len() {
            let mut v = chars.clone();
            v.swap(i, i + 1);
            out.insert(v.iter().collect::<String>());
        }
    }
    out.remove(word);
    out.into_iter().collect()
}

/// Every word of the catalog, as written and as its stem, has its rivals kept by the index,
/// the same as those made per thread.
#[test]
fn the_index_keeps_each_words_rivals() {
    use crate::resolve::meaning::{PerThread, RivalTable, RivalsRef};
    let ix = index(&[
        ("unlock_doors", false),
        ("get_payee_list", false),
        ("increase_max_volume", true),
        ("enableWifiNetworks", false),
    ]);
    assert!(!ix.spellings.is_empty());
    for (text, stem) in &ix.spellings {
        for word in [&**text, &**stem] {
            let kept = ix.rivals(word);
            assert!(matches!(kept, RivalsRef::Kept(_)), "{word}");
            let made = PerThread.rivals(word);
            assert!(kept.opposed().eq(made.opposed()), "{word}");
        }
    }
    assert!(matches!(ix.rivals("zzyzx"), RivalsRef::Made(_)));
}
