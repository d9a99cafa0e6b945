//! The drivers, one per era, that follow a task to its end: each waits for the next poll (or a
//! push), reads the task's state with one shared step ([`next_snapshot`]), answers what it asks,
//! and returns the outcome.

use super::snapshot::{parse_rpc_error, parse_snapshot};
use super::{Origin, Shared, TaskOutcome};
use crate::error::Error;
use crate::handler::answer_all;
use crate::http::Outcome;
use crate::peer::Notification;
use mcp_tasks_runtime::__internal::race::{Either, first, or_never};
use mcp_tasks_runtime::protocol::task::TaskStatus;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// Consecutive transport failures of `tasks/get` after which the task is given up.
const MAX_POLL_FAILURES: u32 = 3;
/// Consecutive failed `tasks/update`s after which the task is given up.
const MAX_UPDATE_FAILURES: u32 = 3;
/// Legacy: how many times `tasks/result` may fail on a task that is still running before the
/// task is given up.
const MAX_RESULT_RETRIES: u32 = 3;

/// Why the driver woke up.
enum Wake {
    /// Time to poll.
    Poll,
    /// The server pushed the task's state.
    Pushed(Value),
    /// The modern driver polled it while the handler was answering.
    Polled(Value),
}

/// Waits until the next poll is due, or the driver is woken, or the server pushes the task's
/// state; meanwhile records progress and raises [`TaskUpdate::Stuck`] when it is due.
async fn wait_next(
    shared: &Shared,
    notes: &mut broadcast::Receiver<Notification>,
    last_poll: Instant,
) -> Wake {
    let mut notes_open = true;
    loop {
        let due = last_poll + shared.poll_interval();
        let stuck = shared.stuck_deadline();
        // The timers before the notifications, which a busy connection may always have.
        let poll_now = first(tokio::time::sleep_until(due), shared.wake.notified());
        let stuck = or_never(stuck.map(tokio::time::sleep_until));
        let note = or_never(notes_open.then(|| notes.recv()));
        match first(poll_now, first(stuck, note)).await {
            Either::Left(_) => return Wake::Poll,
            Either::Right(Either::Left(())) => shared.check_stuck(),
            Either::Right(Either::Right(note)) => match note {
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

/// The task's state as last reported, and what the drivers read from it.
struct Seen {
    /// The task as the server sent it.
    task: Value,
    status: TaskStatus,
    message: Option<String>,
}

/// The poll step both drivers share: the task's state (the one known already, or `tasks/get`
/// now), checked and recorded; `Ok(None)` after a transport failure that may pass.
async fn next_snapshot(
    shared: &Shared,
    wake: Wake,
    last_poll: &mut Instant,
    failures: &mut u32,
) -> Result<Option<Seen>, Error> {
    let (task, origin) = match wake {
        Wake::Pushed(task) => (task, Origin::Pushed),
        Wake::Polled(task) => (task, Origin::Answered),
        Wake::Poll => {
            *last_poll = Instant::now();
            match poll(shared, failures).await? {
                Some(task) => (task, Origin::Answered),
                None => return Ok(None),
            }
        }
    };
    let snap = parse_snapshot(shared, "tasks/get", &task)?;
    let status = snap.status;
    let message = snap.status_message.clone();
    shared.apply(snap, origin);
    Ok(Some(Seen {
        task,
        status,
        message,
    }))
}

/// The modern task protocol: poll, answer `inputRequests` with `tasks/update`, read the outcome
/// from the task itself.
pub(super) async fn drive_modern(
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
        let wake = match seen.take() {
            Some(task) => Wake::Polled(task),
            None => wait_next(shared, notes, last_poll).await,
        };
        let Some(Seen {
            task,
            status,
            message,
        }) = next_snapshot(shared, wake, &mut last_poll, &mut failures).await?
        else {
            continue;
        };
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
                    kept.extend(answers.responses);
                    for (key, method) in answers.declined {
                        // No refusal on the wire: the question stays open, is not asked again,
                        // and the caller decides (the task is not cancelled behind its back).
                        tracing::info!(%method, %key, task = %shared.id, "input declined where the task cannot be told; left unanswered");
                        answered.insert(key.clone());
                        shared.unanswered(method, key);
                    }
                    shared.touch();
                }
                if asked.keys().all(|k| !kept.contains_key(k)) {
                    // Nothing to send: every open question was left unanswered.
                    continue;
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
    let mut answering = std::pin::pin!(answering);
    loop {
        let due = *last_poll + shared.poll_interval();
        let poll_now = first(tokio::time::sleep_until(due), shared.wake.notified());
        if let Either::Left(answers) = first(&mut answering, poll_now).await {
            return Ok(Ok(answers));
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
pub(super) async fn drive_legacy(
    shared: &Shared,
    notes: &mut broadcast::Receiver<Notification>,
) -> TaskOutcome {
    let mut result: Option<ResultFuture> = Some(start_result(shared));
    let mut result_failures = 0;
    let mut last_poll = Instant::now();
    let mut failures = 0;
    loop {
        let waiting = or_never(result.as_mut());
        let woke = match first(waiting, wait_next(shared, notes, last_poll)).await {
            Either::Left(r) => Err(r),
            Either::Right(w) => Ok(w),
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
                    shared.apply(snap.clone(), Origin::Answered);
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
                let Some(Seen {
                    status, message, ..
                }) = next_snapshot(shared, wake, &mut last_poll, &mut failures).await?
                else {
                    continue;
                };
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
