//! A store that times every operation of the store it wraps, for the metrics (feature
//! `metrics`): `mcp_store_operation_duration_seconds` and `mcp_store_errors_total` by operation
//! (a [`StoreError::Backend`] counts as an error; a task not found does not). The server wraps
//! its store in one when the feature is on. Waits ([`TaskStore::changed`]) are not timed: how
//! long a task goes unchanged says nothing about the store.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::fast::FastPaths;
use super::{
    CancelResult, DeliveryReport, ExpiryReport, NewTask, StoreError, StoreFuture, TaskEvent,
    TaskPage, TaskRecord, TaskStore,
};
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};

/// Times the operations of `inner`.
#[derive(Debug)]
pub(crate) struct Metered {
    inner: Arc<dyn TaskStore>,
}

impl Metered {
    pub(crate) fn new(inner: Arc<dyn TaskStore>) -> Self {
        Metered { inner }
    }
}

/// `operation` of the wrapped store, timed.
fn timed<'a, T: Send + 'a>(
    operation: &'static str,
    call: StoreFuture<'a, T>,
) -> StoreFuture<'a, T> {
    Box::pin(async move {
        let start = Instant::now();
        let answer = call.await;
        let failed = matches!(answer, Err(StoreError::Backend(_)));
        crate::telemetry::store_operation(operation, !failed, start.elapsed());
        answer
    })
}

impl TaskStore for Metered {
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        timed("create", self.inner.create(task))
    }

    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>> {
        timed("get", self.inner.get(id, owner))
    }

    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>> {
        timed("get", self.inner.get_unchecked(id))
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        timed("list", self.inner.list(owner, cursor, limit))
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord> {
        timed(
            "set_status_message",
            self.inner.set_status_message(id, message),
        )
    }

    fn add_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: String,
        request: InputRequest,
    ) -> StoreFuture<'a, u64> {
        timed(
            "add_input_request",
            self.inner.add_input_request(id, key, request),
        )
    }

    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord> {
        timed(
            "withdraw_input_request",
            self.inner.withdraw_input_request(id, key),
        )
    }

    fn deliver_responses<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, DeliveryReport> {
        timed(
            "deliver_responses",
            self.inner.deliver_responses(id, owner, responses),
        )
    }

    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        timed("take_response", self.inner.take_response(id, key))
    }

    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()> {
        timed("add_output", self.inner.add_output(id, name, contents))
    }

    fn read_output<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        name: &'a str,
    ) -> StoreFuture<'a, Option<ResourceContents>> {
        timed("read_output", self.inner.read_output(id, owner, name))
    }

    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord> {
        timed("finish", self.inner.finish(id, outcome))
    }

    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult> {
        timed("cancel", self.inner.cancel(id, owner))
    }

    fn now(&self) -> SystemTime {
        self.inner.now()
    }

    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        timed("expire", self.inner.expire(now))
    }

    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()> {
        timed("renew_lease", self.inner.renew_lease(instance, duration))
    }

    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()> {
        timed("release_lease", self.inner.release_lease(instance))
    }

    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord> {
        self.inner.changed(id, seen_version)
    }

    fn claim<'a>(
        &'a self,
        id: &'a TaskId,
        instance: &'a str,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        timed("claim", self.inner.claim(id, instance))
    }

    fn release<'a>(&'a self, id: &'a TaskId, instance: &'a str) -> StoreFuture<'a, bool> {
        timed("release", self.inner.release(id, instance))
    }

    fn checkpoint<'a>(&'a self, id: &'a TaskId, value: Value) -> StoreFuture<'a, ()> {
        timed("checkpoint", self.inner.checkpoint(id, value))
    }

    fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.subscribe()
    }

    fn fast_paths(&self) -> Option<&dyn FastPaths> {
        Some(self)
    }
}

/// The wrapped store's shortcuts (or its fallbacks), timed as the operations they stand for.
impl FastPaths for Metered {
    fn get_view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        timed("get", self.inner.get_view(id, owner, read))
    }

    fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        timed("finish", self.inner.finish_status(id, outcome))
    }

    fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        self.inner.changed_status(id, seen_version)
    }

    fn creates_in_order(&self) -> bool {
        self.inner.creates_in_order()
    }

    fn forgetful_epoch(&self) -> Option<u64> {
        self.inner.forgetful_epoch()
    }
}
