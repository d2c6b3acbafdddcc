//! A fleet's store: one PostgreSQL database (feature `learning-postgres`) that every gateway
//! behind a load balancer writes into and learns from, with the bounds of the SQLite store.
//!
//! Two tables, made at first connection when they are not there (under an advisory lock, so
//! that processes starting together do not race to make them; a connection that finds them
//! runs no DDL, so a role granted only their use connects): `disco_learning_events`, one row per event, and
//! `disco_learning_state`, one row holding the bytes the events weigh (by
//! [`StoredEvent`]'s weight) and the secret callers are named under, made by the first
//! process that connects, so that a caller is one caller whichever process it reached.
//!
//! Every change takes that row's lock first (`SELECT ... FOR UPDATE`): appends, expiry and
//! forgetting of all the processes happen one at a time, so the bytes counted are the bytes
//! kept and the cap holds however many processes write. Past the cap, the oldest events are
//! deleted until a quarter of the cap is free again (as the SQLite store deletes its oldest
//! quarter), so that deleting is not paid on every append. The cap is on the events' counted
//! weight, not on disk: rows, index and PostgreSQL's overhead take more, and deleted rows'
//! room is reused after autovacuum, not returned, until `VACUUM FULL`. The events table is
//! made with a low `autovacuum_vacuum_scale_factor`, so that the room of the few rows an
//! hourly expiry or a forgetting deletes is reused sooner than at the default 20% of the table.
//!
//! Nothing read from the database can panic the process: every column is read as a
//! `Result`, and a row this version cannot read is skipped.
//!
//! The connection lives on a thread of its own: the blocking `postgres` client runs a
//! runtime of its own, which may neither be entered nor dropped from inside another
//! (a gateway calls the store from its Tokio tasks). A lost connection is made again at the
//! next call.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::Duration;

use ::postgres::{Client, NoTls};

use super::store::{EventStore, Forget, StoreError, StoredEvent};
use crate::catalog::Discovery;

/// The advisory lock the tables are made under (any fixed number: "disco-le" in ASCII).
const SETUP_LOCK: i64 = 0x6469_7363_6f2d_6c65;

type Job = Box<dyn FnOnce(Result<&mut Client, StoreError>) + Send>;

/// Events in a PostgreSQL database, at most `max_bytes` of them by [`StoredEvent`]'s weight.
pub struct PostgresStore {
    jobs: SyncSender<Job>,
    max_bytes: u64,
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("discovery events (PostgreSQL): {e}"))
}

/// `e`, with the database's own message when it has one, or its cause (the client's
/// `Display` says only "db error" or "error connecting to server").
fn db_failed(e: ::postgres::Error) -> StoreError {
    match (e.as_db_error(), std::error::Error::source(&e)) {
        (Some(db), _) => failed(format!("{}: {}", db.code().code(), db.message())),
        (None, Some(cause)) => failed(format!("{e}: {cause}")),
        (None, None) => failed(e),
    }
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn as_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl PostgresStore {
    /// Connects to the database `connection` names (a libpq connection string, `host=...
    /// dbname=... user=...`, or a `postgresql://` URL; a Unix socket is a `host` that is a
    /// directory), makes the tables when they are not there, and keeps at most `max_bytes`
    /// of events (at least 64 KiB).
    pub fn open(connection: &str, max_bytes: u64) -> Result<PostgresStore, StoreError> {
        let mut config: postgres::Config = connection
            .parse()
            .map_err(|e| failed(format!("the connection string: {e}")))?;
        with_default_timeouts(&mut config);
        let (jobs, rx) = sync_channel::<Job>(0);
        std::thread::Builder::new()
            .name("disco-learning-pg".into())
            .spawn(move || {
                let mut client: Option<Client> = None;
                for job in rx {
                    if client.as_ref().is_none_or(Client::is_closed) {
                        client = None;
                        match connect(&config) {
                            Ok(c) => client = Some(c),
                            Err(e) => {
                                job(Err(e));
                                continue;
                            }
                        }
                    }
                    match client.as_mut() {
                        Some(c) => job(Ok(c)),
                        None => job(Err(failed("not connected"))),
                    }
                }
            })
            .map_err(|e| failed(format!("the connection's thread: {e}")))?;
        let store = PostgresStore {
            jobs,
            max_bytes: max_bytes.max(64 * 1024),
        };
        // Connect now: a wrong address or password is said at start, not at the first event.
        store.run(|_| Ok(()))?;
        Ok(store)
    }

    /// Runs `f` on the connection's thread and waits for its answer.
    fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = sync_channel(1);
        let job: Job = Box::new(move |client| {
            let _ = tx.send(client.and_then(|c| f(c).map_err(db_failed)));
        });
        self.jobs
            .send(job)
            .map_err(|_| failed("the connection's thread ended"))?;
        rx.recv()
            .map_err(|_| failed("the connection's thread ended"))?
    }

    /// The bytes the kept events weigh, as the database counts them for every process.
    pub fn bytes(&self) -> Result<u64, StoreError> {
        self.run(|c| {
            let row = c.query_one("SELECT bytes FROM disco_learning_state WHERE id = 1", &[])?;
            Ok(as_u64(row.try_get(0)?))
        })
    }

    /// The secret callers are named under, the same for every process of the database:
    /// made by the first one that connected.
    pub fn secret(&self) -> Result<[u8; 32], StoreError> {
        let bytes = self.run(|c| {
            let row = c.query_one("SELECT secret FROM disco_learning_state WHERE id = 1", &[])?;
            row.try_get::<_, Vec<u8>>(0)
        })?;
        <[u8; 32]>::try_from(bytes.as_slice())
            .map_err(|_| failed("disco_learning_state.secret is not 32 bytes"))
    }

    /// Deletes the events `condition` (SQL over the events' columns, with `param`) selects,
    /// under the state's lock, keeping the count of bytes right; how many.
    fn delete_where(
        &self,
        condition: &'static str,
        param: Option<DeleteParam>,
    ) -> Result<u64, StoreError> {
        self.run(move |c| {
            let mut tx = c.transaction()?;
            tx.query_one(
                "SELECT bytes FROM disco_learning_state WHERE id = 1 FOR UPDATE",
                &[],
            )?;
            let sql = format!(
                "WITH gone AS (DELETE FROM disco_learning_events WHERE {condition} RETURNING bytes)
                 SELECT COUNT(*), COALESCE(SUM(bytes), 0)::BIGINT FROM gone"
            );
            let row = match &param {
                None => tx.query_one(&sql, &[])?,
                Some(DeleteParam::Int(n)) => tx.query_one(&sql, &[n])?,
                Some(DeleteParam::Text(s)) => tx.query_one(&sql, &[s])?,
            };
            let (n, bytes): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            tx.execute(
                "UPDATE disco_learning_state SET bytes = GREATEST(bytes - $1, 0) WHERE id = 1",
                &[&bytes],
            )?;
            tx.commit()?;
            Ok(as_u64(n))
        })
    }
}

enum DeleteParam {
    Int(i64),
    Text(String),
}

/// The client's default TCP keepalive idle time (`tokio-postgres`'s, libpq's: two hours):
/// left so, the connection string did not set one.
const DEFAULT_KEEPALIVES_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// Bounds on waiting for a server that does not answer, where the connection string sets
/// none: 10 s to connect, and TCP keepalives that find a silent peer within about a minute
/// (30 s idle, then 3 probes 10 s apart) rather than the system's two hours. A connection
/// string that disables keepalives (`keepalives=0`) keeps them off.
fn with_default_timeouts(config: &mut postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_keepalives_idle() == DEFAULT_KEEPALIVES_IDLE {
        config.keepalives_idle(Duration::from_secs(30));
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(Duration::from_secs(10));
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(3);
    }
}

/// The session's bounds, so that one process cut off mid-append (its transaction left open,
/// the state row locked) cannot stall the others: a statement waits at most 5 s for a lock
/// and runs at most 60 s, and the server ends a session idle in a transaction for 60 s
/// (releasing its locks). A call that hits one fails with the server's reason; the events of
/// that batch are lost, the next call goes on.
const SESSION_BOUNDS: &str = "SET lock_timeout = '5s';
     SET idle_in_transaction_session_timeout = '60s';
     SET statement_timeout = '60s';";

/// A connection, with the session's bounds set and the tables made when they are not there.
fn connect(config: &postgres::Config) -> Result<Client, StoreError> {
    let mut client = config.connect(NoTls).map_err(db_failed)?;
    client.batch_execute(SESSION_BOUNDS).map_err(db_failed)?;
    // Tables and state row there (every connection but the first of a database): nothing to
    // make, so a role with no right to create (only the grants the guide lists) connects,
    // and no connection takes the locks DDL takes.
    if is_set_up(&mut client).map_err(db_failed)? {
        return Ok(client);
    }
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| failed(format!("no random bytes: {e}")))?;
    let mut tx = client.transaction().map_err(db_failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SETUP_LOCK])
        .map_err(db_failed)?;
    if !tables_there(&mut tx).map_err(db_failed)? {
        make_tables(&mut tx)?;
    }
    tx.execute(
        "INSERT INTO disco_learning_state (id, bytes, secret) VALUES (1, 0, $1)
         ON CONFLICT (id) DO NOTHING",
        &[&secret.as_slice()],
    )
    .map_err(db_failed)?;
    tx.commit().map_err(db_failed)?;
    Ok(client)
}

/// Whether both tables and the state row are there (in the schema the connection's
/// `search_path` names).
fn is_set_up(client: &mut Client) -> Result<bool, postgres::Error> {
    if !tables_there(client)? {
        return Ok(false);
    }
    let rows = client.query("SELECT 1 FROM disco_learning_state WHERE id = 1", &[])?;
    Ok(!rows.is_empty())
}

/// Whether both tables are there, asked without the right to create them.
fn tables_there(c: &mut impl postgres::GenericClient) -> Result<bool, postgres::Error> {
    c.query_one(
        "SELECT to_regclass('disco_learning_events') IS NOT NULL
            AND to_regclass('disco_learning_state') IS NOT NULL",
        &[],
    )?
    .try_get::<_, bool>(0)
}

/// Makes the tables (`IF NOT EXISTS`: a table of the two may be there already).
fn make_tables(tx: &mut postgres::Transaction<'_>) -> Result<(), StoreError> {
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS disco_learning_events (
             id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
             at BIGINT NOT NULL,
             caller TEXT NOT NULL,
             session TEXT,
             name TEXT NOT NULL,
             target TEXT NOT NULL,
             body TEXT NOT NULL,
             bytes BIGINT NOT NULL
         ) WITH (autovacuum_vacuum_scale_factor = 0.02);
         CREATE INDEX IF NOT EXISTS disco_learning_events_at ON disco_learning_events (at);
         CREATE TABLE IF NOT EXISTS disco_learning_state (
             id INTEGER PRIMARY KEY CHECK (id = 1),
             bytes BIGINT NOT NULL,
             secret BYTEA NOT NULL
         );",
    )
    .map_err(db_failed)
}

/// Inserts `events` (each at most `max` bytes) and deletes the oldest kept ones past `max`,
/// all under the state's lock.
fn append_locked(
    client: &mut Client,
    events: &[StoredEvent],
    max: u64,
) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    let row = tx.query_one(
        "SELECT bytes FROM disco_learning_state WHERE id = 1 FOR UPDATE",
        &[],
    )?;
    let mut total = as_u64(row.try_get(0)?);
    let (mut at, mut caller, mut session, mut name, mut target, mut body, mut bytes) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for e in events {
        let weight = e.weight() as u64;
        if weight > max {
            continue;
        }
        let (n, t) = e.names();
        at.push(as_i64(e.at));
        caller.push(e.caller.as_str());
        session.push(e.session.as_deref());
        name.push(n);
        target.push(t);
        body.push(serde_json::to_string(&e.event).unwrap_or_default());
        bytes.push(as_i64(weight));
        total += weight;
    }
    // One statement for the whole batch: its rows in order, so their ids are too.
    tx.execute(
        "INSERT INTO disco_learning_events (at, caller, session, name, target, body, bytes)
         SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                              $6::TEXT[], $7::BIGINT[])",
        &[&at, &caller, &session, &name, &target, &body, &bytes],
    )?;
    if total > max {
        // The oldest events whose bytes, added up from the oldest, free what is over a
        // quarter below the cap.
        let free = as_i64(total - max / 4 * 3);
        tx.execute(
            "DELETE FROM disco_learning_events WHERE id IN (
                 SELECT id FROM (
                     SELECT id, bytes, (SUM(bytes) OVER (ORDER BY id))::BIGINT AS running
                     FROM disco_learning_events
                 ) oldest WHERE running - bytes < $1
             )",
            &[&free],
        )?;
        // Counted again from the rows kept (the table is read for the trim anyway): a count
        // that drifted (rows deleted by hand, a restore) is made right at each trim.
        let row = tx.query_one(
            "SELECT COALESCE(SUM(bytes), 0)::BIGINT FROM disco_learning_events",
            &[],
        )?;
        total = as_u64(row.try_get(0)?);
    }
    tx.execute(
        "UPDATE disco_learning_state SET bytes = $1 WHERE id = 1",
        &[&as_i64(total)],
    )?;
    tx.commit()
}

impl EventStore for PostgresStore {
    fn append(&self, events: &[StoredEvent]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let events = events.to_vec();
        let max = self.max_bytes;
        self.run(move |c| append_locked(c, &events, max))
    }

    fn events(&self) -> Result<Vec<StoredEvent>, StoreError> {
        let rows = self.run(|c| {
            c.query(
                "SELECT at, caller, session, body FROM disco_learning_events ORDER BY id",
                &[],
            )
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let (at, caller, session, body): (i64, String, Option<String>, String) = (
                row.try_get(0).map_err(db_failed)?,
                row.try_get(1).map_err(db_failed)?,
                row.try_get(2).map_err(db_failed)?,
                row.try_get(3).map_err(db_failed)?,
            );
            // A row this version cannot read (written by another) is skipped, not fatal.
            if let Ok(event) = serde_json::from_str::<Discovery>(&body) {
                out.push(StoredEvent {
                    at: as_u64(at),
                    caller,
                    session,
                    event,
                });
            }
        }
        Ok(out)
    }

    fn expire(&self, before: u64) -> Result<u64, StoreError> {
        self.delete_where("at < $1", Some(DeleteParam::Int(as_i64(before))))
    }

    fn forget(&self, what: &Forget) -> Result<u64, StoreError> {
        match what {
            Forget::All => self.delete_where("TRUE", None),
            Forget::Name(n) => self.delete_where(
                "name = $1 OR target = $1",
                Some(DeleteParam::Text(n.clone())),
            ),
            Forget::Caller(c) => {
                self.delete_where("caller = $1", Some(DeleteParam::Text(c.clone())))
            }
        }
    }
}
