//! Group commit: the writes that arrive while a transaction commits share the next one.
//!
//! A write is queued with the operation to apply and a channel for its answer. Each store has a
//! writer, a thread of its own, which whoever queues the first write of an idle store wakes; the
//! writer takes every queued write (up to [`MAX_BATCH`]), applies them in one transaction, takes
//! and applies the writes queued meanwhile (up to [`MAX_BATCH`] in all), commits, and only then
//! tells waiters and subscribers and answers each write; then it takes what queued during the
//! commit, until the queue is empty, and sleeps. So under load one commit (and one wake-up)
//! serves many writes, and a lone write costs about what it did on its own. Nothing is answered
//! before its transaction has committed.
//!
//! The writer is the same thread every time, not the blocking pool's next free one: its caches
//! and its allocator's arena stay its own (with the pool, batches hopped between its threads, and
//! SQLite's allocations landed in one thread's arena to be freed in another's, under that
//! arena's lock). It ends once the store is dropped and what was queued is answered.
//!
//! The writer frees none of the large things its callers allocate: a write's record text, a
//! task's result and the record that a change computed beside its caller supersedes are lent to
//! it (the caller keeps them, or a share of them, until answered, and frees them then), and the
//! queue keeps its buffer while the writer keeps its own. With glibc's allocator, a free of
//! memory another thread allocated takes that thread's arena lock: the writer, freeing the
//! callers' texts and results as it applied a batch, waited for those locks about as often as
//! it slept for want of writes (an off-CPU profile of the bench's fill), and every write of the
//! batch waited with it. (The records that the store's memory of recent tasks lets go of are
//! still dropped here, after the answers.)
//!
//! Every operation writes with at most one statement, its last fallible step, and SQLite applies
//! a statement whole or not at all; so a write whose operation fails (an unknown task, a task
//! that has ended, a database error on its statement) has changed nothing, and is answered with
//! its error while the others in its transaction go on, with no savepoint to pay for. An error
//! that makes SQLite roll back the whole transaction (a full disk), or a failed commit, answers
//! every write of the transaction with that failure (none of them is kept).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{Shared, backend, lock};
use crate::protocol::task::TaskId;
use crate::store::StoreError;
use crate::store::frozen::Frozen;

/// The most writes one transaction takes: bounds how long a write waits behind the others.
const MAX_BATCH: usize = 256;

/// The records one transaction has written, in order, each with whether clients can see the
/// change (an event) or only waiters care: what the writes after them in the same transaction
/// start from, and what waiters, subscribers and the store's recent records learn of once it has
/// committed (and never if it does not).
#[derive(Default)]
pub(super) struct Changes {
    written: Vec<(Arc<Frozen>, bool)>,
    /// Task → its latest record in `written`.
    latest: HashMap<TaskId, usize>,
    /// Answered once the transaction commits or fails: the changes that joined a creation in
    /// it.
    joined: Vec<Box<dyn Job>>,
}

impl Changes {
    /// The task as this transaction last wrote it.
    pub(super) fn latest(&self, id: &TaskId) -> Option<&Arc<Frozen>> {
        self.latest.get(id).map(|&at| &self.written[at].0)
    }

    /// Answers `joined` with their outcomes once the transaction has committed, or with its
    /// failure.
    pub(super) fn answer_after_commit(&mut self, joined: impl IntoIterator<Item = Box<dyn Job>>) {
        self.joined.extend(joined);
    }

    /// Records that the transaction wrote `task`. Call it after the write succeeded.
    pub(super) fn wrote(&mut self, task: Arc<Frozen>, visible: bool) {
        self.latest
            .insert(task.record.id.clone(), self.written.len());
        self.written.push((task, visible));
    }
}

/// A queued write, its answer's type erased.
pub(super) trait Job: Send {
    /// Applies the write in the open transaction; `Ok` if it is to be kept.
    fn apply(&mut self, conn: &Connection, shared: &Shared, changes: &mut Changes) -> bool;

    /// Answers the writer: its own outcome once committed, else the commit's failure.
    fn answer(self: Box<Self>, commit: Result<(), &str>);
}

/// A write: its operation until applied, then its outcome until answered.
pub(super) struct Write<T, F> {
    op: Option<F>,
    outcome: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Write<T, F> {
    /// A write of `op`, and where its answer comes.
    pub(super) fn new(op: F) -> (Self, oneshot::Receiver<Result<T, StoreError>>) {
        let (reply, answer) = oneshot::channel();
        let write = Write {
            op: Some(op),
            outcome: None,
            reply,
        };
        (write, answer)
    }

    /// Its outcome is known without applying it: `op` will not run.
    pub(super) fn settle(&mut self, outcome: Result<T, StoreError>) {
        self.op = None;
        self.outcome = Some(outcome);
    }

    /// Answers the writer: its own outcome once committed, else the commit's failure.
    pub(super) fn finish(self, commit: Result<(), &str>) {
        let outcome = match (commit, self.outcome) {
            (Ok(()), Some(outcome)) => outcome,
            (Err(why), _) => Err(StoreError::backend(why.to_owned())),
            (Ok(()), None) => Err(StoreError::backend("a write was never applied")),
        };
        let _ = self.reply.send(outcome);
    }
}

impl<T, F> Job for Write<T, F>
where
    T: Send,
    F: FnOnce(&Connection, &Shared, &mut Changes) -> Result<T, StoreError> + Send,
{
    fn apply(&mut self, conn: &Connection, shared: &Shared, changes: &mut Changes) -> bool {
        let op = self.op.take().expect("a write is applied once");
        let outcome = op(conn, shared, changes);
        let kept = outcome.is_ok();
        self.outcome = Some(outcome);
        kept
    }

    fn answer(self: Box<Self>, commit: Result<(), &str>) {
        self.finish(commit);
    }
}

/// The queue of writes waiting for a transaction, and the writer's wake-up.
#[derive(Default)]
pub(super) struct Writes {
    queue: Mutex<Queue>,
    /// Where the writer sleeps while the store is idle.
    wake: Condvar,
    /// Transactions committed, for the tests.
    #[cfg(test)]
    pub(super) commits: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Box<dyn Job>>,
    /// The writer is awake and will take what is queued.
    flushing: bool,
    /// The store was dropped: the writer ends once the queue is empty.
    closed: bool,
}

impl Queue {
    /// Moves the oldest jobs into `batch`, until it holds `most`; the rest wait. Each keeps its
    /// own buffer: the queue's, which the callers grew, is not freed by the writer.
    fn take_into(&mut self, batch: &mut Vec<Box<dyn Job>>, most: usize) {
        let taken = self.jobs.len().min(most.saturating_sub(batch.len()));
        batch.extend(self.jobs.drain(..taken));
    }
}

impl Writes {
    /// The queue of a store whose connection is `db`, and its writer's thread, which holds the
    /// connection only while it commits (see [`flush`](Self::flush)) and ends after
    /// [`close`](Self::close).
    pub(super) fn start(
        db: &Arc<Mutex<Connection>>,
        shared: &Arc<Shared>,
    ) -> std::io::Result<Arc<Writes>> {
        let writes = Arc::new(Writes::default());
        let (me, db, shared) = (writes.clone(), Arc::downgrade(db), shared.clone());
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || me.serve(&db, &shared))?;
        Ok(writes)
    }

    /// The writer's life: sleeps until a write is queued, commits until the queue is empty, and
    /// ends once the store has closed it.
    fn serve(&self, connection: &Weak<Mutex<Connection>>, shared: &Shared) {
        loop {
            {
                let mut queue = lock(&self.queue);
                while !queue.flushing {
                    if queue.closed {
                        return;
                    }
                    queue = self
                        .wake
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            // A panic outside a write (a write's own is caught inside) drops its batch (see
            // `flush`); the writer goes on with the writes queued after it.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| self.flush(connection, shared)));
        }
    }

    /// The store is dropped: the writer answers what is queued (with an error once the
    /// connection is gone) and ends.
    pub(super) fn close(&self) {
        lock(&self.queue).closed = true;
        self.wake.notify_one();
    }

    /// The writes queued and not yet taken by the writer, for the tests.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        lock(&self.queue).jobs.len()
    }

    /// Queues `op` for the next transaction at once, and returns a future that resolves once
    /// that transaction has committed. Writes are applied in the order they were queued: a write
    /// queued after this one sees what this one wrote. `op` tells `changes` of the records it
    /// wrote: the writes after it start from them, and waiters and subscribers hear of them after
    /// the commit, in order.
    pub(super) fn write<T, F>(
        &self,
        op: F,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Shared, &mut Changes) -> Result<T, StoreError> + Send + 'static,
    {
        let (write, answer) = Write::new(op);
        let wake = {
            let mut queue = lock(&self.queue);
            queue.jobs.push(Box::new(write));
            !std::mem::replace(&mut queue.flushing, true)
        };
        if wake {
            self.wake.notify_one();
        }
        async move {
            answer.await.unwrap_or_else(|_| {
                Err(StoreError::backend(
                    "the SQLite task store's writer stopped before the write was committed",
                ))
            })
        }
    }

    /// Commits batches until the queue is empty. The writer holds the connection only while it
    /// commits, and lets go of it before it answers: once the last write is answered and the
    /// store dropped, the file is closed, and may be opened again at once.
    fn flush(&self, connection: &Weak<Mutex<Connection>>, shared: &Shared) {
        // If the writer panics outside a write (a write's panic is caught below), the writes
        // of its batch are dropped (their waiters get an error) and the next write wakes it
        // again.
        struct Idle<'a>(&'a Writes);
        impl Drop for Idle<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    let mut queue = lock(&self.0.queue);
                    queue.flushing = false;
                    queue.jobs.clear();
                }
            }
        }
        let _idle = Idle(self);
        let mut jobs = Vec::new();
        loop {
            {
                let mut queue = lock(&self.queue);
                if queue.jobs.is_empty() {
                    queue.flushing = false;
                    return;
                }
                queue.take_into(&mut jobs, MAX_BATCH);
            }
            let Some(db) = connection.upgrade() else {
                for job in jobs.drain(..) {
                    job.answer(Err("the SQLite task store was closed"));
                }
                continue;
            };
            let conn = lock(&db);
            let mut changes = Changes::default();
            // A write that panics fails its transaction as an error would: rolled back at once
            // (no read on the connection sees it), its batch answered with the error, and this
            // writer goes on with the writes queued after it.
            let committed = std::panic::catch_unwind(AssertUnwindSafe(|| {
                commit(&conn, shared, &mut jobs, &mut changes, &self.queue)
            }))
            .unwrap_or_else(|_| {
                if !conn.is_autocommit() {
                    let _ = run(&conn, "ROLLBACK");
                }
                Err(StoreError::backend(
                    "a write in the same transaction panicked",
                ))
            });
            #[cfg(test)]
            if committed.is_ok() {
                self.commits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let mut let_go = Vec::new();
            if committed.is_ok() {
                // Announced with the connection held, so that waiters learn of a task's
                // versions in order.
                for (record, visible) in changes.written {
                    let_go.extend(shared.committed(record, visible));
                }
            } else {
                for (record, _) in &changes.written {
                    shared.unqueue(record);
                }
            }
            drop(conn);
            drop(db);
            let committed = committed.map_err(|why| why.to_string());
            for job in changes.joined.into_iter().chain(jobs.drain(..)) {
                job.answer(committed.as_ref().map(|_| ()).map_err(String::as_str));
            }
            // The records `recent` let go of, freed once the writes are answered and no lock
            // is held.
            drop(let_go);
            if shared.checkpoint_due()
                && let Some(db) = connection.upgrade()
            {
                shared.checkpoint_if_due(&lock(&db));
            }
        }
    }
}

/// Applies `jobs` in one transaction and commits it. The writes queued while they were applied
/// join them (up to [`MAX_BATCH`] in all), in the order they were queued: they are answered
/// after the same commit instead of waiting for the next one.
fn commit(
    conn: &Connection,
    shared: &Shared,
    jobs: &mut Vec<Box<dyn Job>>,
    changes: &mut Changes,
    queue: &Mutex<Queue>,
) -> Result<(), StoreError> {
    if !conn.is_autocommit() {
        // A transaction left open by a write that panicked.
        run(conn, "ROLLBACK")?;
    }
    run(conn, "BEGIN IMMEDIATE")?;
    let mut applied = apply_all(conn, shared, jobs, changes);
    while applied.is_ok() && jobs.len() < MAX_BATCH {
        let before = jobs.len();
        lock(queue).take_into(jobs, MAX_BATCH);
        if jobs.len() == before {
            break;
        }
        applied = apply_all(conn, shared, &mut jobs[before..], changes);
    }
    match applied.and_then(|()| run(conn, "COMMIT")) {
        Ok(()) => Ok(()),
        Err(why) => {
            let _ = run(conn, "ROLLBACK");
            Err(why)
        }
    }
}

fn apply_all(
    conn: &Connection,
    shared: &Shared,
    jobs: &mut [Box<dyn Job>],
    changes: &mut Changes,
) -> Result<(), StoreError> {
    for job in jobs {
        if !job.apply(conn, shared, changes) && conn.is_autocommit() {
            // An error SQLite answers by rolling back the whole transaction (a full disk, an
            // I/O error): the writes before this one are gone too.
            return Err(StoreError::backend(
                "the SQLite task store's transaction was rolled back",
            ));
        }
    }
    Ok(())
}

/// Runs one statement from the connection's cache (parsed once, not on every write).
fn run(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut statement| statement.execute([]))
        .map(drop)
        .map_err(backend)
}
