//! The default store: one SQLite file (feature `learning`), `learning.sqlite` in the state
//! directory, of mode 0600. rusqlite with SQLite bundled: the one widely kept SQLite binding,
//! and the bundled library means no system SQLite of unknown version.
//!
//! The size bound is SQLite's own: `max_page_count` caps the file, and past 80% of it the
//! oldest quarter of the events is deleted, their pages reused by the next ones (the file
//! never grows past the cap; a write that would is retried once after the deletion).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, ErrorCode};

use super::store::{EventStore, Forget, StoreError, StoredEvent};
use crate::catalog::Discovery;

/// The file of the events, in the state directory.
pub const EVENTS_FILE: &str = "learning.sqlite";
/// The default cap of the file: 64 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// SQLite's page, and the smallest cap a store takes (16 pages).
const PAGE: u64 = 4096;

/// Events in a SQLite file, at most `max_bytes` of it.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    max_pages: u64,
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("discovery events: {e}"))
}

impl SqliteStore {
    /// Opens (or makes) `dir/learning.sqlite`, the directory 0700 and the file 0600 when
    /// made here, capped at `max_bytes` (at least 64 KiB).
    pub fn open(dir: &Path, max_bytes: u64) -> Result<SqliteStore, StoreError> {
        super::files::private_dir(dir).map_err(StoreError)?;
        let path = dir.join(EVENTS_FILE);
        if !path.exists() {
            // An empty file is an empty database: made here so that its mode is 0600.
            match super::files::write_private(&path, b"") {
                Ok(()) => {}
                Err(_) if path.exists() => {}
                Err(e) => return Err(StoreError(e)),
            }
        }
        let conn = Connection::open(&path).map_err(failed)?;
        let max_pages = (max_bytes / PAGE).max(16);
        conn.execute_batch(&format!(
            "PRAGMA page_size = {PAGE};
             PRAGMA journal_mode = DELETE;
             PRAGMA synchronous = NORMAL;
             PRAGMA cache_size = -1024;
             PRAGMA secure_delete = ON;
             PRAGMA max_page_count = {max_pages};
             CREATE TABLE IF NOT EXISTS events (
                 id INTEGER PRIMARY KEY,
                 at INTEGER NOT NULL,
                 caller TEXT NOT NULL,
                 session TEXT,
                 name TEXT NOT NULL,
                 target TEXT NOT NULL,
                 body TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS events_at ON events(at);"
        ))
        .map_err(failed)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(failed)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            path,
            max_pages,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        crate::util::lock(&self.conn)
    }

    fn insert(conn: &mut Connection, events: &[StoredEvent]) -> rusqlite::Result<()> {
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO events (at, caller, session, name, target, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for e in events {
                let (name, target) = e.names();
                let body = serde_json::to_string(&e.event).unwrap_or_default();
                insert.execute(params![
                    i64::try_from(e.at).unwrap_or(i64::MAX),
                    e.caller,
                    e.session,
                    name,
                    target,
                    body
                ])?;
            }
        }
        tx.commit()
    }

    /// Deletes the oldest quarter of the events when the live pages pass 80% of the cap.
    fn trim(conn: &Connection, max_pages: u64, force: bool) -> rusqlite::Result<()> {
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        let live = u64::try_from(pages - free.min(pages)).unwrap_or(0);
        if !force && live * 5 < max_pages * 4 {
            return Ok(());
        }
        conn.execute(
            "DELETE FROM events WHERE id <= (SELECT id FROM events ORDER BY id
             LIMIT 1 OFFSET (SELECT COUNT(*) / 4 FROM events))",
            [],
        )?;
        Ok(())
    }
}

impl EventStore for SqliteStore {
    fn append(&self, events: &[StoredEvent]) -> Result<(), StoreError> {
        let mut conn = self.lock();
        Self::trim(&conn, self.max_pages, false).map_err(failed)?;
        // The cap reached within this batch: make room (the oldest quarter at a time) and
        // try again; a batch bigger than the whole cap fails once the table is empty.
        for _ in 0..16 {
            match Self::insert(&mut conn, events) {
                Err(e) if e.sqlite_error_code() == Some(ErrorCode::DiskFull) => {
                    let left: i64 = conn
                        .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
                        .map_err(failed)?;
                    if left == 0 {
                        return Err(failed(e));
                    }
                    Self::trim(&conn, self.max_pages, true).map_err(failed)?;
                }
                other => return other.map_err(failed),
            }
        }
        Err(failed("the batch does not fit in the store's cap"))
    }

    fn events(&self) -> Result<Vec<StoredEvent>, StoreError> {
        let conn = self.lock();
        let mut query = conn
            .prepare("SELECT at, caller, session, body FROM events ORDER BY id")
            .map_err(failed)?;
        let rows = query
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(failed)?;
        let mut out = Vec::new();
        for row in rows {
            let (at, caller, session, body) = row.map_err(failed)?;
            // A row this version cannot read (written by another) is skipped, not fatal.
            if let Ok(event) = serde_json::from_str::<Discovery>(&body) {
                out.push(StoredEvent {
                    at: u64::try_from(at).unwrap_or(0),
                    caller,
                    session,
                    event,
                });
            }
        }
        Ok(out)
    }

    fn expire(&self, before: u64) -> Result<u64, StoreError> {
        let conn = self.lock();
        let n = conn
            .execute(
                "DELETE FROM events WHERE at < ?1",
                params![i64::try_from(before).unwrap_or(i64::MAX)],
            )
            .map_err(failed)?;
        Ok(n as u64)
    }

    fn forget(&self, what: &Forget) -> Result<u64, StoreError> {
        let conn = self.lock();
        let n = match what {
            Forget::All => conn.execute("DELETE FROM events", []),
            Forget::Name(n) => conn.execute(
                "DELETE FROM events WHERE name = ?1 OR target = ?1",
                params![n],
            ),
            Forget::Caller(c) => conn.execute("DELETE FROM events WHERE caller = ?1", params![c]),
        }
        .map_err(failed)?;
        Ok(n as u64)
    }
}
