//! The PostgreSQL store (feature `learning-postgres`): the stores' contract, the cap kept by
//! several processes writing at once, and two processes sharing one database learning what
//! one process learns from the same traffic.
//!
//! The server is found through `DISCO_TEST_POSTGRES`: the directory of its Unix socket (`.ci/run`
//! starts one there with `initdb`), reached as user `DISCO_TEST_POSTGRES_USER` (default
//! `postgres`). Unset, each test says so and checks nothing, unless `DISCO_REQUIRE_POSTGRES`
//! is set (`.ci/test` sets it): then each fails. Each test works in a schema of its own, made
//! here.

use std::process::Command;

use super::super::*;
use super::contract;
use super::{catalog, ev};
use crate::catalog::Discovery;

/// The connection string of a fresh schema of the test server, or `None` (said) without one.
fn fresh_schema(test: &str) -> Option<String> {
    let Ok(dir) = std::env::var("DISCO_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("DISCO_REQUIRE_POSTGRES").is_none(),
            "PostgreSQL store test ({test}): DISCO_REQUIRE_POSTGRES is set (.ci/test) and \
             DISCO_TEST_POSTGRES is not: the test would check nothing"
        );
        eprintln!(
            "PostgreSQL store test ({test}): skipped, DISCO_TEST_POSTGRES (the directory of a PostgreSQL server's \
             Unix socket) is not set; .ci/run starts one"
        );
        return None;
    };
    let user = std::env::var("DISCO_TEST_POSTGRES_USER").unwrap_or_else(|_| "postgres".into());
    let base = format!("host={dir} user={user} dbname=postgres");
    let schema = format!(
        "disco_{test}_{}_{:x}",
        std::process::id(),
        fastrand::u64(..)
    );
    let mut admin = ::postgres::Client::connect(&base, ::postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    Some(format!("{base} options=-csearch_path={schema}"))
}

/// What the other processes of a test are told: the connection, their part and what to do.
const CHILD: &str = "DISCO_TEST_POSTGRES_CHILD";

#[test]
fn postgres_store_keeps_the_contract() {
    for seed in 0..4 {
        let Some(conn) = fresh_schema("contract") else {
            return;
        };
        let store = PostgresStore::open(&conn, 64 << 20).unwrap();
        contract::keeps_what_the_model_keeps(&store, seed);
    }
    let Some(conn) = fresh_schema("flood") else {
        return;
    };
    let cap = 256 * 1024;
    let store = PostgresStore::open(&conn, cap).unwrap();
    contract::is_bounded_oldest_first(&store, cap, &|| {
        let bytes = store.bytes().unwrap();
        assert_eq!(
            bytes,
            weight(&store.events().unwrap()),
            "the count is the events'"
        );
        bytes
    });
}

fn weight(events: &[StoredEvent]) -> u64 {
    events.iter().map(|e| e.weight() as u64).sum()
}

/// A wrong address or a malformed connection string fails at open, with the reason; a store
/// whose connection the server ended fails that call, never panics, and connects again at
/// the next one, its events intact.
#[test]
fn postgres_store_says_what_fails_and_connects_again() {
    let Some(conn) = fresh_schema("again") else {
        return;
    };
    let Ok(dir) = std::env::var("DISCO_TEST_POSTGRES") else {
        return;
    };
    let err = PostgresStore::open(&format!("host={dir}/nowhere user=postgres"), 1 << 20)
        .err()
        .unwrap();
    assert!(err.0.contains("PostgreSQL"), "{err}");
    let err = PostgresStore::open("port=notanumber", 1 << 20)
        .err()
        .unwrap();
    assert!(err.0.contains("connection string"), "{err}");

    let name = format!("disco_again_{}", std::process::id());
    let store = PostgresStore::open(&format!("{conn} application_name={name}"), 1 << 20).unwrap();
    let mut rng = fastrand::Rng::with_seed(3);
    let first: Vec<StoredEvent> = (0..5).map(|_| contract::random_event(&mut rng)).collect();
    store.append(&first).unwrap();
    let user = std::env::var("DISCO_TEST_POSTGRES_USER").unwrap_or_else(|_| "postgres".into());
    let mut admin = ::postgres::Client::connect(
        &format!("host={dir} user={user} dbname=postgres"),
        ::postgres::NoTls,
    )
    .unwrap();
    let ended = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .unwrap();
    assert_eq!(ended, 1);
    let second: Vec<StoredEvent> = (0..5).map(|_| contract::random_event(&mut rng)).collect();
    // The call that finds the connection gone may fail; the next one connects again.
    if store.append(&second).is_err() {
        store.append(&second).unwrap();
    }
    let all: Vec<StoredEvent> = first.into_iter().chain(second).collect();
    assert_eq!(store.events().unwrap(), all);
    assert_eq!(store.bytes().unwrap(), weight(&all));
}

/// The traffic of the two-process test: 400 sessions of 60 callers who call `get_issue` and
/// then `fetch_ticket`, or search "my chores for today" and then call `list_open`; 30% of
/// them end in some other tool instead.
fn fleet_traffic() -> Vec<Vec<StoredEvent>> {
    let mut rng = fastrand::Rng::with_seed(73);
    let others = ["open_door", "send_email", "fetch_ticket", "list_open"];
    (0..400)
        .map(|s| {
            let caller = format!("{:064x}", rng.u64(..60));
            let session = format!("run-{s:x}");
            let first = if rng.bool() {
                Discovery::Unknown {
                    requested: "get_issue".into(),
                    suggested: vec![],
                }
            } else {
                Discovery::Search {
                    query: "my chores for today".into(),
                    shown: vec!["fetch_ticket".into()],
                }
            };
            let then = if rng.f32() < 0.3 {
                others[rng.usize(..others.len())]
            } else if matches!(first, Discovery::Unknown { .. }) {
                "fetch_ticket"
            } else {
                "list_open"
            };
            let call = Discovery::Call {
                tool: then.into(),
                ok: true,
            };
            vec![ev(&caller, &session, first), ev(&caller, &session, call)]
        })
        .collect()
}

/// Runs this test binary's `a_process_of_the_fleet` as two processes at once, each told its
/// part and `mode`; waits for both to succeed.
fn two_processes(conn: &str, mode: &str, secret: &[u8; 32]) {
    let exe = std::env::current_exe().unwrap();
    let secret: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    // Both start writing at once, half a second from now (after their connections are made).
    let start = now_millis() + 500;
    let children: Vec<_> = (0..2)
        .map(|part| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "learn::tests::postgres::a_process_of_the_fleet",
                    "--ignored",
                    "--nocapture",
                ])
                .env(CHILD, format!("{mode}|{part}|{start}|{secret}|{conn}"))
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "a process of the fleet failed: {status}");
    }
}

/// Two processes sharing one database: each writes its half of the sessions (as a load
/// balancer keeping a session on one gateway would) in batches that interleave with the
/// other's; the evidence and the candidates read from the database are those of one process
/// that saw all the traffic. Then both flood one small cap at once: the cap holds after every
/// append of either, the bytes counted are the events', and each keeps its newest events.
#[test]
fn two_processes_learn_as_one() {
    let Some(conn) = fresh_schema("fleet") else {
        return;
    };
    let store = PostgresStore::open(&conn, 64 << 20).unwrap();
    let secret = store.secret().unwrap();
    two_processes(&conn, "learn", &secret);

    let all: Vec<StoredEvent> = fleet_traffic().into_iter().flatten().collect();
    let one = MemoryStore::new(64 << 20);
    one.append(&all).unwrap();
    let options = LearnOptions::default();
    let shared = store.events().unwrap();
    assert_eq!(shared.len(), all.len());
    assert_eq!(
        gather(&shared, options.window),
        gather(&one.events().unwrap(), options.window)
    );
    let catalog = catalog();
    let (fleet, alone) = (
        candidates(&store, &catalog, &options).unwrap(),
        candidates(&one, &catalog, &options).unwrap(),
    );
    assert_eq!(
        serde_json::to_value(&fleet).unwrap(),
        serde_json::to_value(&alone).unwrap()
    );
    let ready = learned_aliases(&fleet);
    assert_eq!(
        ready,
        [("get_issue".to_string(), "fetch_ticket".to_string())]
    );
    assert!(learned_keywords(&fleet)
        .iter()
        .any(|(tool, word, _)| tool == "list_open" && word == "chores"));

    let Some(conn) = fresh_schema("fleetflood") else {
        return;
    };
    let store = PostgresStore::open(&conn, FLOOD_CAP).unwrap();
    two_processes(&conn, "flood", &store.secret().unwrap());
    let kept = store.events().unwrap();
    assert!(!kept.is_empty());
    let bytes = store.bytes().unwrap();
    assert!(bytes <= FLOOD_CAP, "{bytes} > {FLOOD_CAP}");
    assert_eq!(bytes, weight(&kept));
    for part in 0..2 {
        let mine: Vec<StoredEvent> = kept
            .iter()
            .filter(|e| e.caller == format!("process {part}"))
            .cloned()
            .collect();
        let flood = flood_of(part);
        assert!(mine.len() < flood.len());
        assert_eq!(mine, flood[flood.len() - mine.len()..], "process {part}");
    }
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

const FLOOD_CAP: u64 = 128 * 1024;

/// What process `part` floods the store with, in order.
fn flood_of(part: usize) -> Vec<StoredEvent> {
    (0..6_000u64)
        .map(|i| {
            let mut e = ev(
                &format!("process {part}"),
                &format!("s{}", i % 7),
                Discovery::Search {
                    query: format!("find the report number {i} for the quarterly review"),
                    shown: vec!["alpha_tool".into(), "beta_tool".into()],
                },
            );
            e.at = i;
            e
        })
        .collect()
}

/// One process of `two_processes_learn_as_one`, run by it (and doing nothing otherwise).
#[test]
#[ignore = "run by two_processes_learn_as_one as a process of its own"]
fn a_process_of_the_fleet() {
    let Ok(told) = std::env::var(CHILD) else {
        return;
    };
    let mut fields = told.splitn(5, '|');
    let (mode, part, start, secret, conn) = (
        fields.next().unwrap(),
        fields.next().unwrap().parse::<usize>().unwrap(),
        fields.next().unwrap().parse::<u64>().unwrap(),
        fields.next().unwrap(),
        fields.next().unwrap(),
    );
    let cap = if mode == "flood" { FLOOD_CAP } else { 64 << 20 };
    let store = PostgresStore::open(conn, cap).unwrap();
    let shared: String = store
        .secret()
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        shared, secret,
        "every process names callers under one secret"
    );
    let mut rng = fastrand::Rng::with_seed(part as u64);
    std::thread::sleep(std::time::Duration::from_millis(
        start.saturating_sub(now_millis()),
    ));
    if mode == "learn" {
        let mine: Vec<Vec<StoredEvent>> = fleet_traffic()
            .into_iter()
            .enumerate()
            .filter(|(s, _)| s % 2 == part)
            .map(|(_, s)| s)
            .collect();
        let mut sessions = mine.iter().peekable();
        while sessions.peek().is_some() {
            let batch: Vec<StoredEvent> = (&mut sessions)
                .take(rng.usize(1..8))
                .flatten()
                .cloned()
                .collect();
            store.append(&batch).unwrap();
        }
    } else {
        let flood = flood_of(part);
        let mut rest = flood.as_slice();
        while !rest.is_empty() {
            let (batch, tail) = rest.split_at(rng.usize(1..200).min(rest.len()));
            store.append(batch).unwrap();
            rest = tail;
            let bytes = store.bytes().unwrap();
            assert!(bytes <= FLOOD_CAP, "{bytes} > {FLOOD_CAP}");
        }
    }
}

/// A process that holds the state row's lock (a gateway cut off mid-append, its transaction
/// open) does not stall the others: their appends fail within the lock timeout, saying why,
/// and succeed once the lock is released.
#[test]
fn a_held_lock_fails_an_append_rather_than_stalling_it() {
    let Some(conn) = fresh_schema("held") else {
        return;
    };
    let store = PostgresStore::open(&conn, 1 << 20).unwrap();
    let mut holder = ::postgres::Client::connect(&conn, ::postgres::NoTls).unwrap();
    let mut tx = holder.transaction().unwrap();
    tx.query_one(
        "SELECT bytes FROM disco_learning_state WHERE id = 1 FOR UPDATE",
        &[],
    )
    .unwrap();
    let mut rng = fastrand::Rng::with_seed(5);
    let batch: Vec<StoredEvent> = (0..5).map(|_| contract::random_event(&mut rng)).collect();
    let (tx_done, done) = std::sync::mpsc::channel();
    let store = std::sync::Arc::new(store);
    let writer = std::sync::Arc::clone(&store);
    let sent = batch.clone();
    std::thread::spawn(move || {
        let _ = tx_done.send(writer.append(&sent));
    });
    // A liveness bound, far above the 5 s lock timeout: an append that waits for the lock
    // without end fails here.
    let err = done
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the append returned")
        .unwrap_err();
    assert!(err.0.contains("lock timeout"), "{err}");
    tx.rollback().unwrap();
    store.append(&batch).unwrap();
    assert_eq!(store.events().unwrap(), batch);
}

/// Tables made beforehand, a role granted only what the guide lists (USAGE on the schema,
/// SELECT, INSERT, UPDATE and DELETE on the two tables, USAGE on the events' identity
/// sequence), no right to create: that role connects and every operation works.
#[test]
fn a_role_with_only_the_listed_grants_uses_made_tables() {
    let Some(conn) = fresh_schema("grants") else {
        return;
    };
    // Made by the server's superuser, as an administrator would.
    drop(PostgresStore::open(&conn, 1 << 20).unwrap());
    let mut admin = ::postgres::Client::connect(&conn, ::postgres::NoTls).unwrap();
    let schema: String = admin
        .query_one("SELECT current_schema()", &[])
        .unwrap()
        .get(0);
    let role = format!(
        "disco_learner_{}_{:x}",
        std::process::id(),
        fastrand::u64(..)
    );
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} NOLOGIN;
             GRANT USAGE ON SCHEMA {schema} TO {role};
             GRANT SELECT, INSERT, UPDATE, DELETE
                 ON {schema}.disco_learning_events, {schema}.disco_learning_state TO {role};
             GRANT USAGE ON SEQUENCE {schema}.disco_learning_events_id_seq TO {role};"
        ))
        .unwrap();
    let can_create: bool = admin
        .query_one(
            "SELECT has_schema_privilege($1, $2, 'CREATE')",
            &[&role, &schema],
        )
        .unwrap()
        .get(0);
    assert!(!can_create);
    // The test server authenticates its superuser only; the role is taken at start.
    let as_role = conn.replace(
        &format!("options=-csearch_path={schema}"),
        &format!("options='-csearch_path={schema} -crole={role}'"),
    );
    let store = PostgresStore::open(&as_role, 64 << 20).unwrap();
    let user: String = ::postgres::Client::connect(&as_role, ::postgres::NoTls)
        .unwrap()
        .query_one("SELECT current_user", &[])
        .unwrap()
        .get(0);
    assert_eq!(user, role);
    contract::keeps_what_the_model_keeps(&store, 11);
    assert_eq!(store.secret().unwrap().len(), 32);
}

/// A store error never quotes the connection string's password: a malformed string, a socket
/// directory with no server, a TCP port that refuses, each with the password `MARKER…`.
/// (Needs no server.)
#[test]
fn a_store_error_never_shows_the_password() {
    let marker = "MARKER7c1f";
    for conn in [
        format!("host=/nonexistent/disco user=u password={marker}"),
        format!("host=127.0.0.1 port=1 user=u password={marker} connect_timeout=5"),
        format!("host=127.0.0.1 port=notanumber password={marker}"),
        format!("postgresql://u:{marker}@127.0.0.1:1/db"),
        format!("postgresql://u:{marker}@127.0.0.1:notaport/db"),
        format!("password='{marker} user=u"),
    ] {
        let Err(err) = PostgresStore::open(&conn, 1 << 20) else {
            panic!("{conn}: opened");
        };
        assert!(!err.0.contains(marker), "{conn}: {err}");
        assert!(!format!("{err:?}").contains(marker), "{conn}: {err:?}");
    }
}

/// A count of bytes that drifted from the rows (rows deleted by hand) is made right at the
/// next trim: after a flood past the cap, the count is the kept events' weight again.
#[test]
fn a_trim_counts_the_bytes_again() {
    let Some(conn) = fresh_schema("drift") else {
        return;
    };
    let cap = 64 * 1024;
    let store = PostgresStore::open(&conn, cap).unwrap();
    let mut rng = fastrand::Rng::with_seed(9);
    let some: Vec<StoredEvent> = (0..50).map(|_| contract::random_event(&mut rng)).collect();
    store.append(&some).unwrap();
    let mut admin = ::postgres::Client::connect(&conn, ::postgres::NoTls).unwrap();
    admin
        .execute("DELETE FROM disco_learning_events WHERE id % 2 = 0", &[])
        .unwrap();
    assert_ne!(store.bytes().unwrap(), weight(&store.events().unwrap()));
    let flood: Vec<StoredEvent> = (0..2000)
        .map(|_| contract::random_event(&mut rng))
        .collect();
    store.append(&flood).unwrap();
    assert_eq!(store.bytes().unwrap(), weight(&store.events().unwrap()));
    assert!(store.bytes().unwrap() <= cap);
}
