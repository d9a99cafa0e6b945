//! The stored task: [`TaskRecord`], everything a store keeps about one task.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::InputRequest;
use crate::protocol::task::{
    AsTaskView, Owner, TaskId, TaskOrigin, TaskOutcome, TaskStatus, TaskView,
};

/// Everything stored about one task: plain data, read and written only through a task store
/// (`crate::store`), rendered to the wire through its [`TaskView`] (the renderers
/// in `crate::protocol::task`, also callable on the record).
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
    pub origin: TaskOrigin,
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
    /// Input requests waiting for an answer, by key.
    pub input_requests: BTreeMap<String, InputRequest>,
    /// Answers delivered by the client that the waiting tool has not taken yet, by key.
    pub input_responses: BTreeMap<String, Value>,
    /// Keys that were answered or withdrawn. A key is used for the task's whole life: it may not
    /// name a second request.
    pub retired_keys: BTreeSet<String>,
    /// How it ended; set when the task turned `completed` or `failed` (never for `cancelled`).
    pub outcome: Option<TaskOutcome>,
    /// Bumped by every change; starts at 1. Waiters and optimistic writers compare it.
    pub version: u64,
    /// When it turned terminal.
    pub terminal_at: Option<SystemTime>,
}

impl TaskRecord {
    /// Whether `key` has named an input request of this task (outstanding, answered or withdrawn).
    pub fn key_used(&self, key: &str) -> bool {
        self.input_requests.contains_key(key) || self.retired_keys.contains(key)
    }

    /// [`TaskView::modern_create_result`] of this task.
    pub fn modern_create_result(&self) -> Value {
        self.task_view().modern_create_result()
    }

    /// [`TaskView::modern_get_result`] of this task.
    pub fn modern_get_result(&self) -> Value {
        self.task_view().modern_get_result()
    }

    /// [`TaskView::modern_notification_params`] of this task.
    pub fn modern_notification_params(&self) -> Value {
        self.task_view().modern_notification_params()
    }

    /// [`TaskView::legacy_task`] of this task.
    pub fn legacy_task(&self) -> Value {
        self.task_view().legacy_task()
    }

    /// [`TaskView::legacy_create_result`] of this task.
    pub fn legacy_create_result(&self) -> Value {
        self.task_view().legacy_create_result()
    }

    /// The 2025-11-25 `notifications/tasks/status` params: the `Task` ([`Self::legacy_task`]).
    pub fn legacy_status_notification_params(&self) -> Value {
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
    use crate::protocol::task::legacy_list_result;
    use serde_json::json;

    /// 2025-11-25T10:30:00Z.
    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
    }

    fn record(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            id: TaskId::new("786512e2"),
            owner: Owner::new("alice"),
            origin: TaskOrigin::Modern,
            status,
            status_message: None,
            created_at: t0(),
            last_updated_at: t0() + Duration::from_millis(600_250),
            ttl: Some(Duration::from_secs(60)),
            deadline: None,
            runner: None,
            poll_interval: Some(Duration::from_secs(5)),
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            retired_keys: BTreeSet::new(),
            outcome: None,
            version: 1,
            terminal_at: None,
        }
    }

    fn elicit() -> InputRequest {
        InputRequest::new(
            "elicitation/create",
            json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}),
        )
    }

    #[test]
    fn modern_create_result_is_flat_with_task_result_type() {
        let mut r = record(TaskStatus::Working);
        r.status_message = Some("The operation is now in progress.".into());
        assert_eq!(
            r.modern_create_result(),
            json!({
                "resultType": "task",
                "taskId": "786512e2",
                "status": "working",
                "statusMessage": "The operation is now in progress.",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000
            })
        );
    }

    #[test]
    fn modern_create_result_never_carries_a_payload() {
        let mut r = record(TaskStatus::InputRequired);
        r.input_requests.insert("name".into(), elicit());
        let v = r.modern_create_result();
        for key in ["inputRequests", "result", "error", "requestState", "task"] {
            assert!(v.get(key).is_none(), "{key} in {v}");
        }
    }

    #[test]
    fn unlimited_ttl_is_null_and_tiny_durations_are_never_zero() {
        let mut r = record(TaskStatus::Working);
        r.ttl = None;
        r.poll_interval = None;
        assert_eq!(
            r.modern_create_result(),
            json!({
                "resultType": "task",
                "taskId": "786512e2",
                "status": "working",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": null
            })
        );
        r.ttl = Some(Duration::ZERO);
        r.poll_interval = Some(Duration::from_micros(10));
        let v = r.modern_create_result();
        assert_eq!(v["ttlMs"], json!(1));
        assert_eq!(v["pollIntervalMs"], json!(1));
        let v = r.legacy_task();
        assert_eq!(v["ttl"], json!(1));
        assert_eq!(v["pollInterval"], json!(1));
    }

    #[test]
    fn modern_get_working() {
        assert_eq!(
            record(TaskStatus::Working).modern_get_result(),
            json!({
                "resultType": "complete",
                "taskId": "786512e2",
                "status": "working",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000
            })
        );
    }

    #[test]
    fn modern_get_input_required_lists_every_outstanding_request() {
        let mut r = record(TaskStatus::InputRequired);
        r.input_requests.insert("name".into(), elicit());
        r.input_requests
            .insert("roots".into(), InputRequest::new("roots/list", json!({})));
        r.retired_keys.insert("earlier".into());
        r.input_responses.insert("earlier".into(), json!({"x": 1}));
        assert_eq!(
            r.modern_get_result(),
            json!({
                "resultType": "complete",
                "taskId": "786512e2",
                "status": "input_required",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000,
                "inputRequests": {
                    "name": {
                        "method": "elicitation/create",
                        "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}
                    },
                    "roots": {"method": "roots/list", "params": {}}
                }
            })
        );
    }

    #[test]
    fn modern_get_completed_carries_the_result_as_a_2026_result() {
        let mut r = record(TaskStatus::Completed);
        let stored = json!({"content": [{"type": "text", "text": "Hello"}], "isError": true});
        r.outcome = Some(TaskOutcome::Result(stored));
        // What the call itself would have answered in 2026-07-28, `resultType` included.
        let result = json!({"content": [{"type": "text", "text": "Hello"}], "isError": true, "resultType": "complete"});
        assert_eq!(
            r.modern_get_result(),
            json!({
                "resultType": "complete",
                "taskId": "786512e2",
                "status": "completed",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000,
                "result": result
            })
        );
    }

    #[test]
    fn modern_get_failed_carries_the_error() {
        let mut r = record(TaskStatus::Failed);
        r.poll_interval = None;
        r.status_message = Some("Tool execution failed: API rate limit exceeded".into());
        r.outcome = Some(TaskOutcome::Error(
            RpcError::internal("API rate limit exceeded").with_data(json!({"retryAfter": 3})),
        ));
        assert_eq!(
            r.modern_get_result(),
            json!({
                "resultType": "complete",
                "taskId": "786512e2",
                "status": "failed",
                "statusMessage": "Tool execution failed: API rate limit exceeded",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "error": {"code": -32603, "message": "API rate limit exceeded", "data": {"retryAfter": 3}}
            })
        );
    }

    #[test]
    fn modern_get_cancelled_has_no_payload() {
        let mut r = record(TaskStatus::Cancelled);
        r.status_message = Some("The task was cancelled by request.".into());
        assert_eq!(
            r.modern_get_result(),
            json!({
                "resultType": "complete",
                "taskId": "786512e2",
                "status": "cancelled",
                "statusMessage": "The task was cancelled by request.",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000
            })
        );
    }

    #[test]
    fn modern_shapes_never_use_legacy_names() {
        let mut r = record(TaskStatus::Completed);
        r.outcome = Some(TaskOutcome::Result(json!({"content": []})));
        for v in [
            r.modern_create_result(),
            r.modern_get_result(),
            r.modern_notification_params(),
        ] {
            for key in ["ttl", "pollInterval", "requestState", "task"] {
                assert!(v.get(key).is_none(), "{key} in {v}");
            }
        }
    }

    #[test]
    fn modern_notification_params_are_the_detailed_task_without_result_type() {
        let mut r = record(TaskStatus::Completed);
        r.last_updated_at = t0() + Duration::from_secs(1200);
        r.outcome = Some(TaskOutcome::Result(
            json!({"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false}),
        ));
        assert_eq!(
            r.modern_notification_params(),
            json!({
                "taskId": "786512e2",
                "status": "completed",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:50:00.000Z",
                "ttlMs": 60000,
                "pollIntervalMs": 5000,
                "result": {"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false, "resultType": "complete"}
            })
        );
        let mut r = record(TaskStatus::InputRequired);
        r.input_requests.insert("name".into(), elicit());
        let mut expected = r.modern_get_result();
        expected.as_object_mut().unwrap().remove("resultType");
        assert_eq!(r.modern_notification_params(), expected);
    }

    #[test]
    fn legacy_task_uses_legacy_names_and_no_payload() {
        let mut r = record(TaskStatus::Failed);
        r.origin = TaskOrigin::Legacy;
        r.ttl = Some(Duration::from_secs(30));
        r.status_message = Some("Tool execution failed: API rate limit exceeded".into());
        r.outcome = Some(TaskOutcome::Error(RpcError::internal("rate limit")));
        assert_eq!(
            r.legacy_task(),
            json!({
                "taskId": "786512e2",
                "status": "failed",
                "statusMessage": "Tool execution failed: API rate limit exceeded",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttl": 30000,
                "pollInterval": 5000
            })
        );
        let mut r = record(TaskStatus::InputRequired);
        r.input_requests.insert("name".into(), elicit());
        r.ttl = None;
        r.poll_interval = None;
        assert_eq!(
            r.legacy_task(),
            json!({
                "taskId": "786512e2",
                "status": "input_required",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttl": null
            })
        );
    }

    #[test]
    fn legacy_create_result_nests_the_task() {
        let r = record(TaskStatus::Working);
        assert_eq!(
            r.legacy_create_result(),
            json!({
                "task": {
                    "taskId": "786512e2",
                    "status": "working",
                    "createdAt": "2025-11-25T10:30:00.000Z",
                    "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                    "ttl": 60000,
                    "pollInterval": 5000
                }
            })
        );
    }

    #[test]
    fn legacy_status_notification_params_are_the_task() {
        let r = record(TaskStatus::Completed);
        assert_eq!(
            r.legacy_status_notification_params(),
            json!({
                "taskId": "786512e2",
                "status": "completed",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttl": 60000,
                "pollInterval": 5000
            })
        );
    }

    #[test]
    fn legacy_list_result_with_and_without_cursor() {
        let a = record(TaskStatus::Working);
        let mut b = record(TaskStatus::Completed);
        b.id = TaskId::new("abc123");
        b.poll_interval = None;
        assert_eq!(
            legacy_list_result([&a, &b], Some("next-page")),
            json!({
                "tasks": [
                    {
                        "taskId": "786512e2",
                        "status": "working",
                        "createdAt": "2025-11-25T10:30:00.000Z",
                        "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                        "ttl": 60000,
                        "pollInterval": 5000
                    },
                    {
                        "taskId": "abc123",
                        "status": "completed",
                        "createdAt": "2025-11-25T10:30:00.000Z",
                        "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                        "ttl": 60000
                    }
                ],
                "nextCursor": "next-page"
            })
        );
        assert_eq!(
            legacy_list_result::<TaskRecord>([], None),
            json!({"tasks": []})
        );
    }

    #[test]
    fn record_storage_encoding_round_trips() {
        let mut r = record(TaskStatus::Failed);
        r.input_responses
            .insert("k".into(), json!({"action": "accept"}));
        r.retired_keys.insert("k".into());
        r.outcome = Some(TaskOutcome::Error(RpcError::internal("x")));
        r.terminal_at = Some(t0());
        let encoded = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<TaskRecord>(&encoded).unwrap(), r);
    }
}
