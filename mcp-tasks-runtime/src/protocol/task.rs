//! Tasks on the wire, for both eras: status, ids, outcomes, and pure renderers that turn a
//! [`TaskView`] (the fields a client may see, borrowed from wherever the task is stored) into each
//! JSON shape a client sees. The stored record itself is `crate::store::TaskRecord`.
//!
//! | shape | era | renderer |
//! |---|---|---|
//! | `CreateTaskResult` (flat, `resultType: "task"`) | 2026-07-28 | [`TaskView::modern_create_result`] |
//! | `tasks/get` result (`DetailedTask`, `resultType: "complete"`) | 2026-07-28 | [`TaskView::modern_get_result`] |
//! | `notifications/tasks` params (`DetailedTask`) | 2026-07-28 | [`TaskView::modern_notification_params`] |
//! | `Task` (`tasks/get`, `tasks/cancel` results) | 2025-11-25 | [`TaskView::legacy_task`] |
//! | `CreateTaskResult` (nested `{"task": …}`) | 2025-11-25 | [`TaskView::legacy_create_result`] |
//! | `notifications/tasks/status` params | 2025-11-25 | [`TaskView::legacy_task`] |
//! | `tasks/list` result | 2025-11-25 | [`legacy_list_result`] |
//!
//! The two eras name durations differently (`ttlMs`/`pollIntervalMs` against `ttl`/`pollInterval`)
//! and only the modern era carries the payload (`inputRequests`, `result`, `error`) in the task
//! itself; the renderers are the one place that knows this.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{InputRequest, RpcError};

/// Where a task is in its life. Wire values are the snake_case names.
///
/// `working ⇄ input_required`, and from either to one of the terminal states `completed`,
/// `failed`, `cancelled`, which never change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for the client to answer one or more input requests.
    InputRequired,
    /// Finished with a result (in the modern era also a tool result with `isError: true`).
    Completed,
    /// Finished with a JSON-RPC error (in the legacy era also a tool result with `isError: true`).
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// The wire value, e.g. `"input_required"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the status is final: `completed`, `failed` or `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task id. Ids are capabilities: [`TaskId::generate`] draws 128 bits from a cryptographically
/// secure generator and writes them as 22 URL-safe base64 characters (no padding), so they can be
/// used in URLs and headers (`Mcp-Name`) as they are.
///
/// Cloning shares the string (a store names a task in its record and in its indexes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(Arc<str>);

impl TaskId {
    /// A fresh, unguessable id (128 random bits).
    pub fn generate() -> Self {
        let mut bytes = [0u8; 16];
        rand::fill(&mut bytes[..]);
        TaskId(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(bytes)
                .into(),
        )
    }

    /// An id as a client sent it (`params.taskId`), or as a custom id source made it. Any string
    /// is accepted: an id that names no task is simply not found.
    pub fn new(id: impl Into<String>) -> Self {
        TaskId(id.into().into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for TaskId {
    fn from(id: String) -> Self {
        TaskId(id.into())
    }
}

impl From<&str> for TaskId {
    fn from(id: &str) -> Self {
        TaskId(id.into())
    }
}

/// Who a task belongs to: an opaque principal, either an authenticated identity or (legacy era,
/// no authentication) the session id. Only the owner may read, list, answer or cancel a task;
/// to anyone else the task does not exist.
///
/// Cloning shares the string: every task of an owner names it, and the memory store keeps one
/// copy per owner rather than one per task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(Arc<str>);

impl Owner {
    /// An owner named by this principal string.
    pub fn new(principal: impl Into<String>) -> Self {
        Owner(principal.into().into())
    }

    /// The principal string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for TaskId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(TaskId::from)
    }
}

impl Serialize for Owner {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Owner {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Owner::new)
    }
}

/// The protocol era a task was created in; it decides how the task is rendered and how a tool
/// error (`isError: true`) ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskOrigin {
    /// 2026-07-28 with the tasks extension.
    Modern,
    /// 2025-11-25 experimental tasks.
    Legacy,
}

/// How a task's underlying request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The request's result, verbatim (for `tools/call`, the `CallToolResult` JSON, which may have
    /// `isError: true`).
    Result(Value),
    /// The JSON-RPC error the request ended with.
    Error(RpcError),
}

impl TaskOutcome {
    /// The terminal status this outcome gives a task of this origin.
    ///
    /// An error is always `failed`. A result is `completed`, except that a legacy (2025-11-25)
    /// task whose `CallToolResult` has `isError: true` is `failed`; the 2026-07-28 extension keeps
    /// such a task `completed` and reserves `failed` for JSON-RPC errors.
    pub fn terminal_status(&self, origin: TaskOrigin) -> TaskStatus {
        match (self, origin) {
            (TaskOutcome::Error(_), _) => TaskStatus::Failed,
            (TaskOutcome::Result(result), TaskOrigin::Legacy)
                if result.get("isError").and_then(Value::as_bool) == Some(true) =>
            {
                TaskStatus::Failed
            }
            (TaskOutcome::Result(_), _) => TaskStatus::Completed,
        }
    }
}

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
    pub outcome: Option<&'a TaskOutcome>,
}

/// Anything a [`TaskView`] can be borrowed from (a store's record).
pub trait AsTaskView {
    /// The client-visible fields.
    fn task_view(&self) -> TaskView<'_>;
}

impl TaskView<'_> {
    /// The 2026-07-28 `CreateTaskResult`: the flat task with `resultType: "task"`, never a payload.
    pub fn modern_create_result(self) -> Value {
        let mut out = Map::new();
        out.insert("resultType".into(), "task".into());
        self.modern_task_fields(&mut out);
        Value::Object(out)
    }

    /// The 2026-07-28 `tasks/get` result: the `DetailedTask` with `resultType: "complete"`.
    pub fn modern_get_result(self) -> Value {
        let mut out = Map::new();
        out.insert("resultType".into(), "complete".into());
        self.modern_task_fields(&mut out);
        self.modern_payload(&mut out);
        Value::Object(out)
    }

    /// The 2026-07-28 `notifications/tasks` params: the same `DetailedTask` as
    /// [`modern_get_result`](Self::modern_get_result), without `resultType`.
    pub fn modern_notification_params(self) -> Value {
        let mut out = Map::new();
        self.modern_task_fields(&mut out);
        self.modern_payload(&mut out);
        Value::Object(out)
    }

    /// The 2025-11-25 `Task`: the result of legacy `tasks/get` and `tasks/cancel`. It never carries
    /// the payload (that is what `tasks/result` is for).
    pub fn legacy_task(self) -> Value {
        let mut out = Map::new();
        self.common_fields(&mut out);
        out.insert("ttl".into(), ttl_json(self.ttl));
        if let Some(interval) = self.poll_interval {
            out.insert("pollInterval".into(), millis(interval).into());
        }
        Value::Object(out)
    }

    /// The 2025-11-25 `CreateTaskResult`: `{"task": <Task>}`.
    pub fn legacy_create_result(self) -> Value {
        json!({ "task": self.legacy_task() })
    }

    fn common_fields(self, out: &mut Map<String, Value>) {
        out.insert("taskId".into(), self.id.as_str().into());
        out.insert("status".into(), self.status.as_str().into());
        if let Some(message) = self.status_message {
            out.insert("statusMessage".into(), message.into());
        }
        out.insert("createdAt".into(), timestamp(self.created_at).into());
        out.insert(
            "lastUpdatedAt".into(),
            timestamp(self.last_updated_at).into(),
        );
    }

    fn modern_task_fields(self, out: &mut Map<String, Value>) {
        self.common_fields(out);
        out.insert("ttlMs".into(), ttl_json(self.ttl));
        if let Some(interval) = self.poll_interval {
            out.insert("pollIntervalMs".into(), millis(interval).into());
        }
    }

    /// `inputRequests` (all outstanding) while `input_required`; `result` or `error` once
    /// `completed`/`failed`; nothing while `working` or once `cancelled`.
    fn modern_payload(self, out: &mut Map<String, Value>) {
        match self.status {
            TaskStatus::InputRequired => {
                let requests = self
                    .input_requests
                    .iter()
                    .map(|(key, request)| (key.clone(), request_json(request)))
                    .collect();
                out.insert("inputRequests".into(), Value::Object(requests));
            }
            TaskStatus::Completed | TaskStatus::Failed => match self.outcome {
                Some(TaskOutcome::Result(result)) => {
                    // Exactly what the call would have returned in this era: a 2026-07-28
                    // `CallToolResult` carries `resultType` (the extension's own client checks it).
                    let mut result = result.clone();
                    if let Value::Object(obj) = &mut result {
                        obj.entry("resultType").or_insert_with(|| "complete".into());
                    }
                    out.insert("result".into(), result);
                }
                Some(TaskOutcome::Error(error)) => {
                    out.insert("error".into(), error_json(error));
                }
                None => {}
            },
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
    }
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

/// A time as ISO 8601 / RFC 3339 in UTC with millisecond precision: `2025-11-25T10:30:00.000Z`.
pub fn timestamp(at: SystemTime) -> String {
    // Written digit by digit: every task rendering formats two or three of these, and `format!`
    // with padding was a visible share of a `tasks/get` (see the benchmark's profile).
    let t = time::OffsetDateTime::from(at);
    let year = u32::try_from(t.year()).unwrap_or(0).min(9999);
    let mut out = [0u8; 24];
    let mut put = |at: usize, value: u32, digits: u32| {
        let mut value = value;
        for i in (0..digits as usize).rev() {
            out[at + i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, year, 4);
    put(5, u32::from(u8::from(t.month())), 2);
    put(8, u32::from(t.day()), 2);
    put(11, u32::from(t.hour()), 2);
    put(14, u32::from(t.minute()), 2);
    put(17, u32::from(t.second()), 2);
    put(20, u32::from(t.millisecond()), 3);
    for (at, byte) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        out[at] = byte;
    }
    // Every byte is an ASCII digit or separator.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// A duration in whole milliseconds, at least 1: both eras want a positive integer (conformance
/// rejects `ttlMs: 0`), so a sub-millisecond duration rounds up rather than to zero.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn ttl_json(ttl: Option<Duration>) -> Value {
    ttl.map_or(Value::Null, |ttl| millis(ttl).into())
}

fn request_json(request: &InputRequest) -> Value {
    json!({ "method": request.method, "params": request.params })
}

fn error_json(error: &RpcError) -> Value {
    let mut out = Map::new();
    out.insert("code".into(), error.code.into());
    out.insert("message".into(), error.message.as_str().into());
    if let Some(data) = &error.data {
        out.insert("data".into(), data.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codes;
    use std::collections::BTreeSet;

    /// 2025-11-25T10:30:00Z.
    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
    }

    #[test]
    fn status_wire_values_and_terminality() {
        let all = [
            (TaskStatus::Working, "working", false),
            (TaskStatus::InputRequired, "input_required", false),
            (TaskStatus::Completed, "completed", true),
            (TaskStatus::Failed, "failed", true),
            (TaskStatus::Cancelled, "cancelled", true),
        ];
        for (status, wire, terminal) in all {
            assert_eq!(status.as_str(), wire);
            assert_eq!(serde_json::to_value(status).unwrap(), json!(wire));
            assert_eq!(
                serde_json::from_value::<TaskStatus>(json!(wire)).unwrap(),
                status
            );
            assert_eq!(status.is_terminal(), terminal, "{wire}");
        }
    }

    #[test]
    fn generated_ids_are_url_safe_128_bit_and_distinct() {
        let ids: BTreeSet<_> = (0..1000).map(|_| TaskId::generate()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let s = id.as_str();
            assert_eq!(s.len(), 22, "{s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{s}"
            );
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap();
            assert_eq!(bytes.len(), 16);
        }
    }

    #[test]
    fn timestamps_are_utc_with_z_and_milliseconds() {
        assert_eq!(timestamp(t0()), "2025-11-25T10:30:00.000Z");
        assert_eq!(
            timestamp(t0() + Duration::from_micros(1_234_567)),
            "2025-11-25T10:30:01.234Z"
        );
        assert_eq!(
            timestamp(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
        // Every field at its widest and narrowest, against the obvious `format!` rendering.
        let mut at = SystemTime::UNIX_EPOCH;
        for _ in 0..5_000 {
            at += Duration::from_millis(7_919_999_937);
            let t = time::OffsetDateTime::from(at);
            let expected = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                t.year(),
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute(),
                t.second(),
                t.millisecond()
            );
            assert_eq!(timestamp(at), expected);
        }
    }

    #[test]
    fn outcome_status_depends_on_era_for_tool_errors() {
        let tool_error = TaskOutcome::Result(json!({"content": [], "isError": true}));
        let ok = TaskOutcome::Result(json!({"content": [], "isError": false}));
        let rpc = TaskOutcome::Error(RpcError::new(codes::INTERNAL_ERROR, "boom"));
        assert_eq!(
            tool_error.terminal_status(TaskOrigin::Modern),
            TaskStatus::Completed
        );
        assert_eq!(
            tool_error.terminal_status(TaskOrigin::Legacy),
            TaskStatus::Failed
        );
        for origin in [TaskOrigin::Modern, TaskOrigin::Legacy] {
            assert_eq!(ok.terminal_status(origin), TaskStatus::Completed);
            assert_eq!(rpc.terminal_status(origin), TaskStatus::Failed);
        }
    }
}
