//! The stored task: [`TaskRecord`], everything a store keeps about one task.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::Era;
use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};

/// Everything stored about one task: plain data, read and written only through a task store
/// ([`crate::store`]); the runtime renders it to the wire.
///
/// The serde encoding is a *storage* format for durable stores, not a wire shape; the wire shapes
/// are the renderers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The id.
    pub id: TaskId,
    /// Who may see and act on the task.
    pub owner: Owner,
    /// The era it was created in.
    pub origin: Era,
    /// Current status.
    pub status: TaskStatus,
    /// A message for people about the current status.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When anything a client can see last changed.
    pub last_updated_at: SystemTime,
    /// How long the task's record is kept (the wire's `ttl`/`ttlMs`): at least `ttl` from
    /// creation and, once the task has ended, `ttl` after it ended. It never ends a running task;
    /// [`deadline`](Self::deadline) does. `None` = kept forever.
    pub ttl: Option<Duration>,
    /// How long the task may run, from creation: a task still running at `created_at + deadline`
    /// fails, with a status message that says so. `None` (the default) = no limit. Not on the
    /// wire.
    #[serde(default)]
    pub deadline: Option<Duration>,
    /// The engine instance running the task (see the store's leases): when that instance's lease
    /// lapses, the task fails as stopped. `None` for a task no engine runs. Not on the wire.
    #[serde(default)]
    pub runner: Option<String>,
    /// The polling interval suggested to clients.
    pub poll_interval: Option<Duration>,
    /// The name of the tool whose call created the task, when known: over HTTP with OAuth, a
    /// `tasks/*` request must hold that tool's scopes as the `tools/call` did. Not on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Input requests waiting for an answer, by key.
    pub input_requests: BTreeMap<String, InputRequest>,
    /// Answers delivered by the client that the waiting tool has not taken yet, by key.
    pub input_responses: BTreeMap<String, Value>,
    /// Keys that were answered or withdrawn. A key is used for the task's whole life: it may not
    /// name a second request.
    pub retired_keys: BTreeSet<String>,
    /// How it ended; set when the task turned `completed` or `failed` (never for `cancelled`).
    pub outcome: Option<TaskOutcome>,
    /// What the tool published as the task's outputs, by name: resources the task's owner reads
    /// with `resources/read` at `task://{id}/{name}`
    /// ([`ToolContext::publish_text`](crate::ToolContext::publish_text)). Never shown by
    /// `tasks/get`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outputs: BTreeMap<String, ResourceContents>,
    /// Bumped by every change; starts at 1. Waiters and optimistic writers compare it.
    pub version: u64,
    /// When it turned terminal.
    pub terminal_at: Option<SystemTime>,
}

/// The room a record's stored text is written into at first: a new task's record is about 600
/// bytes, and `serde_json::to_string`'s buffer starts at 128 and grows three times to hold it
/// (each a copy).
#[cfg(any(test, feature = "sqlite", feature = "redis", feature = "postgres"))]
const STORED_TEXT_ROOM: usize = 1024;

impl TaskRecord {
    /// The record as the durable stores keep it: its serde encoding, as JSON text.
    #[cfg(any(test, feature = "sqlite", feature = "redis", feature = "postgres"))]
    pub(crate) fn to_stored_text(&self) -> Result<String, serde_json::Error> {
        let mut text = Vec::with_capacity(STORED_TEXT_ROOM);
        serde_json::to_writer(&mut text, self)?;
        Ok(String::from_utf8(text).expect("serde_json writes UTF-8"))
    }

    /// Whether `key` has named an input request of this task (outstanding, answered or withdrawn).
    pub fn key_used(&self, key: &str) -> bool {
        self.input_requests.contains_key(key) || self.retired_keys.contains(key)
    }

    /// [`TaskView::modern_create_result`] of this task.
    pub(crate) fn modern_create_result(&self) -> Value {
        self.task_view().modern_create_result()
    }

    /// [`TaskView::modern_get_result`] of this task.
    #[cfg(test)]
    pub(crate) fn modern_get_result(&self) -> Value {
        self.task_view().modern_get_result()
    }

    /// [`TaskView::modern_notification_params`] of this task.
    pub(crate) fn modern_notification_params(&self) -> Value {
        self.task_view().modern_notification_params()
    }

    /// [`TaskView::legacy_task`] of this task.
    pub(crate) fn legacy_task(&self) -> Value {
        self.task_view().legacy_task()
    }

    /// [`TaskView::legacy_create_result`] of this task.
    #[cfg(test)]
    pub(crate) fn legacy_create_result(&self) -> Value {
        self.task_view().legacy_create_result()
    }

    /// The 2025-11-25 `notifications/tasks/status` params: the `Task` ([`Self::legacy_task`]).
    pub(crate) fn legacy_status_notification_params(&self) -> Value {
        self.legacy_task()
    }
}

impl AsTaskView for TaskRecord {
    fn task_view(&self) -> TaskView<'_> {
        TaskView {
            id: &self.id,
            status: self.status,
            status_message: self.status_message.as_deref(),
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl: self.ttl,
            poll_interval: self.poll_interval,
            input_requests: &self.input_requests,
            outcome: self.outcome.as_ref().map(Into::into),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RpcError;
    use serde_json::json;

    /// 2025-11-25T10:30:00Z.
    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
    }

    fn record(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            id: TaskId::new("786512e2"),
            owner: Owner::new("alice"),
            origin: Era::Modern,
            status,
            status_message: None,
            created_at: t0(),
            last_updated_at: t0() + Duration::from_millis(600_250),
            ttl: Some(Duration::from_secs(60)),
            deadline: None,
            runner: None,
            poll_interval: Some(Duration::from_secs(5)),
            tool: None,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            retired_keys: BTreeSet::new(),
            outcome: None,
            outputs: Default::default(),
            version: 1,
            terminal_at: None,
        }
    }

    #[test]
    fn record_storage_encoding_round_trips() {
        let mut r = record(TaskStatus::Failed);
        r.tool = Some("crawl".into());
        r.input_responses
            .insert("k".into(), json!({"action": "accept"}));
        r.retired_keys.insert("k".into());
        r.outcome = Some(TaskOutcome::Error(RpcError::internal("x")));
        r.terminal_at = Some(t0());
        let encoded = r.to_stored_text().unwrap();
        assert_eq!(encoded, serde_json::to_string(&r).unwrap());
        assert_eq!(serde_json::from_str::<TaskRecord>(&encoded).unwrap(), r);
    }

    /// Records written before the era had one name (when the field was a `TaskOrigin`), as the
    /// SQLite and Redis stores keep them: they still read, and encode to the same text.
    #[test]
    fn records_stored_before_the_era_rename_still_read() {
        for (origin, era) in [("legacy", Era::Legacy), ("modern", Era::Modern)] {
            let stored = format!(
                r#"{{"id":"786512e2","owner":"alice","origin":"{origin}","status":"working","status_message":null,"created_at":{{"secs_since_epoch":1764066600,"nanos_since_epoch":0}},"last_updated_at":{{"secs_since_epoch":1764067200,"nanos_since_epoch":250000000}},"ttl":{{"secs":60,"nanos":0}},"deadline":null,"runner":null,"poll_interval":{{"secs":5,"nanos":0}},"input_requests":{{}},"input_responses":{{}},"retired_keys":[],"outcome":null,"version":1,"terminal_at":null}}"#
            );
            let mut expected = record(TaskStatus::Working);
            expected.origin = era;
            let read: TaskRecord = serde_json::from_str(&stored).unwrap();
            assert_eq!(read, expected);
            assert_eq!(serde_json::to_string(&read).unwrap(), stored);
        }
    }
}
