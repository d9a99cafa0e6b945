//! Changes computed beside their callers, and joined to their task's creation while it is queued.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::batch::{Changes, Job, Write};
use super::rows::{apply_change, encode, insert, store};
use super::{Shared, SqliteTaskStore, lock};
use crate::protocol::task::{Owner, TaskId};
use crate::store::frozen::Frozen;
use crate::store::{NewTask, StoreError, StoreFuture, TaskRecord};

/// A creation's write holds its [`Creation`] through this: once the write is applied, or
/// dropped unapplied (the store closed, or a write before it panicked), the creation is closed
/// and forgotten, and changes that joined it and were not taken by its write are told it failed
/// instead of waiting forever.
pub(super) struct Taken {
    pub(super) creation: Arc<Mutex<Creation>>,
    pub(super) shared: Arc<Shared>,
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
        // Out of the map before anyone is answered: whoever hears of it finds it gone.
        {
            let mut creating = lock(&self.shared.creating);
            if creating
                .get(&id)
                .is_some_and(|c| Arc::ptr_eq(c, &self.creation))
            {
                creating.remove(&id);
            }
        }
        for change in waiting {
            change.answer(Err(
                "the SQLite task store's writer stopped before the write was committed",
            ));
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
pub(super) struct Creation {
    /// Closed to joins: taken by the writer's thread, or closed by a write on the task that did
    /// not join.
    pub(super) closed: bool,
    /// Taken by the writer's thread (or dropped untaken).
    pub(super) taken: bool,
    /// What the creation will insert: the new task, or the last change that joined it.
    pub(super) latest: Arc<Frozen>,
    /// `latest` as text, once encoded: by the caller when it first waits for the creation
    /// (unless a change joined before), by the last change that joined, else by the writer's
    /// thread. The writer's thread hands it back after the insert: it is freed with the
    /// creation by its caller, which holds the creation until answered.
    pub(super) text: Option<String>,
    /// The changes that joined, in order, each with whether clients see it.
    pub(super) joined: Vec<(Arc<Frozen>, bool)>,
    /// The same changes, to answer once the creation's transaction has committed (or failed),
    /// or to apply instead if the creation inserts nothing.
    pub(super) waiting: Vec<Box<dyn Joined>>,
}

/// Where a change's answer comes: its output and the record it left.
pub(super) type Answer<T> = oneshot::Receiver<Result<(T, Arc<Frozen>), StoreError>>;

/// A change that joined a creation (see [`Creation`]).
pub(super) trait Joined: Job {
    /// The creation inserted the task as this change (or one after it) leaves it: the change is
    /// answered with the record it computed once the transaction has committed.
    fn inserted(&mut self);
}

/// A change that joined a creation: what it computed ahead, and the write that applies it to
/// the task that has the id if the creation inserts nothing.
pub(super) struct JoinedChange<T, F> {
    pub(super) computed: Option<(T, Arc<Frozen>)>,
    pub(super) write: Write<(T, Arc<Frozen>), F>,
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

/// Encodes what a creation will insert, beside its caller when it first waits for it: not in
/// the one thread that applies every write, and not before a quick tool's end, which joins the
/// creation with a text of its own, has had its chance to. Nothing if the writer's thread took
/// the creation already, or a change joined it (the writer's thread encodes what nobody did).
pub(super) fn encode_ahead(creation: &Mutex<Creation>) {
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
pub(super) struct Ahead<T> {
    pub(super) base: Arc<Frozen>,
    pub(super) out: T,
    pub(super) task: Arc<Frozen>,
    pub(super) text: String,
}

impl Shared {
    /// Joins a change computed ahead to its task's creation, if that is still queued and open
    /// and the change was computed from what it will insert; where the change's answer comes.
    /// Else gives the change back (and `change` stays). `change` is what applies it instead,
    /// should the creation insert nothing.
    pub(super) fn join<T, F>(
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
    pub(super) fn close_creation(&self, id: &TaskId) {
        if let Some(creation) = lock(&self.creating).get(id) {
            lock(creation).closed = true;
        }
    }
}

impl SqliteTaskStore {
    /// [`update`](Self::update) for the changes of a task's lifecycle, computed and encoded
    /// beside the caller when the task was written lately (its record is kept): the one thread
    /// that applies every write then only checks that nothing changed the task meanwhile and
    /// stores the text, else applies `change` again as [`update`](Self::update) does. So
    /// `change` may run twice, and must do the same thing both times.
    pub(super) async fn update_ahead<T: Send + 'static>(
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

    pub(super) async fn update_from<T: Send + 'static>(
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

    /// Queues the creation when called: a write on the task called afterwards is applied after
    /// it.
    pub(super) fn queue_creation(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
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
}
