//! Durable tasks in the store: what a task whose tool is `durable` keeps to run again on another
//! instance ([`DurableRun`]), and the state machine's moves for it: released when its instance
//! dies or drains, claimed by exactly one live instance, checkpointed by its tool.
//!
//! A durable task waiting for an instance is *queued*: still running (`working` or
//! `input_required`), its [`runner`](TaskRecord::runner) is [`TaskRecord::QUEUED`], a name no
//! instance holds a lease under, so every sweep finds it (and reports it in
//! [`ExpiryReport::queued`](super::ExpiryReport::queued)) until an instance claims it.

use std::time::SystemTime;

use serde_json::Value;

use super::{StoreError, TaskRecord};

/// What a durable task keeps to run its tool's body again elsewhere: the call as the tool saw
/// it, which run this is, and the tool's last checkpoint. The answers the task received are kept
/// in [`TaskRecord::answers`], for every task.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
// Kept inside the record's stored text: a store keeps the record whole and never names it, and
// the tool reads it through `ToolContext`.
#[doc(hidden)]
pub struct DurableRun {
    /// The call's `arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The caller the tool saw: its principal's id and scopes, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<StoredCaller>,
    /// The client's capabilities for the call (what the tool may ask it).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub capabilities: Value,
    /// The protocol version of the call.
    #[serde(default)]
    pub protocol_version: String,
    /// Which run of the body this is (or the last one was): 1 for the first.
    pub attempt: u32,
    /// How many runs the task may have in all; once that many have died, it fails.
    pub max_attempts: u32,
    /// The last value the tool kept with `ctx.checkpoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Value>,
}

/// The principal of a durable task's call, as stored.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
#[doc(hidden)] // part of `DurableRun`
pub struct StoredCaller {
    /// The principal's id.
    pub id: String,
    /// Its scopes; `None`: not limited by scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

impl TaskRecord {
    /// The [`runner`](Self::runner) of a durable task that waits for an instance to claim it.
    pub const QUEUED: &str = "@queued";

    /// The status message of a durable task released by its instance (it died or drained).
    pub const RELEASED_MESSAGE: &str =
        "the server running this task stopped; the task resumes on another";

    /// Whether this is a durable task waiting for an instance to claim it.
    pub fn is_queued(&self) -> bool {
        !self.status.is_terminal() && self.runner.as_deref() == Some(Self::QUEUED)
    }

    /// The error message of a durable task whose every run died.
    pub fn exhausted_message(runs: u32) -> String {
        format!("the server running this task stopped during each of its {runs} runs")
    }

    /// The instance running a durable task is gone (its lease lapsed): the task is queued for
    /// another, or fails with [`exhausted_message`](Self::exhausted_message) once it has had
    /// all its runs. Returns whether the record changed; `None` for a task that is not durable
    /// (the caller fails it as stopped).
    pub(super) fn orphaned(&mut self, now: SystemTime) -> Option<bool> {
        let durable = self.durable.as_ref()?;
        if self.status.is_terminal() {
            return Some(false);
        }
        if self.runner.as_deref() == Some(Self::QUEUED) {
            return Some(false);
        }
        if durable.attempt >= durable.max_attempts {
            let message = Self::exhausted_message(durable.attempt);
            return Some(self.fail(&message, now));
        }
        self.queue(now);
        Some(true)
    }

    /// Queues the durable task for another instance: no runner, a status message saying so.
    fn queue(&mut self, now: SystemTime) {
        self.runner = Some(Self::QUEUED.to_owned());
        self.status_message = Some(Self::RELEASED_MESSAGE.to_owned());
        self.version += 1;
        self.last_updated_at = now;
    }

    /// `instance` lets go of its running durable task (it drains): the task is queued for
    /// another instance at once. Returns whether it did (not for a task that has ended, is not
    /// durable or that `instance` does not run).
    pub fn release(&mut self, instance: &str, now: SystemTime) -> bool {
        if self.status.is_terminal()
            || self.durable.is_none()
            || self.runner.as_deref() != Some(instance)
        {
            return false;
        }
        self.queue(now);
        true
    }

    /// `instance` claims a queued durable task: it becomes its runner, and the run's number goes
    /// up. Returns whether it did: only one claim of a queued task succeeds, as the record is no
    /// longer queued after it.
    pub fn claim(&mut self, instance: &str, now: SystemTime) -> bool {
        if !self.is_queued() {
            return false;
        }
        let Some(durable) = self.durable.as_mut() else {
            return false;
        };
        durable.attempt += 1;
        let attempt = durable.attempt;
        self.runner = Some(instance.to_owned());
        self.status_message = Some(format!("resumed (run {attempt})"));
        self.version += 1;
        self.last_updated_at = now;
        true
    }

    /// Keeps `value` as the durable task's checkpoint, replacing the last one. Not a change
    /// clients see. [`StoreError::Terminal`] once the task has ended; nothing for a task that is
    /// not durable.
    pub fn checkpoint(&mut self, value: Value) -> Result<(), StoreError> {
        if self.status.is_terminal() {
            return Err(StoreError::Terminal(self.status));
        }
        if let Some(durable) = self.durable.as_mut()
            && durable.checkpoint.as_ref() != Some(&value)
        {
            durable.checkpoint = Some(value);
            self.version += 1;
        }
        Ok(())
    }
}
