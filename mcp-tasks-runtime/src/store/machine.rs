//! The task state machine, as methods of [`TaskRecord`] (documented there, "The state
//! machine"), and the two answers it gives besides the record: [`Delivery`] and [`Expiry`].

use std::time::SystemTime;

use serde_json::{Map, Value};

use super::{NewTask, StoreError};
use crate::protocol::task::{TaskOutcome, TaskStatus};
use crate::protocol::{InputRequest, ResourceContents, RpcError};
use crate::store::TaskRecord;

/// # The state machine
///
/// Every [`TaskStore`](super::TaskStore) must give the same answers; the simplest way is to call
/// these methods. [`MemoryTaskStore`](super::MemoryTaskStore) applies them under a per-task
/// lock; a durable store can load the record, apply one, and write it back only if `version` is
/// still the one it loaded (optimistic concurrency), retrying otherwise.
///
/// Each method bumps `version` exactly when it changes the record, and also stamps
/// `last_updated_at` when the change is one a client can see (everything but
/// [`take_response`](Self::take_response)). A method that changes nothing leaves the record
/// untouched, `version` included.
impl TaskRecord {
    /// The status message a task gets when it is cancelled.
    pub const CANCELLED_MESSAGE: &str = "The task was cancelled by request.";
    /// The error message (and status message) of a task that was still running at its deadline.
    pub const DEADLINE_MESSAGE: &str =
        "task deadline reached: the task ran longer than it is allowed to and was stopped";
    /// The error message (and status message) of a task whose server stopped before it finished:
    /// it shut down, or its lease lapsed (it died).
    pub const RUNNER_STOPPED_MESSAGE: &str =
        "the server running this task stopped before the task finished";

    /// The record of a new task: `working`, version 1, created and updated at `now`.
    pub fn new(task: NewTask, now: SystemTime) -> TaskRecord {
        TaskRecord {
            id: task.id,
            owner: task.owner,
            origin: task.origin,
            status: TaskStatus::Working,
            status_message: task.status_message,
            created_at: now,
            last_updated_at: now,
            ttl: task.ttl,
            deadline: task.deadline,
            runner: task.runner,
            poll_interval: task.poll_interval,
            tool: task.tool,
            input_requests: Default::default(),
            input_responses: Default::default(),
            retired_keys: Default::default(),
            answers: Default::default(),
            durable: task.durable,
            outcome: None,
            outputs: Default::default(),
            version: 1,
            terminal_at: None,
        }
    }

    /// Sets (or clears) the status message. No change once terminal: a terminal task never
    /// changes.
    pub fn set_status_message(&mut self, message: Option<String>, now: SystemTime) {
        if self.status.is_terminal() || self.status_message == message {
            return;
        }
        self.status_message = message;
        self.touch(now);
    }

    /// Adds an outstanding input request and moves the task to `input_required`.
    ///
    /// Errors: [`StoreError::Terminal`] once the task has ended (the waiting tool should stop),
    /// and [`StoreError::InputKeyReused`] if `key` ever named a request of this task before.
    pub fn add_input_request(
        &mut self,
        key: String,
        request: InputRequest,
        now: SystemTime,
    ) -> Result<(), StoreError> {
        if self.status.is_terminal() {
            return Err(StoreError::Terminal(self.status));
        }
        if self.key_used(&key) {
            return Err(StoreError::InputKeyReused(key));
        }
        self.input_requests.insert(key, request);
        self.status = TaskStatus::InputRequired;
        self.touch(now);
        Ok(())
    }

    /// Withdraws an outstanding input request that no longer needs an answer (the tool stopped
    /// waiting). The key stays used. The task returns to `working` when nothing else is
    /// outstanding. Nothing changes if `key` is not outstanding.
    pub fn withdraw_input_request(&mut self, key: &str, now: SystemTime) {
        if self.input_requests.remove(key).is_none() {
            return;
        }
        self.retired_keys.insert(key.to_owned());
        self.leave_input_required_if_done();
        self.touch(now);
    }

    /// Delivers the client's answers. Each key that names an outstanding request is accepted:
    /// the request leaves `input_requests`, the answer waits in `input_responses` for the tool to
    /// take, and the key is retired. Every other key is ignored. The task returns to `working`
    /// only when no request remains outstanding; after a partial delivery it stays
    /// `input_required`.
    pub fn deliver_responses(
        &mut self,
        responses: Map<String, Value>,
        now: SystemTime,
    ) -> Delivery {
        let mut delivery = Delivery::default();
        for (key, response) in responses {
            if !self.status.is_terminal() && self.input_requests.remove(&key).is_some() {
                self.retired_keys.insert(key.clone());
                self.input_responses.insert(key.clone(), response);
                delivery.accepted.push(key);
            } else {
                delivery.ignored.push(key);
            }
        }
        if !delivery.accepted.is_empty() {
            self.leave_input_required_if_done();
            self.touch(now);
        }
        delivery
    }

    /// Takes a delivered answer, for the tool that asked: it moves to [`answers`](Self::answers),
    /// where it stays, so taking it again gives it again (a tool whose first take's reply was
    /// lost with the store's connection still gets its answer). Taking is not visible to
    /// clients: the first take bumps `version` but not `last_updated_at`; a second changes
    /// nothing.
    pub fn take_response(&mut self, key: &str) -> Option<Value> {
        match self.input_responses.remove(key) {
            Some(response) => {
                self.answers.insert(key.to_owned(), response.clone());
                self.version += 1;
                Some(response)
            }
            None => self.answers.get(key).cloned(),
        }
    }

    /// Keeps `contents` as the task's output `name`, replacing an output of that name. Outputs
    /// are not visible in the task itself (they are read as resources), so this bumps `version`
    /// but not `last_updated_at`.
    ///
    /// Errors: [`StoreError::Terminal`] once the task has ended: what a task publishes is
    /// complete when its outcome is.
    pub fn add_output(
        &mut self,
        name: String,
        contents: ResourceContents,
    ) -> Result<(), StoreError> {
        if self.status.is_terminal() {
            return Err(StoreError::Terminal(self.status));
        }
        if self.outputs.get(&name) != Some(&contents) {
            self.outputs.insert(name, contents);
            self.version += 1;
        }
        Ok(())
    }

    /// Ends the task with the outcome of its request: `completed` or `failed` as
    /// [`TaskOutcome::terminal_status`] says for the task's origin. A failure's error message
    /// becomes the status message (diagnostics for people); a result keeps the last status
    /// message.
    ///
    /// No change if the task has already ended: a cancelled task stays cancelled even when its
    /// work finishes afterwards.
    pub fn finish(&mut self, outcome: TaskOutcome, now: SystemTime) {
        if self.status.is_terminal() {
            return;
        }
        let status = outcome.terminal_status(self.origin);
        if let TaskOutcome::Error(error) = &outcome {
            self.status_message = Some(error.message.clone());
        }
        self.end(status, Some(outcome), now);
    }

    /// Cancels a task that has not ended: it is `cancelled` at once, with
    /// [`CANCELLED_MESSAGE`](Self::CANCELLED_MESSAGE). Returns `false`, changing nothing, if the
    /// task had already ended.
    pub fn cancel(&mut self, now: SystemTime) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status_message = Some(Self::CANCELLED_MESSAGE.to_owned());
        self.end(TaskStatus::Cancelled, None, now);
        true
    }

    /// What the rules say about this task at `now`.
    ///
    /// `runner_alive` is whether the task's [`runner`](Self::runner) holds a lease that is
    /// still valid at `now` (the store knows its leases; ignored for a task without a runner).
    ///
    /// - A running task fails at `created_at + deadline` ([`Expiry::Deadline`]), or as soon as
    ///   its runner's lease has lapsed ([`Expiry::RunnerStopped`]). Its `ttl` never ends it:
    ///   `ttl` is how long the record is kept, and a task waiting on a person may take longer
    ///   than that.
    /// - An ended task is deleted once both `created_at + ttl` and `terminal_at + ttl` have
    ///   passed (the latter is always the later one): the record is kept at least `ttl` from
    ///   creation, as the wire's `ttl` promises, and a client that saw the task running can still
    ///   read how it ended for a whole `ttl`. `ttl: None` keeps it forever.
    pub fn expiry(&self, now: SystemTime, runner_alive: bool) -> Expiry {
        match self.terminal_at {
            None => {
                let overdue = self
                    .deadline
                    .and_then(|deadline| self.created_at.checked_add(deadline))
                    .is_some_and(|at| now >= at);
                if overdue {
                    Expiry::Deadline
                } else if self.runner.is_some() && !runner_alive {
                    Expiry::RunnerStopped
                } else {
                    Expiry::Keep
                }
            }
            Some(ended) => match self.ttl.and_then(|ttl| ended.checked_add(ttl)) {
                Some(until) if now >= until => Expiry::Remove,
                _ => Expiry::Keep,
            },
        }
    }

    /// When [`expiry`](Self::expiry) would next say something other than [`Expiry::Keep`],
    /// leases aside: the deadline of a running task, the end of retention of an ended one; `None`
    /// for never. A store may index this to find due tasks without reading every record.
    pub fn due_at(&self) -> Option<SystemTime> {
        match self.terminal_at {
            None => self
                .deadline
                .and_then(|deadline| self.created_at.checked_add(deadline)),
            Some(ended) => self.ttl.and_then(|ttl| ended.checked_add(ttl)),
        }
    }

    /// Applies an [`Expiry::Deadline`] or [`Expiry::RunnerStopped`] verdict: the task fails with
    /// the JSON-RPC error `{code: -32603, message}`
    /// ([`DEADLINE_MESSAGE`](Self::DEADLINE_MESSAGE) or
    /// [`RUNNER_STOPPED_MESSAGE`](Self::RUNNER_STOPPED_MESSAGE)), which is also its status
    /// message. Returns whether the record changed (not for other verdicts, nor for a task that
    /// has already ended).
    ///
    /// A durable task whose runner stopped is not failed but queued for another instance
    /// ([`TaskRecord::QUEUED`]), until it has had all its runs; a queued one is left as it is.
    pub fn apply_expiry(&mut self, verdict: Expiry, now: SystemTime) -> bool {
        let message = match verdict {
            Expiry::Deadline => Self::DEADLINE_MESSAGE,
            Expiry::RunnerStopped => {
                if let Some(changed) = self.orphaned(now) {
                    return changed;
                }
                Self::RUNNER_STOPPED_MESSAGE
            }
            Expiry::Keep | Expiry::Remove => return false,
        };
        self.fail(message, now)
    }

    /// Fails a running task with the JSON-RPC error `{code: -32603, message}`, which becomes its
    /// status message. Returns whether the record changed (not if the task had already ended).
    pub fn fail(&mut self, message: &str, now: SystemTime) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.finish(TaskOutcome::Error(RpcError::internal(message)), now);
        true
    }

    fn end(&mut self, status: TaskStatus, outcome: Option<TaskOutcome>, now: SystemTime) {
        self.status = status;
        self.outcome = outcome;
        self.terminal_at = Some(now);
        // Nobody will answer or take these any more.
        let outstanding = std::mem::take(&mut self.input_requests);
        self.retired_keys.extend(outstanding.into_keys());
        self.input_responses.clear();
        self.touch(now);
    }

    fn leave_input_required_if_done(&mut self) {
        if self.status == TaskStatus::InputRequired && self.input_requests.is_empty() {
            self.status = TaskStatus::Working;
        }
    }

    fn touch(&mut self, now: SystemTime) {
        self.version += 1;
        self.last_updated_at = now;
    }
}

/// Which delivered keys were taken and which were ignored, in key order
/// ([`TaskRecord::deliver_responses`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Keys that answered an outstanding request.
    pub accepted: Vec<String>,
    /// Keys that did not (never asked, already answered, withdrawn, or the task has ended).
    pub ignored: Vec<String>,
}

/// What the sweeper should do with a task at a given time ([`TaskRecord::expiry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Nothing.
    Keep,
    /// The task has not ended and `created_at + deadline` has been reached: fail it with
    /// [`TaskRecord::DEADLINE_MESSAGE`] ([`TaskRecord::apply_expiry`]).
    Deadline,
    /// The task has not ended and the engine instance running it holds no live lease: fail it
    /// with [`TaskRecord::RUNNER_STOPPED_MESSAGE`] ([`TaskRecord::apply_expiry`]).
    RunnerStopped,
    /// The task ended and its record's retention ran out: delete it.
    Remove,
}

#[cfg(test)]
mod props;
