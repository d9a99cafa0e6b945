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
//!
//! Each shape is written by one [`Serialize`] renderer, [`Rendered`] ([`TaskView::render`] with a
//! [`TaskShape`]), straight to text with its keys in sorted order: the bytes its tree would give,
//! without the tree, and with a result a store keeps as text ([`OutcomeView::ResultText`]) copied
//! in rather than parsed. The methods above that return a [`Value`] are that text as a tree.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde::ser::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

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

/// How a task ended, borrowed from wherever it is stored: its result (as a tree, or as the JSON
/// text a store keeps it in) or its JSON-RPC error.
#[derive(Debug, Clone, Copy)]
pub enum OutcomeView<'a> {
    /// The request's result, as a tree.
    Result(&'a Value),
    /// The request's result as JSON text, written the way a tree writes it (compact, keys in
    /// sorted order, as `serde_json::value::to_raw_value` of the tree gives): a renderer copies
    /// it into its output without parsing it into a tree.
    ResultText(&'a RawValue),
    /// The JSON-RPC error the request ended with.
    Error(&'a RpcError),
}

impl<'a> From<&'a TaskOutcome> for OutcomeView<'a> {
    fn from(outcome: &'a TaskOutcome) -> Self {
        match outcome {
            TaskOutcome::Result(result) => OutcomeView::Result(result),
            TaskOutcome::Error(error) => OutcomeView::Error(error),
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

/// A task in one of its wire shapes, written straight to text by [`Serialize`] (keys in sorted
/// order, the bytes its tree would give) with no tree on the way: a completed task's stored
/// result text is copied in as it is. [`TaskView::render`] makes one.
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

    /// The JSON text.
    pub fn to_text(&self) -> Box<RawValue> {
        // Every key is a string, so writing cannot fail.
        serde_json::value::to_raw_value(self).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }

    /// The JSON tree (parsing a stored result text).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Rendered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let v = &self.view;
        let (modern, result_type, payload) = match self.shape {
            TaskShape::ModernCreate => (true, Some("task"), false),
            TaskShape::ModernGet => (true, Some("complete"), true),
            TaskShape::ModernNotification => (true, None, true),
            TaskShape::LegacyTask => (false, None, false),
            TaskShape::LegacyCreate => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("task", &v.render(TaskShape::LegacyTask))?;
                return map.end();
            }
        };
        // The payload (modern only): `inputRequests` (all outstanding) while `input_required`;
        // `result` or `error` once `completed`/`failed`; nothing while `working` or once
        // `cancelled`.
        let (mut error, mut result, mut requests) = (None, None, None);
        if payload {
            match (v.status, v.outcome) {
                (TaskStatus::InputRequired, _) => requests = Some(v.input_requests),
                (TaskStatus::Completed | TaskStatus::Failed, Some(OutcomeView::Error(e))) => {
                    error = Some(e)
                }
                (TaskStatus::Completed | TaskStatus::Failed, Some(outcome)) => {
                    result = Some(outcome)
                }
                _ => {}
            }
        }
        // Keys in sorted order, as a tree writes them.
        let mut map = s.serialize_map(None)?;
        if let Some(info) = self.server_info {
            map.serialize_entry("_meta", &super::jsonrpc::ServerInfoMeta(info))?;
        }
        map.serialize_entry("createdAt", &Timestamp(v.created_at))?;
        if let Some(error) = error {
            map.serialize_entry("error", &super::jsonrpc::ErrorObject(error))?;
        }
        if let Some(requests) = requests {
            map.serialize_entry("inputRequests", requests)?;
        }
        map.serialize_entry("lastUpdatedAt", &Timestamp(v.last_updated_at))?;
        if let Some(interval) = v.poll_interval {
            let key = if modern {
                "pollIntervalMs"
            } else {
                "pollInterval"
            };
            map.serialize_entry(key, &millis(interval))?;
        }
        if let Some(result) = result {
            // Exactly what the call would have returned in this era: a 2026-07-28
            // `CallToolResult` carries `resultType` (the extension's own client checks it).
            map.serialize_entry("result", &CompleteResult(result))?;
        }
        if let Some(result_type) = result_type {
            map.serialize_entry("resultType", result_type)?;
        }
        map.serialize_entry("status", v.status.as_str())?;
        if let Some(message) = v.status_message {
            map.serialize_entry("statusMessage", message)?;
        }
        map.serialize_entry("taskId", v.id.as_str())?;
        map.serialize_entry(if modern { "ttlMs" } else { "ttl" }, &v.ttl.map(millis))?;
        map.end()
    }
}

/// A result as a 2026-07-28 result: an object gets `resultType: "complete"` unless it has a
/// `resultType`. Stored text is copied, value by value, without a tree.
struct CompleteResult<'a>(OutcomeView<'a>);

impl Serialize for CompleteResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            OutcomeView::Result(Value::Object(obj)) => {
                let mut map = s.serialize_map(None)?;
                with_entry(&mut map, obj, "resultType", "complete")?;
                map.end()
            }
            OutcomeView::Result(other) => other.serialize(s),
            OutcomeView::ResultText(text) => match object_entries(text) {
                Some(entries) => {
                    let mut map = s.serialize_map(None)?;
                    with_entry(&mut map, entries, "resultType", "complete")?;
                    map.end()
                }
                None => text.serialize(s),
            },
            OutcomeView::Error(error) => super::jsonrpc::ErrorObject(error).serialize(s),
        }
    }
}

/// The 2025-11-25 `tasks/result` answer of a task that ended with a result: the result as the
/// call would have answered it, its `_meta` naming the task
/// (`io.modelcontextprotocol/related-task`). Stored text is copied, value by value, without a tree.
#[derive(Debug, Clone, Copy)]
pub struct RelatedResult<'a> {
    /// The result ([`OutcomeView::Result`] or [`OutcomeView::ResultText`]).
    pub result: OutcomeView<'a>,
    /// The task's id.
    pub task_id: &'a str,
}

impl RelatedResult<'_> {
    /// The JSON text.
    pub fn to_text(&self) -> Box<RawValue> {
        // Every key is a string, so writing cannot fail.
        serde_json::value::to_raw_value(self).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

/// `{"taskId": id}`.
#[derive(Serialize)]
struct TaskRef<'a> {
    #[serde(rename = "taskId")]
    task_id: &'a str,
}

impl Serialize for RelatedResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let related = TaskRef {
            task_id: self.task_id,
        };
        let text = match self.result {
            OutcomeView::ResultText(text) => text,
            OutcomeView::Result(result) => {
                // A tree (a store that does not keep text): set the key in a copy.
                let mut result = result.clone();
                if let Value::Object(obj) = &mut result {
                    let m = obj.entry("_meta").or_insert_with(|| Map::new().into());
                    if let Value::Object(m) = m {
                        let related = serde_json::to_value(&related).map_err(S::Error::custom)?;
                        m.insert(super::meta::RELATED_TASK.into(), related);
                    }
                }
                return result.serialize(s);
            }
            OutcomeView::Error(error) => return super::jsonrpc::ErrorObject(error).serialize(s),
        };
        let Some(entries) = object_entries(text) else {
            return text.serialize(s);
        };
        /// The result's `_meta` entries with the related task set (replacing one it had).
        struct Meta<'a, 'b>(&'b [(Cow<'a, str>, &'a RawValue)], &'b TaskRef<'b>);
        impl Serialize for Meta<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let key = super::meta::RELATED_TASK;
                let mut map = s.serialize_map(None)?;
                let mut pending = true;
                for (k, v) in self.0 {
                    if pending && key <= k.as_ref() {
                        map.serialize_entry(key, self.1)?;
                        pending = false;
                    }
                    if k != key {
                        map.serialize_entry(k.as_ref(), v)?;
                    }
                }
                if pending {
                    map.serialize_entry(key, self.1)?;
                }
                map.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        let mut pending = true;
        for (k, v) in &entries {
            if pending && k.as_ref() >= "_meta" {
                pending = false;
                if k == "_meta" {
                    match object_entries(v) {
                        Some(meta) => map.serialize_entry("_meta", &Meta(&meta, &related))?,
                        // Not an object: left as it is, as the tree leaves it.
                        None => map.serialize_entry("_meta", v)?,
                    }
                    continue;
                }
                map.serialize_entry("_meta", &Meta(&[], &related))?;
            }
            map.serialize_entry(k.as_ref(), v)?;
        }
        if pending {
            map.serialize_entry("_meta", &Meta(&[], &related))?;
        }
        map.end()
    }
}

/// Writes `entries` (keys in sorted order) into `map`, with `key: value` added where it sorts
/// unless `entries` has `key` already: what inserting it into the tree would write.
pub(crate) fn with_entry<M, K, V, T>(
    map: &mut M,
    entries: impl IntoIterator<Item = (K, V)>,
    key: &str,
    value: &T,
) -> Result<(), M::Error>
where
    M: serde::ser::SerializeMap,
    K: AsRef<str>,
    V: Serialize,
    T: Serialize + ?Sized,
{
    let mut pending = true;
    for (k, v) in entries {
        let k = k.as_ref();
        if pending && k >= key {
            if k != key {
                map.serialize_entry(key, value)?;
            }
            pending = false;
        }
        map.serialize_entry(k, &v)?;
    }
    if pending {
        map.serialize_entry(key, value)?;
    }
    Ok(())
}

/// The top-level entries of an object's JSON text, values left as text; `None` if it is not an
/// object. Keys are borrowed unless they hold escapes.
pub(crate) fn object_entries(text: &RawValue) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    use super::params::Key;
    struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> Deserialize<'de> for Entries<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Entries<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut access: A,
                ) -> Result<Entries<'de>, A::Error> {
                    let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(4));
                    while let Some(Key(key)) = access.next_key()? {
                        entries.push((key, access.next_value()?));
                    }
                    Ok(Entries(entries))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    if !text.get().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Entries<'_>>(text.get())
        .ok()
        .map(|e| e.0)
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

/// A time as [`timestamp`] writes it, serialized without a `String` on the way.
struct Timestamp(SystemTime);

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = timestamp_bytes(self.0);
        // Every byte is an ASCII digit or separator.
        s.serialize_str(std::str::from_utf8(&bytes).unwrap_or_default())
    }
}

/// A time as ISO 8601 / RFC 3339 in UTC with millisecond precision: `2025-11-25T10:30:00.000Z`.
pub fn timestamp(at: SystemTime) -> String {
    // Every byte is an ASCII digit or separator.
    String::from_utf8(timestamp_bytes(at).to_vec()).unwrap_or_default()
}

fn timestamp_bytes(at: SystemTime) -> [u8; 24] {
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
    out
}

/// A duration in whole milliseconds, at least 1: both eras want a positive integer (conformance
/// rejects `ttlMs: 0`), so a sub-millisecond duration rounds up rather than to zero.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codes;
    use serde_json::json;
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

    /// A task written straight to text is, inside a reply, byte for byte the reply its tree
    /// gives: the 2026-07-28 shapes with the server's `serverInfo` (what the reply adds to a
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
            let tree = serde_json::to_string(&params.to_value()).unwrap();
            assert_eq!(params.to_text().get(), tree);
            for id in &ids {
                for (shape, modern) in [
                    (TaskShape::ModernCreate, true),
                    (TaskShape::ModernGet, true),
                    (TaskShape::LegacyTask, false),
                    (TaskShape::LegacyCreate, false),
                ] {
                    let rendered = view.render(shape);
                    let server_info = modern.then(|| info.clone());
                    let text = match modern {
                        true => rendered.with_server_info(&info).to_text(),
                        false => rendered.to_text(),
                    };
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
                    assert_eq!(written, serde_json::to_string(&from_tree).unwrap());
                    let tree = crate::protocol::jsonrpc::Wire(&from_tree.into_value()).to_json();
                    assert_eq!(written, tree, "{shape:?}");
                }
            }
        }
    }

    /// The legacy `tasks/result` answer written from stored text is what setting the key in the
    /// result's tree writes.
    #[test]
    fn a_related_result_from_text_is_the_tree_with_the_key_set() {
        let related = json!({"taskId": "t\"1"});
        let results = [
            json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
            json!({"_meta": {"a": 1, "io.modelcontextprotocol/related-task": 0, "z": [2]}, "b": 1}),
            json!({"_meta": {"io.zzz": 1, "A": 2}}),
            json!({"_meta": 7, "x": 1}),
            json!({"A": 1, "_a": 2, "a\"": 3}),
            json!({}),
            json!([1, {"_meta": 1}]),
            json!("text"),
        ];
        for result in results {
            let mut tree = result.clone();
            if let Value::Object(obj) = &mut tree {
                let m = obj.entry("_meta").or_insert_with(|| json!({}));
                if let Value::Object(m) = m {
                    m.insert(crate::protocol::meta::RELATED_TASK.into(), related.clone());
                }
            }
            let tree = serde_json::to_string(&tree).unwrap();
            let text = serde_json::value::to_raw_value(&result).unwrap();
            for view in [OutcomeView::Result(&result), OutcomeView::ResultText(&text)] {
                let written = RelatedResult {
                    result: view,
                    task_id: "t\"1",
                };
                assert_eq!(written.to_text().get(), tree, "{view:?}");
            }
        }
    }
}
