//! The one implementation of [`TaskStore`] that the built-in stores share, over what each keeps
//! differently: [`Records`]. A backend reads, creates and changes records, pages through them,
//! sweeps and wakes; the state machine's calls, the results a client gets, the cursors and the
//! fast paths are written here once. Each backend's speed work (the SQLite store's group commit
//! and creation joining, the Postgres store's writers and cache, the Redis store's scripts) stays
//! behind the trait.

use std::fmt;
use std::future::Future;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::change::{
    AddInputRequest, AddOutput, Cancel, Change, Checkpoint, Claim, DeliverResponses, Finish,
    Nothing, Project, Release, SetStatusMessage, Standing, TakeResponse, Version, Whole,
    WithdrawInputRequest,
};
use super::cursor::{decode_cursor, encode_cursor};
use super::fast::FastPaths;
#[cfg(any(feature = "redis", feature = "postgres"))]
use super::feed::Feed;
use super::{
    CancelResult, DeliveryReport, ExpiryReport, NewTask, StoreError, StoreFuture, TaskEvent,
    TaskPage, TaskRecord, TaskStore,
};
use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};

/// Where a built-in store keeps its tasks; every such store is a [`TaskStore`] through the one
/// implementation below. Not nameable outside this crate.
pub trait Records: Send + Sync + fmt::Debug + 'static {
    /// Whether [`insert`](Self::insert) queues the creation when called and the backend applies
    /// every change of the task asked for afterwards after it (see
    /// [`FastPaths::creates_in_order`]).
    const CREATES_IN_ORDER: bool = false;

    /// [`FastPaths::forgetful_epoch`]: `None`, the backend keeps every write it acknowledged.
    fn forgetful_epoch(&self) -> Option<u64> {
        None
    }

    /// The time by the backend's clock ([`TaskStore::now`]).
    fn time(&self) -> SystemTime;

    /// Stores a new task ([`TaskStore::create`]).
    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord>;

    /// The task, if it exists (and belongs to `owner`, when given).
    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies `change` to the task (if it belongs to `owner`, when given; else
    /// [`StoreError::NotFound`]) by the backend's clock, stores it if its version moved, wakes
    /// its waiters and, for a [visible](Change::VISIBLE) change, tells subscribers; what
    /// `change` returned, and `P` of the record afterwards. Resolves once the change is stored.
    fn change<'a, C: Change, P: Project>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        change: C,
    ) -> impl Future<Output = Result<(C::Out, P::Out), StoreError>> + Send + 'a;

    /// Up to `limit` (at least 1) of `owner`'s tasks created after the one numbered `after`
    /// (from the first when `None`; never above `i64::MAX`), oldest first; with the number of
    /// the last when more follow.
    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)>;

    /// [`TaskStore::expire`].
    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport>;

    /// Renews `instance`'s lease for `duration` from now, or ends it (`None`): see
    /// [`TaskStore::renew_lease`] and [`TaskStore::release_lease`].
    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()>;

    /// `P` of the task once its version is past `seen` ([`TaskStore::changed`]).
    fn wait<'a, P: Project>(
        &'a self,
        id: &'a TaskId,
        seen: u64,
    ) -> impl Future<Output = Result<P::Out, StoreError>> + Send + 'a;

    /// [`TaskStore::subscribe`].
    fn feed(&self) -> broadcast::Receiver<TaskEvent>;

    /// [`FastPaths::get_view`]; the default reads the record.
    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let record = self.load(id, Some(owner)).await?;
            Ok(record.map(|record| read(record.task_view())).is_some())
        })
    }

    /// [`TaskStore::read_output`]; the default reads the record.
    fn output<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        name: &'a str,
    ) -> StoreFuture<'a, Option<ResourceContents>> {
        Box::pin(async move {
            let record = self.load(id, Some(owner)).await?;
            Ok(record.and_then(|mut record| record.outputs.remove(name)))
        })
    }
}

impl<R: Records> TaskStore for R {
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        self.insert(task)
    }

    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>> {
        self.load(id, Some(owner))
    }

    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>> {
        self.load(id, None)
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        Box::pin(async move {
            let after = match cursor {
                None => None,
                Some(cursor) => Some(
                    decode_cursor(cursor)
                        .filter(|seq| i64::try_from(*seq).is_ok())
                        .ok_or(StoreError::InvalidCursor)?,
                ),
            };
            let (tasks, last) = self.page(owner, after, limit.max(1)).await?;
            let next_cursor = last.map(encode_cursor);
            Ok(TaskPage { tasks, next_cursor })
        })
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord> {
        let change = SetStatusMessage(message);
        Box::pin(async move { Ok(self.change::<_, Whole>(id, None, change).await?.1) })
    }

    fn add_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: String,
        request: InputRequest,
    ) -> StoreFuture<'a, u64> {
        let change = AddInputRequest(key, request);
        Box::pin(async move { Ok(self.change::<_, Version>(id, None, change).await?.1) })
    }

    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord> {
        let change = WithdrawInputRequest(key.to_owned());
        Box::pin(async move { Ok(self.change::<_, Whole>(id, None, change).await?.1) })
    }

    fn deliver_responses<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, DeliveryReport> {
        let change = DeliverResponses(responses);
        Box::pin(async move {
            let (delivery, (version, status)) =
                self.change::<_, Standing>(id, Some(owner), change).await?;
            Ok(DeliveryReport {
                accepted: delivery.accepted,
                ignored: delivery.ignored,
                version,
                status,
            })
        })
    }

    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let change = TakeResponse(key.to_owned());
        Box::pin(async move { Ok(self.change::<_, Nothing>(id, None, change).await?.0) })
    }

    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()> {
        let change = AddOutput(name, contents);
        Box::pin(async move {
            self.change::<_, Nothing>(id, None, change).await?;
            Ok(())
        })
    }

    fn read_output<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        name: &'a str,
    ) -> StoreFuture<'a, Option<ResourceContents>> {
        self.output(id, owner, name)
    }

    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord> {
        let change = Finish(outcome);
        Box::pin(async move { Ok(self.change::<_, Whole>(id, None, change).await?.1) })
    }

    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult> {
        Box::pin(async move {
            let (cancelled, record) = self.change::<_, Whole>(id, Some(owner), Cancel).await?;
            Ok(if cancelled {
                CancelResult::Cancelled(record)
            } else {
                CancelResult::AlreadyTerminal(record)
            })
        })
    }

    fn claim<'a>(
        &'a self,
        id: &'a TaskId,
        instance: &'a str,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let change = Claim(instance.to_owned());
        Box::pin(async move {
            match self.change::<_, Whole>(id, None, change).await {
                Ok((true, record)) => Ok(Some(record)),
                Ok((false, _)) | Err(StoreError::NotFound) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    fn release<'a>(&'a self, id: &'a TaskId, instance: &'a str) -> StoreFuture<'a, bool> {
        let change = Release(instance.to_owned());
        Box::pin(async move {
            match self.change::<_, Nothing>(id, None, change).await {
                Ok((released, ())) => Ok(released),
                Err(StoreError::NotFound) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn checkpoint<'a>(&'a self, id: &'a TaskId, value: Value) -> StoreFuture<'a, ()> {
        let change = Checkpoint(value);
        Box::pin(async move {
            self.change::<_, Nothing>(id, None, change).await?;
            Ok(())
        })
    }

    fn now(&self) -> SystemTime {
        self.time()
    }

    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        self.sweep_at(now)
    }

    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()> {
        self.lease(instance, Some(duration))
    }

    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()> {
        self.lease(instance, None)
    }

    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord> {
        Box::pin(self.wait::<Whole>(id, seen_version))
    }

    fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.feed()
    }

    fn fast_paths(&self) -> Option<&dyn FastPaths> {
        Some(self)
    }
}

impl<R: Records> FastPaths for R {
    fn get_view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        self.view(id, owner, read)
    }

    fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        let change = Finish(outcome);
        Box::pin(async move { Ok(self.change::<_, Standing>(id, None, change).await?.1) })
    }

    fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(self.wait::<Standing>(id, seen_version))
    }

    fn creates_in_order(&self) -> bool {
        R::CREATES_IN_ORDER
    }

    fn forgetful_epoch(&self) -> Option<u64> {
        Records::forgetful_epoch(self)
    }
}

/// A backend whose records live in a server that several instances share (Redis, Postgres): it
/// reads and writes whole records, applies a change again when another instance changed the
/// task first (or in a batch of its own), and learns of changes through its [`Feed`]; the rest
/// of [`Records`] is written once, below. Not nameable outside this crate.
#[cfg(any(feature = "redis", feature = "postgres"))]
pub trait Remote: Send + Sync + fmt::Debug + 'static {
    /// [`Records::CREATES_IN_ORDER`].
    const CREATES_IN_ORDER: bool = false;

    /// Whether the server may lose writes it acknowledged, coming back from a restart without
    /// them: the count of the feed's connections is then the store's
    /// [`forgetful_epoch`](FastPaths::forgetful_epoch) (a restart breaks the connection).
    const FORGETS_ACKNOWLEDGED_WRITES: bool = false;

    /// [`Records::time`].
    fn time(&self) -> SystemTime;

    /// [`Records::insert`].
    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord>;

    /// [`Records::load`].
    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies `change` to the task and stores the record it leaves (see [`Records::change`]),
    /// which it returns with what `change` returned. `change` may run more than once.
    fn update<'a, T: Send + 'static>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        visible: bool,
        change: impl FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<(T, TaskRecord), StoreError>> + Send + 'a;

    /// [`Records::page`].
    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)>;

    /// [`Records::sweep_at`].
    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport>;

    /// [`Records::lease`].
    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()>;

    /// The store's local waiters and subscribers.
    fn feed(&self) -> &Feed;

    /// [`Records::view`], reading from the stored text only what the view shows
    /// ([`StoredView`](super::record::StoredView)): not the task's outputs.
    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool>;
}

#[cfg(any(feature = "redis", feature = "postgres"))]
impl<S: Remote> Records for S {
    const CREATES_IN_ORDER: bool = <S as Remote>::CREATES_IN_ORDER;

    fn forgetful_epoch(&self) -> Option<u64> {
        S::FORGETS_ACKNOWLEDGED_WRITES.then(|| Remote::feed(self).connections())
    }

    fn time(&self) -> SystemTime {
        Remote::time(self)
    }

    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        Remote::insert(self, task)
    }

    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Remote::load(self, id, owner)
    }

    async fn change<'a, C: Change, P: Project>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        change: C,
    ) -> Result<(C::Out, P::Out), StoreError> {
        let apply = move |record: &mut TaskRecord, now| change.apply(record, now);
        let (out, record) = self.update(id, owner, C::VISIBLE, apply).await?;
        Ok((out, P::owned(record)))
    }

    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)> {
        Remote::page(self, owner, after, limit)
    }

    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Remote::sweep_at(self, now)
    }

    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()> {
        Remote::lease(self, instance, duration)
    }

    async fn wait<'a, P: Project>(
        &'a self,
        id: &'a TaskId,
        seen: u64,
    ) -> Result<P::Out, StoreError> {
        let read = || Remote::load(self, id, None);
        Ok(P::owned(Remote::feed(self).wait(id, seen, read).await?))
    }

    fn feed(&self) -> broadcast::Receiver<TaskEvent> {
        Remote::feed(self).subscribe()
    }

    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Remote::view(self, id, owner, read)
    }
}
