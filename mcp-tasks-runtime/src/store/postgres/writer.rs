//! Group commit (see [`PostgresTaskStore`](super::PostgresTaskStore), "Group commit"): every
//! change is a [`Job`] on one queue; each writer takes what has gathered there (up to
//! [`MAX_BATCH`] by default), applies it in one transaction on the connection it keeps ([`Held`]) and answers each job
//! only once that transaction has committed.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use futures_util::future::{join, join4};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::SystemTime;

use tokio::sync::{Mutex as AsyncMutex, mpsc, oneshot};
use tokio_postgres::Client;

use super::feed::payload;
use super::{Shared, decode, due_column, encode, lock, pg, runner_column};
use crate::error_chain::with_causes;
use crate::protocol::task::{Owner, TaskId};
use crate::store::{StoreError, TaskRecord};

/// The most jobs one transaction carries, by default.
pub(super) const MAX_BATCH: usize = 128;

/// One change waiting for a writer.
pub(super) enum Job {
    /// Insert a new task.
    Create {
        record: Arc<TaskRecord>,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    /// Read-modify-write one task.
    Update(Box<dyn Change>),
}

/// A read-modify-write of one task, its result kept inside until it is sent.
pub(super) trait Change: Send {
    fn id(&self) -> &TaskId;
    /// `None`: the engine acting (no owner check).
    fn owner(&self) -> Option<&Owner>;
    /// Whether clients see the change (an event, `lastUpdatedAt`).
    fn visible(&self) -> bool;
    /// Applies the change to `record` (which it may leave half-changed on error: the caller
    /// throws it away then). May run again on a fresh record if the batch is retried.
    fn apply(&mut self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError>;
    /// Answers the caller: the record afterwards (after the commit), or why it failed.
    fn answer(self: Box<Self>, outcome: Result<Arc<TaskRecord>, StoreError>);
}

/// A [`Change`] made of a closure and a reply channel.
pub(super) struct Update<T, F> {
    pub(super) id: TaskId,
    pub(super) owner: Option<Owner>,
    pub(super) visible: bool,
    pub(super) change: F,
    pub(super) out: Option<T>,
    pub(super) reply: oneshot::Sender<Result<(T, Arc<TaskRecord>), StoreError>>,
}

impl<T, F> Change for Update<T, F>
where
    T: Send,
    F: FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send,
{
    fn id(&self) -> &TaskId {
        &self.id
    }
    fn owner(&self) -> Option<&Owner> {
        self.owner.as_ref()
    }
    fn visible(&self) -> bool {
        self.visible
    }
    fn apply(&mut self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        // A change that panics fails alone, as one that errs: the record it half-changed is
        // thrown away, and its batch, the transaction and the writer go on. (Unwinding through
        // the writer would end it, and hand its connection back to the pool inside the open
        // transaction.)
        let change = &mut self.change;
        let out = std::panic::catch_unwind(AssertUnwindSafe(|| change(record, now)))
            .unwrap_or_else(|_| Err(StoreError::backend("the change panicked")))?;
        self.out = Some(out);
        Ok(())
    }
    fn answer(self: Box<Self>, outcome: Result<Arc<TaskRecord>, StoreError>) {
        let this = *self;
        let result = match (outcome, this.out) {
            (Ok(record), Some(out)) => Ok((out, record)),
            (Ok(_), None) => Err(StoreError::backend("a change was answered before it ran")),
            (Err(error), _) => Err(error),
        };
        let _ = this.reply.send(result);
    }
}

impl Job {
    fn fail(self, error: StoreError) {
        match self {
            Job::Create { reply, .. } => {
                let _ = reply.send(Err(error));
            }
            Job::Update(change) => change.answer(Err(error)),
        }
    }
}

/// The queue's receiving end, shared by the writers: one at a time takes a batch.
pub(super) type Queue = Arc<AsyncMutex<mpsc::UnboundedReceiver<Job>>>;

/// A task whose creation has been asked for and not yet answered (see
/// [`Shared::ask_creation`]).
#[derive(Default)]
pub(super) struct Creating {
    /// Creations of this id not yet answered (more than one only for a reused id).
    pending: usize,
    /// The writes on the task a writer took without its creation, in the order they were taken.
    held: Vec<Job>,
}

/// A writer's connection and its group-commit statements, kept from one batch to the next
/// until the connection fails: taking them from the pool for each batch cost a visible share of
/// the batch under load (the pool's and the statement cache's awaits; bench/HISTORY.md).
pub(super) struct Held {
    object: deadpool_postgres::Object,
    statements: super::sql::Statements,
}

/// One writer: takes batches off the queue until the store is dropped (the queue closes).
pub(super) async fn write(queue: Queue, shared: Weak<Shared>) {
    let mut held: Option<Held> = None;
    loop {
        let mut batch = Vec::new();
        {
            let mut receiver = queue.lock().await;
            match receiver.recv().await {
                Some(job) => batch.push(job),
                None => return,
            }
            let most = shared.upgrade().map_or(1, |shared| shared.batch);
            while batch.len() < most {
                match receiver.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            // While the queue is still this writer's: no other writer takes a batch between.
            if let Some(shared) = shared.upgrade() {
                batch = shared.hold_back(batch);
            }
        }
        if batch.is_empty() {
            continue;
        }
        // A creation is queued before the schema is known to be there (it is queued when
        // `create` is called): the first batches make sure of it.
        if let Some(shared) = shared.upgrade()
            && let Err(error) = shared.ready().await
        {
            let why = match error {
                StoreError::Backend(inner) => inner.to_string(),
                other => other.to_string(),
            };
            for job in batch {
                shared.fail(job, StoreError::backend(why.clone()));
            }
            continue;
        }
        let Some(shared) = shared.upgrade() else {
            for job in batch {
                job.fail(StoreError::backend("the Postgres task store was closed"));
            }
            return;
        };
        let created: Vec<TaskId> = batch
            .iter()
            .filter_map(|job| match job {
                Job::Create { record, .. } => Some(record.id.clone()),
                Job::Update(_) => None,
            })
            .collect();
        let ran = AssertUnwindSafe(shared.run_batch(batch, &mut held))
            .catch_unwind()
            .await;
        if ran.is_err() {
            // A bug: the jobs of the batch were dropped as it unwound, so their callers hear
            // that the writer stopped. The connection may be inside the transaction: it is
            // closed, not handed back to the pool, so nothing of that transaction commits. The
            // writes held for the batch's creations go on (and find no task), and so does the
            // writer.
            if let Some(Held { object, .. }) = held.take() {
                drop(deadpool_postgres::Object::take(object));
            }
            for id in &created {
                shared.answered_creation(id);
            }
            tracing::error!("a Postgres task store writer panicked; its batch failed");
        }
    }
}

/// What happened to a batch's transaction.
enum Failure {
    /// It was rolled back (or never began): nothing was written, the jobs may run again.
    RolledBack(String),
    /// The connection was lost around the commit: it may or may not have committed.
    Unknown(String),
}

impl Failure {
    fn rolled_back(error: StoreError) -> Self {
        Failure::RolledBack(match error {
            StoreError::Backend(inner) => inner.to_string(),
            other => other.to_string(),
        })
    }
}

/// A committed batch: how to answer its jobs, and what to tell the other instances.
struct Committed {
    settled: Vec<Settled>,
    notes: Vec<String>,
}

/// A change that moved its task's version ([`Shared::apply`]).
struct Moved {
    record: TaskRecord,
    /// The record's text, when clients see the change.
    body: Option<String>,
    note: String,
}

/// How each job of a committed batch is answered, and what to announce.
enum Settled {
    Created(Arc<TaskRecord>),
    Updated(Arc<TaskRecord>, bool),
    Failed(StoreError),
}

impl Shared {
    /// Registers a creation of task `id`, before it is queued: until it is answered, a write on
    /// the task that a writer takes without it is held back ([`Self::hold_back`]).
    pub(super) fn ask_creation(&self, id: &TaskId) {
        lock(&self.creating).entry(id.clone()).or_default().pending += 1;
    }

    /// A creation of task `id` is answered (committed or failed), or could not be queued: once
    /// no other is pending, the writes held for it go back to the queue, in order. Called after
    /// the commit, so a held write finds the task.
    pub(super) fn answered_creation(&self, id: &TaskId) {
        let held = {
            let mut creating = lock(&self.creating);
            let Some(entry) = creating.get_mut(id) else {
                return;
            };
            entry.pending = entry.pending.saturating_sub(1);
            if entry.pending > 0 {
                return;
            }
            creating
                .remove(id)
                .map(|entry| entry.held)
                .unwrap_or_default()
        };
        for job in held {
            if let Err(mpsc::error::SendError(job)) = self.queue.send(job) {
                job.fail(StoreError::backend("the Postgres task store was closed"));
            }
        }
    }

    /// The batch a writer took, less the writes on tasks whose creation is not in it and not yet
    /// answered (another writer is committing it, or it is not queued yet): a write there would
    /// not see the task. They are held, in order, until the creation is answered. A write after
    /// its creation in the same batch stays: the transaction inserts before it locks.
    fn hold_back(&self, batch: Vec<Job>) -> Vec<Job> {
        let mut creating = lock(&self.creating);
        if creating.is_empty() {
            return batch;
        }
        let mut created_here: HashSet<TaskId> = HashSet::new();
        let mut kept = Vec::with_capacity(batch.len());
        for job in batch {
            match &job {
                Job::Create { record, .. } => {
                    created_here.insert(record.id.clone());
                }
                Job::Update(change) => {
                    if let Some(entry) = creating.get_mut(change.id())
                        && (!created_here.contains(change.id()) || !entry.held.is_empty())
                    {
                        entry.held.push(job);
                        continue;
                    }
                }
            }
            kept.push(job);
        }
        kept
    }

    /// Answers `job` with `error`, ending its creation's registration if it is one.
    fn fail(&self, job: Job, error: StoreError) {
        if let Job::Create { record, .. } = &job {
            self.answered_creation(&record.id);
        }
        job.fail(error);
    }

    /// Runs a batch in one transaction; if that fails before the commit, runs each job alone.
    async fn run_batch(&self, mut batch: Vec<Job>, held: &mut Option<Held>) {
        match self.transact(&mut batch, held).await {
            Ok(mut committed) => {
                self.transactions.fetch_add(1, Ordering::Relaxed);
                self.changes
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
                self.settle(batch, std::mem::take(&mut committed.settled));
                self.notify(committed, held).await;
            }
            Err(Failure::Unknown(error)) => {
                let message = format!(
                    "{error} (the connection was lost while committing: the change may or may not have been saved)"
                );
                for job in batch {
                    self.fail(job, StoreError::backend(message.clone()));
                }
            }
            Err(Failure::RolledBack(error)) if batch.len() == 1 => {
                for job in batch {
                    self.fail(job, StoreError::backend(error.clone()));
                }
            }
            Err(Failure::RolledBack(error)) => {
                tracing::debug!(%error, jobs = batch.len(), "a group commit failed; running its changes one by one");
                for job in batch {
                    Box::pin(self.run_batch(vec![job], held)).await;
                }
            }
        }
    }

    /// Answers the jobs of a committed batch and tells waiters and subscribers.
    fn settle(&self, batch: Vec<Job>, settled: Vec<Settled>) {
        for (job, settled) in batch.into_iter().zip(settled) {
            match (job, settled) {
                (Job::Create { reply, .. }, Settled::Created(record)) => {
                    self.announce(&record, true);
                    self.answered_creation(&record.id);
                    let _ = reply.send(Ok(()));
                }
                (Job::Update(change), Settled::Updated(record, changed)) => {
                    if changed {
                        self.announce(&record, change.visible());
                    }
                    change.answer(Ok(record));
                }
                (job, Settled::Failed(error)) => self.fail(job, error),
                (job, _) => self.fail(job, StoreError::backend("a change was settled out of turn")),
            }
        }
    }

    /// One transaction for the whole batch: insert the new tasks (as the batch's changes of
    /// them leave them), lock and read the other changed ones (in id order, so two batches never
    /// deadlock), apply every change in Rust, write the changed rows back, commit. Two pipelined
    /// round trips.
    async fn transact(
        &self,
        batch: &mut [Job],
        held: &mut Option<Held>,
    ) -> Result<Committed, Failure> {
        if held.as_ref().is_some_and(|held| held.object.is_closed()) {
            *held = None;
        }
        if held.is_none() {
            let object = self
                .pool
                .get()
                .await
                .map_err(|e| Failure::rolled_back(super::pool_error(e)))?;
            let statements = self
                .statements(&object)
                .await
                .map_err(Failure::rolled_back)?;
            *held = Some(Held { object, statements });
        }
        let Some(Held { object, statements }) = held.as_ref() else {
            unreachable!("a connection was just taken");
        };
        let client: &Client = object;
        let now = self.clock.now();

        // The new tasks; a second create of one id within the batch is a duplicate at once. A
        // change of a task created earlier in the batch is applied here, to the new record, and
        // the task is inserted as the changes leave it: no lock, no update for it.
        let mut settled: Vec<Option<Settled>> = Vec::with_capacity(batch.len());
        let mut new_ids: HashMap<TaskId, usize> = HashMap::new();
        // Each new task as the batch's changes leave it, with its text when already encoded.
        let mut created: Vec<(TaskRecord, Option<String>)> = Vec::new();
        // The notes of the changes applied to new tasks, by the new task they go with: sent
        // only if it is inserted.
        let mut joined_notes: Vec<Vec<String>> = Vec::new();
        let mut notes = Vec::new();
        let mut wanted = Vec::new();
        for job in batch.iter_mut() {
            match job {
                Job::Create { record, .. } => {
                    if new_ids.contains_key(&record.id) {
                        settled.push(Some(Settled::Failed(StoreError::DuplicateId(
                            record.id.clone(),
                        ))));
                        continue;
                    }
                    let json = encode(record).map_err(Failure::rolled_back)?;
                    notes.push(
                        payload("u", record.version, &record.id, &self.origin, &json)
                            .map_err(Failure::rolled_back)?,
                    );
                    new_ids.insert(record.id.clone(), created.len());
                    created.push((TaskRecord::clone(record), Some(json)));
                    joined_notes.push(Vec::new());
                    settled.push(None);
                }
                Job::Update(change) => {
                    let Some(&at) = new_ids.get(change.id()) else {
                        wanted.push(change.id().as_str().to_owned());
                        settled.push(None);
                        continue;
                    };
                    let (record, text) = &mut created[at];
                    if change.owner().is_some_and(|o| *o != record.owner) {
                        settled.push(Some(Settled::Failed(StoreError::NotFound)));
                        continue;
                    }
                    let (outcome, moved) = self.apply(change.as_mut(), record, now)?;
                    if let Some(moved) = moved {
                        joined_notes[at].push(moved.note);
                        *record = moved.record;
                        *text = moved.body;
                    }
                    settled.push(Some(outcome));
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let (mut ids, mut owners, mut runners, mut dues, mut versions, mut records) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for (record, text) in created.iter_mut() {
            ids.push(record.id.as_str().to_owned());
            owners.push(record.owner.as_str().to_owned());
            runners.push(runner_column(record).map(str::to_owned));
            dues.push(due_column(record));
            versions.push(record.version as i64);
            records.push(match text.take() {
                Some(text) => text,
                None => encode(record).map_err(Failure::rolled_back)?,
            });
        }

        // Round trip 1: BEGIN, the creators' lock, INSERT, SELECT ... FOR UPDATE.
        // Each statement of the transaction planned for its own arguments: a generic plan, kept
        // by a prepared statement after five runs, made while the table was small (no
        // statistics yet, a few pages) reads the whole table for `lock` and `update`, and keeps
        // doing so as the table grows (bench/HISTORY.md, `plan_cache_mode`).
        let begin = client.batch_execute("BEGIN; SET LOCAL plan_cache_mode = force_custom_plan");
        // Transactions that create tasks hold the creators' lock in shared mode from before
        // their insert (which gives out the creation numbers) to their end, so a `list`, which
        // takes it exclusively, never reads a page while a lower number is still to commit
        // (see `PostgresTaskStore`, "`list` misses nothing"). It comes first: a transaction
        // waiting for it (behind a `list`) holds no row lock another creator could wait for.
        let turn = async {
            if ids.is_empty() {
                return Ok(0);
            }
            client.execute(&statements.turn, &[&self.turn_key]).await
        };
        let insert = async {
            if ids.is_empty() {
                return Ok(vec![]);
            }
            client
                .query(
                    &statements.insert,
                    &[&ids, &owners, &runners, &dues, &versions, &records],
                )
                .await
        };
        let lock = async {
            if wanted.is_empty() {
                return Ok(vec![]);
            }
            client.query(&statements.lock, &[&wanted]).await
        };
        let (begun, turned, inserted, locked) = join4(begin, turn, insert, lock).await;
        let failed_early = begun
            .as_ref()
            .err()
            .or(turned.as_ref().err())
            .or(inserted.as_ref().err())
            .or(locked.as_ref().err())
            .map(|e| pg("a group commit failed", e));
        if let Some(error) = failed_early {
            self.rollback(held).await;
            return Err(Failure::rolled_back(error));
        }
        #[cfg(test)]
        if self.panic_in_transaction.swap(false, Ordering::Relaxed) {
            panic!("a writer that panics inside its transaction (on purpose)");
        }
        let inserted: HashSet<String> = inserted
            .unwrap_or_default()
            .iter()
            .map(|row| row.get::<_, String>(0))
            .collect();
        // A change applied to a new task that was not inserted (another task had its id) is
        // for that other task: the batch runs again change by change, where it is.
        let misapplied = batch.iter().any(|job| {
            matches!(job, Job::Update(change)
                if new_ids.contains_key(change.id()) && !inserted.contains(change.id().as_str()))
        });
        if misapplied {
            self.rollback(held).await;
            return Err(Failure::RolledBack(
                "a change was applied to a new task whose id was taken".to_owned(),
            ));
        }
        for ((record, _), joined) in created.iter().zip(joined_notes) {
            if inserted.contains(record.id.as_str()) {
                notes.extend(joined);
            }
        }
        let mut current: HashMap<String, (String, TaskRecord)> = HashMap::new();
        for row in locked.unwrap_or_default() {
            let id: String = row.get(0);
            let owner: String = row.get(1);
            let record = decode(row.get(2)).map_err(Failure::rolled_back)?;
            current.insert(id, (owner, record));
        }

        // Apply the changes in order, each to the record as the earlier ones left it.
        let mut dirty: Vec<String> = Vec::new();
        let mut encoded: HashMap<String, String> = HashMap::new();
        for (job, slot) in batch.iter_mut().zip(settled.iter_mut()) {
            match job {
                Job::Create { record, .. } => {
                    if slot.is_some() {
                        continue;
                    }
                    *slot = Some(if inserted.contains(record.id.as_str()) {
                        Settled::Created(record.clone())
                    } else {
                        Settled::Failed(StoreError::DuplicateId(record.id.clone()))
                    });
                }
                Job::Update(_) if slot.is_some() => {}
                Job::Update(change) => {
                    let Some((stored_owner, record)) = current.get_mut(change.id().as_str()) else {
                        *slot = Some(Settled::Failed(StoreError::NotFound));
                        continue;
                    };
                    if change.owner().is_some_and(|o| o.as_str() != stored_owner) {
                        *slot = Some(Settled::Failed(StoreError::NotFound));
                        continue;
                    }
                    let (outcome, moved) = self.apply(change.as_mut(), record, now)?;
                    if let Some(moved) = moved {
                        notes.push(moved.note);
                        let id = moved.record.id.as_str();
                        // The row is written with the last version's text: keep it, once.
                        match moved.body {
                            Some(body) => encoded.insert(id.to_owned(), body),
                            None => encoded.remove(id),
                        };
                        if !dirty.iter().any(|d| d == id) {
                            dirty.push(id.to_owned());
                        }
                        *record = moved.record;
                    }
                    *slot = Some(outcome);
                }
            }
        }

        // Round trip 2: UPDATE, COMMIT.
        let (mut ids, mut runners, mut dues, mut versions, mut records) =
            (vec![], vec![], vec![], vec![], vec![]);
        for id in &dirty {
            let (_, record) = &current[id];
            ids.push(id.clone());
            runners.push(runner_column(record).map(str::to_owned));
            dues.push(due_column(record));
            versions.push(record.version as i64);
            records.push(match encoded.remove(id) {
                Some(text) => text,
                None => encode(record).map_err(Failure::rolled_back)?,
            });
        }
        let update = async {
            if ids.is_empty() {
                return Ok(0);
            }
            client
                .execute(
                    &statements.update,
                    &[&ids, &runners, &dues, &versions, &records],
                )
                .await
        };
        let commit = client.execute(&statements.commit, &[]);
        let (updated, committed) = join(update, commit).await;
        // A statement Postgres refused aborted the transaction: the COMMIT behind it rolled back.
        if let Err(e) = &updated
            && e.as_db_error().is_some()
        {
            let error = Failure::rolled_back(pg("a group commit failed", e));
            self.rollback(held).await;
            return Err(error);
        }
        match (updated, committed) {
            (Ok(_), Ok(_)) => {}
            (_, Err(e)) if e.as_db_error().is_some() => {
                self.rollback(held).await;
                return Err(Failure::rolled_back(pg("committing a group commit", &e)));
            }
            (Err(e), _) | (_, Err(e)) => {
                if let Some(lost) = held.take() {
                    drop(deadpool_postgres::Object::take(lost.object));
                }
                return Err(Failure::Unknown(format!(
                    "Postgres: committing a group commit: {}",
                    with_causes(&e)
                )));
            }
        }
        let settled = settled
            .into_iter()
            .map(|s| {
                s.unwrap_or_else(|| {
                    Settled::Failed(StoreError::backend("a change was not applied"))
                })
            })
            .collect();
        Ok(Committed { settled, notes })
    }

    /// Applies `change` to a copy of `record`: how it settles, and, when it moved the version,
    /// the record it leaves, its text if clients see the change, and the note that tells the
    /// other instances.
    fn apply(
        &self,
        change: &mut dyn Change,
        record: &TaskRecord,
        now: SystemTime,
    ) -> Result<(Settled, Option<Moved>), Failure> {
        let mut next = record.clone();
        let before = next.version;
        match change.apply(&mut next, now) {
            Err(error) => Ok((Settled::Failed(error), None)),
            Ok(()) if next.version == before => Ok((Settled::Updated(Arc::new(next), false), None)),
            Ok(()) => {
                let body = if change.visible() {
                    Some(encode(&next).map_err(Failure::rolled_back)?)
                } else {
                    None
                };
                let kind = if body.is_some() { "u" } else { "i" };
                let note = payload(
                    kind,
                    next.version,
                    &next.id,
                    &self.origin,
                    body.as_deref().unwrap_or_default(),
                )
                .map_err(Failure::rolled_back)?;
                let settled = Settled::Updated(Arc::new(next.clone()), true);
                Ok((
                    settled,
                    Some(Moved {
                        record: next,
                        body,
                        note,
                    }),
                ))
            }
        }
    }

    /// Tells the other instances about a committed batch: one `pg_notify` per change, after the
    /// commit (see [`PostgresTaskStore`](super::PostgresTaskStore), "Wake-ups and events").
    async fn notify(&self, committed: Committed, held: &Option<Held>) {
        let Some(held) = held.as_ref().filter(|_| !committed.notes.is_empty()) else {
            return;
        };
        let sent = held
            .object
            .execute(&held.statements.notify, &[&self.channel, &committed.notes])
            .await;
        if let Err(error) = sent {
            tracing::warn!(
                error = %with_causes(&error),
                "notifying other instances of committed changes failed; their waiters re-read within the resync period"
            );
        }
    }

    /// Ends a failed transaction; a connection that cannot is dropped, not given back to the
    /// pool (the writer takes another for its next batch).
    async fn rollback(&self, held: &mut Option<Held>) {
        let ended = match held.as_ref() {
            Some(held) => held.object.batch_execute("ROLLBACK").await.is_ok(),
            None => true,
        };
        if !ended && let Some(lost) = held.take() {
            drop(deadpool_postgres::Object::take(lost.object));
        }
    }
}
