//! The in-memory task store, the default.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use foldhash::fast::RandomState;
use foldhash::{HashMap, HashSet};
use serde_json::value::RawValue;
use tokio::sync::{broadcast, watch};

use super::Expiry;
use super::TaskRecord;
use super::backend::Records;
use super::change::{Change, Project};
use super::frozen;
use super::{Clock, ExpiryReport, NewTask, StoreError, StoreFuture, SystemClock, TaskEvent};
use crate::protocol::ResourceContents;
use crate::protocol::task::{Owner, TaskId, TaskView};

/// Lock stripes. Operations on tasks in different stripes never contend.
const SHARDS: usize = 64;
/// How many events a [`TaskStore::subscribe`](super::TaskStore::subscribe) receiver may fall behind before it lags.
const EVENT_CAPACITY: usize = 1024;

/// Tasks in this process's memory; they are gone when it exits. The default store.
///
/// Built for many tasks and many waiters: tasks are spread over 64 independently locked stripes,
/// locks are plain mutexes held for a few map operations and never across an `await`, and each
/// task has its own wake-up channel (created only while someone waits on it), so a change wakes
/// the waiters of that task and nobody else. Each owner's tasks are indexed by creation order,
/// so `list` reads only the page it returns. Each stripe also indexes its tasks by due time
/// ([`TaskRecord::due_at`]) and keeps the set of running ones, so `expire` visits only the tasks
/// whose time has come and the running ones (for their runner's lease), however many are stored.
pub struct MemoryTaskStore {
    clock: Arc<dyn Clock>,
    hasher: RandomState,
    tasks: Box<[Mutex<Stripe>]>,
    owners: Box<[Mutex<HashMap<Owner, OwnerIndex>>]>,
    next_seq: AtomicU64,
    events: broadcast::Sender<TaskEvent>,
    /// Engine instance → the time its lease runs out.
    leases: Mutex<HashMap<String, SystemTime>>,
}

/// One stripe of the tasks, with what `expire` needs to visit only the tasks it may change.
#[derive(Default)]
struct Stripe {
    tasks: HashMap<TaskId, Box<Entry>>,
    /// Every task that has a [`TaskRecord::due_at`], by that time.
    due: BTreeSet<(SystemTime, TaskId)>,
    /// The tasks that have not ended: their runner's lease decides whether they fail.
    running: HashSet<TaskId>,
}

/// Files a task under its due time and running state after a change; `before` is the due time it
/// is filed under now (`None`: not filed).
fn reschedule(
    due: &mut BTreeSet<(SystemTime, TaskId)>,
    running: &mut HashSet<TaskId>,
    id: &TaskId,
    before: Option<SystemTime>,
    record: &TaskRecord,
) {
    let after = record.due_at();
    if before != after {
        if let Some(at) = before {
            due.remove(&(at, id.clone()));
        }
        if let Some(at) = after {
            due.insert((at, id.clone()));
        }
    }
    if record.terminal_at.is_some() {
        running.remove(id);
    }
}

/// One owner's tasks: creation sequence number → task id.
type OwnerIndex = BTreeMap<u64, TaskId>;

/// One stored task. Boxed in its stripe's map, so that the map's spare capacity costs a pointer
/// per slot rather than a whole record.
struct Entry {
    /// The record; its `outcome` is `None` while [`result`](Self::result) holds it.
    record: TaskRecord,
    /// The result of an ended task, as JSON text. As a `Value` tree every object of a result is a
    /// B-tree node of hundreds of bytes; as text it takes its length (bench/HISTORY.md, "Results
    /// kept as JSON text"). Parsed again for each read of the task.
    result: Option<Box<RawValue>>,
    /// Position in the owner's index.
    seq: u64,
    /// Carries the record's version to [`TaskStore::changed`](super::TaskStore::changed) waiters; `None` while nobody waits.
    /// Dropping it (when the task is deleted) wakes every waiter with an error.
    waiters: Option<watch::Sender<u64>>,
}

impl Entry {
    fn new(record: TaskRecord, seq: u64) -> Box<Self> {
        Box::new(Entry {
            record,
            result: None,
            seq,
            waiters: None,
        })
    }

    /// The whole record, result included.
    fn snapshot(&self) -> TaskRecord {
        let mut record = self.record.clone();
        frozen::thaw(&mut record, self.result.as_deref());
        record
    }

    /// The task's view, its result as the text kept, without copying the record.
    fn view(&self) -> TaskView<'_> {
        frozen::view(&self.record, self.result.as_deref())
    }

    /// Puts the result back into the record, before a change.
    fn thaw(&mut self) {
        frozen::thaw(&mut self.record, self.result.take().as_deref());
    }

    /// Keeps an ended task's result as text, after a change.
    fn freeze(&mut self) {
        if let Some(text) = frozen::freeze(&mut self.record) {
            self.result = Some(text);
        }
    }
}

impl MemoryTaskStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store on this clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        MemoryTaskStore {
            clock,
            hasher: RandomState::default(),
            tasks: (0..SHARDS).map(|_| Mutex::default()).collect(),
            owners: (0..SHARDS).map(|_| Mutex::default()).collect(),
            next_seq: AtomicU64::new(0),
            events: broadcast::channel(EVENT_CAPACITY).0,
            leases: Mutex::default(),
        }
    }

    /// How many tasks are stored.
    pub fn len(&self) -> usize {
        self.tasks.iter().map(|shard| lock(shard).tasks.len()).sum()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn stripe<'a, K: Hash, T>(&self, stripes: &'a [Mutex<T>], key: &K) -> MutexGuard<'a, T> {
        let index = self.hasher.hash_one(key) as usize % stripes.len();
        lock(&stripes[index])
    }

    /// Applies `change` to the task under its stripe lock, wakes its waiters if the version moved,
    /// and returns what `change` returned with what `read` reads of the record afterwards (a
    /// record with a stored result or an elicitation schema is costly to clone). `owner: None` is
    /// the engine acting; `visible: false` marks a change clients cannot see (no event).
    fn update_with<T, R>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError>,
        read: impl FnOnce(&TaskRecord) -> R,
    ) -> Result<(T, R), StoreError> {
        let now = self.clock.now();
        let mut stripe = self.stripe(&self.tasks, id);
        let stripe = &mut *stripe;
        let entry = stripe
            .tasks
            .get_mut(id)
            .filter(|entry| owner.is_none_or(|owner| entry.record.owner == *owner))
            .ok_or(StoreError::NotFound)?;
        entry.thaw();
        let before = entry.record.version;
        let due = entry.record.due_at();
        let out = change(&mut entry.record, now).map(|out| {
            if entry.record.version != before {
                self.announce(entry, visible);
            }
            (out, read(&entry.record))
        });
        reschedule(&mut stripe.due, &mut stripe.running, id, due, &entry.record);
        entry.freeze();
        out
    }

    /// Tells waiters and subscribers about a change; called under the stripe lock, so that
    /// they learn of a task's versions in order.
    fn announce(&self, entry: &mut Entry, visible: bool) {
        if let Some(waiters) = &entry.waiters {
            if waiters.receiver_count() == 0 {
                entry.waiters = None;
            } else {
                waiters.send_replace(entry.record.version);
            }
        }
        if visible && self.events.receiver_count() > 0 {
            let _ = self
                .events
                .send(TaskEvent::Updated(Arc::new(entry.snapshot())));
        }
    }

    /// One page of `owner`'s tasks after the one numbered `after`; see [`Records::page`].
    fn read_page(
        &self,
        owner: &Owner,
        after: Option<u64>,
        limit: usize,
    ) -> (Vec<TaskRecord>, Option<u64>) {
        let start = after.map_or(0, |seq| seq + 1);
        let mut ids: Vec<(u64, TaskId)> = self
            .stripe(&self.owners, owner)
            .get(owner)
            .map(|index| {
                let page = index.range(start..).take(limit.saturating_add(1));
                page.map(|(seq, id)| (*seq, id.clone())).collect()
            })
            .unwrap_or_default();
        let more = ids.len() > limit;
        ids.truncate(limit);
        let last = more.then(|| ids[ids.len() - 1].0);
        let tasks = ids
            .iter()
            .filter_map(|(_, id)| {
                let stripe = self.stripe(&self.tasks, id);
                let entry = (stripe.tasks.get(id)).filter(|entry| entry.record.owner == *owner)?;
                Some(entry.snapshot())
            })
            .collect();
        (tasks, last)
    }

    fn sweep(&self, now: SystemTime) -> ExpiryReport {
        let mut report = ExpiryReport::default();
        let mut removed = Vec::new();
        let live: HashSet<String> = {
            let mut leases = lock(&self.leases);
            leases.retain(|_, until| *until > now);
            leases.keys().cloned().collect()
        };
        for stripe in self.tasks.iter() {
            let mut stripe = lock(stripe);
            let stripe = &mut *stripe;
            // The only tasks `TaskRecord::expiry` can say anything but `Keep` about: those whose
            // due time has come, and running ones whose runner holds no lease.
            let mut visit = Vec::new();
            while let Some((at, id)) = stripe.due.first()
                && *at <= now
            {
                visit.push(id.clone());
                stripe.due.pop_first();
            }
            visit.extend(
                stripe
                    .running
                    .iter()
                    .filter(|id| {
                        let runner = stripe.tasks.get(*id).and_then(|e| e.record.runner.as_ref());
                        runner.is_some_and(|r| !live.contains(r))
                    })
                    .cloned(),
            );
            visit.sort_unstable();
            visit.dedup();
            let mut doomed = Vec::new();
            for id in visit {
                let Some(entry) = stripe.tasks.get_mut(&id) else {
                    stripe.running.remove(&id);
                    continue;
                };
                if let Some(at) = entry.record.due_at() {
                    stripe.due.remove(&(at, id.clone()));
                }
                let record = &entry.record;
                let alive = record.runner.as_ref().is_none_or(|r| live.contains(r));
                match record.expiry(now, alive) {
                    Expiry::Keep => {}
                    Expiry::Remove => {
                        doomed.push(id);
                        continue;
                    }
                    verdict => {
                        entry.thaw();
                        if entry.record.apply_expiry(verdict, now) {
                            self.announce(entry, true);
                            report.changed(entry.record.clone());
                        } else {
                            report.unchanged(&entry.record);
                        }
                        entry.freeze();
                    }
                }
                reschedule(
                    &mut stripe.due,
                    &mut stripe.running,
                    &id,
                    None,
                    &entry.record,
                );
            }
            for id in doomed {
                // Dropping the entry drops its watch sender, which wakes its waiters.
                stripe.running.remove(&id);
                if let Some(entry) = stripe.tasks.remove(&id) {
                    removed.push((entry.record.owner, entry.seq, id));
                }
            }
        }
        for (owner, seq, id) in removed {
            {
                let mut owners = self.stripe(&self.owners, &owner);
                if let Some(index) = owners.get_mut(&owner) {
                    index.remove(&seq);
                    if index.is_empty() {
                        owners.remove(&owner);
                    }
                }
            }
            if self.events.receiver_count() > 0 {
                let _ = self.events.send(TaskEvent::Removed {
                    id: id.clone(),
                    owner,
                });
            }
            report.removed.push(id);
        }
        report
    }

    /// Subscribes to the task's versions, or reads the task with `read` if it is already newer.
    fn watch<T>(
        &self,
        id: &TaskId,
        seen: u64,
        read: impl Fn(&Entry) -> T,
    ) -> Result<Result<T, watch::Receiver<u64>>, StoreError> {
        let mut stripe = self.stripe(&self.tasks, id);
        let entry = stripe.tasks.get_mut(id).ok_or(StoreError::NotFound)?;
        if entry.record.version > seen {
            return Ok(Ok(read(entry)));
        }
        let version = entry.record.version;
        let sender = entry
            .waiters
            .get_or_insert_with(|| watch::channel(version).0);
        Ok(Err(sender.subscribe()))
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("clock", &self.clock)
            .field("tasks", &self.len())
            .finish_non_exhaustive()
    }
}

impl Records for MemoryTaskStore {
    fn time(&self) -> SystemTime {
        self.clock.now()
    }

    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        Box::pin(async move {
            let mut record = TaskRecord::new(task, self.clock.now());
            let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
            let mut stripe = self.stripe(&self.tasks, &record.id);
            let stripe = &mut *stripe;
            if stripe.tasks.contains_key(&record.id) {
                return Err(StoreError::DuplicateId(record.id));
            }
            // Index under the task's stripe lock, so a sweep cannot delete the task before it is
            // indexed (which would leave a stale index entry behind).
            let mut owners = self.stripe(&self.owners, &record.owner);
            // The record shares the index's copy of the owner's name (an HTTP request brings its
            // own copy each time).
            if let Some((known, _)) = owners.get_key_value(&record.owner) {
                record.owner = known.clone();
            }
            owners
                .entry(record.owner.clone())
                .or_default()
                .insert(seq, record.id.clone());
            drop(owners);
            stripe.running.insert(record.id.clone());
            reschedule(
                &mut stripe.due,
                &mut stripe.running,
                &record.id,
                None,
                &record,
            );
            let entry = stripe
                .tasks
                .entry(record.id.clone())
                .or_insert(Entry::new(record, seq));
            self.announce(entry, true);
            Ok(entry.snapshot())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let stripe = self.stripe(&self.tasks, id);
            let entry = (stripe.tasks.get(id))
                .filter(|entry| owner.is_none_or(|o| entry.record.owner == *o));
            Ok(entry.map(|entry| entry.snapshot()))
        })
    }

    fn change<'a, C: Change, P: Project>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        change: C,
    ) -> impl Future<Output = Result<(C::Out, P::Out), StoreError>> + Send + 'a {
        let changed = self.update_with(
            id,
            owner,
            C::VISIBLE,
            |record, now| change.apply_once(record, now),
            P::of,
        );
        std::future::ready(changed)
    }

    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)> {
        Box::pin(async move { Ok(self.read_page(owner, after, limit)) })
    }

    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(async move { Ok(self.sweep(now)) })
    }

    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut leases = lock(&self.leases);
            match duration {
                Some(duration) => {
                    leases.insert(instance.to_owned(), self.clock.now() + duration);
                }
                None => {
                    leases.remove(instance);
                }
            }
            Ok(())
        })
    }

    fn wait<'a, P: Project>(
        &'a self,
        id: &'a TaskId,
        seen: u64,
    ) -> impl Future<Output = Result<P::Out, StoreError>> + Send + 'a {
        self.wait_past(id, seen, |entry| {
            P::kept(&entry.record, entry.result.as_deref())
        })
    }

    fn feed(&self) -> broadcast::Receiver<TaskEvent> {
        self.events.subscribe()
    }

    /// Read in place, under the stripe lock: a view of the record with its result as the text
    /// kept, never a copy of the record.
    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let stripe = self.stripe(&self.tasks, id);
            let entry = (stripe.tasks.get(id)).filter(|entry| entry.record.owner == *owner);
            Ok(entry.map(|entry| read(entry.view())).is_some())
        })
    }

    fn output<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        name: &'a str,
    ) -> StoreFuture<'a, Option<ResourceContents>> {
        Box::pin(async move {
            let stripe = self.stripe(&self.tasks, id);
            let entry = (stripe.tasks.get(id)).filter(|entry| entry.record.owner == *owner);
            Ok(entry.and_then(|entry| entry.record.outputs.get(name).cloned()))
        })
    }
}

impl MemoryTaskStore {
    /// Waits until the task's version is past `seen_version`, then reads it with `read` (under
    /// the stripe lock).
    async fn wait_past<T>(
        &self,
        id: &TaskId,
        seen_version: u64,
        read: impl Fn(&Entry) -> T,
    ) -> Result<T, StoreError> {
        let mut versions = match self.watch(id, seen_version, &read)? {
            Ok(now) => return Ok(now),
            Err(versions) => versions,
        };
        loop {
            // Err: the sender was dropped, i.e. the task was deleted. The borrow `wait_for`
            // returns must end here, before the stripe lock is taken again.
            let woke = versions
                .wait_for(|version| *version > seen_version)
                .await
                .is_ok();
            if !woke {
                return Err(StoreError::NotFound);
            }
            let stripe = self.stripe(&self.tasks, id);
            match stripe.tasks.get(id) {
                Some(entry) if entry.record.version > seen_version => {
                    return Ok(read(entry));
                }
                Some(_) => continue,
                None => return Err(StoreError::NotFound),
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent even if a panic unwound through a holder: every change to them is
    // a single insert or remove.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
