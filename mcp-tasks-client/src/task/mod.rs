//! Following a task: a driver per task polls its status (at the server's `pollInterval`), answers
//! what it asks, publishes each change, notices when it is stuck, and keeps the final outcome.
//!
//! | era | status | input | result |
//! |---|---|---|---|
//! | modern | `tasks/get` (`DetailedTask`) | `inputRequests` answered with `tasks/update` | `result` / `error` in the task |
//! | legacy | `tasks/get` (flat `Task`), `notifications/progress` | server-to-client requests tagged `related-task`, while `tasks/result` waits | `tasks/result` |
//!
//! Push slots in at [`drive::wait_next`]: a notification about the task that reaches the client is
//! handled exactly like a poll's answer, without waiting for the next poll. Today that is legacy
//! `notifications/tasks/status` on the session; modern `notifications/tasks` (a whole
//! `DetailedTask`) will arrive the same way once the client opens a `subscriptions/listen` stream,
//! which it does not do yet (no server offers it yet).
//!
//! `snapshot` reads a task's state, `drive` holds the two drivers, `handle` the [`TaskHandle`]
//! callers hold; this module the events and the state a driver and its handles share.

mod drive;
mod handle;
mod snapshot;

pub use handle::TaskHandle;
pub use snapshot::{Progress, TaskSnapshot};

use crate::error::Error;
use crate::http::Outcome;
use crate::peer::Notification;
use crate::session::Session;
use mcp_tasks_runtime::__internal::meta;
use mcp_tasks_runtime::protocol::CallToolResult;
use serde_json::{Value, json};
use snapshot::parse_snapshot;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Notify, mpsc, watch};
use tokio::time::Instant;

/// How many states [`TaskHandle::history`] keeps: the first and the latest ones.
const MAX_HISTORY: usize = 1024;

/// Which task protocol a task follows.
#[derive(Debug, Clone)]
pub(crate) enum TaskKind {
    Modern,
    Legacy { progress_token: Option<String> },
}

/// Something that happened to a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskUpdate {
    /// Its status, message or progress changed (the first event of a stream is the state at
    /// the time it was opened).
    Updated(TaskSnapshot),
    /// Its status, message and progress have not changed for
    /// [`stuck_after`](crate::ClientBuilder::stuck_after). Raised once per unchanged stretch;
    /// the caller may [`cancel`](TaskHandle::cancel) it, or keep waiting.
    Stuck {
        /// How long nothing has changed.
        unchanged_for: Duration,
        /// The state it is stuck in.
        snapshot: TaskSnapshot,
    },
    /// The input handler declined a question of a modern task that has no way to be told no (a
    /// sampling or roots request in `inputRequests`: the wire has no refusal for them). The
    /// question is left open, unanswered, and not asked again; the task waits for it (and may
    /// count as [`Stuck`](Self::Stuck)) until the server gives up on it or the caller
    /// [`cancel`](TaskHandle::cancel)s it: the client does not cancel a task on its own.
    Unanswered {
        /// The request's method (`sampling/createMessage`, `roots/list`).
        method: String,
        /// The request's key in `inputRequests`.
        key: String,
    },
}

/// A stream of a task's [`TaskUpdate`]s; it ends once the task is over. A
/// [`futures_core::Stream`], and [`next`](Self::next) for use without a stream library.
#[derive(Debug)]
pub struct TaskUpdates {
    rx: mpsc::UnboundedReceiver<TaskUpdate>,
}

impl TaskUpdates {
    /// The next event; `None` once the task is over.
    pub async fn next(&mut self) -> Option<TaskUpdate> {
        self.rx.recv().await
    }
}

impl futures_core::Stream for TaskUpdates {
    type Item = TaskUpdate;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TaskUpdate>> {
        self.rx.poll_recv(cx)
    }
}

type TaskOutcome = Result<CallToolResult, Error>;

/// How a task state reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// In the answer to a request about the task (`tasks/get`, `tasks/cancel`, the call that
    /// created it): the state when the server answered.
    Answered,
    /// Pushed by the server (`notifications/tasks/status`, `notifications/tasks`), possibly
    /// queued a while before it was sent.
    Pushed,
}

#[derive(Debug)]
struct State {
    latest: TaskSnapshot,
    /// How `latest` arrived.
    latest_origin: Origin,
    history: Vec<TaskSnapshot>,
    subscribers: Vec<mpsc::UnboundedSender<TaskUpdate>>,
    changed_at: Instant,
    stuck_reported: bool,
    finished: bool,
}

#[derive(Debug)]
struct Shared {
    id: String,
    tool: String,
    session: Arc<Session>,
    kind: TaskKind,
    state: Mutex<State>,
    outcome: watch::Sender<Option<TaskOutcome>>,
    /// Poll now (after a cancel or an answer).
    wake: Notify,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn emit(state: &mut State, event: TaskUpdate) {
        state.subscribers.retain(|s| s.send(event.clone()).is_ok());
    }

    /// Records a newly seen state (keeping the progress when it carries none). States reach the
    /// client by several routes (an answer to `tasks/get` or `tasks/cancel`, a pushed
    /// notification the server may have queued for a while), not always in the order they
    /// happened, so a state is dropped when the task's own `lastUpdatedAt` says it is older than
    /// the latest; and a pushed one with the same time as an answered one but another status or
    /// message (two changes within one clock tick, the push possibly from before the answer) is
    /// left to the next poll, unless it is terminal ([`TaskSnapshot::is_stale_after`]). So the
    /// history and the updates never go backwards; nothing follows a terminal state.
    fn apply(&self, mut snap: TaskSnapshot, origin: Origin) {
        let mut state = lock(&self.state);
        if state.finished || state.latest.status.is_terminal() && !snap.status.is_terminal() {
            return;
        }
        let pushed_after_answer =
            origin == Origin::Pushed && state.latest_origin == Origin::Answered;
        if snap.is_stale_after(&state.latest, pushed_after_answer) {
            tracing::debug!(
                task = %self.id,
                status = %snap.status,
                at = ?snap.last_updated_at,
                latest = ?state.latest.last_updated_at,
                "a task state not newer than the one already seen; dropped"
            );
            return;
        }
        state.latest_origin = origin;
        if snap.progress.is_none() {
            snap.progress = state.latest.progress.clone();
        }
        let changed = !state.latest.same_state(&snap);
        state.latest = snap.clone();
        if changed {
            if state.history.len() >= MAX_HISTORY {
                // Keep the first state and the latest ones.
                state.history.remove(1);
            }
            state.history.push(snap.clone());
            state.changed_at = Instant::now();
            state.stuck_reported = false;
            Self::emit(&mut state, TaskUpdate::Updated(snap));
        }
    }

    fn progress(&self, progress: Progress) {
        let (snap, origin) = {
            let state = lock(&self.state);
            let snap = TaskSnapshot {
                progress: Some(progress),
                ..state.latest.clone()
            };
            (snap, state.latest_origin)
        };
        self.apply(snap, origin);
    }

    /// Tells the subscribers a question was left unanswered.
    fn unanswered(&self, method: String, key: String) {
        let mut state = lock(&self.state);
        Self::emit(&mut state, TaskUpdate::Unanswered { method, key });
    }

    /// Starts the stuck clock again (the client was busy answering the task's questions).
    fn touch(&self) {
        let mut state = lock(&self.state);
        state.changed_at = Instant::now();
        state.stuck_reported = false;
    }

    fn latest(&self) -> TaskSnapshot {
        lock(&self.state).latest.clone()
    }

    /// When the task would count as stuck, if that is still to be raised.
    fn stuck_deadline(&self) -> Option<Instant> {
        let after = self.session.config.stuck_after?;
        let state = lock(&self.state);
        (!state.stuck_reported && !state.latest.status.is_terminal())
            .then(|| state.changed_at + after)
    }

    fn check_stuck(&self) {
        let Some(after) = self.session.config.stuck_after else {
            return;
        };
        let mut state = lock(&self.state);
        let unchanged_for = state.changed_at.elapsed();
        if state.stuck_reported || state.latest.status.is_terminal() || unchanged_for < after {
            return;
        }
        state.stuck_reported = true;
        let snapshot = state.latest.clone();
        Self::emit(
            &mut state,
            TaskUpdate::Stuck {
                unchanged_for,
                snapshot,
            },
        );
    }

    fn poll_interval(&self) -> Duration {
        let config = &self.session.config;
        lock(&self.state)
            .latest
            .poll_interval
            .unwrap_or(config.default_poll_interval)
            .max(config.min_poll_interval)
    }

    fn finish(&self, outcome: TaskOutcome) {
        let mut state = lock(&self.state);
        state.finished = true;
        state.subscribers.clear();
        drop(state);
        self.outcome.send_replace(Some(outcome));
    }

    fn is_finished(&self) -> bool {
        lock(&self.state).finished
    }

    /// A request about this task, with the era's additions.
    async fn request(&self, method: &str) -> Result<Outcome, Error> {
        self.session
            .request(method, json!({ "taskId": self.id }))
            .await
    }

    async fn cancel(&self) -> Result<(), Error> {
        if self.is_finished() {
            return Ok(());
        }
        match self.request("tasks/cancel").await? {
            Ok(result) => {
                if matches!(self.kind, TaskKind::Legacy { .. })
                    && let Ok(snap) = TaskSnapshot::parse(&result)
                {
                    self.apply(snap, Origin::Answered);
                }
                self.wake.notify_one();
                Ok(())
            }
            // Over before the cancel arrived (servers refuse to cancel a terminal task).
            Err(_) if self.is_finished() || self.latest().status.is_terminal() => Ok(()),
            Err(error) => {
                // The task may have ended on the server after our last look (an answer we sent
                // just before ended it): ask once, and record what it says.
                if let Ok(Ok(task)) = self.request("tasks/get").await
                    && let Ok(snap) = parse_snapshot(self, "tasks/get", &task)
                    && snap.status.is_terminal()
                {
                    self.apply(snap, Origin::Answered);
                    self.wake.notify_one();
                    return Ok(());
                }
                Err(Error::Rpc {
                    method: "tasks/cancel".into(),
                    error,
                })
            }
        }
    }

    /// Reads a notification: progress is recorded here; a pushed task state is returned.
    fn on_notification(&self, n: Notification) -> Option<Value> {
        let ours = n.params.get("taskId").and_then(Value::as_str) == Some(self.id.as_str());
        match n.method.as_str() {
            "notifications/tasks" | "notifications/tasks/status" if ours => Some(n.params),
            "notifications/progress" => {
                let TaskKind::Legacy {
                    progress_token: Some(token),
                } = &self.kind
                else {
                    return None;
                };
                if n.params.get(meta::PROGRESS_TOKEN).and_then(Value::as_str) != Some(token) {
                    return None;
                }
                let progress = n.params.get("progress").and_then(Value::as_f64)?;
                self.progress(Progress {
                    progress,
                    total: n.params.get("total").and_then(Value::as_f64),
                    message: n
                        .params
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                });
                None
            }
            _ => None,
        }
    }
}
