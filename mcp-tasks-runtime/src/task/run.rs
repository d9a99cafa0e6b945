//! The driver of one running task: it drives the tool's future, writes the status messages the
//! tool sets, follows the task's changes in the store (a cancel or an expiry stops the tool), tells
//! a legacy session about status changes, and records the tool's outcome, retrying while the
//! store is down.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::backend::{ClientChannel, StatusSlot};
use super::limits::RunningSlot;
use crate::protocol::CallToolResult;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::store::{StoreError, TaskRecord, TaskStore};

/// A tool's future with panics caught: what a running task drives.
pub(crate) type CaughtFuture = Pin<
    Box<
        dyn Future<Output = Result<Result<CallToolResult, RpcError>, Box<dyn std::any::Any + Send>>>
            + Send,
    >,
>;

/// The first wait before recording a task's outcome again after the store failed.
const FINISH_RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between attempts to record a task's outcome.
const FINISH_RETRY_MAX: Duration = Duration::from_secs(5);

/// One running task.
pub(super) struct Run {
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) id: TaskId,
    /// Whose task it is.
    pub(super) owner: Owner,
    pub(super) tool: &'static str,
    /// The tool's cancellation token.
    pub(super) cancel: CancellationToken,
    /// How long a cancelled tool may take to wind down.
    pub(super) grace: Duration,
    /// The legacy session, told about every status change.
    pub(super) channel: Option<Arc<dyn ClientChannel>>,
    /// Held while the task runs.
    pub(super) _slot: RunningSlot,
    /// Counts the task as running while it runs.
    pub(super) _running: crate::telemetry::Held,
    /// Where the engine learns that this task's outcome is being recorded.
    pub(super) settling: Settling,
}

/// The tasks of one engine whose tool has returned and whose outcome is being recorded, each
/// with a channel whose sender goes once it is.
#[derive(Clone, Default)]
pub(super) struct Settling(Arc<Mutex<HashMap<TaskId, Recording>>>);

/// A task's owner, and a receiver whose sender goes when the task's outcome is recorded.
type Recording = (Owner, watch::Receiver<()>);

impl Settling {
    /// A receiver of task `id`'s channel, if its outcome is being recorded and it belongs to
    /// `owner`.
    pub(super) fn watch(&self, id: &TaskId, owner: &Owner) -> Option<watch::Receiver<()>> {
        let settling = lock(&self.0);
        let (of, recorded) = settling.get(id)?;
        (of == owner).then(|| recorded.clone())
    }

    /// Marks task `id` (of `owner`) as having its outcome recorded until the guard is dropped.
    fn start<'a>(&'a self, id: &'a TaskId, owner: &Owner) -> SettlingGuard<'a> {
        let (done, watched) = watch::channel(());
        lock(&self.0).insert(id.clone(), (owner.clone(), watched));
        SettlingGuard {
            settling: self,
            id,
            _done: done,
        }
    }
}

struct SettlingGuard<'a> {
    settling: &'a Settling,
    id: &'a TaskId,
    _done: watch::Sender<()>,
}

impl Drop for SettlingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.settling.0).remove(self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run {
    /// Drives the tool of a task created at version and status `created` until it ends.
    pub(super) async fn drive(
        self,
        mut run: CaughtFuture,
        status: Arc<StatusSlot>,
        created: (u64, TaskStatus),
    ) {
        let (mut seen, mut last_status) = created;
        loop {
            tokio::select! {
                // The tool first: a tool that is done at once ends the task without a waiter on
                // the store ever being set up.
                biased;
                out = &mut run => {
                    // Until the outcome is recorded, a poll of the task may wait for it.
                    let _settling = self.settling.start(&self.id, &self.owner);
                    if let Some(message) = status.take() {
                        let _ = self.store.set_status_message(&self.id, Some(message)).await;
                    }
                    let out = out.unwrap_or_else(|panic| Err(super::panic_error(self.tool, &*panic)));
                    if let Err(error) = &out {
                        // A failed task says why in its status message too (SEP-2663 SHOULD).
                        let message = format!("Tool execution failed: {}", error.message);
                        let _ = self.store.set_status_message(&self.id, Some(message)).await;
                    }
                    let outcome = || match &out {
                        Ok(result) => TaskOutcome::Result(serde_json::to_value(result).unwrap_or(Value::Null)),
                        Err(error) => TaskOutcome::Error(error.clone()),
                    };
                    self.record_outcome(outcome, &mut last_status).await;
                    return;
                }
                () = status.changed() => {
                    if let Some(message) = status.take()
                        && let Err(e) = self.store.set_status_message(&self.id, Some(message)).await
                    {
                        tracing::debug!(task = %self.id, error = %e, "status message not recorded");
                    }
                }
                changed = self.next_change(seen) => match changed {
                    Ok((version, status, record)) => {
                        seen = version;
                        match &record {
                            Some(record) => self.notify(record, &mut last_status),
                            None => last_status = status,
                        }
                        if status.is_terminal() {
                            crate::telemetry::task_ended(self.tool, status);
                            // Cancelled or expired elsewhere: tell the tool, give it a moment.
                            tracing::debug!(task = %self.id, %status, "the task ended outside its tool; stopping the tool");
                            self.stop_tool(&mut run).await;
                            return;
                        }
                    }
                    Err(StoreError::NotFound) => {
                        self.stop_tool(&mut run).await;
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(task = %self.id, error = %e, "watching the task failed; retrying");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        }
    }

    /// Stops the tool of a task that ended outside it: its cancellation token, then the grace
    /// period to wind down; a tool still running then is dropped (its future is not polled
    /// again). Either way the log says which, so an operator can tell a tool that honours
    /// cancellation from one that had to be cut off.
    async fn stop_tool(&self, run: &mut CaughtFuture) {
        self.cancel.cancel();
        match tokio::time::timeout(self.grace, run).await {
            Ok(_) => tracing::debug!(task = %self.id, "the tool stopped"),
            Err(_) => tracing::warn!(
                task = %self.id,
                grace = ?self.grace,
                "the tool did not stop within the grace period after its task ended; dropped"
            ),
        }
    }

    /// Records the tool's outcome (made by `outcome`, again for each attempt). While the store
    /// itself fails (`StoreError::Backend`: Redis unreachable, a SQLite file locked), it tries
    /// again, waiting 100 ms, then twice as long each time up to 5 s, so an outage does not lose
    /// the result: it is kept until the store takes it, the task ends some other way (the store
    /// then refuses it), or the server shuts down (the task's cancel token; then it is lost, and
    /// said so in the log).
    async fn record_outcome(
        &self,
        outcome: impl Fn() -> TaskOutcome,
        last_status: &mut TaskStatus,
    ) {
        let mut delay = FINISH_RETRY_FIRST;
        let mut failures = 0u32;
        loop {
            // Only a legacy session is told about the ended task: nobody else needs the record
            // (with its result) back.
            let finished = if self.channel.is_some() {
                self.store.finish(&self.id, outcome()).await.map(|record| {
                    self.notify(&record, last_status);
                    record.status
                })
            } else {
                self.store
                    .finish_status(&self.id, outcome())
                    .await
                    .map(|(_, status)| status)
            };
            match finished {
                Ok(status) => {
                    if failures > 0 {
                        tracing::info!(task = %self.id, failures, "the task's outcome is recorded after the store came back");
                    }
                    crate::telemetry::task_ended(self.tool, status);
                    return;
                }
                Err(StoreError::Backend(e)) if !self.cancel.is_cancelled() => {
                    if failures == 0 {
                        tracing::warn!(task = %self.id, error = %e, "recording the task's outcome failed; retrying until the store takes it");
                    }
                    failures += 1;
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = self.cancel.cancelled() => {}
                    }
                    delay = (delay * 2).min(FINISH_RETRY_MAX);
                }
                Err(e) => {
                    tracing::error!(task = %self.id, error = %e, failures, "the task's outcome could not be recorded; it is lost");
                    return;
                }
            }
        }
    }

    /// The task's next change after version `seen`: its version and status, with the record
    /// only when a legacy session is told about it (a copy of a record is not free).
    async fn next_change(
        &self,
        seen: u64,
    ) -> Result<(u64, TaskStatus, Option<TaskRecord>), StoreError> {
        if self.channel.is_some() {
            let record = self.store.changed(&self.id, seen).await?;
            Ok((record.version, record.status, Some(record)))
        } else {
            let (version, status) = self.store.changed_status(&self.id, seen).await?;
            Ok((version, status, None))
        }
    }

    /// Legacy sessions get `notifications/tasks/status` on every status change.
    fn notify(&self, record: &TaskRecord, last: &mut TaskStatus) {
        if record.status == *last {
            return;
        }
        *last = record.status;
        if let Some(channel) = &self.channel {
            channel.notify(
                "notifications/tasks/status",
                record.legacy_status_notification_params(),
            );
        }
    }
}
