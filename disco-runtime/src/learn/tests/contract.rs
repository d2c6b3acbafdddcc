//! What every [`EventStore`] promises, one suite run against each store: the memory store
//! here, SQLite (`on_disk.rs`) and PostgreSQL (`postgres.rs`). Each case is generated: random
//! events, random sequences of appends, expiries and forgettings, checked against a model
//! (a list of events and [`Forget::matches`]).

use super::super::*;
use crate::catalog::Discovery;

/// Names as callers may send them; the stores receive them [`Discovery::bounded`], the one
/// rule that makes a `\0` (which a PostgreSQL `TEXT` cannot hold) or another control character
/// storable alike in every store.
const NAMES: [&str; 8] = [
    "fetch_ticket",
    "list_open",
    "get_issue",
    "my chores",
    "überprüfen",
    "a 'quoted' name",
    "nul\0in a name",
    "line\nbreak\u{1b}[31m",
];

/// A random event of any kind, session or none, at a time in `0..100`.
pub(crate) fn random_event(rng: &mut fastrand::Rng) -> StoredEvent {
    let name = |rng: &mut fastrand::Rng| NAMES[rng.usize(..NAMES.len())].to_string();
    let names = |rng: &mut fastrand::Rng| (0..rng.usize(..4)).map(|_| name(rng)).collect();
    let event = match rng.usize(..4) {
        0 => Discovery::Unknown {
            requested: name(rng),
            suggested: names(rng),
        },
        1 => Discovery::Corrected {
            requested: name(rng),
            resolved: name(rng),
            rule: "typo".into(),
        },
        2 => Discovery::Search {
            query: name(rng),
            shown: names(rng),
        },
        _ => Discovery::Call {
            tool: name(rng),
            ok: rng.bool(),
        },
    };
    StoredEvent {
        at: rng.u64(..100),
        caller: format!("{:064x}", rng.u64(..5)),
        session: rng.bool().then(|| format!("run-{:x}", rng.u64(..8))),
        event: event.bounded(),
    }
}

/// Random appends, expiries and forgettings on an empty store of a cap nothing reaches: after
/// each, the store holds exactly what the model holds, in order, and says how many it deleted.
pub(crate) fn keeps_what_the_model_keeps(store: &dyn EventStore, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut model: Vec<StoredEvent> = Vec::new();
    for step in 0..120 {
        match rng.usize(..10) {
            0..=5 => {
                let batch: Vec<StoredEvent> = (0..rng.usize(..20))
                    .map(|_| random_event(&mut rng))
                    .collect();
                store.append(&batch).unwrap();
                model.extend(batch);
            }
            6 => {
                let before = rng.u64(..110);
                let n = model.iter().filter(|e| e.at < before).count() as u64;
                model.retain(|e| e.at >= before);
                assert_eq!(
                    store.expire(before).unwrap(),
                    n,
                    "step {step}: expire {before}"
                );
            }
            7 | 8 => {
                let what = if rng.bool() {
                    Forget::Name(NAMES[rng.usize(..NAMES.len())].to_string()).bounded()
                } else {
                    Forget::Caller(format!("{:064x}", rng.u64(..6)))
                };
                let n = model.iter().filter(|e| what.matches(e)).count() as u64;
                model.retain(|e| !what.matches(e));
                assert_eq!(store.forget(&what).unwrap(), n, "step {step}: {what:?}");
            }
            _ => {
                if rng.usize(..8) == 0 {
                    assert_eq!(store.forget(&Forget::All).unwrap(), model.len() as u64);
                    model.clear();
                }
            }
        }
        assert_eq!(store.events().unwrap(), model, "step {step}");
    }
}

/// A flood past the cap: after every append the store's own measure (`held`) is within
/// `cap`, and what it keeps is the newest events, a suffix of everything appended, in order.
pub(crate) fn is_bounded_oldest_first(store: &dyn EventStore, cap: u64, held: &dyn Fn() -> u64) {
    let mut rng = fastrand::Rng::with_seed(cap);
    let mut appended: Vec<StoredEvent> = Vec::new();
    let mut at = 0u64;
    for _ in 0..60 {
        let batch: Vec<StoredEvent> = (0..rng.usize(1..400))
            .map(|_| {
                at += 1;
                let mut e = random_event(&mut rng);
                e.at = at;
                if let Discovery::Search { query, .. } = &mut e.event {
                    query.push_str(&format!(" number {at} for the quarterly review"));
                }
                e
            })
            .collect();
        store.append(&batch).unwrap();
        appended.extend(batch);
        let held = held();
        assert!(held <= cap, "{held} > {cap}");
    }
    let kept = store.events().unwrap();
    assert!(!kept.is_empty());
    assert!(kept.len() < appended.len(), "the flood reached the cap");
    assert_eq!(kept, appended[appended.len() - kept.len()..]);
}

#[test]
fn memory_store_keeps_the_contract() {
    for seed in 0..4 {
        keeps_what_the_model_keeps(&MemoryStore::new(64 << 20), seed);
    }
    let store = MemoryStore::new(256 * 1024);
    is_bounded_oldest_first(&store, 256 * 1024, &|| store.bytes() as u64);
}

/// Every text a store receives holds no control character and at most `MAX_EVENT_TEXT`
/// characters, whatever the caller wrote: every control character, in generated strings.
#[test]
fn bounded_texts_hold_no_control_character() {
    use crate::catalog::bounded_text;
    let controls: Vec<char> = (0u32..=0x10FFFF)
        .filter_map(char::from_u32)
        .filter(|c| c.is_control())
        .collect();
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..500 {
        let s: String = (0..rng.usize(..400))
            .map(|_| match rng.usize(..3) {
                0 => controls[rng.usize(..controls.len())],
                1 => rng.alphanumeric(),
                _ => 'ü',
            })
            .collect();
        let b = bounded_text(s.clone());
        assert!(!b.chars().any(char::is_control), "{b:?}");
        assert_eq!(
            b.chars().count(),
            s.chars()
                .count()
                .min(crate::catalog::discovery::MAX_EVENT_TEXT)
        );
    }
}
