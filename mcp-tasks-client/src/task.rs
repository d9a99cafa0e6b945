//! Following a task: a driver per task polls its status (at the server's `pollInterval`), answers
//! what it asks, publishes each change, notices when it is stuck, and keeps the final outcome.
//!
//! | era | status | input | result |
//! |---|---|---|---|
//! | modern | `tasks/get` (`DetailedTask`) | `inputRequests` answered with `tasks/update` | `result` / `error` in the task |
//! | legacy | `tasks/get` (flat `Task`), `notifications/progress` | server-to-client requests tagged `related-task`, while `tasks/result` waits | `tasks/result` |
//!
//! Push slots in at [`wait_next`]: a notification about the task that reaches the client is
//! handled exactly like a poll's answer, without waiting for the next poll. Today that is legacy
//! `notifications/tasks/status` on the session; modern `notifications/tasks` (a whole
//! `DetailedTask`) will arrive the same way once the client opens a `subscriptions/listen` stream,
//! which it does not do yet (no server offers it yet).

use crate::error::Error;
use crate::handler::answer_all;
use crate::http::Outcome;
use crate::peer::Notification;
use crate::result::structured;
use crate::session::Session;
use mcp_tasks_runtime::protocol::jsonrpc::RpcError;
use mcp_tasks_runtime::protocol::task::TaskStatus;
use mcp_tasks_runtime::protocol::{CallToolResult, codes, meta};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Notify, broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Consecutive transport failures of `tasks/get` after which the task is given up.
const MAX_POLL_FAILURES: u32 = 3;
/// How many states [`TaskHandle::history`] keeps: the first and the latest ones.
const MAX_HISTORY: usize = 1024;
/// Consecutive failed `tasks/update`s after which the task is given up.
const MAX_UPDATE_FAILURES: u32 = 3;
/// Legacy: how many times `tasks/result` may fail on a task that is still running before the
/// task is given up.
const MAX_RESULT_RETRIES: u32 = 3;

/// Which task protocol a task follows.
#[derive(Debug, Clone)]
pub(crate) enum TaskKind {
    Modern,
    Legacy { progress_token: Option<String> },
}

/// Progress a legacy task reported (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// A task's state as last seen.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Its `statusMessage`.
    pub status_message: Option<String>,
    /// Its latest progress (legacy era; modern tasks carry none).
    pub progress: Option<Progress>,
    /// The poll interval the server suggests.
    pub poll_interval: Option<Duration>,
    /// How long the server keeps the task (`None`: unlimited or not said).
    pub ttl: Option<Duration>,
    /// `createdAt`, as sent.
    pub created_at: Option<String>,
    /// `lastUpdatedAt`, as sent.
    pub last_updated_at: Option<String>,
}

impl TaskSnapshot {
    /// Reads either era's task object (`ttlMs`/`pollIntervalMs` or `ttl`/`pollInterval`).
    fn parse(v: &Value) -> Result<TaskSnapshot, String> {
        let task_id = v
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or("no `taskId`")?
            .to_owned();
        let status: TaskStatus =
            serde_json::from_value(v.get("status").cloned().unwrap_or_default()).map_err(|_| {
                format!(
                    "not a task status: {}",
                    v.get("status").unwrap_or(&Value::Null)
                )
            })?;
        let ms = |a: &str, b: &str| {
            v.get(a)
                .or_else(|| v.get(b))
                .and_then(Value::as_f64)
                .filter(|n| *n >= 0.0)
                .map(|n| Duration::from_millis(n as u64))
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(TaskSnapshot {
            task_id,
            status,
            status_message: text("statusMessage"),
            progress: None,
            poll_interval: ms("pollIntervalMs", "pollInterval"),
            ttl: ms("ttlMs", "ttl"),
            created_at: text("createdAt"),
            last_updated_at: text("lastUpdatedAt"),
        })
    }

    fn same_state(&self, other: &TaskSnapshot) -> bool {
        self.status == other.status
            && self.status_message == other.status_message
            && self.progress == other.progress
    }
}

/// Something that happened to a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEvent {
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
}

/// A stream of a task's [`TaskEvent`]s; it ends once the task is over. A
/// [`futures_core::Stream`], and [`next`](Self::next) for use without a stream library.
#[derive(Debug)]
pub struct TaskUpdates {
    rx: mpsc::UnboundedReceiver<TaskEvent>,
}

impl TaskUpdates {
    /// The next event; `None` once the task is over.
    pub async fn next(&mut self) -> Option<TaskEvent> {
        self.rx.recv().await
    }
}

impl futures_core::Stream for TaskUpdates {
    type Item = TaskEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TaskEvent>> {
        self.rx.poll_recv(cx)
    }
}

type TaskOutcome = Result<CallToolResult, Error>;

#[derive(Debug)]
struct State {
    latest: TaskSnapshot,
    history: Vec<TaskSnapshot>,
    subscribers: Vec<mpsc::UnboundedSender<TaskEvent>>,
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn emit(state: &mut State, event: TaskEvent) {
        state.subscribers.retain(|s| s.send(event.clone()).is_ok());
    }

    /// Records a newly seen state (keeping the progress when it carries none).
    fn apply(&self, mut snap: TaskSnapshot) {
        let mut state = lock(&self.state);
        if state.finished || state.latest.status.is_terminal() && !snap.status.is_terminal() {
            return;
        }
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
            Self::emit(&mut state, TaskEvent::Updated(snap));
        }
    }

    fn progress(&self, progress: Progress) {
        let snap = TaskSnapshot {
            progress: Some(progress),
            ..lock(&self.state).latest.clone()
        };
        self.apply(snap);
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
            TaskEvent::Stuck {
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
                    self.apply(snap);
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
                    self.apply(snap);
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

/// Why the driver woke up.
enum Wake {
    /// Time to poll.
    Poll,
    /// The server pushed the task's state.
    Pushed(Value),
}

/// Waits until the next poll is due, or the driver is woken, or the server pushes the task's
/// state; meanwhile records progress and raises [`TaskEvent::Stuck`] when it is due.
async fn wait_next(
    shared: &Shared,
    notes: &mut broadcast::Receiver<Notification>,
    last_poll: Instant,
) -> Wake {
    let mut notes_open = true;
    loop {
        let due = last_poll + shared.poll_interval();
        let stuck = shared.stuck_deadline();
        tokio::select! {
            _ = tokio::time::sleep_until(due) => return Wake::Poll,
            _ = shared.wake.notified() => return Wake::Poll,
            _ = tokio::time::sleep_until(stuck.unwrap_or(due)), if stuck.is_some() => shared.check_stuck(),
            note = notes.recv(), if notes_open => match note {
                Ok(n) => {
                    if let Some(pushed) = shared.on_notification(n) {
                        return Wake::Pushed(pushed);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => notes_open = false,
            },
        }
    }
}

/// Polls `tasks/get` once; `Ok(None)` after a transport failure that may pass.
async fn poll(shared: &Shared, failures: &mut u32) -> Result<Option<Value>, Error> {
    match shared.request("tasks/get").await {
        Ok(Ok(task)) => {
            *failures = 0;
            Ok(Some(task))
        }
        Ok(Err(error)) => Err(Error::TaskGet {
            task_id: shared.id.clone(),
            error,
        }),
        Err(e) => {
            *failures += 1;
            if *failures >= MAX_POLL_FAILURES {
                Err(e)
            } else {
                tracing::debug!(error = %e, task = %shared.id, "tasks/get failed; will retry");
                Ok(None)
            }
        }
    }
}

fn parse_snapshot(shared: &Shared, method: &str, task: &Value) -> Result<TaskSnapshot, Error> {
    let snap = TaskSnapshot::parse(task).map_err(|why| Error::invalid(method, why))?;
    if snap.task_id != shared.id {
        return Err(Error::invalid(
            method,
            format!("asked about task {}, got task {}", shared.id, snap.task_id),
        ));
    }
    Ok(snap)
}

fn parse_rpc_error(task: &Value, fallback: Option<String>) -> RpcError {
    task.get("error")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_else(|| {
            RpcError::new(
                codes::INTERNAL_ERROR,
                fallback.unwrap_or_else(|| "the task failed".into()),
            )
        })
}

/// The modern task protocol: poll, answer `inputRequests` with `tasks/update`, read the outcome
/// from the task itself.
async fn drive_modern(
    shared: &Shared,
    notes: &mut broadcast::Receiver<Notification>,
) -> TaskOutcome {
    let mut last_poll = Instant::now();
    let mut failures = 0;
    // Keys the server took an answer for, answers it has not taken yet, failed updates in a row.
    let mut answered: HashSet<String> = HashSet::new();
    let mut kept: Map<String, Value> = Map::new();
    let mut update_failures = 0;
    // A terminal state seen while the handler was still answering.
    let mut seen: Option<Value> = None;
    loop {
        let task = match seen.take() {
            Some(task) => task,
            None => match wait_next(shared, notes, last_poll).await {
                Wake::Pushed(task) => task,
                Wake::Poll => {
                    last_poll = Instant::now();
                    match poll(shared, &mut failures).await? {
                        Some(task) => task,
                        None => continue,
                    }
                }
            },
        };
        let snap = parse_snapshot(shared, "tasks/get", &task)?;
        let status = snap.status;
        let message = snap.status_message.clone();
        shared.apply(snap);
        match status {
            TaskStatus::Working => {}
            TaskStatus::InputRequired => {
                let mut asked: Map<String, Value> = task
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                // A snapshot repeats what is outstanding until the server has taken the answer.
                asked.retain(|key, _| !answered.contains(key));
                if asked.is_empty() {
                    continue;
                }
                // Ask the handler only once per request: an answer the server has not taken yet
                // is kept and sent again.
                let new: Map<String, Value> = asked
                    .iter()
                    .filter(|(key, _)| !kept.contains_key(*key))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !new.is_empty() {
                    let handler = shared.session.peer().handler();
                    let answering = answer_all(handler, &new, Some(&shared.id));
                    let answers = match watch_while_answering(
                        shared,
                        answering,
                        &mut last_poll,
                        &mut failures,
                    )
                    .await?
                    {
                        Ok(answers) => answers,
                        Err(ended) => {
                            // The task ended (cancelled, say) while the question was open: the
                            // question is dropped, and the end handled like any other.
                            seen = Some(ended);
                            continue;
                        }
                    };
                    match answers {
                        Ok(responses) => kept.extend(responses),
                        Err(method) => {
                            tracing::info!(%method, task = %shared.id, "input declined where the task cannot be told; cancelling it");
                            // Not asked again while the cancellation takes effect.
                            answered.extend(new.keys().cloned());
                            shared.cancel().await?;
                            continue;
                        }
                    }
                    shared.touch();
                }
                let responses: Map<String, Value> = asked
                    .keys()
                    .filter_map(|k| Some((k.clone(), kept.get(k)?.clone())))
                    .collect();
                let params = json!({ "taskId": shared.id, "inputResponses": responses });
                let refusal = match shared.session.request("tasks/update", params).await {
                    Ok(Ok(_)) => {
                        for key in responses.keys() {
                            kept.remove(key);
                            answered.insert(key.clone());
                        }
                        update_failures = 0;
                        // See what the answers changed without waiting a whole interval.
                        shared.wake.notify_one();
                        continue;
                    }
                    Ok(Err(error)) => Error::Rpc {
                        method: "tasks/update".into(),
                        error,
                    },
                    Err(e) => e,
                };
                update_failures += 1;
                if update_failures >= MAX_UPDATE_FAILURES {
                    return Err(refusal);
                }
                // Try again after the poll interval, with the same answers.
                tracing::warn!(error = %refusal, task = %shared.id, "tasks/update failed; will retry");
            }
            TaskStatus::Completed => {
                let result = task.get("result").cloned().ok_or_else(|| {
                    Error::invalid("tasks/get", "a completed task without `result`")
                })?;
                return serde_json::from_value(result).map_err(|e| {
                    Error::invalid(
                        "tasks/get",
                        format!("the task's result is not a CallToolResult: {e}"),
                    )
                });
            }
            TaskStatus::Failed => {
                return Err(Error::TaskFailed {
                    task_id: shared.id.clone(),
                    error: parse_rpc_error(&task, message),
                });
            }
            TaskStatus::Cancelled => {
                return Err(Error::TaskCancelled {
                    task_id: shared.id.clone(),
                    message,
                });
            }
        }
    }
}

/// Awaits the input handler while polling the task at its interval (or at once when woken, by
/// [`TaskHandle::cancel`] say): `Err(task)` with the task's terminal state when it ended before
/// the handler answered. A person may take minutes to answer; meanwhile the task can be
/// cancelled, fail or run out of time, and the caller learns it then, not after the answer.
async fn watch_while_answering<F: Future>(
    shared: &Shared,
    answering: F,
    last_poll: &mut Instant,
    failures: &mut u32,
) -> Result<Result<F::Output, Value>, Error> {
    tokio::pin!(answering);
    loop {
        let due = *last_poll + shared.poll_interval();
        tokio::select! {
            answers = &mut answering => return Ok(Ok(answers)),
            _ = tokio::time::sleep_until(due) => {}
            _ = shared.wake.notified() => {}
        }
        *last_poll = Instant::now();
        if let Some(task) = poll(shared, failures).await?
            && parse_snapshot(shared, "tasks/get", &task)?
                .status
                .is_terminal()
        {
            return Ok(Err(task));
        }
    }
}

type ResultFuture = Pin<Box<dyn Future<Output = Result<Outcome, Error>> + Send>>;

/// Legacy `tasks/result`: blocks until the task is over; the server's requests for the task come
/// while it waits (tagged `related-task`) and go to the input handler like any other.
fn start_result(shared: &Shared) -> ResultFuture {
    let session = shared.session.clone();
    let id = shared.id.clone();
    Box::pin(async move {
        session
            .request("tasks/result", json!({ "taskId": id }))
            .await
    })
}

/// The legacy task protocol: `tasks/result` waits (and carries the task's questions) while
/// `tasks/get` is polled for the status.
async fn drive_legacy(
    shared: &Shared,
    notes: &mut broadcast::Receiver<Notification>,
) -> TaskOutcome {
    let mut result: Option<ResultFuture> = Some(start_result(shared));
    let mut result_failures = 0;
    let mut last_poll = Instant::now();
    let mut failures = 0;
    loop {
        let waiting = async {
            match result.as_mut() {
                Some(f) => f.await,
                None => std::future::pending().await,
            }
        };
        let woke = tokio::select! {
            r = waiting => Err(r),
            w = wait_next(shared, notes, last_poll) => Ok(w),
        };
        match woke {
            Err(outcome) => {
                result = None;
                let outcome = match outcome {
                    Ok(outcome) => outcome,
                    // The wait broke (an SSE stream cut without resumption): ask again when the
                    // status next moves; polling tells whether the server is gone for good.
                    Err(e) if result_failures < MAX_RESULT_RETRIES => {
                        tracing::debug!(error = %e, task = %shared.id, "tasks/result broke off");
                        result_failures += 1;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                // The final status, for the history (and to tell a failed task from a refusal).
                let snap = match poll(shared, &mut failures).await {
                    Ok(Some(task)) => parse_snapshot(shared, "tasks/get", &task).ok(),
                    _ => None,
                };
                if let Some(snap) = &snap {
                    shared.apply(snap.clone());
                }
                let status = snap.as_ref().map(|s| s.status);
                let message = snap.and_then(|s| s.status_message);
                match (outcome, status) {
                    (Ok(value), _) => {
                        return serde_json::from_value(value).map_err(|e| {
                            Error::invalid("tasks/result", format!("not a CallToolResult: {e}"))
                        });
                    }
                    (Err(error), Some(TaskStatus::Failed)) => {
                        return Err(Error::TaskFailed {
                            task_id: shared.id.clone(),
                            error,
                        });
                    }
                    (Err(_), Some(TaskStatus::Cancelled)) => {
                        return Err(Error::TaskCancelled {
                            task_id: shared.id.clone(),
                            message,
                        });
                    }
                    (Err(error), Some(TaskStatus::Working | TaskStatus::InputRequired))
                        if result_failures < MAX_RESULT_RETRIES =>
                    {
                        // A server that will not wait: ask again when it has news.
                        tracing::debug!(%error, task = %shared.id, "tasks/result refused while the task runs");
                        result_failures += 1;
                    }
                    (Err(error), _) => {
                        return Err(Error::Rpc {
                            method: "tasks/result".into(),
                            error,
                        });
                    }
                }
            }
            Ok(wake) => {
                let task = match wake {
                    Wake::Pushed(task) => task,
                    Wake::Poll => {
                        last_poll = Instant::now();
                        match poll(shared, &mut failures).await? {
                            Some(task) => task,
                            None => continue,
                        }
                    }
                };
                let snap = parse_snapshot(shared, "tasks/get", &task)?;
                let status = snap.status;
                let message = snap.status_message.clone();
                shared.apply(snap);
                if status == TaskStatus::Cancelled {
                    return Err(Error::TaskCancelled {
                        task_id: shared.id.clone(),
                        message,
                    });
                }
                if result.is_none() && status != TaskStatus::Working {
                    result = Some(start_result(shared));
                }
            }
        }
    }
}

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
    pub fn history(&self) -> Vec<TaskSnapshot> {
        lock(&self.shared.state).history.clone()
    }

    /// The task's events from now on, starting with its current state; the stream ends when the
    /// task is over.
    pub fn updates(&self) -> TaskUpdates {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = lock(&self.shared.state);
        let _ = tx.send(TaskEvent::Updated(state.latest.clone()));
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
    /// [`TaskEvent::Stuck`] was raised and nothing has changed since).
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
