//! Opening the file: its lock, its pragmas, its migration, and what a previous process left.

use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};
use tokio::sync::broadcast;

use super::batch::Writes;
use super::rows::backend;
use super::schema::{migrate, next_seq};
use super::sweep::sweep;
use super::{EVENT_CAPACITY, Shared, SqliteTaskStore};
use crate::store::{Clock, StoreError, SystemClock};

/// How long the write-ahead log grows, in pages, before it is copied into the file.
pub(super) const WAL_PAGES: u32 = 16_000;

/// How long [`SqliteTaskStore::open`] waits for another process to let go of the file: a host
/// that kills its server and starts it again at once may start the new one before the old one's
/// lock is released.
pub(super) const OPEN_WAIT: Duration = Duration::from_secs(2);

impl SqliteTaskStore {
    /// Opens (or creates) the store in the file at `path`, on the system clock. Tasks that a
    /// previous process left running are failed as stopped, and ended tasks past their
    /// retention are deleted. Blocks while it opens the file.
    ///
    /// One process holds the file at a time. If another holds it, `open` waits up to 2 seconds
    /// for it to let go (a server killed and started again at once), then fails with an error
    /// that says the file is in use.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// [`open`](Self::open) on this clock.
    pub fn open_with_clock(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let in_use = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                StoreError::backend(format!(
                    "the SQLite task store {} is in use by another process (one server process per file)",
                    path.display()
                ))
            }
            _ => StoreError::backend(format!(
                "opening the SQLite task store {}: {e}",
                path.display()
            )),
        };
        let mut conn = Connection::open(&path).map_err(in_use)?;
        conn.busy_timeout(OPEN_WAIT).map_err(in_use)?;
        conn.pragma_update_and_check(None, "locking_mode", "EXCLUSIVE", |_| Ok(()))
            .map_err(in_use)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(in_use)?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(StoreError::backend(format!(
                "the SQLite task store {} cannot use a write-ahead log (journal mode {mode})",
                path.display()
            )));
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(in_use)?;
        // The log is copied into the file (a checkpoint, which syncs it) once it reaches
        // [`WAL_PAGES`], by the store itself ([`Shared::checkpoint_if_due`]), not by SQLite inside
        // the commit that reached it (a hook on the log replaces SQLite's own checkpoints).
        let log_pages = Arc::new(AtomicU32::new(0));
        let counted = log_pages.clone();
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: c_int| {
            counted.store(u32::try_from(pages).unwrap_or(0), Ordering::Relaxed);
            Ok(())
        }))
        .map_err(in_use)?;
        // Reads through a memory map of the file (no system call per page) and a larger page
        // cache than SQLite's 2 MiB default: a point read stays a few microseconds with a million
        // tasks stored.
        conn.pragma_update(None, "mmap_size", 1i64 << 30)
            .map_err(in_use)?;
        conn.pragma_update(None, "cache_size", -16_384)
            .map_err(in_use)?;
        migrate(&mut conn, &path, in_use)?;
        let next_seq = AtomicI64::new(next_seq(&conn).map_err(in_use)?);
        // The file is this process's now; nothing else waits on its lock.
        conn.busy_timeout(Duration::ZERO).map_err(in_use)?;
        // Every statement the store runs stays parsed (rusqlite keeps 16 by default).
        conn.set_prepared_statement_cache_capacity(64);
        let shared = Arc::new(Shared {
            path,
            clock,
            waiters: Mutex::default(),
            events: broadcast::channel(EVENT_CAPACITY).0,
            recent: Mutex::default(),
            queued: Mutex::default(),
            creating: Mutex::default(),
            next_seq,
            log_pages,
            #[cfg(test)]
            checkpoint_gate: Mutex::default(),
        });
        // No engine of this process runs anything yet, and no other process can: every lease
        // in the file belongs to a process that is gone.
        conn.execute("DELETE FROM leases", []).map_err(backend)?;
        let now = shared.clock.now();
        let (report, _) = sweep(&mut conn, &shared, now)?;
        if !report.failed.is_empty() {
            tracing::warn!(
                path = %shared.path.display(),
                failed = report.failed.len(),
                "tasks left running by a stopped server failed"
            );
        }
        let db = Arc::new(Mutex::new(conn));
        let writes = Writes::start(&db, &shared).map_err(|e| {
            StoreError::backend(format!(
                "starting the writer of the SQLite task store {}: {e}",
                shared.path.display()
            ))
        })?;
        Ok(SqliteTaskStore { db, shared, writes })
    }
}
