//! The SQLite task store: every task in one file, kept across restarts (feature `sqlite`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, params};
use tokio::sync::{broadcast, watch};

use super::TaskRecord;
use super::backend::Records;
use super::change::{Change, Project};
use super::columns::micros;
use super::frozen::Frozen;
use super::{Clock, ExpiryReport, NewTask, StoreError, StoreFuture, TaskEvent};
use crate::protocol::task::{Owner, TaskId, TaskView};
use batch::{Changes, Writes};
use join::Creation;
use open::WAL_PAGES;
use recent::{LetGo, RECENT_RESULT, Recent};
use rows::{LIST, Stored, backend, decode, fetch};
use sweep::sweep;

mod batch;
mod join;
mod open;
mod recent;
mod rows;
mod schema;
mod sweep;

/// How many events a [`TaskStore::subscribe`](super::TaskStore::subscribe) receiver may fall behind before it lags.
const EVENT_CAPACITY: usize = 1024;

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
///   beside the caller). Wake-ups ([`TaskStore::changed`](super::TaskStore::changed)), events and those records are in
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

impl SqliteTaskStore {
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

impl Records for SqliteTaskStore {
    /// One thread applies the writes, in the order they were queued, and `insert` queues its
    /// write when called.
    const CREATES_IN_ORDER: bool = true;

    fn time(&self) -> SystemTime {
        self.shared.clock.now()
    }

    /// Queues the creation when called: a write on the task called afterwards is applied after
    /// it.
    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        self.queue_creation(task)
    }

    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.read(id, owner))
    }

    /// A change of the task's lifecycle ([`Change::AHEAD`]) is computed beside the caller when
    /// the task was written lately ([`update_ahead`](Self::update_ahead)); the caller keeps a
    /// share of it (a tool's whole result, say) and frees it once answered, not the writer's
    /// thread (see `batch.rs`).
    async fn change<'a, C: Change, P: Project>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        change: C,
    ) -> Result<(C::Out, P::Out), StoreError> {
        let (out, task) = if C::AHEAD {
            let change = Arc::new(change);
            let kept = change.clone();
            let apply = move |record: &mut TaskRecord, now| change.apply(record, now);
            let changed = self.update_ahead(id, owner, C::VISIBLE, apply).await;
            drop(kept);
            changed?
        } else {
            let apply = move |record: &mut TaskRecord, now| change.apply_once(record, now);
            self.update(id, owner, C::VISIBLE, apply).await?
        };
        Ok((out, P::kept(&task.record, task.result.as_deref())))
    }

    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)> {
        Box::pin(async move {
            let after = after.map_or(-1, |seq| seq as i64);
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
            let last = rows.last().filter(|_| more).map(|(seq, _)| *seq as u64);
            let tasks = rows
                .into_iter()
                .map(|(_, stored)| decode(stored).map(Frozen::into_record))
                .collect::<Result<_, _>>()?;
            Ok((tasks, last))
        })
    }

    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(async move {
            let (report, let_go) = self
                .with_db(move |conn, shared| sweep(conn, shared, now))
                .await?;
            drop(let_go);
            Ok(report)
        })
    }

    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()> {
        let instance = instance.to_owned();
        Box::pin(self.write(move |conn, shared, _| {
            match duration {
                Some(duration) => conn
                    .prepare_cached(
                        "INSERT INTO leases (instance, until) VALUES (?1, ?2)
                         ON CONFLICT (instance) DO UPDATE SET until = excluded.until",
                    )
                    .map_err(backend)?
                    .execute(params![instance, micros(shared.clock.now() + duration)]),
                None => conn
                    .prepare_cached("DELETE FROM leases WHERE instance = ?1")
                    .map_err(backend)?
                    .execute([instance]),
            }
            .map_err(backend)?;
            Ok(())
        }))
    }

    fn wait<'a, P: Project>(
        &'a self,
        id: &'a TaskId,
        seen: u64,
    ) -> impl Future<Output = Result<P::Out, StoreError>> + Send + 'a {
        self.wait_past(id, seen, |found| {
            P::kept(&found.record, found.result.as_deref())
        })
    }

    fn feed(&self) -> broadcast::Receiver<TaskEvent> {
        self.shared.events.subscribe()
    }

    /// A task written lately is read in place, in the record kept after its commit, without a
    /// copy.
    fn view<'a>(
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
}

#[cfg(test)]
mod tests;
