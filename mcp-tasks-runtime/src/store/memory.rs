//! The in-memory task store, the default.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use super::Expiry;
use super::TaskRecord;
use super::cursor::{decode_cursor, encode_cursor};
use super::fast::FastPaths;
use super::frozen;
use super::{
    CancelResult, Clock, DeliveryReport, ExpiryReport, NewTask, StoreError, StoreFuture,
    SystemClock, TaskEvent, TaskPage, TaskStore,
};
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};

/// Lock stripes. Operations on tasks in different stripes never contend.
const SHARDS: usize = 64;
/// How many events a [`TaskStore::subscribe`] receiver may fall behind before it lags.
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
    /// B-tree node of about 600 bytes, so a small `CallToolResult` took about 1.5 KB; as text it
    /// takes its length. Parsed again for each read of the task.
    result: Option<Box<RawValue>>,
    /// Position in the owner's index.
    seq: u64,
    /// Carries the record's version to [`TaskStore::changed`] waiters; `None` while nobody waits.
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
            hasher: RandomState::new(),
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
    /// and returns what `change` returned with the record afterwards. `owner: None` is the
    /// engine acting; `visible: false` marks a change clients cannot see (no event).
    fn update<T>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError>,
    ) -> Result<(T, TaskRecord), StoreError> {
        self.update_with(id, owner, visible, change, |record| record.clone())
    }

    /// [`Self::update`] without the copy of the record for callers that do not return it (a
    /// record with a stored result or an elicitation schema is costly to clone).
    fn update_only<T>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        Ok(self.update_with(id, owner, visible, change, |_| ())?.0)
    }

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

    fn page(
        &self,
        owner: &Owner,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let start = match cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor)
                .and_then(|seq| seq.checked_add(1))
                .ok_or(StoreError::InvalidCursor)?,
        };
        let limit = limit.max(1);
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
        let next_cursor = more.then(|| encode_cursor(ids[ids.len() - 1].0));
        let tasks = ids
            .iter()
            .filter_map(|(_, id)| {
                let stripe = self.stripe(&self.tasks, id);
                let entry = (stripe.tasks.get(id)).filter(|entry| entry.record.owner == *owner)?;
                Some(entry.snapshot())
            })
            .collect();
        Ok(TaskPage { tasks, next_cursor })
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
                            report.failed.push(entry.record.clone());
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

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
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

    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let stripe = self.stripe(&self.tasks, id);
            let entry = (stripe.tasks.get(id)).filter(|entry| entry.record.owner == *owner);
            Ok(entry.map(|entry| entry.snapshot()))
        })
    }

    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let stripe = self.stripe(&self.tasks, id);
            Ok(stripe.tasks.get(id).map(|entry| entry.snapshot()))
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        Box::pin(async move { self.page(owner, cursor, limit) })
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| {
                record.set_status_message(message, now);
                Ok(())
            };
            Ok(self.update(id, None, true, change)?.1)
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
            Ok(self.update_with(id, None, true, change, |r| r.version)?.1)
        })
    }

    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| {
                record.withdraw_input_request(key, now);
                Ok(())
            };
            Ok(self.update(id, None, true, change)?.1)
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
            let read = |record: &TaskRecord| (record.version, record.status);
            let (delivery, (version, status)) =
                self.update_with(id, Some(owner), true, change, read)?;
            Ok(DeliveryReport {
                accepted: delivery.accepted,
                ignored: delivery.ignored,
                version,
                status,
            })
        })
    }

    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, _| Ok(record.take_response(key));
            self.update_only(id, None, false, change)
        })
    }

    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, _| record.add_output(name, contents);
            self.update_only(id, None, false, change)
        })
    }

    fn read_output<'a>(
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

    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| {
                record.finish(outcome, now);
                Ok(())
            };
            Ok(self.update(id, None, true, change)?.1)
        })
    }

    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| Ok(record.cancel(now));
            let (cancelled, record) = self.update(id, Some(owner), true, change)?;
            Ok(if cancelled {
                CancelResult::Cancelled(record)
            } else {
                CancelResult::AlreadyTerminal(record)
            })
        })
    }

    fn now(&self) -> SystemTime {
        self.clock.now()
    }

    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(async move { Ok(self.sweep(now)) })
    }

    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let until = self.clock.now() + duration;
            lock(&self.leases).insert(instance.to_owned(), until);
            Ok(())
        })
    }

    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            lock(&self.leases).remove(instance);
            Ok(())
        })
    }

    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord> {
        Box::pin(self.wait_past(id, seen_version, Entry::snapshot))
    }

    fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.events.subscribe()
    }

    fn fast_paths(&self) -> Option<&dyn FastPaths> {
        Some(self)
    }
}

/// The memory store reads a task in place, under its stripe lock: a view of the record with its
/// result as the text kept, or only the version and status, never a copy of the record.
impl FastPaths for MemoryTaskStore {
    fn get_view<'a>(
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

    fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| {
                record.finish(outcome, now);
                Ok(())
            };
            let read = |record: &TaskRecord| (record.version, record.status);
            Ok(self.update_with(id, None, true, change, read)?.1)
        })
    }

    fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(self.wait_past(id, seen_version, |entry| {
            (entry.record.version, entry.record.status)
        }))
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
