//! The SQLite store and the recorder: bounds under a flood, expiry, file modes, and that no
//! argument value and no caller identity reaches the disk.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::super::*;
use super::{catalog, ev, search, temp_dir};
use crate::catalog::{Catalog, Discovery, JsonCatalogProvider};
use crate::tool::{Caller, Context};

fn disk_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// The learning state in a directory that is there open to others (0755, made before or by
/// hand): the store and the secret make it 0700, and their files are 0600.
#[cfg(unix)]
#[test]
fn an_existing_open_directory_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("open");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let store = SqliteStore::open(&dir, DEFAULT_MAX_BYTES).unwrap();
    secret_in(&dir).unwrap();
    drop(store);
    assert_eq!(super::unix_mode(&dir), 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        assert_eq!(super::unix_mode(&file), 0o600, "{}", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A flood of events keeps the file within its cap (journal included), the newest events
/// kept and the oldest deleted first.
#[test]
fn sqlite_store_is_bounded_under_a_flood() {
    let dir = temp_dir("flood");
    let cap = 256 * 1024;
    let store = SqliteStore::open(&dir, cap).unwrap();
    let mut at = 0u64;
    for _ in 0..200 {
        let batch: Vec<StoredEvent> = (0..500)
            .map(|_| {
                at += 1;
                let mut e = ev(
                    &format!("{:064x}", at % 97),
                    &format!("s{}", at % 13),
                    search(
                        &format!("find the report number {at} for the quarterly review"),
                        &["alpha_tool", "beta_tool", "gamma_tool"],
                    ),
                );
                e.at = at;
                e
            })
            .collect();
        store.append(&batch).unwrap();
        assert!(disk_bytes(&dir) <= cap, "{} > {cap}", disk_bytes(&dir));
    }
    let kept = store.events().unwrap();
    assert!(!kept.is_empty());
    assert_eq!(kept.last().map(|e| e.at), Some(at));
    assert!(kept.first().map(|e| e.at) > Some(1));
    assert!(kept.windows(2).all(|w| w[0].at < w[1].at));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stores' contract (`contract.rs`), on SQLite: the model's events after any sequence of
/// appends, expiries and forgettings, and the file within its cap under a flood, oldest out first.
#[test]
fn sqlite_store_keeps_the_contract() {
    for seed in 0..4 {
        let dir = temp_dir("contract");
        let store = SqliteStore::open(&dir, DEFAULT_MAX_BYTES).unwrap();
        super::contract::keeps_what_the_model_keeps(&store, seed);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let dir = temp_dir("contract-flood");
    let store = SqliteStore::open(&dir, 256 * 1024).unwrap();
    super::contract::is_bounded_oldest_first(&store, 256 * 1024, &|| disk_bytes(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Events older than the time to live are gone once the recorder starts; forgetting a name
/// deletes exactly its events.
#[test]
fn events_expire_and_are_forgotten() {
    let dir = temp_dir("expire");
    let store = Arc::new(SqliteStore::open(&dir, DEFAULT_MAX_BYTES).unwrap());
    let now = now();
    let mut old = ev("c", "s", search("old query", &[]));
    old.at = now - 31 * 24 * 3600;
    let mut fresh = ev("c", "s", search("fresh query", &[]));
    fresh.at = now - 29 * 24 * 3600;
    let mut call = ev(
        "c",
        "s",
        Discovery::Call {
            tool: "list_open".into(),
            ok: true,
        },
    );
    call.at = now;
    store.append(&[old, fresh.clone(), call]).unwrap();
    let recorder = Recorder::new(store.clone(), [7; 32], RecorderOptions::default()).unwrap();
    recorder.flush();
    let kept = store.events().unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0], fresh);
    assert_eq!(store.forget(&Forget::Name("list_open".into())).unwrap(), 1);
    assert_eq!(store.events().unwrap(), vec![fresh]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Calls with argument values, a search and an unknown name, through a catalog recording
/// into SQLite: the events are there, and neither any argument value nor the caller's
/// identity is in any file of the directory; the directory is 0700 and its files 0600.
#[test]
fn nothing_of_arguments_or_identities_is_stored() {
    let dir = temp_dir("private");
    let store = Arc::new(SqliteStore::open(&dir, DEFAULT_MAX_BYTES).unwrap());
    let secret = secret_in(&dir).unwrap();
    assert_eq!(secret_in(&dir).unwrap(), secret, "the secret is made once");
    let recorder =
        Arc::new(Recorder::new(store.clone(), secret, RecorderOptions::default()).unwrap());
    let tools = json!([
        {"name": "list_open", "description": "List the open items", "inputSchema": {"type": "object"},
          "annotations": {"readOnlyHint": true}},
        {"name": "fetch_ticket", "description": "Fetch a ticket", "inputSchema": {"type": "object",
          "properties": {"id": {"type": "string"}}}, "annotations": {"readOnlyHint": true}},
    ]);
    let catalog = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&tools).unwrap())
        .search(crate::catalog::SearchOptions::default().enabled(true))
        .discovery(recorder.clone())
        .from_specs([])
        .unwrap();
    let ctx = Context::builder()
        .caller(Caller::new("token-of-ALICE-7731"))
        .session(Some(42))
        .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let marker = "ARGVALUE-5b1e9c";
        let _ = catalog
            .call_with("get_issue", Some(json!({"id": marker})), &ctx)
            .await;
        catalog
            .call_with("fetch_ticket", Some(json!({"id": marker})), &ctx)
            .await
            .unwrap();
        catalog
            .call_with(
                "fetch_tickt",
                Some(json!({"id": marker, "note": [marker]})),
                &ctx,
            )
            .await
            .unwrap();
        catalog
            .call_with("tool_search", Some(json!({"query": "open items"})), &ctx)
            .await
            .unwrap();
        catalog
            .call_with(
                "execute_tool",
                Some(json!({"name": "list_open", "arguments": {"x": marker}})),
                &ctx,
            )
            .await
            .unwrap();
    });
    recorder.flush();
    let kinds: Vec<String> = store
        .events()
        .unwrap()
        .iter()
        .map(|e| {
            serde_json::to_value(&e.event).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        ["unknown", "call", "corrected", "call", "search", "call"],
        "{kinds:?}"
    );
    let events = store.events().unwrap();
    assert!(events
        .iter()
        .all(|e| e.caller == caller_hmac(&secret, Some("token-of-ALICE-7731"))));
    assert!(events
        .iter()
        .all(|e| e.session.as_deref().is_some_and(|s| s.ends_with("-2a"))));
    drop(store);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        for needle in ["ARGVALUE-5b1e9c", "token-of-ALICE-7731"] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{needle} in {}",
                entry.path().display()
            );
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", entry.path().display());
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A store that holds every append until released: the recorder's queue fills, and the
/// events past it are dropped and counted, never waited for.
struct Held(Mutex<()>, MemoryStore);

impl EventStore for Held {
    fn append(&self, events: &[StoredEvent]) -> Result<(), StoreError> {
        let _held = self.0.lock().unwrap();
        self.1.append(events)
    }
    fn events(&self) -> Result<Vec<StoredEvent>, StoreError> {
        self.1.events()
    }
    fn expire(&self, before: u64) -> Result<u64, StoreError> {
        self.1.expire(before)
    }
    fn forget(&self, what: &Forget) -> Result<u64, StoreError> {
        self.1.forget(what)
    }
}

#[test]
fn a_full_queue_drops_events_without_waiting() {
    let store = Arc::new(Held(Mutex::new(()), MemoryStore::new(1 << 20)));
    let gate = store.0.lock().unwrap();
    let options = RecorderOptions {
        queue: 8,
        ..RecorderOptions::default()
    };
    let recorder = Recorder::new(store.clone(), [1; 32], options).unwrap();
    // Let the writer expire (an append-free call) and block in its first append.
    std::thread::sleep(Duration::from_millis(50));
    let caller = Caller::anonymous();
    for i in 0..10_000 {
        crate::catalog::DiscoverySink::record(
            &recorder,
            &caller,
            Some(1),
            Discovery::Call {
                tool: format!("t{i}"),
                ok: true,
            },
        );
    }
    // At most the queue, one batch in the writer's hands and the one it is receiving.
    assert!(
        recorder.dropped() >= 10_000 - 8 - 256 - 1,
        "{}",
        recorder.dropped()
    );
    drop(gate);
    recorder.flush();
    let kept = store.events().unwrap().len() as u64;
    assert_eq!(kept + recorder.dropped(), 10_000);
    let _ = catalog();
}
