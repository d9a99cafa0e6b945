//! The task state machine, as pure functions on a [`TaskRecord`].
//!
//! Every [`TaskStore`](super::TaskStore) must give the same answers; the simplest way is to call
//! these functions. [`MemoryTaskStore`](super::MemoryTaskStore) applies them under a per-task
//! lock; a durable store can load the record, apply one, and write it back only if `version` is
//! still the one it loaded (optimistic concurrency), retrying otherwise.
//!
//! Each function bumps `version` exactly when it changes the record, and also stamps
//! `last_updated_at` when the change is one a client can see (everything but
//! [`take_response`]). A function that changes nothing leaves the record untouched, `version`
//! included.

use std::time::SystemTime;

use serde_json::{Map, Value};

use super::{NewTask, StoreError};
use crate::protocol::task::{TaskOutcome, TaskRecord, TaskStatus};
use crate::protocol::{InputRequest, RpcError};

/// The status message a task gets when it is cancelled.
pub const CANCELLED_MESSAGE: &str = "The task was cancelled by request.";
/// The error message (and status message) of a task that outlived its TTL.
pub const EXPIRED_MESSAGE: &str = "task expired: TTL elapsed before completion";

/// The record of a new task: `working`, version 1, created and updated at `now`.
pub fn new_record(task: NewTask, now: SystemTime) -> TaskRecord {
    TaskRecord {
        id: task.id,
        owner: task.owner,
        origin: task.origin,
        status: TaskStatus::Working,
        status_message: task.status_message,
        created_at: now,
        last_updated_at: now,
        ttl: task.ttl,
        poll_interval: task.poll_interval,
        input_requests: Default::default(),
        input_responses: Default::default(),
        retired_keys: Default::default(),
        outcome: None,
        version: 1,
        terminal_at: None,
    }
}

/// Sets (or clears) the status message. No change once terminal: a terminal task never changes.
pub fn set_status_message(record: &mut TaskRecord, message: Option<String>, now: SystemTime) {
    if record.status.is_terminal() || record.status_message == message {
        return;
    }
    record.status_message = message;
    touch(record, now);
}

/// Adds an outstanding input request and moves the task to `input_required`.
///
/// Errors: [`StoreError::Terminal`] once the task has ended (the waiting tool should stop), and
/// [`StoreError::InputKeyReused`] if `key` ever named a request of this task before.
pub fn add_input_request(
    record: &mut TaskRecord,
    key: String,
    request: InputRequest,
    now: SystemTime,
) -> Result<(), StoreError> {
    if record.status.is_terminal() {
        return Err(StoreError::Terminal(record.status));
    }
    if record.key_used(&key) {
        return Err(StoreError::InputKeyReused(key));
    }
    record.input_requests.insert(key, request);
    record.status = TaskStatus::InputRequired;
    touch(record, now);
    Ok(())
}

/// Withdraws an outstanding input request that no longer needs an answer (the tool stopped
/// waiting). The key stays used. The task returns to `working` when nothing else is
/// outstanding. Nothing changes if `key` is not outstanding.
pub fn withdraw_input_request(record: &mut TaskRecord, key: &str, now: SystemTime) {
    if record.input_requests.remove(key).is_none() {
        return;
    }
    record.retired_keys.insert(key.to_owned());
    leave_input_required_if_done(record);
    touch(record, now);
}

/// Which delivered keys were taken and which were ignored, in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Keys that answered an outstanding request.
    pub accepted: Vec<String>,
    /// Keys that did not (never asked, already answered, withdrawn, or the task has ended).
    pub ignored: Vec<String>,
}

/// Delivers the client's answers. Each key that names an outstanding request is accepted: the
/// request leaves `input_requests`, the answer waits in `input_responses` for the tool to take,
/// and the key is retired. Every other key is ignored. The task returns to `working` only when
/// no request remains outstanding; after a partial delivery it stays `input_required`.
pub fn deliver_responses(
    record: &mut TaskRecord,
    responses: Map<String, Value>,
    now: SystemTime,
) -> Delivery {
    let mut delivery = Delivery::default();
    for (key, response) in responses {
        if !record.status.is_terminal() && record.input_requests.remove(&key).is_some() {
            record.retired_keys.insert(key.clone());
            record.input_responses.insert(key.clone(), response);
            delivery.accepted.push(key);
        } else {
            delivery.ignored.push(key);
        }
    }
    if !delivery.accepted.is_empty() {
        leave_input_required_if_done(record);
        touch(record, now);
    }
    delivery
}

/// Takes a delivered answer out of the record, for the tool that asked. An answer can be taken
/// once. Taking is not visible to clients: it bumps `version` but not `last_updated_at`.
pub fn take_response(record: &mut TaskRecord, key: &str) -> Option<Value> {
    let response = record.input_responses.remove(key)?;
    record.version += 1;
    Some(response)
}

/// Ends the task with the outcome of its request: `completed` or `failed` as
/// [`TaskOutcome::terminal_status`] says for the task's origin. A failure's error message becomes
/// the status message (diagnostics for people); a result keeps the last status message.
///
/// No change if the task has already ended: a cancelled task stays cancelled even when its work
/// finishes afterwards.
pub fn finish(record: &mut TaskRecord, outcome: TaskOutcome, now: SystemTime) {
    if record.status.is_terminal() {
        return;
    }
    let status = outcome.terminal_status(record.origin);
    if let TaskOutcome::Error(error) = &outcome {
        record.status_message = Some(error.message.clone());
    }
    end(record, status, Some(outcome), now);
}

/// Cancels a task that has not ended: it is `cancelled` at once, with [`CANCELLED_MESSAGE`].
/// Returns `false`, changing nothing, if the task had already ended.
pub fn cancel(record: &mut TaskRecord, now: SystemTime) -> bool {
    if record.status.is_terminal() {
        return false;
    }
    record.status_message = Some(CANCELLED_MESSAGE.to_owned());
    end(record, TaskStatus::Cancelled, None, now);
    true
}

/// What the sweeper should do with a task at a given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Nothing (no TTL, or it has not run out).
    Keep,
    /// The task has not ended but `created_at + ttl` has been reached: fail it
    /// ([`fail_expired`]).
    Fail,
    /// The task ended and `terminal_at + ttl` has been reached: delete it.
    Remove,
}

/// What the TTL says about this task at `now`. A terminal task is kept for a whole TTL after it
/// ended, so a client that saw it working can still read how it ended.
pub fn expiry(record: &TaskRecord, now: SystemTime) -> Expiry {
    let Some(ttl) = record.ttl else {
        return Expiry::Keep;
    };
    let (since, verdict) = match record.terminal_at {
        None => (record.created_at, Expiry::Fail),
        Some(ended) => (ended, Expiry::Remove),
    };
    match since.checked_add(ttl) {
        Some(deadline) if now >= deadline => verdict,
        _ => Expiry::Keep,
    }
}

/// Fails a task that outlived its TTL: `failed` with the JSON-RPC error
/// `{code: -32603, message: EXPIRED_MESSAGE}`. No change if it has already ended.
pub fn fail_expired(record: &mut TaskRecord, now: SystemTime) {
    finish(
        record,
        TaskOutcome::Error(RpcError::internal(EXPIRED_MESSAGE)),
        now,
    );
}

fn end(record: &mut TaskRecord, status: TaskStatus, outcome: Option<TaskOutcome>, now: SystemTime) {
    record.status = status;
    record.outcome = outcome;
    record.terminal_at = Some(now);
    // Nobody will answer or take these any more.
    let outstanding = std::mem::take(&mut record.input_requests);
    record.retired_keys.extend(outstanding.into_keys());
    record.input_responses.clear();
    touch(record, now);
}

fn leave_input_required_if_done(record: &mut TaskRecord) {
    if record.status == TaskStatus::InputRequired && record.input_requests.is_empty() {
        record.status = TaskStatus::Working;
    }
}

#[cfg(test)]
mod props;

fn touch(record: &mut TaskRecord, now: SystemTime) {
    record.version += 1;
    record.last_updated_at = now;
}
