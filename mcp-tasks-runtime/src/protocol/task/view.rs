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
        // Room for a stored result's text too, so that the buffer is not grown (and copied) for it.
        let result = match self.view.outcome {
            Some(OutcomeView::ResultText(text)) if text.get().len() > 256 => text.get().len(),
            _ => 0,
        };
        let mut out = String::with_capacity(320 + result);
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
#[derive(wire::Serialize)]
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
#[derive(wire::Serialize)]
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
#[derive(wire::Serialize)]
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
mod tests;
