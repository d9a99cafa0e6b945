//! [`TaskView`], what a client may see of a task, and the renderer that writes it in each wire
//! shape.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::result::CompleteResult;
use super::time::{Timestamp, timestamp_bytes};
use super::types::{OutcomeView, TaskId, TaskStatus};
use crate::protocol::json_text;
use crate::protocol::jsonrpc::ServerInfoMeta;
use crate::protocol::{InputRequest, RpcError};

/// What a client may see of one task, borrowed from wherever it is stored; the input of every
/// renderer. A store's record gives one through [`AsTaskView`].
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    /// The id.
    pub id: &'a TaskId,
    /// Current status.
    pub status: TaskStatus,
    /// A message for people about the current status.
    pub status_message: Option<&'a str>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When anything a client can see last changed.
    pub last_updated_at: SystemTime,
    /// How long the record is kept (`None` = forever).
    pub ttl: Option<Duration>,
    /// The polling interval suggested to clients.
    pub poll_interval: Option<Duration>,
    /// Input requests waiting for an answer, by key.
    pub input_requests: &'a BTreeMap<String, InputRequest>,
    /// How it ended, once `completed` or `failed`.
    pub outcome: Option<OutcomeView<'a>>,
}

/// Anything a [`TaskView`] can be borrowed from (a store's record).
pub trait AsTaskView {
    /// The client-visible fields.
    fn task_view(&self) -> TaskView<'_>;
}

/// The JSON shapes a task takes on the wire (the table at the top of this module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskShape {
    /// The 2026-07-28 `CreateTaskResult`: the flat task with `resultType: "task"`, never a payload.
    ModernCreate,
    /// The 2026-07-28 `tasks/get` result: the `DetailedTask` with `resultType: "complete"`.
    ModernGet,
    /// The 2026-07-28 `notifications/tasks` params: the `DetailedTask` without `resultType`.
    ModernNotification,
    /// The 2025-11-25 `Task` (`tasks/get`, `tasks/cancel`, `notifications/tasks/status`): never
    /// the payload (that is what `tasks/result` is for).
    LegacyTask,
    /// The 2025-11-25 `CreateTaskResult`: `{"task": <Task>}`.
    LegacyCreate,
}

/// A task in one of its wire shapes, written straight to text by [`Serialize`] with no tree on
/// the way: a completed task's stored result text is copied in as it is. [`TaskView::render`]
/// makes one.
#[derive(Debug, Clone, Copy)]
pub struct Rendered<'a> {
    view: TaskView<'a>,
    shape: TaskShape,
    server_info: Option<&'a Value>,
}

impl<'a> TaskView<'a> {
    /// The task in this shape, to serialize.
    pub fn render(self, shape: TaskShape) -> Rendered<'a> {
        Rendered {
            view: self,
            shape,
            server_info: None,
        }
    }

    /// The 2026-07-28 `CreateTaskResult`: the flat task with `resultType: "task"`, never a payload.
    pub fn modern_create_result(self) -> Value {
        self.render(TaskShape::ModernCreate).to_value()
    }

    /// The 2026-07-28 `tasks/get` result: the `DetailedTask` with `resultType: "complete"`.
    pub fn modern_get_result(self) -> Value {
        self.render(TaskShape::ModernGet).to_value()
    }

    /// The 2026-07-28 `notifications/tasks` params: the same `DetailedTask` as
    /// [`modern_get_result`](Self::modern_get_result), without `resultType`.
    pub fn modern_notification_params(self) -> Value {
        self.render(TaskShape::ModernNotification).to_value()
    }

    /// The 2025-11-25 `Task`: the result of legacy `tasks/get` and `tasks/cancel`. It never carries
    /// the payload (that is what `tasks/result` is for).
    pub fn legacy_task(self) -> Value {
        self.render(TaskShape::LegacyTask).to_value()
    }

    /// The 2025-11-25 `CreateTaskResult`: `{"task": <Task>}`.
    pub fn legacy_create_result(self) -> Value {
        self.render(TaskShape::LegacyCreate).to_value()
    }
}

impl<'a> Rendered<'a> {
    /// As a 2026-07-28 reply's result: with `_meta` carrying the server's `serverInfo` (what a
    /// reply adds to every 2026-07-28 result, see `jsonrpc::Reply`), so that the text is the
    /// final result. For the modern result shapes; a task's own shapes never have a `_meta`.
    pub fn with_server_info(mut self, info: &'a Value) -> Self {
        self.server_info = Some(info);
        self
    }

    /// The JSON text: what [`Serialize`] writes, byte for byte, written by hand (a task is
    /// written once or twice for every request about it; see `protocol::json_text`).
    pub fn to_text(self) -> Box<RawValue> {
        let mut out = String::with_capacity(320);
        self.write(&mut out);
        json_text::into_raw(out)
    }

    /// Appends the JSON text to `out`: the fields of [`ModernTask`] or [`LegacyTask`] in their
    /// order, the payload's value written by [`Serialize`].
    fn write(&self, out: &mut String) {
        let v = &self.view;
        let (result_type, payload) = match self.shape {
            TaskShape::ModernCreate => (Some("task"), false),
            TaskShape::ModernGet => (Some("complete"), true),
            TaskShape::ModernNotification => (None, true),
            TaskShape::LegacyTask => return write_legacy(v, out),
            TaskShape::LegacyCreate => {
                out.push_str("{\"task\":");
                write_legacy(v, out);
                out.push('}');
                return;
            }
        };
        out.push('{');
        if let Some(info) = self.server_info {
            out.push_str("\"_meta\":{\"io.modelcontextprotocol/serverInfo\":");
            json_text::push_value(out, info);
            out.push_str("},");
        }
        write_common(v, out, ("ttlMs", "pollIntervalMs"));
        if let Some(result_type) = result_type {
            out.push_str(",\"resultType\":\"");
            out.push_str(result_type);
            out.push('"');
        }
        // The payload as `Serialize` chooses it, its value written by `serde_json`.
        if payload {
            match (v.status, v.outcome) {
                (TaskStatus::InputRequired, _) => {
                    out.push_str(",\"inputRequests\":");
                    out.push_str(&to_string(v.input_requests));
                }
                (TaskStatus::Completed | TaskStatus::Failed, Some(OutcomeView::Error(e))) => {
                    out.push_str(",\"error\":");
                    out.push_str(&to_string(e));
                }
                (TaskStatus::Completed | TaskStatus::Failed, Some(outcome)) => {
                    out.push_str(",\"result\":");
                    CompleteResult(outcome).write(out);
                }
                _ => {}
            }
        }
        out.push('}');
    }

    /// The JSON tree (parsing a stored result text).
    pub fn to_value(self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Rendered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = &self.view;
        let (result_type, payload) = match self.shape {
            TaskShape::ModernCreate => (Some("task"), false),
            TaskShape::ModernGet => (Some("complete"), true),
            TaskShape::ModernNotification => (None, true),
            TaskShape::LegacyTask => return LegacyTask::from(v).serialize(s),
            TaskShape::LegacyCreate => {
                return LegacyCreate {
                    task: LegacyTask::from(v),
                }
                .serialize(s);
            }
        };
        // The payload (modern only): `inputRequests` (all outstanding) while `input_required`;
        // `result` or `error` once `completed`/`failed`; nothing while `working` or once
        // `cancelled`.
        let (mut error, mut result, mut input_requests) = (None, None, None);
        if payload {
            match (v.status, v.outcome) {
                (TaskStatus::InputRequired, _) => input_requests = Some(v.input_requests),
                (TaskStatus::Completed | TaskStatus::Failed, Some(OutcomeView::Error(e))) => {
                    error = Some(e)
                }
                // Exactly what the call would have returned in this era: a 2026-07-28
                // `CallToolResult` carries `resultType` (the extension's own client checks it).
                (TaskStatus::Completed | TaskStatus::Failed, Some(outcome)) => {
                    result = Some(CompleteResult(outcome))
                }
                _ => {}
            }
        }
        ModernTask {
            meta: self.server_info.map(|info| ServerInfoMeta { info }),
            task_id: v.id.as_str(),
            status: v.status,
            status_message: v.status_message,
            created_at: Timestamp(v.created_at),
            last_updated_at: Timestamp(v.last_updated_at),
            ttl_ms: v.ttl.map(millis),
            poll_interval_ms: v.poll_interval.map(millis),
            result_type,
            input_requests,
            result,
            error,
        }
        .serialize(s)
    }
}

/// A payload's value as `serde_json` writes it (every key is a string: it cannot fail).
fn to_string(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The 2025-11-25 `Task`, as [`LegacyTask`] serializes it.
fn write_legacy(v: &TaskView<'_>, out: &mut String) {
    out.push('{');
    write_common(v, out, ("ttl", "pollInterval"));
    out.push('}');
}

/// The fields both eras' tasks have, from `taskId` to the poll interval, under the era's names
/// for the TTL and the poll interval.
fn write_common(v: &TaskView<'_>, out: &mut String, (ttl, poll): (&str, &str)) {
    out.push_str("\"taskId\":");
    json_text::push_str(out, v.id.as_str());
    out.push_str(",\"status\":\"");
    out.push_str(v.status.as_str());
    out.push('"');
    if let Some(message) = v.status_message {
        out.push_str(",\"statusMessage\":");
        json_text::push_str(out, message);
    }
    for (key, at) in [
        ("createdAt", v.created_at),
        ("lastUpdatedAt", v.last_updated_at),
    ] {
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":\"");
        // Every byte is an ASCII digit or separator.
        out.push_str(std::str::from_utf8(&timestamp_bytes(at)).unwrap_or_default());
        out.push('"');
    }
    out.push_str(",\"");
    out.push_str(ttl);
    out.push_str("\":");
    match v.ttl {
        Some(ttl) => json_text::push_u64(out, millis(ttl)),
        None => out.push_str("null"),
    }
    if let Some(every) = v.poll_interval {
        out.push_str(",\"");
        out.push_str(poll);
        out.push_str("\":");
        json_text::push_u64(out, millis(every));
    }
}

/// The 2026-07-28 task: the `DetailedTask` (with its payload), or the `CreateTaskResult`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModernTask<'a> {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<ServerInfoMeta<'a>>,
    task_id: &'a str,
    status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    created_at: Timestamp,
    last_updated_at: Timestamp,
    /// `null` when the task is kept forever.
    ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_interval_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_requests: Option<&'a BTreeMap<String, InputRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<CompleteResult<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

/// The 2025-11-25 `Task`: never the payload (that is what `tasks/result` is for).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LegacyTask<'a> {
    task_id: &'a str,
    status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    created_at: Timestamp,
    last_updated_at: Timestamp,
    /// `null` when the task is kept forever.
    ttl: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_interval: Option<u64>,
}

impl<'a> From<&TaskView<'a>> for LegacyTask<'a> {
    fn from(v: &TaskView<'a>) -> Self {
        LegacyTask {
            task_id: v.id.as_str(),
            status: v.status,
            status_message: v.status_message,
            created_at: Timestamp(v.created_at),
            last_updated_at: Timestamp(v.last_updated_at),
            ttl: v.ttl.map(millis),
            poll_interval: v.poll_interval.map(millis),
        }
    }
}

/// The 2025-11-25 `CreateTaskResult`: `{"task": <Task>}`.
#[derive(Serialize)]
struct LegacyCreate<'a> {
    task: LegacyTask<'a>,
}

/// The 2025-11-25 `tasks/list` result: `{"tasks": [<Task>…], "nextCursor"?}`.
pub fn legacy_list_result<'a, T: AsTaskView + 'a>(
    tasks: impl IntoIterator<Item = &'a T>,
    next_cursor: Option<&str>,
) -> Value {
    let mut out = Map::new();
    let tasks = tasks
        .into_iter()
        .map(|task| task.task_view().legacy_task())
        .collect();
    out.insert("tasks".into(), Value::Array(tasks));
    if let Some(cursor) = next_cursor {
        out.insert("nextCursor".into(), cursor.into());
    }
    Value::Object(out)
}
/// A duration in whole milliseconds, at least 1: both eras want a positive integer (conformance
/// rejects `ttlMs: 0`), so a sub-millisecond duration rounds up rather than to zero.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Era;
    use crate::protocol::RpcError;
    use crate::protocol::json_eq::assert_same_json;
    use crate::protocol::task::TaskOutcome;
    use crate::store::TaskRecord;
    use crate::store::fixture as record;
    use serde_json::json;
    use std::sync::Arc;

    /// 2025-11-25T10:30:00Z.
    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
    }

    /// A task written straight to text is, inside a reply, the reply its tree gives (the same
    /// JSON): the 2026-07-28 shapes with the server's `serverInfo` (what the reply adds to a
    /// tree), the 2025-11-25 ones as they are; a stored result as text or as a tree alike.
    #[test]
    fn a_task_written_as_text_replies_what_its_tree_replies() {
        use crate::protocol::jsonrpc::{Payload, Reply, RequestId};
        let info = Arc::new(json!({"name": "s", "version": "1", "title": "S \"q\""}));
        let requests: BTreeMap<String, InputRequest> = [
            ("b".to_owned(), InputRequest::new("roots/list", json!({}))),
            (
                "a\"".to_owned(),
                InputRequest::new("elicitation/create", json!({"message": "?", "z": [1, {}]})),
            ),
        ]
        .into();
        let results = [
            json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
            json!({"resultType": "x", "_meta": {"k": 1}, "a": null}),
            json!({"resultTypf": 1, "resultTyp": 2, "Z": 3}),
            json!({}),
            json!([1, {"b": 2, "a": 1}]),
            json!(7.25),
        ];
        let texts: Vec<Box<RawValue>> = results
            .iter()
            .map(|r| serde_json::value::to_raw_value(r).unwrap())
            .collect();
        let error = RpcError::internal("boom").with_data(json!({"retry": [1]}));
        let id = TaskId::new("t\"1");
        let base = TaskView {
            id: &id,
            status: TaskStatus::Working,
            status_message: Some("half \u{1} way"),
            created_at: t0(),
            last_updated_at: t0() + Duration::from_millis(1_234),
            ttl: None,
            poll_interval: Some(Duration::from_micros(10)),
            input_requests: &requests,
            outcome: None,
        };
        let mut views = vec![
            base,
            TaskView {
                status: TaskStatus::InputRequired,
                ttl: Some(Duration::from_secs(9)),
                status_message: None,
                poll_interval: None,
                ..base
            },
            TaskView {
                status: TaskStatus::Failed,
                outcome: Some(OutcomeView::Error(&error)),
                ..base
            },
            TaskView {
                status: TaskStatus::Cancelled,
                ..base
            },
        ];
        for (result, text) in results.iter().zip(&texts) {
            for outcome in [OutcomeView::Result(result), OutcomeView::ResultText(text)] {
                for status in [TaskStatus::Completed, TaskStatus::Failed] {
                    let outcome = Some(outcome);
                    views.push(TaskView {
                        status,
                        outcome,
                        ..base
                    });
                }
            }
        }
        let ids = [
            RequestId::Number(3),
            RequestId::BigNumber("18446744073709551623".into()),
        ];
        for view in views {
            // Not a result: the notification's params are written as they are.
            let params = view.render(TaskShape::ModernNotification);
            assert_eq!(
                params.to_text().get(),
                serde_json::to_string(&params).unwrap()
            );
            let tree = serde_json::to_string(&params.to_value()).unwrap();
            assert_same_json(params.to_text().get(), &tree);
            for id in &ids {
                for (shape, modern) in [
                    (TaskShape::ModernCreate, true),
                    (TaskShape::ModernGet, true),
                    (TaskShape::LegacyTask, false),
                    (TaskShape::LegacyCreate, false),
                ] {
                    let rendered = view.render(shape);
                    let server_info = modern.then(|| info.clone());
                    let rendered = match modern {
                        true => rendered.with_server_info(&info),
                        false => rendered,
                    };
                    let text = rendered.to_text();
                    // The hand-written text is what `Serialize` writes, byte for byte.
                    assert_eq!(text.get(), serde_json::to_string(&rendered).unwrap());
                    let from_text = Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Text(text)),
                        server_info: server_info.clone(),
                    };
                    let from_tree = Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Tree(rendered.to_value())),
                        server_info,
                    };
                    let written = serde_json::to_string(&from_text).unwrap();
                    assert_same_json(&written, &serde_json::to_string(&from_tree).unwrap());
                    let tree = crate::protocol::jsonrpc::Wire(&from_tree.into_value()).to_json();
                    assert_same_json(&written, &tree);
                }
            }
        }
    }

    // The renderers on a stored record (`crate::store::TaskRecord`): what each shape shows, and
    // what it never shows (answered or withdrawn keys, answers not yet taken).

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
        r.origin = Era::Legacy;
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
}
