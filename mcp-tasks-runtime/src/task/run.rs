//! The driver of one running task: it drives the tool's future, writes the status messages the
//! tool sets, follows the task's changes in the store (a cancel or an expiry stops the tool), tells
//! a legacy session about status changes, and records the tool's outcome, retrying while the
//! store is down.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use foldhash::HashMap;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::backend::{ClientChannel, StatusSlot};
use super::limits::RunningSlot;
use crate::protocol::CallToolResult;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::race::{first, or_never};
use crate::store::{NewTask, StoreError, StoreFuture, TaskRecord, TaskStore};

/// A tool's future with panics caught: what a running task drives.
pub(crate) type CaughtFuture = Pin<
    Box<
        dyn Future<Output = Result<Result<CallToolResult, RpcError>, Box<dyn std::any::Any + Send>>>
            + Send,
    >,
>;

/// What woke a task's driver (see [`Run::drive`]).
enum Event {
    /// The engine handed the task off to another instance.
    HandedOff,
    /// The tool returned (or panicked).
    Returned(<CaughtFuture as Future>::Output),
    /// The task's creation, which the driver started, is known.
    Created(Result<TaskRecord, StoreError>),
    /// The tool set its status message.
    Status,
    /// The task changed in the store.
    Changed(Result<(u64, TaskStatus, Option<TaskRecord>), StoreError>),
}

/// The first wait before recording a task's outcome again after the store failed.
const FINISH_RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between attempts to record a task's outcome.
const FINISH_RETRY_MAX: Duration = Duration::from_secs(5);

/// What a task's driver starts from.
pub(super) enum Created {
    /// The task's creation has committed, at this version and status.
    Already(u64, TaskStatus),
    /// The driver creates the task before it first polls the tool, and tells `reply` how that
    /// went once it has committed (see `TaskEngine::start_fresh`).
    Creating(NewTask, oneshot::Sender<Result<TaskRecord, StoreError>>),
}

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
    /// Where the outcome is kept once recorded, if the store may forget it.
    pub(super) recorded: super::recorded::Recorded,
    /// A durable task's: cancelled when the engine hands the task off to another instance;
    /// the tool is then stopped and its outcome, if any, is not recorded here.
    pub(super) handed_off: Option<CancellationToken>,
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
    /// Drives the tool of a task until it ends. If the driver creates the task
    /// ([`Created::Creating`]), the tool runs while the creation commits: the store applies
    /// writes in the order they were queued, so the tool's status messages and outcome are
    /// written after the creation, and a quick tool's outcome commits with it or in the next
    /// transaction. The task's changes are followed once it exists; if the creation fails, the
    /// tool is stopped.
    pub(super) async fn drive(
        self,
        mut run: CaughtFuture,
        status: Arc<StatusSlot>,
        created: Created,
    ) {
        // Set if the creation failed: the outcome then has no task to go to.
        let failed = AtomicBool::new(false);
        let (mut seen, mut last_status, mut creating) = match created {
            Created::Already(version, status) => (Some(version), status, None),
            // Queued now, before the tool is first polled.
            Created::Creating(new, reply) => (
                None,
                TaskStatus::Working,
                Some((self.store.create(new), reply)),
            ),
        };
        loop {
            let event = {
                let mut handed_off =
                    pin!(or_never(self.handed_off.as_ref().map(|t| t.cancelled())));
                let mut created = pin!(or_never(creating.as_mut().map(|(creating, _)| creating)));
                let mut status_changed = pin!(status.changed());
                let mut changed = pin!(or_never(seen.map(|seen| self.next_change(seen))));
                // In this order, each time the driver wakes. The tool before the store: a tool
                // that is done at once ends the task without a waiter on the store ever being
                // set up.
                poll_fn(|cx| {
                    if handed_off.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Event::HandedOff);
                    }
                    if let Poll::Ready(out) = run.as_mut().poll(cx) {
                        return Poll::Ready(Event::Returned(out));
                    }
                    if let Poll::Ready(known) = created.as_mut().poll(cx) {
                        return Poll::Ready(Event::Created(known));
                    }
                    if status_changed.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Event::Status);
                    }
                    changed.as_mut().poll(cx).map(Event::Changed)
                })
                .await
            };
            match event {
                Event::HandedOff => {
                    tracing::debug!(task = %self.id, "the task is handed off to another instance; stopping its tool here");
                    self.stop_tool(&mut run).await;
                    return;
                }
                Event::Returned(out) => {
                    // Until the outcome is recorded, a poll of the task may wait for it.
                    let _settling = self.settling.start(&self.id, &self.owner);
                    let settled = async {
                        if let Some(message) = status.take() {
                            let _ = self.store.set_status_message(&self.id, Some(message)).await;
                        }
                        let out =
                            out.unwrap_or_else(|panic| Err(super::panic_error(self.tool, &*panic)));
                        if let Err(error) = &out {
                            // A failed task says why in its status message too (SEP-2663 SHOULD).
                            let message = format!("Tool execution failed: {}", error.message);
                            let _ = self.store.set_status_message(&self.id, Some(message)).await;
                        }
                        let outcome = || super::recorded::task_outcome(&out);
                        if self
                            .record_outcome(outcome, &mut last_status, &failed)
                            .await
                        {
                            self.recorded.keep(&self.id, out);
                        }
                    };
                    match creating.take() {
                        None => settled.await,
                        // The creation is answered once it commits, while the outcome (queued
                        // after it) is recorded. The outcome first: a store may then write the
                        // task as it ended in one go (SQLite's joins the end to the creation
                        // and spares encoding the new task).
                        Some((creating, reply)) => {
                            let creation = async {
                                if self.created(creating, reply).await.is_none() {
                                    // No task: recording the outcome stops trying.
                                    failed.store(true, Ordering::Relaxed);
                                    self.cancel.cancel();
                                }
                            };
                            futures_util::future::join(settled, creation).await;
                        }
                    }
                    return;
                }
                Event::Created(known) => {
                    let reply = creating
                        .take()
                        .map(|(_, reply)| reply)
                        .expect("the creation is under way");
                    match self.answer_creation(known, reply) {
                        Some((version, status)) => {
                            seen = Some(version);
                            last_status = status;
                        }
                        None => {
                            tracing::debug!(task = %self.id, "the task's creation failed; stopping its tool");
                            self.stop_tool(&mut run).await;
                            return;
                        }
                    }
                }
                Event::Status => {
                    if let Some(message) = status.take()
                        && let Err(e) = self.store.set_status_message(&self.id, Some(message)).await
                    {
                        tracing::debug!(task = %self.id, error = %e, "status message not recorded");
                    }
                }
                Event::Changed(changed) => match changed {
                    Ok((version, status, record)) => {
                        seen = Some(version);
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
                },
            }
        }
    }

    /// Waits for the task's creation and answers `reply` with it: the task's version and status
    /// if it was created.
    async fn created(
        &self,
        creating: StoreFuture<'_, TaskRecord>,
        reply: oneshot::Sender<Result<TaskRecord, StoreError>>,
    ) -> Option<(u64, TaskStatus)> {
        self.answer_creation(creating.await, reply)
    }

    /// Answers `reply` with the creation's outcome `known`: the task's version and status if it
    /// was created.
    fn answer_creation(
        &self,
        known: Result<TaskRecord, StoreError>,
        reply: oneshot::Sender<Result<TaskRecord, StoreError>>,
    ) -> Option<(u64, TaskStatus)> {
        let created = known.as_ref().ok().map(|task| (task.version, task.status));
        if created.is_some() {
            crate::telemetry::task_created(self.tool);
        }
        // The caller may have gone; the task runs on regardless.
        let _ = reply.send(known);
        created
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
    /// said so in the log). Whether the store took it.
    async fn record_outcome(
        &self,
        outcome: impl Fn() -> TaskOutcome,
        last_status: &mut TaskStatus,
        creation_failed: &AtomicBool,
    ) -> bool {
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
                    return true;
                }
                Err(StoreError::Backend(e)) if !self.cancel.is_cancelled() => {
                    if failures == 0 {
                        tracing::warn!(task = %self.id, error = %e, "recording the task's outcome failed; retrying until the store takes it");
                    }
                    failures += 1;
                    first(tokio::time::sleep(delay), self.cancel.cancelled()).await;
                    delay = (delay * 2).min(FINISH_RETRY_MAX);
                }
                Err(e) => {
                    if creation_failed.load(Ordering::Relaxed) {
                        tracing::debug!(task = %self.id, "the task's creation failed; its outcome is dropped");
                    } else {
                        tracing::error!(task = %self.id, error = %e, failures, "the task's outcome could not be recorded; it is lost");
                    }
                    return false;
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
