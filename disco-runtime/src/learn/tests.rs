//! The learner's rules, generated over the catalog and the traffic, and the stores' bounds.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::*;
use crate::catalog::{Catalog, Discovery, JsonCatalogProvider};

fn tool(name: &str, description: &str, read_only: bool) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object"},
           "annotations": {"readOnlyHint": read_only}})
}

fn catalog() -> Catalog {
    let tools = json!([
        tool(
            "fetch_ticket",
            "Fetch a ticket of the tracker by its id",
            true
        ),
        tool("list_open", "List the open items of the todo list", true),
        tool("delete_file", "Delete a file from the disk", false),
        tool("open_door", "Open the door", true),
        tool("send_email", "Send an email", false),
    ]);
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&tools).unwrap())
        .from_specs([])
        .unwrap()
}

fn ev(caller: &str, session: &str, event: Discovery) -> StoredEvent {
    StoredEvent {
        at: 1,
        caller: caller.into(),
        session: Some(session.into()),
        event,
    }
}

fn unknown(name: &str, suggested: &[&str]) -> Discovery {
    Discovery::Unknown {
        requested: name.into(),
        suggested: suggested.iter().map(|s| s.to_string()).collect(),
    }
}

fn call(tool: &str) -> Discovery {
    Discovery::Call {
        tool: tool.into(),
        ok: true,
    }
}

fn search(query: &str, shown: &[&str]) -> Discovery {
    Discovery::Search {
        query: query.into(),
        shown: shown.iter().map(|s| s.to_string()).collect(),
    }
}

/// `callers` callers, `per` sessions each, every session the same `steps`.
fn traffic(callers: usize, per: usize, steps: &[Discovery]) -> Vec<StoredEvent> {
    let mut out = Vec::new();
    for c in 0..callers {
        for s in 0..per {
            for step in steps {
                out.push(ev(&format!("c{c}"), &format!("c{c}s{s}"), step.clone()));
            }
        }
    }
    out
}

fn status_of(cands: &[Candidate], lesson: &Lesson) -> Option<Status> {
    cands
        .iter()
        .find(|c| &c.lesson == lesson)
        .map(|c| c.status.clone())
}

fn alias(name: &str, tool: &str) -> Lesson {
    Lesson::Alias {
        name: name.into(),
        tool: tool.into(),
    }
}

fn learn(events: &[StoredEvent]) -> Vec<Candidate> {
    let o = LearnOptions::default();
    judge(&gather(events, o.window), &facts_of(&catalog()), &o)
}

/// For every number of callers and of sessions each, an alias is ready exactly when both
/// reach the thresholds (a read-only tool); below them, too few.
#[test]
fn aliases_need_distinct_callers_and_sessions() {
    let o = LearnOptions::default();
    for callers in 1..=5 {
        for per in 1..=4 {
            let events = traffic(
                callers,
                per,
                &[unknown("get_issue", &[]), call("fetch_ticket")],
            );
            let got = status_of(&learn(&events), &alias("get_issue", "fetch_ticket"));
            let enough = callers >= o.alias_callers && callers * per >= o.alias_sessions;
            let want = if enough {
                Status::Ready
            } else {
                Status::TooFew
            };
            assert_eq!(got, Some(want), "{callers} callers x {per} sessions");
        }
    }
}

/// One caller repeating a false pair a thousand times teaches nothing; many callers teaching
/// an alias to a destructive tool only make a candidate for the operator to approve.
#[test]
fn one_caller_cannot_teach_and_destructive_needs_approval() {
    let one = traffic(1, 1000, &[unknown("drop_all", &[]), call("delete_file")]);
    let cands = learn(&one);
    assert_eq!(
        status_of(&cands, &alias("drop_all", "delete_file")),
        Some(Status::TooFew)
    );
    let query = traffic(
        1,
        1000,
        &[
            search("weather in paris", &["list_open"]),
            call("send_email"),
        ],
    );
    for c in learn(&query) {
        assert_ne!(c.status, Status::Ready, "{c:?}");
    }
    let many = traffic(10, 3, &[unknown("drop_all", &[]), call("delete_file")]);
    assert_eq!(
        status_of(&learn(&many), &alias("drop_all", "delete_file")),
        Some(Status::NeedsApproval)
    );
    // Nothing that is not ready reaches the paste-ready entries.
    let entries = report::gateway_entries(&learn(&many), false);
    assert_eq!(entries, json!({"aliases": {}, "keywords": {}}));
}

/// An alias never crosses an opposite: for every opposed pair the lexicon gives where one
/// side is a word of a tool's name, the name with the word swapped is refused, whatever the
/// support.
#[test]
fn aliases_never_cross_an_opposite() {
    let facts = facts_of(&catalog());
    let o = LearnOptions::default();
    let mut checked = 0;
    for (a, b) in crate::resolve::lexicon::opposed_pairs() {
        for (word, other) in [(a, b), (b, a)] {
            for t in &facts {
                let words = crate::text::words::split_words(&t.name);
                if !words.iter().any(|w| w == word) {
                    continue;
                }
                let name = words
                    .iter()
                    .map(|w| if w == word { other } else { w.as_str() })
                    .collect::<Vec<_>>()
                    .join("_");
                let events = traffic(5, 2, &[unknown(&name, &[]), call(&t.name)]);
                let cands = judge(&gather(&events, o.window), &facts, &o);
                let got = status_of(&cands, &alias(&name, &t.name));
                assert!(
                    matches!(got, Some(Status::Refused(_))),
                    "{name} -> {}: {got:?}",
                    t.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}

/// A tool disco suggested for the name, a failed call, a call past the window and a call in
/// another session are no evidence; events without a session are none either.
#[test]
fn what_is_no_evidence() {
    let o = LearnOptions::default();
    let suggested = traffic(
        5,
        2,
        &[
            unknown("get_issue", &["fetch_ticket"]),
            call("fetch_ticket"),
        ],
    );
    assert!(gather(&suggested, o.window).aliases.is_empty());
    let failed = traffic(
        5,
        2,
        &[
            unknown("get_issue", &[]),
            Discovery::Call {
                tool: "fetch_ticket".into(),
                ok: false,
            },
        ],
    );
    assert!(gather(&failed, o.window).aliases.is_empty());
    let mut far = vec![unknown("get_issue", &[])];
    far.extend((0..o.window).map(|_| search("zzz", &[])));
    far.push(call("fetch_ticket"));
    assert!(gather(&traffic(5, 2, &far), o.window).aliases.is_empty());
    let mut split = Vec::new();
    for c in 0..5 {
        split.push(ev(&format!("c{c}"), "a", unknown("get_issue", &[])));
        split.push(ev(&format!("c{c}"), "b", call("fetch_ticket")));
    }
    assert!(gather(&split, o.window).aliases.is_empty());
    let sessionless: Vec<StoredEvent> =
        traffic(5, 2, &[unknown("get_issue", &[]), call("fetch_ticket")])
            .into_iter()
            .map(|mut e| {
                e.session = None;
                e
            })
            .collect();
    assert!(gather(&sessionless, o.window).aliases.is_empty());
}

/// Keywords: only words of the lexicon or the catalog, never digits or addresses, never when
/// the tool was already first, from enough callers, capped in weight and in number.
#[test]
fn keywords_are_words_from_enough_callers() {
    let o = LearnOptions::default();
    let q = "my tasks for today 2024 alice@example.com zxqwv";
    let events = traffic(6, 1, &[search(q, &["fetch_ticket"]), call("list_open")]);
    let cands = learn(&events);
    let learned: BTreeSet<String> = cands
        .iter()
        .filter(|c| c.status == Status::Ready)
        .filter_map(|c| match &c.lesson {
            Lesson::Keyword { word, .. } => Some(word.clone()),
            _ => None,
        })
        .collect();
    assert!(
        learned.contains("tasks") && learned.contains("today"),
        "{learned:?}"
    );
    for w in &learned {
        assert!(w.bytes().all(|b| b.is_ascii_lowercase()), "{w}");
        assert!(crate::resolve::lexicon::is_known_word(w), "{w}");
    }
    assert!(!learned.contains("zxqwv") && !learned.contains("alice"));
    for c in &cands {
        assert!(c.weight <= o.max_keyword_weight);
    }
    // Already first: nothing to learn.
    let first = traffic(6, 1, &[search(q, &["list_open"]), call("list_open")]);
    assert!(gather(&first, o.window).keywords.is_empty());
    // Fewer callers than k.
    let few = traffic(
        o.keyword_callers - 1,
        5,
        &[search(q, &[]), call("list_open")],
    );
    assert!(learn(&few).iter().all(|c| c.status != Status::Ready));
}

/// The memory store stays within its bytes under a flood, oldest out first.
#[test]
fn memory_store_is_bounded() {
    let store = MemoryStore::new(64 * 1024);
    for i in 0..20_000u64 {
        let mut e = ev(
            "c",
            "s",
            search(&format!("query number {i}"), &["a", "b", "c"]),
        );
        e.at = i;
        store.append(&[e]).unwrap();
        assert!(store.bytes() <= 64 * 1024);
    }
    let events = store.events().unwrap();
    assert_eq!(events.last().map(|e| e.at), Some(19_999));
    assert!(events.first().map(|e| e.at) > Some(0));
    assert_eq!(store.expire(19_990).unwrap() as usize, events.len() - 10);
    assert_eq!(store.forget(&Forget::All).unwrap(), 10);
}

#[cfg(feature = "learning")]
use crate::util::tests::temp_dir;
#[cfg(all(unix, feature = "learning"))]
use crate::util::tests::unix_mode;

mod contract;
#[cfg(feature = "learning")]
mod on_disk;
#[cfg(feature = "learning-postgres")]
mod postgres;
mod visibility;

/// Learned keywords bring a tool up for a query its own words do not match, and appear in
/// nothing a caller or a reader is shown: not in tools/list, `tool_search`'s entries, the
/// instructions or the docs.
#[test]
fn learned_keywords_rank_and_are_never_published() {
    let catalog = Catalog::builder()
        .provider(
            JsonCatalogProvider::from_value(&json!([
                tool(
                    "fetch_ticket",
                    "Fetch a ticket of the tracker by its id",
                    true
                ),
                tool("list_open", "List the open items of the todo list", true),
                tool("send_email", "Send an email", false),
            ]))
            .unwrap(),
        )
        .search(crate::catalog::SearchOptions::default().enabled(true))
        .from_specs([])
        .unwrap();
    let caller = crate::tool::Caller::anonymous();
    let query = "weekend plans";
    let first = |c: &Catalog| {
        c.search(query, 5, &caller)
            .first()
            .map(|(t, _)| t.name.clone())
    };
    assert_ne!(first(&catalog), Some("list_open".into()));
    let published = |c: &Catalog| {
        let view = c.for_caller(&caller);
        let mut text = serde_json::to_string(&c.list(&caller)).unwrap();
        text.push_str(&view.instructions().unwrap_or_default());
        text.push_str(&crate::catalog::docs::markdown(c));
        text
    };
    let before = published(&catalog);
    catalog.set_learned_keywords(vec![
        ("list_open".into(), "weekend".into(), 0.5),
        ("list_open".into(), "plans".into(), 0.5),
    ]);
    assert_eq!(first(&catalog), Some("list_open".into()));
    let after = published(&catalog);
    assert_eq!(before, after);
    assert!(!after.contains("weekend") && !after.contains("plans"));
    // A rebuilt catalog keeps them.
    assert_eq!(first(&catalog.rebuild().unwrap()), Some("list_open".into()));
    catalog.set_learned_keywords(Vec::new());
    assert_ne!(first(&catalog), Some("list_open".into()));
}

/// The learned-alias tier: after the spelling-equivalent tier and before the fuzzy one, for a
/// read-only tool only; it never shadows a name or a spelling equivalent, and a call through
/// it says `learned_alias` in `_meta`.
#[test]
fn learned_aliases_are_a_tier_of_their_own() {
    let catalog = catalog();
    let caller = crate::tool::Caller::anonymous();
    let rule = |name: &str| {
        let r = catalog.resolve(name, &caller);
        (r.tool.map(|t| t.name.clone()), r.rule.map(|r| r.as_str()))
    };
    assert_eq!(rule("get_issue"), (None, None));
    let fuzzy_before = rule("fetch_tiket");
    catalog.set_learned_aliases(vec![
        ("get_issue".into(), "fetch_ticket".into()),
        ("drop_all".into(), "delete_file".into()),
        ("fetch_tickets".into(), "list_open".into()),
        ("list_open".into(), "fetch_ticket".into()),
        ("fetch_tiket".into(), "list_open".into()),
    ]);
    assert_eq!(
        rule("get_issue"),
        (Some("fetch_ticket".into()), Some("learned_alias"))
    );
    assert_eq!(
        rule("drop_all"),
        (None, None),
        "never to a destructive tool"
    );
    assert_eq!(
        rule("fetch_tickets"),
        (Some("fetch_ticket".into()), Some("plural"))
    );
    assert_eq!(rule("list_open"), (Some("list_open".into()), Some("exact")));
    // Before the fuzzy tier: a learned alias wins over a fuzzy match.
    assert_eq!(fuzzy_before.1, Some("typo"));
    assert_eq!(
        rule("fetch_tiket"),
        (Some("list_open".into()), Some("learned_alias"))
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = rt.block_on(catalog.call("get_issue", json!({}))).unwrap();
    let meta = result.meta.unwrap();
    assert_eq!(
        meta.get("disco/corrections").unwrap()["tool"],
        json!({"requested": "get_issue", "resolved": "fetch_ticket", "rule": "learned_alias"})
    );
    catalog.set_learned_aliases(Vec::new());
    assert_eq!(rule("get_issue"), (None, None));
}

/// Noise: when many callers search the same words and 30% of the sessions end in some other
/// tool, only the tool most sessions ended in is learned, however many callers the noise has.
#[test]
fn noise_teaches_nothing() {
    let mut rng = fastrand::Rng::with_seed(5);
    let others = ["fetch_ticket", "open_door", "send_email"];
    let mut events = Vec::new();
    for s in 0..600 {
        let caller = format!("c{}", rng.usize(..60));
        let session = format!("s{s}");
        let called = if rng.f32() < 0.3 {
            others[rng.usize(..others.len())]
        } else {
            "list_open"
        };
        events.push(ev(
            &caller,
            &session,
            search("my chores for tomorrow", &["fetch_ticket"]),
        ));
        events.push(ev(&caller, &session, call(called)));
    }
    let ready: Vec<Lesson> = learn(&events)
        .into_iter()
        .filter(|c| c.status == Status::Ready)
        .map(|c| c.lesson)
        .collect();
    assert!(!ready.is_empty());
    for lesson in &ready {
        assert!(
            matches!(lesson, Lesson::Keyword { tool, .. } if tool == "list_open"),
            "{lesson:?}"
        );
    }
}
