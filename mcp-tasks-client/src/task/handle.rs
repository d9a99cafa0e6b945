//! [`TaskHandle`]: what a caller holds for a task; it starts the driver and reads what the
//! driver records.

use super::drive::{drive_legacy, drive_modern};
use super::{Origin, Shared, State, TaskKind, TaskSnapshot, TaskUpdate, TaskUpdates, lock};
use crate::error::Error;
use crate::result::structured;
use crate::session::Session;
use mcp_tasks_runtime::protocol::CallToolResult;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Aborts the driver when the last handle goes.
#[derive(Debug)]
struct DriverGuard(JoinHandle<()>);

impl Drop for DriverGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A tool call running as a task on the server. Follow it with [`updates`](Self::updates), wait
/// for [`result`](Self::result), or [`cancel`](Self::cancel) it. A driver in the background
/// polls the task (at the server's suggested interval) and answers its questions with the
/// client's input handler; it stops when the task is over or every clone of the handle is dropped.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    shared: Arc<Shared>,
    _driver: Arc<DriverGuard>,
}

impl TaskHandle {
    /// Starts following the task `task` (a `CreateTaskResult`, or legacy the `task` in it).
    pub(crate) fn start(
        session: Arc<Session>,
        tool: &str,
        kind: TaskKind,
        task: &Value,
    ) -> Result<TaskHandle, Error> {
        let seed = TaskSnapshot::parse(task).map_err(|why| Error::TaskCreation {
            tool: tool.to_owned(),
            reason: format!("the task handle is not valid: {why}"),
            error: None,
        })?;
        let shared = Arc::new(Shared {
            id: seed.task_id.clone(),
            tool: tool.to_owned(),
            session,
            kind,
            state: Mutex::new(State {
                history: vec![seed.clone()],
                latest: seed,
                latest_origin: Origin::Answered,
                subscribers: Vec::new(),
                changed_at: Instant::now(),
                stuck_reported: false,
                finished: false,
            }),
            outcome: watch::Sender::new(None),
            wake: Notify::new(),
        });
        let driver = {
            let shared = shared.clone();
            let mut notes = shared.session.peer().subscribe();
            tokio::spawn(async move {
                let outcome = match &shared.kind {
                    TaskKind::Modern => drive_modern(&shared, &mut notes).await,
                    TaskKind::Legacy { .. } => drive_legacy(&shared, &mut notes).await,
                };
                shared.finish(outcome);
            })
        };
        Ok(TaskHandle {
            shared,
            _driver: Arc::new(DriverGuard(driver)),
        })
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The tool it runs.
    pub fn tool(&self) -> &str {
        &self.shared.tool
    }

    /// The state as last seen.
    pub fn snapshot(&self) -> TaskSnapshot {
        self.shared.latest()
    }

    /// Every distinct state seen so far (status, message, progress), oldest first, starting with
    /// the one the task was created in (for a very long task: that one and the latest 1,023).
    /// A state that reaches the client after a newer one (by the task's `lastUpdatedAt`: a
    /// notification the server had queued, say) is left out, here and in
    /// [`updates`](Self::updates): neither ever goes backwards.
    pub fn history(&self) -> Vec<TaskSnapshot> {
        lock(&self.shared.state).history.clone()
    }

    /// The task's events from now on, starting with its current state; the stream ends when the
    /// task is over.
    pub fn updates(&self) -> TaskUpdates {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = lock(&self.shared.state);
        let _ = tx.send(TaskUpdate::Updated(state.latest.clone()));
        if !state.finished {
            state.subscribers.push(tx);
        }
        TaskUpdates { rx }
    }

    /// Waits for the final result. A tool error (`isError: true`) is a result; a task that
    /// failed is [`Error::TaskFailed`], one cancelled [`Error::TaskCancelled`]; a task the client
    /// gave up on says why ([`Error::TaskGet`], or [`Error::Rpc`] for `tasks/update` refused three
    /// times in a row, one poll interval apart). May be called any number of times, from any clone.
    pub async fn result(&self) -> Result<CallToolResult, Error> {
        let mut rx = self.shared.outcome.subscribe();
        loop {
            if let Some(outcome) = rx.borrow_and_update().clone() {
                return outcome;
            }
            if rx.changed().await.is_err() {
                return Err(Error::transport("the task's driver stopped"));
            }
        }
    }

    /// The final result's structured content as `T` (see [`structured`](crate::structured)).
    pub async fn structured<T: DeserializeOwned>(&self) -> Result<T, Error> {
        structured(self.result().await?)
    }

    /// How long the task has been unchanged, when it counts as stuck right now (a
    /// [`TaskUpdate::Stuck`] was raised and nothing has changed since).
    pub fn stuck_for(&self) -> Option<Duration> {
        let state = lock(&self.shared.state);
        (state.stuck_reported && !state.finished).then(|| state.changed_at.elapsed())
    }

    /// Whether the outcome is known.
    pub fn is_finished(&self) -> bool {
        self.shared.is_finished()
    }

    /// Asks the server to cancel the task (`tasks/cancel`). Cancellation is cooperative: the
    /// task may still end otherwise; [`result`](Self::result) tells how it ended. Cancelling a
    /// task that is already over does nothing.
    pub async fn cancel(&self) -> Result<(), Error> {
        self.shared.cancel().await
    }
}
