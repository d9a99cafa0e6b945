//! The SQLite task store: every task in one file, kept across restarts (feature `sqlite`).

use std::collections::{HashMap, HashSet};
use std::ffi::c_int;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, oneshot, watch};

use super::Expiry;
use super::TaskRecord;
use super::columns::{due_column, micros, runner_column};
use super::cursor::{decode_cursor, encode_cursor};
use super::fast::FastPaths;
use super::frozen::Frozen;
use super::{
    CancelResult, Clock, DeliveryReport, ExpiryReport, NewTask, StoreError, StoreFuture,
    SystemClock, TaskEvent, TaskPage, TaskStore,
};
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};
use batch::{Changes, Job, Write, Writes};

mod batch;

/// How many events a [`TaskStore::subscribe`] receiver may fall behind before it lags.
const EVENT_CAPACITY: usize = 1024;

/// The version of the file's layout this store writes, in the file's `user_version`. Version 0
/// (every file from before there was a version) numbered tasks with `AUTOINCREMENT`, which
/// reads and writes SQLite's `sqlite_sequence` table in every insert: one more page in every
/// commit, and a fifth of the statements' work of a creation. Since version 1 the store numbers
/// them itself (see [`Shared::next_seq`]). Since version 2 records are written in their compact
/// form (see [`TaskRecord`]), about half the bytes of serde's own (a commit of a batch writes
/// fewer pages); the tables are as in version 1, and records of either form read, but an older
/// build cannot read the compact form, so it refuses the file instead.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    runner TEXT,
    due INTEGER,
    record TEXT NOT NULL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, seq);
CREATE INDEX IF NOT EXISTS tasks_by_due ON tasks (due) WHERE due IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_by_runner ON tasks (runner) WHERE runner IS NOT NULL;
CREATE TABLE IF NOT EXISTS leases (
    instance TEXT PRIMARY KEY,
    until INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
";

/// The indexes of `tasks` that [`SCHEMA`] names, dropped with the table they index when a
/// version 0 file is migrated.
const TASK_INDEXES: [&str; 3] = ["tasks_by_owner", "tasks_by_due", "tasks_by_runner"];

/// Brings the file to [`SCHEMA_VERSION`] in one transaction: creates what a new file lacks, and
/// migrates a version 0 file. A file of a later version (written by a newer mcp-tasks) is
/// refused rather than guessed at.
fn migrate(
    conn: &mut Connection,
    path: &Path,
    in_use: impl Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(&in_use)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::backend(format!(
            "the SQLite task store {} was written by a newer mcp-tasks (file format version \
             {version}; this one reads up to {SCHEMA_VERSION})",
            path.display()
        )));
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&in_use)?;
    let numbered_by_sqlite: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tasks'
                AND sql LIKE '%AUTOINCREMENT%')",
            [],
            |row| row.get(0),
        )
        .map_err(&in_use)?;
    if numbered_by_sqlite {
        tracing::info!(path = %path.display(), "migrating the SQLite task store from file format version 0");
        renumber(&tx).map_err(&in_use)?;
    } else {
        tx.execute_batch(SCHEMA).map_err(&in_use)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(&in_use)?;
    tx.commit().map_err(&in_use)
}

/// Version 0 → 1: the tasks move to a table without `AUTOINCREMENT` (SQLite cannot drop it from
/// a table in place), keeping their numbers; the highest number SQLite ever gave becomes the
/// store's floor, so that no number is given again.
fn renumber(tx: &Connection) -> rusqlite::Result<()> {
    add_result_column(tx)?;
    let given: Option<i64> = tx
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'tasks'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    tx.execute_batch("ALTER TABLE tasks RENAME TO tasks_v0")?;
    for index in TASK_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))?;
    }
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(
        "INSERT INTO tasks (seq, id, owner, runner, due, record, result)
            SELECT seq, id, owner, runner, due, record, result FROM tasks_v0 ORDER BY seq;
         DROP TABLE tasks_v0",
    )?;
    if let Some(given) = given {
        raise_floor(tx, given)?;
    }
    Ok(())
}

/// Gives a file written before results had a column of their own that column. Its ended
/// tasks keep their results in their records, where [`decode`] still finds them.
fn add_result_column(conn: &Connection) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('tasks') WHERE name = 'result')",
        [],
        |row| row.get(0),
    )?;
    if !has {
        conn.execute_batch("ALTER TABLE tasks ADD COLUMN result TEXT")?;
    }
    Ok(())
}

/// Records that creation numbers up to `seq` may have been given (to tasks since removed).
fn raise_floor(conn: &Connection, seq: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO counters (name, value) VALUES ('seq', ?1)
         ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
    )?
    .execute([seq])?;
    Ok(())
}

/// The next creation number: above every task's and above the floor.
fn next_seq(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT max(coalesce((SELECT max(seq) FROM tasks), 0),
                    coalesce((SELECT value FROM counters WHERE name = 'seq'), 0)) + 1",
        [],
        |row| row.get(0),
    )
}

/// How long the write-ahead log grows, in pages, before it is copied into the file.
const WAL_PAGES: u32 = 16_000;

/// How long [`SqliteTaskStore::open`] waits for another process to let go of the file: a host
/// that kills its server and starts it again at once may start the new one before the old one's
/// lock is released.
const OPEN_WAIT: Duration = Duration::from_secs(2);

/// A task by id.
const GET: &str = "SELECT record, result FROM tasks WHERE id = ?1";
/// A task by id, if it belongs to this owner.
const GET_OWNED: &str = "SELECT record, result FROM tasks WHERE id = ?1 AND owner = ?2";
/// One page of an owner's tasks, after a creation sequence number.
const LIST: &str =
    "SELECT seq, record, result FROM tasks WHERE owner = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3";
/// The tasks the lifetime rules may act on at ?1: due by deadline or retention, or running for
/// an instance without a live lease.
const CANDIDATES: &str = "SELECT record, result FROM tasks WHERE due <= ?1
    UNION ALL
    SELECT record, result FROM tasks WHERE runner IS NOT NULL
        AND runner NOT IN (SELECT instance FROM leases)
        AND (due IS NULL OR due > ?1)";

/// Tasks in one SQLite file: they survive restarts and crashes of the server.
///
/// - **Durable.** Every change is committed (write-ahead log, `synchronous = NORMAL`) before its
///   future resolves, so a process killed at any point (`kill -9`) loses no task that had ended
///   and no answer a client had delivered. (An operating-system crash or power loss may lose the
///   last changes; SQLite's `synchronous = FULL` would be needed against that.) The log is
///   copied into the file once it reaches 16,000 pages (64 MiB), not SQLite's 1,000: under load
///   a checkpoint, which syncs the file and holds up the commits behind it, came every few
///   hundred tasks. The store copies it after answering the writes whose commit reached the
///   bound, not inside that commit as SQLite would: they do not wait for the copy.
/// - **One process per file.** The store holds the file's lock for as long as it is open; opening
///   a file another process holds fails with an error that says so. Several server instances
///   sharing tasks need a shared store (Redis).
/// - **Nothing left running.** Each running task records the engine instance running it; when the
///   file is opened, the tasks a previous process was running are failed with
///   [`TaskRecord::RUNNER_STOPPED_MESSAGE`], and while it is open, a task whose engine's lease
///   lapsed fails the same way.
/// - **Indexed.** A task is read by its id (a unique index), `list` reads one page of one owner's
///   tasks (an index on owner and creation order), `expire` reads only the tasks that are due (an
///   index on the next time the rules act on a task) and the running tasks of lapsed leases.
/// - **Group commit.** Changes that arrive while a transaction is under way join it until it
///   commits, or share the next one (up to 256 in one transaction), and none is answered before
///   its transaction has committed; a change that fails (an unknown task, a task that has ended)
///   fails alone. Under load one commit serves many changes; a lone change costs what it would
///   on its own. A task that ends (or changes) while its creation still waits in the queue is
///   inserted as it ended, in one statement, and both callers are answered after that commit.
/// - **Off the async threads.** Writes are committed by a thread of the store's own (its
///   writer), and the connection's other uses run on Tokio's blocking thread pool; a point read
///   of one task (`get`), a few microseconds from the page cache and the file's memory map, runs
///   in place when the connection is free. The records of the tasks written lately (a task's
///   stays while the next 2,048 to 4,096 tasks are written) are kept as committed: a task
///   polled while it runs, and its result just written, are read from memory, and the next
///   change to it starts from there (a change of its lifecycle is even computed and encoded
///   beside the caller). Wake-ups ([`TaskStore::changed`]), events and those records are in
///   memory, which is complete because no other process writes the file.
/// - **Versioned.** The file's layout has a version (SQLite's `user_version`); an older file is
///   migrated when opened, in one transaction, and a file written by a newer mcp-tasks is
///   refused.
///
/// Records are stored as JSON (the serde encoding of [`TaskRecord`]), an ended task's result in a
/// column of its own as the JSON text it is answered with: written out once when the task ends,
/// copied into each answer, never parsed on the way.
pub struct SqliteTaskStore {
    db: Arc<Mutex<Connection>>,
    shared: Arc<Shared>,
    writes: Arc<Writes>,
}

impl Drop for SqliteTaskStore {
    /// Ends the writer's thread once it has answered what is queued.
    fn drop(&mut self) {
        self.writes.close();
    }
}

struct Shared {
    path: PathBuf,
    clock: Arc<dyn Clock>,
    /// Task → the version of its latest change, for `changed` waiters; only while someone waits.
    waiters: Mutex<HashMap<TaskId, watch::Sender<u64>>>,
    events: broadcast::Sender<TaskEvent>,
    /// The committed records of the tasks written lately (see [`Recent`]): a read of a task
    /// polled while it runs, or of a result just written, and the next change to it, start from
    /// here instead of reading and decoding the stored record. Updated after each commit, so it
    /// never shows a change that is not stored.
    recent: Mutex<Recent>,
    /// The records queued writes will leave if they succeed, computed beside their callers (a
    /// creation, a change computed ahead): the next change to the task is computed ahead from
    /// here, before the one before it has committed. Only a starting point: the writer's thread
    /// checks that the record a change was computed from is the one its transaction holds (the
    /// same allocation), so a write that failed or lost a race costs a recomputation, never a
    /// wrong record. Emptied as their writes commit or fail.
    queued: Mutex<HashMap<TaskId, Arc<Frozen>>>,
    /// The creations still queued that later changes of their tasks may join (see
    /// [`Creation`]).
    creating: Mutex<HashMap<TaskId, Arc<Mutex<Creation>>>>,
    /// The creation number (`seq`, the order of `list`) the next task inserted takes. Taken
    /// while holding the connection, so numbers rise in the order tasks are inserted; a number
    /// is never given twice, not even one whose task was removed: a list cursor names one, and a
    /// task created later must come after it. Seeded from the file when it is opened (above
    /// every task's, and above the `seq` counter that [`sweep`] raises when it removes tasks).
    next_seq: AtomicI64,
    /// The pages in the write-ahead log after the last commit (SQLite's log hook).
    log_pages: Arc<AtomicU32>,
    /// A checkpoint that is due waits for a message here first, for the tests.
    #[cfg(test)]
    checkpoint_gate: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

/// A creation's write holds its [`Creation`] through this: once the write is applied, or
/// dropped unapplied (the store closed, or a write before it panicked), the creation is closed
/// and forgotten, and changes that joined it and were not taken by its write are told it failed
/// instead of waiting forever.
struct Taken {
    creation: Arc<Mutex<Creation>>,
    shared: Arc<Shared>,
}

impl Drop for Taken {
    fn drop(&mut self) {
        let (id, waiting) = {
            let mut creation = lock(&self.creation);
            creation.closed = true;
            creation.taken = true;
            let id = creation.latest.record.id.clone();
            (id, std::mem::take(&mut creation.waiting))
        };
        for change in waiting {
            change.answer(Err(
                "the SQLite task store's writer stopped before the write was committed",
            ));
        }
        let mut creating = lock(&self.shared.creating);
        if creating
            .get(&id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.creation))
        {
            creating.remove(&id);
        }
    }
}

/// A creation still in the queue. A change of its task computed ahead from the record it will
/// insert joins it instead of queueing a write of its own: the creation inserts the task as the
/// change leaves it (one statement, not an insert and an update), and the change is answered
/// once the creation's transaction has committed. Waiters and subscribers still hear of each
/// version in order. A write on the task that does not join closes the creation to later ones,
/// so that changes are applied in the order they were queued. If the creation inserts nothing
/// (another task has its id), the changes that joined it are applied instead, in its
/// transaction and in the order they joined, to the task that has the id: as the writes of
/// their own they would otherwise have been.
struct Creation {
    /// Closed to joins: taken by the writer's thread, or closed by a write on the task that did
    /// not join.
    closed: bool,
    /// Taken by the writer's thread (or dropped untaken).
    taken: bool,
    /// What the creation will insert: the new task, or the last change that joined it.
    latest: Arc<Frozen>,
    /// `latest` as text, once encoded: by the caller when it first waits for the creation
    /// (unless a change joined before), by the last change that joined, else by the writer's
    /// thread. The writer's thread hands it back after the insert: it is freed with the
    /// creation by its caller, which holds the creation until answered.
    text: Option<String>,
    /// The changes that joined, in order, each with whether clients see it.
    joined: Vec<(Arc<Frozen>, bool)>,
    /// The same changes, to answer once the creation's transaction has committed (or failed),
    /// or to apply instead if the creation inserts nothing.
    waiting: Vec<Box<dyn Joined>>,
}

/// Where a change's answer comes: its output and the record it left.
type Answer<T> = oneshot::Receiver<Result<(T, Arc<Frozen>), StoreError>>;

/// A change that joined a creation (see [`Creation`]).
trait Joined: Job {
    /// The creation inserted the task as this change (or one after it) leaves it: the change is
    /// answered with the record it computed once the transaction has committed.
    fn inserted(&mut self);
}

/// A change that joined a creation: what it computed ahead, and the write that applies it to
/// the task that has the id if the creation inserts nothing.
struct JoinedChange<T, F> {
    computed: Option<(T, Arc<Frozen>)>,
    write: Write<(T, Arc<Frozen>), F>,
}

impl<T, F> Job for JoinedChange<T, F>
where
    T: Send,
    F: FnOnce(&Connection, &Shared, &mut Changes) -> Result<(T, Arc<Frozen>), StoreError> + Send,
{
    fn apply(&mut self, conn: &Connection, shared: &Shared, changes: &mut Changes) -> bool {
        self.computed = None;
        self.write.apply(conn, shared, changes)
    }

    fn answer(self: Box<Self>, commit: Result<(), &str>) {
        self.write.finish(commit);
    }
}

impl<T, F> Joined for JoinedChange<T, F>
where
    T: Send,
    F: FnOnce(&Connection, &Shared, &mut Changes) -> Result<(T, Arc<Frozen>), StoreError> + Send,
{
    fn inserted(&mut self) {
        if let Some(computed) = self.computed.take() {
            self.write.settle(Ok(computed));
        }
    }
}

/// How many records [`Shared::recent`] keeps at most.
const RECENT_KEPT: usize = 4096;

/// The records of the tasks written lately, in two generations of at most [`RECENT_KEPT`] / 2:
/// once the newer is full it becomes the older, and the older is let go of. A task stays while
/// 2,048 to 4,096 others are written after it, and never are all of them let go of at once (a
/// task polled while it runs is still found right after). What is let go of is handed back, to
/// be dropped once no lock is held: 2,048 records freed one by one would hold up every reader
/// of `recent`, and the writes waiting for their answers.
#[derive(Default)]
struct Recent {
    newer: HashMap<TaskId, Arc<Frozen>>,
    older: HashMap<TaskId, Arc<Frozen>>,
}

/// A generation of [`Recent`] let go of.
type LetGo = HashMap<TaskId, Arc<Frozen>>;

impl Recent {
    fn get(&self, id: &TaskId) -> Option<&Arc<Frozen>> {
        self.newer.get(id).or_else(|| self.older.get(id))
    }

    fn remove(&mut self, id: &TaskId) {
        self.newer.remove(id);
        self.older.remove(id);
    }

    /// Keeps `task` as its task's latest record; the generation this let go of, if any.
    #[must_use = "what is let go of is dropped by the caller, once it holds no lock"]
    fn insert(&mut self, task: Arc<Frozen>) -> Option<LetGo> {
        if let Some(kept) = self.newer.get_mut(&task.record.id) {
            *kept = task;
            return None;
        }
        self.older.remove(&task.record.id);
        let let_go = (self.newer.len() >= RECENT_KEPT / 2).then(|| {
            let newer = std::mem::replace(&mut self.newer, HashMap::with_capacity(RECENT_KEPT / 2));
            std::mem::replace(&mut self.older, newer)
        });
        self.newer.insert(task.record.id.clone(), task);
        let_go
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }
}

/// The longest result (as text) of a record [`Shared::recent`] keeps: 4,096 of them stay within
/// 256 MiB.
const RECENT_RESULT: usize = 64 * 1024;

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

    /// The file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The connection, for a test to hold (no transaction commits meanwhile) or to change the
    /// schema under the store.
    #[cfg(test)]
    pub(crate) fn connection(&self) -> Arc<Mutex<Connection>> {
        self.db.clone()
    }

    /// Runs `op` with the connection on the blocking thread pool.
    async fn with_db<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Connection, &Shared) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let db = self.db.clone();
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || op(&mut lock(&db), &shared))
            .await
            .map_err(StoreError::backend)?
    }

    /// Applies `op` in the next transaction with the writes queued beside it (group commit,
    /// see `batch.rs`), and resolves once that transaction has committed. `op` writes with at
    /// most one statement, as its last fallible step, so that a failed `op` has changed nothing.
    /// The write is queued when this is called, not when the future is first polled.
    fn write<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection, &Shared, &mut Changes) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        self.writes.write(op)
    }

    /// Loads the task, applies `change`, writes it back if its version moved, and tells waiters
    /// and subscribers once committed. `owner: None` is the engine acting; `visible: false`
    /// marks a change clients cannot see (no event).
    async fn update<T: Send + 'static>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<(T, Arc<Frozen>), StoreError> {
        self.update_from(id, owner, visible, None, change).await
    }

    /// [`update`](Self::update) for the changes of a task's lifecycle, computed and encoded
    /// beside the caller when the task was written lately (its record is kept): the one thread
    /// that applies every write then only checks that nothing changed the task meanwhile and
    /// stores the text, else applies `change` again as [`update`](Self::update) does. So
    /// `change` may run twice, and must do the same thing both times.
    async fn update_ahead<T: Send + 'static>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        mut change: impl FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<(T, Arc<Frozen>), StoreError> {
        let ahead = self
            .shared
            .latest(id)
            .filter(|base| owner.is_none_or(|owner| *owner == base.record.owner))
            .and_then(|base| {
                let mut record = base.snapshot();
                let out = change(&mut record, self.shared.clock.now()).ok()?;
                // A change that changes nothing, or fails, is left to the writer's thread.
                (record.version != base.record.version).then_some(())?;
                let task = Arc::new(Frozen::new(record));
                let text = encode(&task.record).ok()?;
                Some(Ahead {
                    base,
                    out,
                    task,
                    text,
                })
            });
        let mut change = Some(change);
        let ahead = match ahead {
            Some(ahead) => match self.shared.join(ahead, owner, visible, &mut change) {
                Ok(answer) => {
                    return answer.await.unwrap_or_else(|_| {
                        Err(StoreError::backend(
                            "the SQLite task store's writer stopped before the write was committed",
                        ))
                    });
                }
                Err(ahead) => {
                    self.shared.queue(&ahead.task);
                    Some(ahead)
                }
            },
            None => None,
        };
        let change = change.expect("a change that did not join is kept");
        self.update_from(id, owner, visible, ahead, change).await
    }

    async fn update_from<T: Send + 'static>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        mut ahead: Option<Ahead<T>>,
        change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<(T, Arc<Frozen>), StoreError> {
        let id = id.clone();
        let owner = owner.cloned();
        // Lent to the writer's thread and freed here once answered (see `batch.rs`): the text
        // encoded here, and the record it was computed from, which the change supersedes.
        let lent = ahead
            .as_mut()
            .map(|ahead| Arc::new(std::mem::take(&mut ahead.text)));
        let kept = (lent.clone(), ahead.as_ref().map(|ahead| ahead.base.clone()));
        // Changes queued after this one must not join the creation ahead of it.
        self.shared.close_creation(&id);
        let written = self
            .write(move |conn, shared, changes| {
                if let Some((ahead, text)) = ahead.zip(lent) {
                    // The task as this transaction last wrote it, else as last committed.
                    let latest = changes.latest(&id).cloned().or_else(|| shared.recent(&id));
                    if latest
                        .as_ref()
                        .is_some_and(|latest| Arc::ptr_eq(latest, &ahead.base))
                    {
                        if let Err(e) = store(conn, &ahead.task, &text) {
                            shared.unqueue(&ahead.task);
                            return Err(e);
                        }
                        changes.wrote(ahead.task.clone(), visible);
                        return Ok((ahead.out, ahead.task));
                    }
                    // Computed from a record this transaction does not hold: computed again.
                    shared.unqueue(&ahead.task);
                }
                apply_change(conn, shared, changes, &id, owner.as_ref(), visible, change)
            })
            .await;
        drop(kept);
        written
    }

    /// [`TaskStore::finish`], the task as kept: its result is not parsed back into a tree.
    async fn finish_kept(
        &self,
        id: &TaskId,
        outcome: TaskOutcome,
    ) -> Result<Arc<Frozen>, StoreError> {
        // The outcome (a tool's whole result) is freed here once answered, not by the writer's
        // thread with the change (see `batch.rs`).
        let outcome = Arc::new(outcome);
        let kept = outcome.clone();
        let change = move |record: &mut TaskRecord, now| {
            record.finish(TaskOutcome::clone(&outcome), now);
            Ok(())
        };
        let finished = self.update_ahead(id, None, true, change).await?.1;
        drop(kept);
        Ok(finished)
    }

    /// Reads one task: from the records written lately if it is one of them, else from the
    /// file. A point read is a few microseconds from SQLite's cache and the file's memory map,
    /// so it runs in place when the connection is free, without the round trip to the blocking
    /// pool; when a write holds the connection it waits there instead.
    async fn find(&self, id: &TaskId, owner: Option<&Owner>) -> Result<Option<Found>, StoreError> {
        if let Some(task) = self.shared.recent(id) {
            let owned = owner.is_none_or(|owner| *owner == task.record.owner);
            return Ok(owned.then_some(Found::Recent(task)));
        }
        let in_place = match self.db.try_lock() {
            Ok(conn) => Some(fetch(&conn, id, owner)),
            Err(_) => None,
        };
        let stored = match in_place {
            Some(stored) => stored?,
            None => {
                let id = id.clone();
                let owner = owner.cloned();
                self.with_db(move |conn, _| fetch(conn, &id, owner.as_ref()))
                    .await?
            }
        };
        // Decoded with the connection free.
        let task = stored.map(decode).transpose()?;
        Ok(task.map(|task| Found::Stored(Box::new(task))))
    }

    /// [`find`](Self::find), as a record of its own.
    async fn read(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.find(id, owner).await?.map(Found::into_record))
    }

    /// Resolves with `project` of the task once its version exceeds `seen_version`.
    async fn wait_past<T>(
        &self,
        id: &TaskId,
        seen_version: u64,
        project: impl Fn(Found) -> T,
    ) -> Result<T, StoreError> {
        loop {
            // Subscribe first, then read: a change committed after the read wakes us.
            let mut versions = lock(&self.shared.waiters)
                .entry(id.clone())
                .or_insert_with(|| watch::channel(0).0)
                .subscribe();
            let Some(found) = self.find(id, None).await? else {
                drop(versions);
                let mut waiters = lock(&self.shared.waiters);
                if waiters.get(id).is_some_and(|s| s.receiver_count() == 0) {
                    waiters.remove(id);
                }
                return Err(StoreError::NotFound);
            };
            if found.record.version > seen_version {
                return Ok(project(found));
            }
            // Ok: a newer version was committed. Err: the channel closed (the task was
            // deleted). Either way, read again.
            let _ = versions.wait_for(|version| *version > seen_version).await;
        }
    }
}

/// A task read by [`SqliteTaskStore::find`].
enum Found {
    /// One of the records written lately, shared.
    Recent(Arc<Frozen>),
    /// Read from the file.
    Stored(Box<Frozen>),
}

impl Found {
    fn into_record(self) -> TaskRecord {
        match self {
            Found::Recent(task) => task.snapshot(),
            Found::Stored(task) => task.into_record(),
        }
    }
}

impl std::ops::Deref for Found {
    type Target = Frozen;

    fn deref(&self) -> &Frozen {
        match self {
            Found::Recent(task) => task,
            Found::Stored(task) => task,
        }
    }
}

/// A task as stored: its record and its result, both JSON text.
struct Stored {
    record: String,
    result: Option<String>,
}

impl Stored {
    /// Reads the `record` and `result` columns from `at` on.
    fn from_row(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Stored> {
        Ok(Stored {
            record: row.get(at)?,
            result: row.get(at + 1)?,
        })
    }
}

/// The stored record of a task (of this owner, if given).
fn fetch(
    conn: &Connection,
    id: &TaskId,
    owner: Option<&Owner>,
) -> Result<Option<Stored>, StoreError> {
    match owner {
        Some(owner) => conn
            .prepare_cached(GET_OWNED)
            .map_err(backend)?
            .query_row([id.as_str(), owner.as_str()], |row| {
                Stored::from_row(row, 0)
            })
            .optional(),
        None => conn
            .prepare_cached(GET)
            .map_err(backend)?
            .query_row([id.as_str()], |row| Stored::from_row(row, 0))
            .optional(),
    }
    .map_err(backend)
}

impl Shared {
    /// The committed record of a task written lately, if kept (see [`Shared::recent`]).
    fn recent(&self, id: &TaskId) -> Option<Arc<Frozen>> {
        lock(&self.recent).get(id).cloned()
    }

    /// The record the next change to a task starts from when computed ahead: as its queued
    /// writes will leave it, else as last committed, if known.
    fn latest(&self, id: &TaskId) -> Option<Arc<Frozen>> {
        let queued = lock(&self.queued).get(id).cloned();
        queued.or_else(|| self.recent(id))
    }

    /// `task` will be written by a write queued now.
    fn queue(&self, task: &Arc<Frozen>) {
        lock(&self.queued).insert(task.record.id.clone(), task.clone());
    }

    /// The write of `task` committed or failed: it is no longer queued (unless a later one
    /// replaced it).
    fn unqueue(&self, task: &Arc<Frozen>) {
        let mut queued = lock(&self.queued);
        if queued
            .get(&task.record.id)
            .is_some_and(|queued| Arc::ptr_eq(queued, task))
        {
            queued.remove(&task.record.id);
        }
    }

    /// Joins a change computed ahead to its task's creation, if that is still queued and open
    /// and the change was computed from what it will insert; where the change's answer comes.
    /// Else gives the change back (and `change` stays). `change` is what applies it instead,
    /// should the creation insert nothing.
    fn join<T, F>(
        &self,
        ahead: Ahead<T>,
        owner: Option<&Owner>,
        visible: bool,
        change: &mut Option<F>,
    ) -> Result<Answer<T>, Ahead<T>>
    where
        T: Send + 'static,
        F: FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    {
        let creating = lock(&self.creating);
        let Some(creation) = creating.get(&ahead.task.record.id) else {
            return Err(ahead);
        };
        let mut creation = lock(creation);
        if creation.closed || !Arc::ptr_eq(&creation.latest, &ahead.base) {
            // Computed from something else (a race with another change): it queues a write
            // of its own, and nothing after it may join.
            creation.closed = true;
            return Err(ahead);
        }
        let change = change.take().expect("a change joins once");
        let id = ahead.task.record.id.clone();
        let owner = owner.cloned();
        let (write, answer) = Write::new(
            move |conn: &Connection, shared: &Shared, changes: &mut Changes| {
                apply_change(conn, shared, changes, &id, owner.as_ref(), visible, change)
            },
        );
        creation.latest = ahead.task.clone();
        creation.text = Some(ahead.text);
        creation.joined.push((ahead.task.clone(), visible));
        self.queue(&ahead.task);
        creation.waiting.push(Box::new(JoinedChange {
            computed: Some((ahead.out, ahead.task)),
            write,
        }));
        Ok(answer)
    }

    /// A write on the task that does not join its creation is queued: later ones may not join.
    fn close_creation(&self, id: &TaskId) {
        if let Some(creation) = lock(&self.creating).get(id) {
            lock(creation).closed = true;
        }
    }

    /// The write-ahead log has reached [`WAL_PAGES`].
    fn checkpoint_due(&self) -> bool {
        self.log_pages.load(Ordering::Relaxed) >= WAL_PAGES
    }

    /// Copies the write-ahead log into the file (a `PASSIVE` checkpoint, which syncs the log,
    /// then the file) once it holds [`WAL_PAGES`] pages. The writer calls it after it has
    /// answered the batch whose commit reached the bound, so that batch's callers do not wait
    /// for the copy (SQLite's own checkpoint runs inside that commit). The log starts over at
    /// the next commit.
    fn checkpoint_if_due(&self, conn: &Connection) {
        if !self.checkpoint_due() {
            return;
        }
        #[cfg(test)]
        if let Some(gate) = lock(&self.checkpoint_gate).take() {
            let _ = gate.recv();
        }
        match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            Ok(()) => self.log_pages.store(0, Ordering::Relaxed),
            Err(e) => tracing::warn!(
                path = %self.path.display(),
                error = %e,
                "copying the SQLite task store's log into its file failed; retried after the next commit"
            ),
        }
    }

    /// A transaction that wrote `task` has committed: keep it as the task's latest, and tell
    /// waiters and subscribers. Called with the connection locked, so that they learn of a
    /// task's versions in order. The records this lets go of (see [`Recent`]) are the caller's
    /// to drop once it has let go of the connection.
    #[must_use = "what is let go of is dropped by the caller, once it holds no lock"]
    fn committed(&self, task: Arc<Frozen>, visible: bool) -> Option<LetGo> {
        self.unqueue(&task);
        self.announce(&task, visible);
        let mut recent = lock(&self.recent);
        if task
            .result
            .as_ref()
            .is_some_and(|r| r.get().len() > RECENT_RESULT)
        {
            // Read from the file instead: what is kept stays bounded whatever tools return.
            // The version kept before goes too (this one is the latest).
            recent.remove(&task.record.id);
            return None;
        }
        recent.insert(task)
    }

    /// Tells waiters and subscribers about a change; called with the connection locked, so they
    /// learn of a task's versions in order.
    fn announce(&self, task: &Frozen, visible: bool) {
        let record = &task.record;
        {
            let mut waiters = lock(&self.waiters);
            if let Some(sender) = waiters.get(&record.id) {
                if sender.receiver_count() == 0 {
                    waiters.remove(&record.id);
                } else {
                    sender.send_replace(record.version);
                }
            }
        }
        if visible && self.events.receiver_count() > 0 {
            let _ = self
                .events
                .send(TaskEvent::Updated(Arc::new(task.snapshot())));
        }
    }

    /// Wakes the waiters of a deleted task (their channel closes) and reports the deletion.
    fn announce_removed(&self, id: TaskId, owner: Owner) {
        lock(&self.recent).remove(&id);
        lock(&self.waiters).remove(&id);
        if self.events.receiver_count() > 0 {
            let _ = self.events.send(TaskEvent::Removed { id, owner });
        }
    }
}

/// Applies the lifetime rules as of `now` in one transaction; see [`TaskStore::expire`]. With
/// the report come the records [`Shared::recent`] let go of, for the caller to drop once it has
/// let go of the connection.
fn sweep(
    conn: &mut Connection,
    shared: &Shared,
    now: SystemTime,
) -> Result<(ExpiryReport, Vec<LetGo>), StoreError> {
    let now_us = micros(now);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute("DELETE FROM leases WHERE until <= ?1", [now_us])
        .map_err(backend)?;
    let live: HashSet<String> = tx
        .prepare_cached("SELECT instance FROM leases")
        .map_err(backend)?
        .query_map([], |row| row.get(0))
        .map_err(backend)?
        .collect::<Result<_, _>>()
        .map_err(backend)?;
    let candidates: Vec<Stored> = tx
        .prepare_cached(CANDIDATES)
        .map_err(backend)?
        .query_map([now_us], |row| Stored::from_row(row, 0))
        .map_err(backend)?
        .collect::<Result<_, _>>()
        .map_err(backend)?;
    let mut failed = Vec::new();
    let mut removed = Vec::new();
    for stored in candidates {
        let mut record = decode(stored)?.into_record();
        let alive = record.runner.as_ref().is_none_or(|r| live.contains(r));
        match record.expiry(now, alive) {
            Expiry::Keep => {}
            Expiry::Remove => {
                tx.prepare_cached("DELETE FROM tasks WHERE id = ?1")
                    .map_err(backend)?
                    .execute([record.id.as_str()])
                    .map_err(backend)?;
                removed.push((record.id, record.owner));
            }
            verdict => {
                if record.apply_expiry(verdict, now) {
                    let task = Frozen::new(record);
                    write(&tx, &task)?;
                    failed.push(task);
                }
            }
        }
    }
    if !removed.is_empty() {
        // The removed tasks' numbers may have been the highest: they are not given again.
        raise_floor(&tx, shared.next_seq.load(Ordering::Relaxed) - 1).map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    shared.checkpoint_if_due(conn);
    let mut let_go = Vec::new();
    let failed = failed
        .into_iter()
        .map(|task| {
            let record = task.snapshot();
            let_go.extend(shared.committed(Arc::new(task), true));
            record
        })
        .collect();
    let mut report = ExpiryReport {
        failed,
        removed: Vec::with_capacity(removed.len()),
    };
    for (id, owner) in removed {
        report.removed.push(id.clone());
        shared.announce_removed(id, owner);
    }
    Ok((report, let_go))
}

/// Applies `change` to the task as this transaction last wrote it, else as last committed, else
/// as stored (if it belongs to `owner`, when given), and writes it back if its version moved.
fn apply_change<T>(
    conn: &Connection,
    shared: &Shared,
    changes: &mut Changes,
    id: &TaskId,
    owner: Option<&Owner>,
    visible: bool,
    change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError>,
) -> Result<(T, Arc<Frozen>), StoreError> {
    let latest = changes.latest(id).cloned().or_else(|| shared.recent(id));
    let now = shared.clock.now();
    let mut record = match latest {
        Some(task) => task.snapshot(),
        None => match fetch(conn, id, None)? {
            Some(stored) => decode(stored)?.into_record(),
            None => return Err(StoreError::NotFound),
        },
    };
    if owner.is_some_and(|owner| *owner != record.owner) {
        return Err(StoreError::NotFound);
    }
    let before = record.version;
    let out = change(&mut record, now)?;
    let task = Arc::new(Frozen::new(record));
    if task.record.version != before {
        write(conn, &task)?;
        changes.wrote(task.clone(), visible);
    }
    Ok((out, task))
}

/// Writes a changed task back, with the columns the indexes use.
fn write(conn: &Connection, task: &Frozen) -> Result<(), StoreError> {
    store(conn, task, &encode(&task.record)?)
}

/// [`write`] with the record already encoded as `text`.
fn store(conn: &Connection, task: &Frozen, text: &str) -> Result<(), StoreError> {
    let record = &task.record;
    conn.prepare_cached(
        "UPDATE tasks SET runner = ?2, due = ?3, record = ?4, result = ?5 WHERE id = ?1",
    )
    .map_err(backend)?
    .execute(params![
        record.id.as_str(),
        runner_column(record),
        due_column(record),
        text,
        task.result.as_deref().map(RawValue::get),
    ])
    .map_err(backend)?;
    Ok(())
}

/// Inserts a new task, numbered next; `Ok(0)` if a task with its id is stored already.
fn insert(
    conn: &Connection,
    shared: &Shared,
    task: &Frozen,
    text: &str,
) -> Result<usize, StoreError> {
    let record = &task.record;
    conn.prepare_cached(
        "INSERT INTO tasks (seq, id, owner, runner, due, record, result)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO NOTHING",
    )
    .map_err(backend)?
    .execute(params![
        shared.next_seq.fetch_add(1, Ordering::Relaxed),
        record.id.as_str(),
        record.owner.as_str(),
        runner_column(record),
        due_column(record),
        text,
        task.result.as_deref().map(RawValue::get),
    ])
    .map_err(backend)
}

/// Encodes what a creation will insert, beside its caller when it first waits for it: not in
/// the one thread that applies every write, and not before a quick tool's end, which joins the
/// creation with a text of its own, has had its chance to. Nothing if the writer's thread took
/// the creation already, or a change joined it (the writer's thread encodes what nobody did).
fn encode_ahead(creation: &Mutex<Creation>) {
    let latest = {
        let creation = lock(creation);
        if creation.taken || creation.text.is_some() {
            return;
        }
        creation.latest.clone()
    };
    // On an error the writer's thread encodes again, and the creation fails with it.
    let Ok(text) = encode(&latest.record) else {
        return;
    };
    let mut creation = lock(creation);
    if !creation.taken && creation.text.is_none() && Arc::ptr_eq(&creation.latest, &latest) {
        creation.text = Some(text);
    }
}

/// A change computed beside the caller ([`SqliteTaskStore::update_ahead`]) from the record
/// `base` (the one kept after its commit, or queued to be written).
struct Ahead<T> {
    base: Arc<Frozen>,
    out: T,
    task: Arc<Frozen>,
    text: String,
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    record.to_stored_text().map_err(StoreError::backend)
}

/// A stored task. A result kept in the record itself (as files written before results had a
/// column of their own keep it) is read from there.
fn decode(stored: Stored) -> Result<Frozen, StoreError> {
    let unreadable = |e| StoreError::backend(format!("a stored task record cannot be read: {e}"));
    let record = serde_json::from_str(&stored.record).map_err(unreadable)?;
    let result = stored
        .result
        .map(RawValue::from_string)
        .transpose()
        .map_err(unreadable)?;
    Ok(Frozen { record, result })
}

fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::backend(error)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the connection leaves at worst an uncommitted statement, which SQLite
    // rolls back; the waiter map stays consistent (single inserts and removes).
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl fmt::Debug for SqliteTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteTaskStore")
            .field("path", &self.shared.path)
            .field("clock", &self.shared.clock)
            .finish_non_exhaustive()
    }
}

impl TaskStore for SqliteTaskStore {
    /// Queues the creation when called: a write on the task called afterwards is applied after
    /// it.
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        // A new task has no result: its `result` column stays NULL.
        let task = Arc::new(Frozen::new(TaskRecord::new(task, self.shared.clock.now())));
        let kept = task.clone();
        let creation = Arc::new(Mutex::new(Creation {
            closed: false,
            taken: false,
            latest: task.clone(),
            text: None,
            joined: Vec::new(),
            waiting: Vec::new(),
        }));
        // A creation whose id names a task this store wrote lately, or one being created, will
        // insert nothing (its id is taken): it is not the task's latest record, and the changes
        // computed after it do not join it, so they reach the task that has the id, in order.
        // (The changes joined to a creation whose id turns out taken in the file only are
        // applied by its write to that task, in order: see [`Creation`].)
        let known = self.shared.latest(&task.record.id).is_some()
            || lock(&self.shared.creating).contains_key(&task.record.id);
        if !known {
            self.shared.queue(&task);
            lock(&self.shared.creating).insert(task.record.id.clone(), creation.clone());
        }
        let encoding = creation.clone();
        let taken = Taken {
            creation,
            shared: self.shared.clone(),
        };
        let written = self.write(move |conn, shared, changes| {
            let id = &kept.record.id;
            let (latest, text, joined, mut waiting) = {
                let mut creation = lock(&taken.creation);
                creation.closed = true;
                creation.taken = true;
                (
                    creation.latest.clone(),
                    creation.text.take(),
                    std::mem::take(&mut creation.joined),
                    std::mem::take(&mut creation.waiting),
                )
            };
            let text = text.map_or_else(|| encode(&latest.record), Ok);
            let inserted = text.and_then(|text| {
                let inserted = insert(conn, shared, &latest, &text);
                // Handed back, to be freed with the creation by its caller (see `batch.rs`).
                lock(&taken.creation).text = Some(text);
                inserted
            });
            if !matches!(inserted, Ok(1)) {
                shared.unqueue(&kept);
                for (task, _) in &joined {
                    shared.unqueue(task);
                }
                // The task the joined changes were computed for is not created: they are
                // applied instead to the task that has the id, in order, in this transaction
                // (unless a failed insert ended the transaction: then the batch fails).
                for change in &mut waiting {
                    if conn.is_autocommit() {
                        break;
                    }
                    change.apply(conn, shared, changes);
                }
                changes.answer_after_commit(waiting.into_iter().map(|c| -> Box<dyn Job> { c }));
                return match inserted {
                    Ok(_) => Err(StoreError::DuplicateId(id.clone())),
                    Err(e) => Err(e),
                };
            }
            changes.wrote(kept, true);
            for (task, visible) in joined {
                changes.wrote(task, visible);
            }
            for change in &mut waiting {
                change.inserted();
            }
            changes.answer_after_commit(waiting.into_iter().map(|c| -> Box<dyn Job> { c }));
            drop(taken);
            Ok(())
        });
        Box::pin(async move {
            encode_ahead(&encoding);
            let written = written.await;
            // The creation and its text, freed once answered.
            drop(encoding);
            written?;
            Ok(Arc::unwrap_or_clone(task).record)
        })
    }

    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.read(id, Some(owner)))
    }

    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.read(id, None))
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        Box::pin(async move {
            let after = match cursor {
                None => -1,
                Some(cursor) => decode_cursor(cursor)
                    .and_then(|seq| i64::try_from(seq).ok())
                    .ok_or(StoreError::InvalidCursor)?,
            };
            let limit = limit.max(1);
            let owner = owner.clone();
            let mut rows: Vec<(i64, Stored)> = self
                .with_db(move |conn, _| {
                    conn.prepare_cached(LIST)
                        .map_err(backend)?
                        .query_map(
                            params![
                                owner.as_str(),
                                after,
                                i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1)
                            ],
                            |row| Ok((row.get(0)?, Stored::from_row(row, 1)?)),
                        )
                        .map_err(backend)?
                        .collect::<Result<_, _>>()
                        .map_err(backend)
                })
                .await?;
            let more = rows.len() > limit;
            rows.truncate(limit);
            let next_cursor = match rows.last() {
                Some((seq, _)) if more => Some(encode_cursor(*seq as u64)),
                _ => None,
            };
            let tasks = rows
                .into_iter()
                .map(|(_, stored)| decode(stored).map(Frozen::into_record))
                .collect::<Result<_, _>>()?;
            Ok(TaskPage { tasks, next_cursor })
        })
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, now| {
                record.set_status_message(message.clone(), now);
                Ok(())
            };
            Ok(self
                .update_ahead(id, None, true, change)
                .await?
                .1
                .snapshot())
        })
    }

    fn add_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: String,
        request: InputRequest,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| record.add_input_request(key, request, now);
            Ok(self.update(id, None, true, change).await?.1.record.version)
        })
    }

    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let key = key.to_owned();
            let change = move |record: &mut TaskRecord, now| {
                record.withdraw_input_request(&key, now);
                Ok(())
            };
            Ok(self.update(id, None, true, change).await?.1.snapshot())
        })
    }

    fn deliver_responses<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, DeliveryReport> {
        Box::pin(async move {
            let change =
                |record: &mut TaskRecord, now| Ok(record.deliver_responses(responses, now));
            let (delivery, task) = self.update(id, Some(owner), true, change).await?;
            let record = &task.record;
            Ok(DeliveryReport {
                accepted: delivery.accepted,
                ignored: delivery.ignored,
                version: record.version,
                status: record.status,
            })
        })
    }

    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let key = key.to_owned();
            let change = move |record: &mut TaskRecord, _| Ok(record.take_response(&key));
            Ok(self.update(id, None, false, change).await?.0)
        })
    }

    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, _| record.add_output(name, contents);
            self.update(id, None, false, change).await?;
            Ok(())
        })
    }

    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move { Ok(self.finish_kept(id, outcome).await?.snapshot()) })
    }

    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| Ok(record.cancel(now));
            let (cancelled, task) = self.update_ahead(id, Some(owner), true, change).await?;
            let record = task.snapshot();
            Ok(if cancelled {
                CancelResult::Cancelled(record)
            } else {
                CancelResult::AlreadyTerminal(record)
            })
        })
    }

    fn now(&self) -> SystemTime {
        self.shared.clock.now()
    }

    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(async move {
            let (report, let_go) = self
                .with_db(move |conn, shared| sweep(conn, shared, now))
                .await?;
            drop(let_go);
            Ok(report)
        })
    }

    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()> {
        let instance = instance.to_owned();
        Box::pin(self.write(move |conn, shared, _| {
            let until = micros(shared.clock.now() + duration);
            conn.prepare_cached(
                "INSERT INTO leases (instance, until) VALUES (?1, ?2)
                 ON CONFLICT (instance) DO UPDATE SET until = excluded.until",
            )
            .map_err(backend)?
            .execute(params![instance, until])
            .map_err(backend)?;
            Ok(())
        }))
    }

    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()> {
        let instance = instance.to_owned();
        Box::pin(self.write(move |conn, _, _| {
            conn.prepare_cached("DELETE FROM leases WHERE instance = ?1")
                .map_err(backend)?
                .execute([instance])
                .map_err(backend)?;
            Ok(())
        }))
    }

    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord> {
        Box::pin(self.wait_past(id, seen_version, Found::into_record))
    }

    fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.shared.events.subscribe()
    }

    fn fast_paths(&self) -> Option<&dyn FastPaths> {
        Some(self)
    }
}

/// A task written lately is read in place, in the record kept after its commit: a view of it, or
/// its version and status, without a copy.
impl FastPaths for SqliteTaskStore {
    fn get_view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let found = self.find(id, Some(owner)).await?;
            Ok(found.map(|found| read(found.view())).is_some())
        })
    }

    fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(async move {
            let task = self.finish_kept(id, outcome).await?;
            Ok((task.record.version, task.record.status))
        })
    }

    fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(self.wait_past(id, seen_version, |found| {
            (found.record.version, found.record.status)
        }))
    }

    /// One thread applies the writes, in the order they were queued, and `create` queues its
    /// write when called.
    fn creates_in_order(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Era;
    use crate::protocol::task::{OutcomeView, TaskShape, TaskStatus};
    use crate::store::ManualClock;

    /// A store in a fresh file that is unlinked at once: the open connection keeps it alive.
    fn scratch(clock: Arc<dyn Clock>) -> SqliteTaskStore {
        let path = scratch_path();
        let store = SqliteTaskStore::open_with_clock(&path, clock).expect("open");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        store
    }

    fn scratch_path() -> PathBuf {
        std::env::temp_dir().join(format!(
            "mcp-tasks-sqlite-{}.db",
            TaskId::generate().as_str()
        ))
    }

    fn remove(path: &Path) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    crate::task_store_contract_tests!(scratch);

    /// A file as an earlier version of the store wrote it: `schema`, and `records` numbered by
    /// SQLite.
    fn old_file(path: &Path, schema: &str, records: &[TaskRecord]) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(schema).unwrap();
        for record in records {
            conn.execute(
                "INSERT INTO tasks (id, owner, record) VALUES (?1, ?2, ?3)",
                params![
                    record.id.as_str(),
                    record.owner.as_str(),
                    record.to_legacy_text()
                ],
            )
            .unwrap();
        }
        conn
    }

    /// The creation numbers of `tasks`, in order, read from the file.
    fn numbers(path: &Path) -> Vec<(i64, String)> {
        let conn = Connection::open(path).unwrap();
        let mut statement = conn
            .prepare("SELECT seq, id FROM tasks ORDER BY seq")
            .unwrap();
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// A file of version 0, whose tasks SQLite numbered (`AUTOINCREMENT`), is migrated when
    /// opened: its tasks keep their numbers (so list cursors handed out before stay valid), the
    /// indexes are there again, and a new task is numbered above every number SQLite gave, even
    /// that of a task since removed. Opened again, it is left as it is.
    #[tokio::test]
    async fn a_file_numbered_by_sqlite_is_migrated_and_keeps_its_numbers() {
        let path = scratch_path();
        let alice = Owner::new("alice");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let clock = ManualClock::starting_at(now);
        let tasks: Vec<TaskRecord> = (0..3)
            .map(|_| TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now))
            .collect();
        let conn = old_file(
            &path,
            "CREATE TABLE tasks (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                owner TEXT NOT NULL,
                runner TEXT,
                due INTEGER,
                record TEXT NOT NULL,
                result TEXT
            );
            CREATE INDEX tasks_by_owner ON tasks (owner, seq);
            CREATE INDEX tasks_by_due ON tasks (due) WHERE due IS NOT NULL;
            CREATE INDEX tasks_by_runner ON tasks (runner) WHERE runner IS NOT NULL;
            CREATE TABLE leases (instance TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;",
            &tasks,
        );
        // The newest is removed: SQLite gave 3, the highest left is 2.
        conn.execute("DELETE FROM tasks WHERE seq = 3", []).unwrap();
        drop(conn);
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        let page = store.list(&alice, None, 1).await.unwrap();
        assert_eq!(page.tasks, [tasks[0].clone()]);
        let next = store
            .list(&alice, page.next_cursor.as_deref(), 5)
            .await
            .unwrap();
        assert_eq!(next.tasks, [tasks[1].clone()]);
        let created = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        drop(store);
        let expected = vec![
            (1, tasks[0].id.as_str().to_owned()),
            (2, tasks[1].id.as_str().to_owned()),
            (4, created.id.as_str().to_owned()),
        ];
        assert_eq!(numbers(&path), expected);
        {
            let conn = Connection::open(&path).unwrap();
            let version: i64 = conn
                .pragma_query_value(None, "user_version", |row| row.get(0))
                .unwrap();
            assert_eq!(version, SCHEMA_VERSION);
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'tasks'",
                    [],
                    |row| row.get(0),
                )
                .unwrap();
            assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
            let indexes: Vec<String> = conn
                .prepare(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks'
                        AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name",
                )
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let mut named = TASK_INDEXES.map(str::to_owned).to_vec();
            named.sort();
            assert_eq!(indexes, named);
            let tables: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = 'tasks_v0'",
                    [],
                    |row| row.get(0),
                )
                .unwrap();
            assert_eq!(tables, 0);
        }
        // Opened again: nothing moves, and numbering goes on.
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
        let later = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        assert_eq!(store.list(&alice, None, 10).await.unwrap().tasks.len(), 4);
        drop(store);
        let mut expected = expected;
        expected.push((5, later.id.as_str().to_owned()));
        assert_eq!(numbers(&path), expected);
        remove(&path);
    }

    /// A list cursor names the last task of its page. The tasks after it removed (expired) and
    /// the file closed, a task created on reopening comes after the cursor still: its number is
    /// not one a removed task had.
    #[tokio::test]
    async fn a_cursor_past_removed_tasks_finds_the_tasks_created_after_a_restart() {
        let path = scratch_path();
        let alice = Owner::new("alice");
        let clock = ManualClock::new();
        let new = || NewTask::new(alice.clone(), Era::Modern).ttl(Some(Duration::from_secs(60)));
        let cursor = {
            let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
            let kept = store.create(new().ttl(None)).await.unwrap();
            let mut ended = Vec::new();
            for _ in 0..2 {
                ended.push(store.create(new()).await.unwrap());
            }
            let page = store.list(&alice, None, 2).await.unwrap();
            assert_eq!(page.tasks[0].id, kept.id);
            let cursor = page.next_cursor.expect("a third task");
            for task in &ended {
                store
                    .finish(&task.id, TaskOutcome::Result(serde_json::json!({})))
                    .await
                    .unwrap();
            }
            clock.advance(Duration::from_secs(61));
            let report = store.expire(clock.now()).await.unwrap();
            assert_eq!(report.removed.len(), 2, "{report:?}");
            cursor
        };
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        let created = store.create(new()).await.unwrap();
        let page = store.list(&alice, Some(&cursor), 10).await.unwrap();
        assert_eq!(page.tasks, [created]);
        drop(store);
        remove(&path);
    }

    /// A file written by a newer mcp-tasks (a later file format version) is refused, and left
    /// as it is.
    #[test]
    fn a_file_of_a_later_version_is_refused() {
        let path = scratch_path();
        drop(SqliteTaskStore::open(&path).unwrap());
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let refused = SqliteTaskStore::open(&path).expect_err("refused");
        let message = refused.to_string();
        assert!(
            message.contains("newer mcp-tasks")
                && message.contains(&format!("version {}", SCHEMA_VERSION + 1)),
            "{message}"
        );
        let version: i64 = Connection::open(&path)
            .unwrap()
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION + 1);
        remove(&path);
    }

    /// A version 1 file, whose records are in serde's own forms of times and durations: it
    /// opens at version 2, its records read as they were, and a change writes its task's record
    /// in the compact form.
    #[tokio::test]
    async fn a_version_1_file_reads_and_takes_compact_records() {
        let path = scratch_path();
        let alice = Owner::new("alice");
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
        let clock = ManualClock::starting_at(now);
        let mut ended = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
        ended.finish(TaskOutcome::Result(serde_json::json!({"content": []})), now);
        let running = TaskRecord::new(NewTask::new(alice.clone(), Era::Legacy), now);
        let conn = old_file(&path, SCHEMA, &[ended.clone(), running.clone()]);
        conn.pragma_update(None, "user_version", 1).unwrap();
        drop(conn);
        let stored = |id: &TaskId| -> String {
            Connection::open(&path)
                .unwrap()
                .query_row(
                    "SELECT record FROM tasks WHERE id = ?1",
                    [id.as_str()],
                    |row| row.get(0),
                )
                .unwrap()
        };
        assert!(stored(&ended.id).contains("secs_since_epoch"));

        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
        assert_eq!(
            store.get(&ended.id, &alice).await.unwrap(),
            Some(ended.clone())
        );
        let changed = store
            .set_status_message(&running.id, Some("halfway".into()))
            .await
            .unwrap();
        assert_eq!(
            store.get(&running.id, &alice).await.unwrap(),
            Some(changed.clone())
        );
        drop(store);

        let version: i64 = Connection::open(&path)
            .unwrap()
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let text = stored(&running.id);
        assert!(
            !text.contains("secs_since_epoch") && !text.contains("null"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), changed);
        assert!(
            stored(&ended.id).contains("secs_since_epoch"),
            "left as it was"
        );
        remove(&path);
    }

    /// A file written before results had a column of their own: its ended tasks keep their
    /// results inside their records. It opens, reads as before, and takes new results in the
    /// column.
    #[tokio::test]
    async fn a_file_from_before_the_result_column_reads_as_before() {
        let path = scratch_path();
        let alice = Owner::new("alice");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let clock = ManualClock::starting_at(now);
        let result = serde_json::json!({"content": [{"type": "text", "text": "kept \"inline\""}]});
        let mut old = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
        old.finish(TaskOutcome::Result(result.clone()), now);
        let running = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
        old_file(
            &path,
            "CREATE TABLE tasks (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                owner TEXT NOT NULL,
                runner TEXT,
                due INTEGER,
                record TEXT NOT NULL
            );",
            &[old.clone(), running.clone()],
        );
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        assert_eq!(store.get(&old.id, &alice).await.unwrap(), Some(old.clone()));
        let mut rendered = None;
        let mut read = |view: TaskView<'_>| {
            rendered = Some(view.render(TaskShape::ModernGet).to_text().get().to_owned());
        };
        assert!(store.get_view(&old.id, &alice, &mut read).await.unwrap());
        assert!(rendered.unwrap().contains(r#""text":"kept \"inline\"""#));
        let finished = store
            .finish(&running.id, TaskOutcome::Result(result.clone()))
            .await
            .unwrap();
        assert_eq!(finished.outcome, Some(TaskOutcome::Result(result.clone())));
        // Read back from memory, it is the text kept.
        let mut text_kept = false;
        let mut read = |view: TaskView<'_>| {
            text_kept = matches!(view.outcome, Some(OutcomeView::ResultText(_)));
        };
        assert!(
            store
                .get_view(&running.id, &alice, &mut read)
                .await
                .unwrap()
        );
        assert!(text_kept);
        drop(store);

        // The new result is in its column, written once, and not in the record.
        let conn = Connection::open(&path).unwrap();
        let (record, text): (String, String) = conn
            .query_row(
                "SELECT record, result FROM tasks WHERE id = ?1",
                [running.id.as_str()],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        drop(conn);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), result);
        assert!(!record.contains("inline"), "{record}");

        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
        let page = store.list(&alice, None, 10).await.unwrap();
        assert_eq!(page.tasks, vec![old, finished]);
        drop(store);
        remove(&path);
    }

    /// A task written lately is kept while 2,048 to 4,096 others are written after it: never
    /// all of them let go of at once, and never more than [`RECENT_KEPT`] kept. What is let go
    /// of is handed back whole, the oldest generation.
    #[test]
    fn recent_records_are_let_go_of_a_generation_at_a_time() {
        let now = SystemTime::now();
        let record = |n: usize| {
            let mut new = NewTask::new(Owner::new("alice"), Era::Modern);
            new.id = TaskId::new(format!("t{n}"));
            Arc::new(Frozen::new(TaskRecord::new(new, now)))
        };
        let id = |n: usize| TaskId::new(format!("t{n}"));
        let half = RECENT_KEPT / 2;
        let mut recent = Recent::default();
        let mut let_go = Vec::new();
        // One short of full, then the task watched, then one short of half of the bound after
        // it: with everything let go of once full, it would have gone at the next write.
        for n in 0..RECENT_KEPT - 1 {
            let_go.extend(recent.insert(record(n)));
        }
        let watched = RECENT_KEPT - 1;
        let_go.extend(recent.insert(record(watched)));
        for n in RECENT_KEPT..RECENT_KEPT + half - 1 {
            let_go.extend(recent.insert(record(n)));
            assert!(recent.len() <= RECENT_KEPT, "{} kept", recent.len());
        }
        assert!(recent.get(&id(watched)).is_some(), "let go of too soon");
        // What was let go of: the oldest, a generation at a time, each once.
        let gone: Vec<usize> = let_go
            .iter()
            .flat_map(|generation| generation.keys())
            .map(|id| id.as_str()[1..].parse().unwrap())
            .collect();
        let mut sorted = gone.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), gone.len(), "let go of twice");
        assert_eq!(
            sorted,
            (0..sorted.len()).collect::<Vec<_>>(),
            "not the oldest"
        );
        for n in 0..watched + half {
            assert_eq!(recent.get(&id(n)).is_some(), n >= sorted.len(), "t{n}");
        }
        // Written again while in the older generation, a task moves to the newer one: the next
        // generation let go of does not take it, and its newest version is the one kept.
        let oldest_kept = sorted.len();
        let again = record(oldest_kept);
        let_go.clear();
        let_go.extend(recent.insert(again.clone()));
        for n in RECENT_KEPT + half..RECENT_KEPT + 2 * half {
            let_go.extend(recent.insert(record(n)));
        }
        assert!(!let_go.is_empty(), "a generation was let go of");
        assert!(let_go.iter().all(|g| !g.contains_key(&id(oldest_kept))));
        assert!(Arc::ptr_eq(recent.get(&id(oldest_kept)).unwrap(), &again));
        recent.remove(&id(oldest_kept));
        assert!(recent.get(&id(oldest_kept)).is_none());
    }

    /// The records written lately are kept only with results of at most [`RECENT_RESULT`]: a
    /// task that ends with a larger one is read from the file, and the version kept while it
    /// ran goes (a later change must not start from it).
    #[tokio::test]
    async fn a_large_result_is_read_from_the_file_not_kept() {
        let store = scratch(Arc::new(SystemClock));
        let text = |len: usize| serde_json::json!({ "content": [{ "type": "text", "text": "x".repeat(len) }] });
        for (len, kept) in [(RECENT_RESULT, false), (1000, true)] {
            let new = NewTask::new(Owner::new("alice"), Era::Modern);
            let task = store.create(new).await.unwrap();
            assert!(
                store.shared.recent(&task.id).is_some(),
                "kept while it runs"
            );
            let done = store
                .finish(&task.id, TaskOutcome::Result(text(len)))
                .await
                .unwrap();
            assert_eq!(store.shared.recent(&task.id).is_some(), kept, "{len}");
            assert_eq!(store.get_unchecked(&task.id).await.unwrap(), Some(done));
        }
    }

    /// The writes whose commit brings the log to its bound are answered before the log is
    /// copied into the file (SQLite would copy it inside that commit, and they would wait for
    /// it); the copy follows, and the log starts over at the next commit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_writes_that_fill_the_log_are_answered_before_it_is_copied() {
        let path = scratch_path();
        let store = SqliteTaskStore::open(&path).expect("open");
        let (open_gate, gate) = std::sync::mpsc::channel();
        *lock(&store.shared.checkpoint_gate) = Some(gate);
        let mut created = 0;
        while !store.shared.checkpoint_due() {
            tokio::time::timeout(
                Duration::from_secs(10),
                store.create(NewTask::new(Owner::new("alice"), Era::Modern)),
            )
            .await
            .expect("answered without waiting for the copy")
            .unwrap();
            created += 1;
            assert!(created < 20_000, "the log never reached its bound");
        }
        // Answered; the copy waits at the gate.
        open_gate.send(()).unwrap();
        let copied = std::time::Instant::now();
        while store.shared.checkpoint_due() {
            assert!(
                copied.elapsed() < Duration::from_secs(10),
                "the log was not copied"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        store
            .create(NewTask::new(Owner::new("alice"), Era::Modern))
            .await
            .unwrap();
        let pages = store.shared.log_pages.load(Ordering::Relaxed);
        assert!(pages < 100, "the log did not start over: {pages} pages");
        drop(store);
        remove(&path);
    }

    /// The write-ahead log is copied into the file at [`WAL_PAGES`], not at SQLite's 1,000
    /// pages: it grows past 1,000 pages, and once it has held more than [`WAL_PAGES`] it starts
    /// over, so the file never holds much more.
    #[tokio::test]
    async fn the_log_is_copied_into_the_file_at_its_bound() {
        let path = scratch_path();
        let store = SqliteTaskStore::open(&path).expect("open");
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        let page = 4096 + 24;
        let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
        let mut largest = 0;
        // Each task alone in its transaction, a few pages of log each: 8,000 of them write the
        // log's bound twice over.
        for created in 1..=8_000 {
            store
                .create(NewTask::new(Owner::new("alice"), Era::Modern))
                .await
                .unwrap();
            if created % 100 == 0 {
                largest = largest.max(size());
            }
            if created == 1_000 {
                assert!(size() > 1_100 * page, "checkpointed at SQLite's default");
            }
        }
        drop(store);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let bound = u64::from(WAL_PAGES) * page;
        assert!(
            largest >= bound,
            "the log never reached its bound: {largest} bytes"
        );
        assert!(
            largest <= bound + 100 * page,
            "the log grew past its bound: {largest} bytes"
        );
    }

    /// The store says it creates in order, so `fast_paths_agree_with_the_generic_paths` holds it
    /// to that.
    #[test]
    fn the_store_says_it_creates_in_order() {
        let store = scratch(Arc::new(SystemClock));
        assert!((&store as &dyn TaskStore).creates_in_order());
    }

    #[tokio::test]
    async fn fast_paths_agree_with_the_generic_paths() {
        crate::store::fast::checks::all(|| Arc::new(scratch(Arc::new(SystemClock)))).await;
    }

    /// Closing and reopening the file keeps every task as it was, except that a task that was
    /// running (under an engine) fails as stopped; list cursors stay valid.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reopening_keeps_tasks_and_fails_the_ones_left_running() {
        let path = scratch_path();
        let clock = ManualClock::new();
        let alice = Owner::new("alice");
        let new = || {
            NewTask::new(alice.clone(), Era::Modern)
                .ttl(Some(Duration::from_secs(60)))
                .runner("engine-1")
        };
        let (done, running, asked, page, answered) = {
            let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
            store
                .renew_lease("engine-1", Duration::from_secs(30))
                .await
                .unwrap();
            let done = store.create(new()).await.unwrap();
            let done = store
                .finish(
                    &done.id,
                    TaskOutcome::Result(serde_json::json!({"content": []})),
                )
                .await
                .unwrap();
            let running = store.create(new()).await.unwrap();
            let asked = store.create(new()).await.unwrap();
            store
                .add_input_request(
                    &asked.id,
                    "k".into(),
                    InputRequest::new("elicitation/create", serde_json::json!({})),
                )
                .await
                .unwrap();
            let mut answer = Map::new();
            answer.insert("k".into(), serde_json::json!({"action": "accept"}));
            store
                .deliver_responses(&asked.id, &alice, answer)
                .await
                .unwrap();
            let page = store.list(&alice, None, 1).await.unwrap();
            // A task no engine runs, answered: the answer is committed with the delivery.
            let unowned = store
                .create(NewTask::new(alice.clone(), Era::Modern))
                .await
                .unwrap();
            store
                .add_input_request(
                    &unowned.id,
                    "q".into(),
                    InputRequest::new("elicitation/create", serde_json::json!({})),
                )
                .await
                .unwrap();
            let mut answer = Map::new();
            answer.insert("q".into(), serde_json::json!({"action": "accept"}));
            store
                .deliver_responses(&unowned.id, &alice, answer)
                .await
                .unwrap();
            let answered = store.get_unchecked(&unowned.id).await.unwrap().unwrap();
            (done, running, asked, page, answered)
        };
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        assert_eq!(store.get(&done.id, &alice).await.unwrap(), Some(done));
        for id in [&running.id, &asked.id] {
            let task = store.get(id, &alice).await.unwrap().unwrap();
            assert_eq!(task.status, TaskStatus::Failed);
            assert_eq!(
                task.status_message.as_deref(),
                Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
            );
        }
        let kept = store.get(&answered.id, &alice).await.unwrap().unwrap();
        assert_eq!(kept, answered, "the delivered answer survived");
        assert_eq!(
            kept.input_responses["q"],
            serde_json::json!({"action": "accept"})
        );
        let next = store
            .list(&alice, page.next_cursor.as_deref(), 10)
            .await
            .unwrap();
        assert_eq!(next.tasks.len(), 3);
        assert_eq!(next.tasks[0].id, running.id);
        assert_eq!(
            store
                .get(&TaskId::new("never-created"), &alice)
                .await
                .unwrap(),
            None
        );
        drop(store);
        remove(&path);
    }

    /// Every query a client's request or a sweep runs finds its rows through an index: none reads
    /// the whole table, so their cost does not grow with the number of stored tasks.
    #[test]
    fn every_query_uses_an_index() {
        let store = scratch(Arc::new(ManualClock::new()));
        let conn = lock(&store.db);
        for query in [GET, GET_OWNED, LIST, CANDIDATES] {
            let mut explain = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
                .unwrap();
            let unbound = std::iter::repeat_n(rusqlite::types::Null, explain.parameter_count());
            let plan: Vec<String> = explain
                .query_map(rusqlite::params_from_iter(unbound), |row| {
                    row.get::<_, String>(3)
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for step in &plan {
                let full_scan = step.starts_with("SCAN tasks") && !step.contains(" INDEX ");
                assert!(!full_scan, "{query}\nreads the whole table: {plan:?}");
            }
            assert!(
                plan.iter().any(|step| step.contains("INDEX")),
                "{query}\nuses no index: {plan:?}"
            );
        }
    }

    /// Counts the `UPDATE`s of the tasks table from now on, in a table of its own.
    fn count_updates(conn: &Connection) {
        conn.execute_batch(
            "CREATE TABLE updates (n INTEGER);
             CREATE TRIGGER counted AFTER UPDATE ON tasks BEGIN INSERT INTO updates VALUES (1); END",
        )
        .unwrap();
    }

    fn updates(store: &SqliteTaskStore) -> i64 {
        lock(&store.db)
            .query_row("SELECT count(*) FROM updates", [], |row| row.get(0))
            .unwrap()
    }

    /// A task's end computed while its creation is still queued joins the creation: the task is
    /// inserted ended, with no update, both callers are answered once it has committed, and
    /// subscribers hear of both versions in order. A change queued between them keeps the end
    /// out (it is applied after that change), and an end that joined a creation that inserts
    /// nothing (its id taken) is applied to the task that has the id.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn a_change_computed_while_its_creation_is_queued_joins_it() {
        let path = scratch_path();
        let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
        let alice = Owner::new("alice");
        let existing = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        count_updates(&lock(&store.db));
        let mut events = store.subscribe();
        let end = || TaskOutcome::Result(serde_json::json!({"content": []}));
        let held = lock(&store.db);
        let create = |new: NewTask| {
            let store = store.clone();
            tokio::spawn(async move { store.create(new).await })
        };
        let finish = |id: TaskId| {
            let store = store.clone();
            tokio::spawn(async move { store.finish(&id, end()).await })
        };
        // Joins.
        let joined_new = NewTask::new(alice.clone(), Era::Modern);
        let joined_id = joined_new.id.clone();
        let joined_create = create(joined_new);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let joined_end = finish(joined_id.clone());
        // Kept out by a change queued between.
        let apart_new = NewTask::new(alice.clone(), Era::Modern);
        let apart_id = apart_new.id.clone();
        let apart_create = create(apart_new);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let asked = {
            let (store, id) = (store.clone(), apart_id.clone());
            let ask = InputRequest::new("elicitation/create", serde_json::json!({}));
            tokio::spawn(async move { store.add_input_request(&id, "k".into(), ask).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let apart_end = finish(apart_id.clone());
        // Joins a creation that fails (a duplicate id).
        let failing_create =
            create(NewTask::new(alice.clone(), Era::Modern).id(existing.id.clone()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let failing_end = finish(existing.id.clone());
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(held);

        let created = joined_create.await.unwrap().unwrap();
        let ended = joined_end.await.unwrap().unwrap();
        assert_eq!(created.status, TaskStatus::Working);
        assert_eq!(ended.status, TaskStatus::Completed);
        assert_eq!(ended.version, created.version + 1);
        let stored = store.get(&joined_id, &alice).await.unwrap().unwrap();
        assert_eq!(
            (stored.status, stored.version),
            (TaskStatus::Completed, ended.version)
        );

        let apart = apart_create.await.unwrap().unwrap();
        assert_eq!(asked.await.unwrap().unwrap(), apart.version + 1);
        let apart_ended = apart_end.await.unwrap().unwrap();
        assert_eq!(apart_ended.version, apart.version + 2);

        assert!(matches!(
            failing_create.await.unwrap(),
            Err(StoreError::DuplicateId(_))
        ));
        // The end joined a creation that inserted nothing: it is for the task that has the id.
        let existing_end = failing_end.await.unwrap().unwrap();
        assert_eq!(existing_end.status, TaskStatus::Completed);
        let ended = store.get(&existing.id, &alice).await.unwrap().unwrap();
        assert_eq!((ended.status, ended.version), (TaskStatus::Completed, 2));

        // The joined task was inserted ended; the other had its input request and its end
        // written as updates, and the task that had the taken id its end.
        assert_eq!(updates(&store), 3);
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let TaskEvent::Updated(record) = event
                && record.id == joined_id
            {
                seen.push((record.version, record.status));
            }
        }
        assert_eq!(
            seen,
            [
                (created.version, TaskStatus::Working),
                (ended.version, TaskStatus::Completed)
            ]
        );
        // What was answered is what the file holds.
        drop(store);
        let reopened = SqliteTaskStore::open(&path).unwrap();
        let stored = reopened.get(&joined_id, &alice).await.unwrap().unwrap();
        assert_eq!(
            (stored.status, stored.version),
            (TaskStatus::Completed, ended.version)
        );
        drop(reopened);
        remove(&path);
    }

    /// Waits until `done` holds (5 s at most): what a test waits for, not a guess of how long
    /// it takes on a loaded machine.
    async fn eventually(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Waits until the writer has taken every queued write (and waits for the connection, when a
    /// test holds it).
    async fn taken_by_the_writer(store: &SqliteTaskStore) {
        eventually("the writer takes the writes", || {
            store.writes.waiting() == 0
        })
        .await;
    }

    /// A change that joined a creation whose write is never applied (a write before it in the
    /// batch panicked) is told so, instead of waiting forever; the store goes on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn a_change_joined_to_a_creation_never_written_is_answered() {
        let store = Arc::new(scratch(Arc::new(SystemClock)));
        let alice = Owner::new("alice");
        let held = lock(&store.db);
        // The writer takes this one alone and waits for the connection; the writes queued
        // meanwhile join its transaction once it has applied it.
        let first = store.write(|_, _, _| Ok(()));
        taken_by_the_writer(&store).await;
        let panicking = store.write(|_, _, _| -> Result<(), StoreError> {
            panic!("a write that panics (on purpose)")
        });
        let new = NewTask::new(alice.clone(), Era::Modern);
        let id = new.id.clone();
        let creating = {
            let store = store.clone();
            tokio::spawn(async move { store.create(new).await })
        };
        eventually("the creation is queued", || {
            lock(&store.shared.creating).contains_key(&id)
        })
        .await;
        let finishing = {
            let (store, id) = (store.clone(), id.clone());
            let done = TaskOutcome::Result(serde_json::json!({"content": []}));
            tokio::spawn(async move { store.finish(&id, done).await })
        };
        eventually("the end joins the creation", || {
            lock(&store.shared.creating)
                .get(&id)
                .is_some_and(|creation| !lock(creation).waiting.is_empty())
        })
        .await;
        drop(held);
        let within = Duration::from_secs(5);
        assert!(first.await.is_err(), "its transaction failed");
        assert!(panicking.await.is_err());
        let created = tokio::time::timeout(within, creating)
            .await
            .expect("answered");
        assert!(created.unwrap().is_err());
        let finished = tokio::time::timeout(within, finishing)
            .await
            .expect("the joined change is answered");
        assert!(finished.unwrap().is_err());
        assert!(lock(&store.shared.creating).is_empty());
        // The store goes on.
        let task = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        assert!(store.get(&task.id, &alice).await.unwrap().is_some());
        assert!(store.get(&id, &alice).await.unwrap().is_none());
    }

    /// The changes that joined a creation whose id turns out taken in the file only (the store
    /// has not written that task lately, so the creation was joinable) are applied by the
    /// creation's write to the task that has the id: in the order they joined, in the same
    /// transaction, each as a write of its own would be (a client's change checks that task's
    /// owner). They used to be told "not found" and retried each on its own, concurrently, so
    /// that the later one could land first.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn changes_joined_to_a_creation_whose_id_is_taken_keep_their_order() {
        let path = scratch_path();
        let (alice, bob) = (Owner::new("alice"), Owner::new("bob"));
        let old = {
            let store = SqliteTaskStore::open(&path).unwrap();
            store
                .create(NewTask::new(bob.clone(), Era::Modern))
                .await
                .unwrap()
        };
        // Reopened: bob's task is in the file only.
        let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
        let mut events = store.subscribe();
        let commits = || store.writes.commits.load(Ordering::Relaxed);
        let before = commits();
        let id = old.id.clone();
        let joined = |n: usize| {
            let store = store.clone();
            let id = id.clone();
            move || {
                lock(&store.shared.creating)
                    .get(&id)
                    .is_some_and(|creation| lock(creation).waiting.len() == n)
            }
        };
        let held = lock(&store.db);
        let creating = {
            let (store, new) = (
                store.clone(),
                NewTask::new(alice.clone(), Era::Modern).id(id.clone()),
            );
            tokio::spawn(async move { store.create(new).await })
        };
        eventually("the creation is queued", || {
            lock(&store.shared.creating).contains_key(&id)
        })
        .await;
        let message = |text: &str| {
            let (store, id, text) = (store.clone(), id.clone(), text.to_owned());
            tokio::spawn(async move { store.set_status_message(&id, Some(text)).await })
        };
        let first = message("first");
        eventually("the first message joins the creation", joined(1)).await;
        let second = message("second");
        eventually("the second message joins it", joined(2)).await;
        let cancelling = {
            let (store, id, alice) = (store.clone(), id.clone(), alice.clone());
            tokio::spawn(async move { store.cancel(&id, &alice).await })
        };
        eventually("alice's cancel joins it", joined(3)).await;
        drop(held);

        assert!(matches!(
            creating.await.unwrap(),
            Err(StoreError::DuplicateId(taken)) if taken == id
        ));
        let first = first.await.unwrap().unwrap();
        let second = second.await.unwrap().unwrap();
        assert_eq!(first.owner, bob);
        assert_eq!(
            (first.version, first.status_message.as_deref()),
            (old.version + 1, Some("first"))
        );
        assert_eq!(
            (second.version, second.status_message.as_deref()),
            (old.version + 2, Some("second"))
        );
        // Alice's cancel is for bob's task: not found, as on its own.
        assert!(matches!(
            cancelling.await.unwrap(),
            Err(StoreError::NotFound)
        ));
        // One transaction: the failed creation and the changes applied instead.
        assert_eq!(commits(), before + 1);
        let stored = store.get(&id, &bob).await.unwrap().unwrap();
        assert_eq!(
            (
                stored.status,
                stored.version,
                stored.status_message.as_deref()
            ),
            (TaskStatus::Working, old.version + 2, Some("second"))
        );
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let TaskEvent::Updated(record) = event {
                seen.push((record.owner.clone(), record.version));
            }
        }
        assert_eq!(
            seen,
            [
                (bob.clone(), old.version + 1),
                (bob.clone(), old.version + 2)
            ]
        );
        drop(store);
        remove(&path);
    }

    /// What a creation inserts is encoded once: beside its caller when it first waits (unless
    /// a change joined before, whose text is the one inserted), else by the writer's thread. A
    /// creation whose future is never polled is written all the same.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn a_creation_is_encoded_once_by_whoever_comes_first() {
        let store = Arc::new(scratch(Arc::new(SystemClock)));
        let alice = Owner::new("alice");
        let creation = |new: &NewTask| lock(&store.shared.creating).get(&new.id).cloned().unwrap();
        let text = |creation: &Mutex<Creation>| lock(creation).text.clone();

        let held = lock(&store.db);
        // Waited for: encoded by the caller.
        let waited = NewTask::new(alice.clone(), Era::Modern);
        let waited_id = waited.id.clone();
        let mut waited_future = store.create(waited.clone());
        let waited_creation = creation(&waited);
        assert_eq!(text(&waited_creation), None, "not encoded when queued");
        let once = Duration::from_millis(1);
        assert!(
            tokio::time::timeout(once, &mut waited_future)
                .await
                .is_err()
        );
        let own = text(&waited_creation).unwrap();
        let own_at = lock(&waited_creation)
            .text
            .as_ref()
            .map(|text| text.as_ptr());
        assert_eq!(
            serde_json::from_str::<TaskRecord>(&own).unwrap().version,
            lock(&waited_creation).latest.record.version
        );
        // An end joined first: its text is the one inserted, and the caller encodes nothing.
        let ended = NewTask::new(alice.clone(), Era::Modern);
        let ended_id = ended.id.clone();
        let ended_future = store.create(ended.clone());
        let ended_creation = creation(&ended);
        let finishing = {
            let (store, id) = (store.clone(), ended_id.clone());
            let done = TaskOutcome::Result(serde_json::json!({"content": []}));
            tokio::spawn(async move { store.finish(&id, done).await })
        };
        eventually("the end joins", || {
            !lock(&ended_creation).waiting.is_empty()
        })
        .await;
        // The same text, not one encoded again.
        let joined_text = || {
            lock(&ended_creation)
                .text
                .as_ref()
                .map(|text| text.as_ptr())
        };
        let before = joined_text();
        encode_ahead(&ended_creation);
        assert!(before.is_some());
        assert_eq!(joined_text(), before, "kept the end's text");
        // Never polled: the writer's thread encodes it.
        let unpolled = NewTask::new(alice.clone(), Era::Modern);
        let unpolled_id = unpolled.id.clone();
        let unpolled_future = store.create(unpolled.clone());
        assert_eq!(text(&creation(&unpolled)), None);
        drop(held);

        assert_eq!(waited_future.await.unwrap().id, waited_id);
        assert_eq!(ended_future.await.unwrap().id, ended_id);
        assert_eq!(
            finishing.await.unwrap().unwrap().status,
            TaskStatus::Completed
        );
        // Taken by the writer's thread: a caller that waits only now encodes nothing. The text
        // inserted, the caller's, was handed back to it, to be freed by it.
        encode_ahead(&waited_creation);
        assert!(lock(&waited_creation).taken);
        assert_eq!(text(&waited_creation), Some(own));
        assert_eq!(
            lock(&waited_creation)
                .text
                .as_ref()
                .map(|text| text.as_ptr()),
            own_at
        );
        drop(unpolled_future);
        eventually("the unpolled creation is written", || {
            lock(&store.shared.creating).is_empty()
        })
        .await;
        // Read from the file, not from what the store keeps: each was stored as encoded.
        *lock(&store.shared.recent) = Recent::default();
        let stored = |id: TaskId| {
            let store = store.clone();
            let alice = alice.clone();
            async move { store.get(&id, &alice).await.unwrap().unwrap() }
        };
        assert_eq!(stored(waited_id).await.status, TaskStatus::Working);
        assert_eq!(stored(ended_id).await.status, TaskStatus::Completed);
        assert_eq!(stored(unpolled_id).await.status, TaskStatus::Working);
    }

    /// A write that panics fails its transaction as an error would: what it wrote is rolled
    /// back, and a write queued while the writer waited is applied and answered as usual (it
    /// used to be dropped when it was queued while the writer unwound).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn a_write_queued_after_a_panicking_batch_is_applied() {
        let store = Arc::new(scratch(Arc::new(SystemClock)));
        let alice = Owner::new("alice");
        let held = lock(&store.db);
        let panicking = store.write(|conn, _, _| -> Result<(), StoreError> {
            conn.execute(
                "INSERT INTO leases (instance, until) VALUES ('ghost', 1)",
                [],
            )
            .map_err(backend)?;
            panic!("a write that panics (on purpose)")
        });
        // The writer has taken it and waits for the connection.
        taken_by_the_writer(&store).await;
        let after = {
            let store = store.clone();
            let new = NewTask::new(alice.clone(), Era::Modern);
            tokio::spawn(async move { store.create(new).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(held);
        assert!(panicking.await.is_err());
        let after = tokio::time::timeout(Duration::from_secs(5), after)
            .await
            .expect("answered")
            .unwrap()
            .expect("the write after the batch is applied");
        assert!(store.get(&after.id, &alice).await.unwrap().is_some());
        let ghosts: i64 = lock(&store.db)
            .query_row(
                "SELECT count(*) FROM leases WHERE instance = 'ghost'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(ghosts, 0, "the panicking write's statement is rolled back");
    }

    /// The writer is a thread of the store's own, not a task of a Tokio runtime: a write commits
    /// with no runtime about (its answer awaited on a runtime of its own, started after the write
    /// was queued). Dropping the store ends the thread.
    #[test]
    fn the_writer_is_the_stores_own_thread_and_ends_with_it() {
        let store = scratch(Arc::new(SystemClock));
        let writes = Arc::downgrade(&store.writes);
        let wrote = store.write(|_, _, _| Ok(std::thread::current().name().map(str::to_owned)));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let on =
            runtime.block_on(async { tokio::time::timeout(Duration::from_secs(5), wrote).await });
        let on = on.expect("committed without a runtime").expect("committed");
        assert_eq!(on.as_deref(), Some("sqlite-writer"));
        drop(store);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while writes.strong_count() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer still runs after its store was dropped"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A write queued while a transaction applies its writes joins that transaction, after
    /// them, and is answered after the same commit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_queued_while_a_transaction_applies_joins_it() {
        use std::sync::atomic::Ordering;
        let store = scratch(Arc::new(SystemClock));
        let order = Arc::new(Mutex::new(Vec::new()));
        let late = Arc::new(Mutex::new(None));
        let commits = store.writes.commits.load(Ordering::Relaxed);
        let first = {
            let writes = store.writes.clone();
            let (order, late) = (order.clone(), late.clone());
            store.write(move |_, _, _| {
                lock(&order).push("first");
                // Queued while this transaction applies its writes.
                let order = order.clone();
                let second = writes.write(move |_, _, _| {
                    lock(&order).push("second");
                    Ok(())
                });
                *lock(&late) = Some(second);
                Ok(())
            })
        };
        first.await.unwrap();
        let second = lock(&late).take().expect("queued by the first write");
        second.await.unwrap();
        assert_eq!(*lock(&order), ["first", "second"]);
        assert_eq!(store.writes.commits.load(Ordering::Relaxed) - commits, 1);
    }

    /// A change computed ahead from a queued change that then fails is computed again from what
    /// the transaction holds: a change queued between them, from the same version, is not lost,
    /// and the failed one is not written after all.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn a_change_computed_from_a_failed_queued_one_starts_again() {
        let path = scratch_path();
        let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
        let alice = Owner::new("alice");
        let task = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let held = lock(&store.db);
        // Any write of the message "refused" fails, alone.
        held.execute_batch(
            "CREATE TRIGGER refuse BEFORE UPDATE ON tasks
             WHEN NEW.record LIKE '%refused%' BEGIN SELECT RAISE(ABORT, 'refused'); END",
        )
        .unwrap();
        let spawn_write = |write: fn(Arc<SqliteTaskStore>, TaskId) -> StoreFuture<'static, u64>| {
            let handle = tokio::spawn(write(store.clone(), task.id.clone()));
            async move { handle.await.unwrap() }
        };
        // In this order: a message computed ahead (version 2), a plain change (version 2, from
        // the stored version), and the task's end computed ahead from the message.
        let message = spawn_write(|store, id| {
            Box::pin(async move {
                let record = store
                    .set_status_message(&id, Some("refused".into()))
                    .await?;
                Ok(record.version)
            })
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let asked = spawn_write(|store, id| {
            Box::pin(async move {
                let ask = InputRequest::new("elicitation/create", serde_json::json!({}));
                store.add_input_request(&id, "k".into(), ask).await
            })
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let finished = spawn_write(|store, id| {
            Box::pin(async move {
                let outcome = TaskOutcome::Result(serde_json::json!({"content": []}));
                Ok(store.finish(&id, outcome).await?.version)
            })
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(held);
        assert!(message.await.is_err(), "the trigger refuses the message");
        assert_eq!(asked.await.unwrap(), task.version + 1);
        assert_eq!(finished.await.unwrap(), task.version + 2);
        let stored = store.get(&task.id, &alice).await.unwrap().unwrap();
        assert_eq!(stored.status, TaskStatus::Completed);
        assert_eq!(stored.status_message, None, "{stored:?}");
        assert_eq!(stored.version, task.version + 2);
        drop(store);
        let stored = SqliteTaskStore::open(&path)
            .unwrap()
            .get(&task.id, &alice)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.status_message, None, "{stored:?}");
        assert_eq!(stored.version, task.version + 2);
        remove(&path);
    }

    /// Writes that arrive while the connection is busy share one transaction, and each gets its
    /// own answer: a duplicate id, an unknown task and someone else's task fail alone, the
    /// others are kept; waiters hear of the changes, and a change to a running task made in
    /// the same transaction as its creation starts from it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
    )]
    async fn writes_queued_together_share_a_transaction_and_fail_alone() {
        use std::sync::atomic::Ordering;
        let path = scratch_path();
        let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
        let alice = Owner::new("alice");
        let taken = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let commits = store.writes.commits.load(Ordering::Relaxed);
        // Hold the connection: every write below queues behind it.
        let held = lock(&store.db);
        let mut writes = tokio::task::JoinSet::new();
        for i in 0..100 {
            let (store, alice) = (store.clone(), alice.clone());
            let id = TaskId::new(format!("batched-{i}"));
            writes.spawn(async move {
                let created = store.create(NewTask::new(alice, Era::Modern).id(id)).await;
                (i, created.map(|record| record.id))
            });
        }
        let duplicate = {
            let store = store.clone();
            let new = NewTask::new(alice.clone(), Era::Modern).id(taken.id.clone());
            tokio::spawn(async move { store.create(new).await })
        };
        let unknown = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .set_status_message(&TaskId::new("never-created"), Some("x".into()))
                    .await
            })
        };
        let foreign = {
            let store = store.clone();
            let id = taken.id.clone();
            tokio::spawn(async move { store.cancel(&id, &Owner::new("mallory")).await })
        };
        // Two changes computed ahead from the same version of one task, queued in this order:
        // the second must start again from the first's record, not overwrite it.
        let ahead = store
            .get(&taken.id, &alice)
            .await
            .unwrap()
            .expect("read from the records written lately while the connection is held");
        let message = {
            let store = store.clone();
            let id = taken.id.clone();
            tokio::spawn(async move { store.set_status_message(&id, Some("a".into())).await })
        };
        // The message is computed (and its write queued, in the same poll) before the end is:
        // a fixed sleep was not always enough on a loaded machine.
        eventually("the message is queued", || {
            store
                .shared
                .latest(&taken.id)
                .is_some_and(|task| task.record.version > ahead.version)
        })
        .await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let finished = {
            let store = store.clone();
            let id = taken.id.clone();
            let result = TaskOutcome::Result(serde_json::json!({"content": []}));
            tokio::spawn(async move { store.finish(&id, result).await })
        };
        // Everything is queued (or about to be) while the writer waits for the connection.
        tokio::time::sleep(Duration::from_millis(200)).await;
        drop(held);
        message.await.unwrap().unwrap();
        let finished = finished.await.unwrap().unwrap();
        assert_eq!(finished.status, TaskStatus::Completed);
        assert_eq!(
            finished.status_message.as_deref(),
            Some("a"),
            "{finished:?}"
        );
        assert_eq!(finished.version, ahead.version + 2);
        let mut ids = Vec::new();
        while let Some(joined) = writes.join_next().await {
            let (i, created) = joined.unwrap();
            let id = created.unwrap_or_else(|e| panic!("create {i}: {e}"));
            ids.push(id);
        }
        assert!(matches!(
            duplicate.await.unwrap(),
            Err(StoreError::DuplicateId(_))
        ));
        assert!(matches!(unknown.await.unwrap(), Err(StoreError::NotFound)));
        assert!(matches!(foreign.await.unwrap(), Err(StoreError::NotFound)));
        let commits = store.writes.commits.load(Ordering::Relaxed) - commits;
        assert!(
            commits <= 2,
            "105 writes queued together took {commits} transactions"
        );
        for id in &ids {
            let record = store.get(id, &alice).await.unwrap().expect("kept");
            assert_eq!(record.status, TaskStatus::Working);
        }
        // A change that starts from the kept record, then the file read afresh: what was
        // answered is what is stored.
        let changed = store
            .set_status_message(&ids[0], Some("after".into()))
            .await
            .unwrap();
        assert_eq!(changed.version, 2);
        drop(store);
        let store = SqliteTaskStore::open(&path).unwrap();
        for id in &ids {
            store.get(id, &alice).await.unwrap().expect("kept");
        }
        let reread = store.get(&ids[0], &alice).await.unwrap().unwrap();
        assert_eq!(reread.status_message.as_deref(), Some("after"));
        assert_eq!(reread.version, 2);
        drop(store);
        remove(&path);
    }

    /// A second store on a file another one holds is refused once the open's wait is over,
    /// with an error that says why.
    #[test]
    fn a_file_in_use_is_refused() {
        let path = scratch_path();
        let first = SqliteTaskStore::open(&path).unwrap();
        let started = std::time::Instant::now();
        let second = SqliteTaskStore::open(&path).unwrap_err();
        assert!(
            second.to_string().contains("in use by another process"),
            "{second}"
        );
        let waited = started.elapsed();
        assert!(
            waited >= OPEN_WAIT - Duration::from_millis(100) && waited < OPEN_WAIT * 3,
            "{waited:?}"
        );
        drop(first);
        SqliteTaskStore::open(&path).expect("free again once the first store is closed");
        remove(&path);
    }

    /// A store opened while another still holds the file gets it once the other lets go
    /// within the open's wait: a server started again while the killed one is still exiting.
    #[test]
    fn a_file_let_go_of_during_the_open_is_taken() {
        let path = scratch_path();
        let first = SqliteTaskStore::open(&path).unwrap();
        let holder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let started = std::time::Instant::now();
        let second = SqliteTaskStore::open(&path).expect("the file once the first lets go");
        assert!(started.elapsed() >= Duration::from_millis(250));
        holder.join().unwrap();
        drop(second);
        remove(&path);
    }
}
