//! A task's status, id, owner, origin and outcome.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::{Era, RpcError};

/// Where a task is in its life. Wire values are the snake_case names.
///
/// `working ⇄ input_required`, and from either to one of the terminal states `completed`,
/// `failed`, `cancelled`, which never change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, wire::Serialize, wire::Deserialize)]
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
/// secure generator, after the time of creation in milliseconds (48 bits), and writes the 22
/// bytes as 30 URL-safe characters (`-`, digits, letters and `_`; base64 with those 64 in ASCII
/// order, no padding), so they can be used in URLs and headers (`Mcp-Name`) as they are.
///
/// The time first makes ids sort by creation: a store's index of ids takes each new one at its
/// end, as it does a counter, instead of at a random place, so a transaction dirties the index's
/// last pages only (`bench/HISTORY.md`). The time is no secret (a task's
/// `createdAt` says it); the 128 random bits are what make an id unguessable.
///
/// Cloning shares the string (a store names a task in its record and in its indexes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(Arc<str>);

/// base64's 64 characters of URL-safe base64, in ASCII order: the text of ids sorts as their
/// bytes do.
const SORTED_URL_SAFE: base64::alphabet::Alphabet = match base64::alphabet::Alphabet::new(
    "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz",
) {
    Ok(alphabet) => alphabet,
    Err(_) => panic!("64 distinct characters"),
};

/// How generated ids are written.
const ID_TEXT: base64::engine::GeneralPurpose =
    base64::engine::GeneralPurpose::new(&SORTED_URL_SAFE, base64::engine::general_purpose::NO_PAD);

impl TaskId {
    /// A fresh, unguessable id: the time in milliseconds since 1970 (48 bits, big-endian), then
    /// 128 random bits.
    pub fn generate() -> Self {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_millis() as u64);
        let mut random = [0u8; 16];
        rand::fill(&mut random[..]);
        Self::made(millis, random)
    }

    /// The id made at `millis` with these random bits.
    fn made(millis: u64, random: [u8; 16]) -> Self {
        let mut bytes = [0u8; 22];
        bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
        bytes[6..].copy_from_slice(&random);
        TaskId(ID_TEXT.encode(bytes).into())
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

/// How a task's underlying request ended.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
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
    pub fn terminal_status(&self, origin: Era) -> TaskStatus {
        match (self, origin) {
            (TaskOutcome::Error(_), _) => TaskStatus::Failed,
            (TaskOutcome::Result(result), Era::Legacy)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

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
        let mut random = BTreeSet::new();
        for id in &ids {
            let s = id.as_str();
            assert_eq!(s.len(), 30, "{s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{s}"
            );
            let bytes = ID_TEXT.decode(s).unwrap();
            assert_eq!(bytes.len(), 22);
            random.insert(bytes[6..].to_vec());
        }
        // No two share their random part.
        assert_eq!(random.len(), 1000);
    }

    /// An id begins with the time it was made, and ids made later sort after it, as text.
    #[test]
    fn generated_ids_sort_by_the_time_they_were_made() {
        let millis = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64
        };
        let before = millis();
        let first = TaskId::generate();
        let after = millis();
        let bytes = ID_TEXT.decode(first.as_str()).unwrap();
        let mut time = [0u8; 8];
        time[2..].copy_from_slice(&bytes[..6]);
        let made = u64::from_be_bytes(time);
        assert!((before..=after).contains(&made), "{before} {made} {after}");
        // Each of 300,000 milliseconds in a row, and a day in steps of 997, each with random
        // bits that fall as the time rises: the text rises all the same.
        let steps = [(made - 300_000, made, 1), (made - 86_400_000, made, 997)];
        for (from, to, step) in steps {
            let mut previous = TaskId::made(from, [0xff; 16]);
            for (i, millis) in (from + step..to).step_by(step as usize).enumerate() {
                let next = TaskId::made(millis, [0xff - (i % 256) as u8; 16]);
                assert!(previous.as_str() < next.as_str(), "{previous} {next}");
                previous = next;
            }
        }
    }

    #[test]
    fn outcome_status_depends_on_era_for_tool_errors() {
        let tool_error = TaskOutcome::Result(json!({"content": [], "isError": true}));
        let ok = TaskOutcome::Result(json!({"content": [], "isError": false}));
        let rpc = TaskOutcome::Error(RpcError::new(RpcError::INTERNAL_ERROR, "boom"));
        assert_eq!(
            tool_error.terminal_status(Era::Modern),
            TaskStatus::Completed
        );
        assert_eq!(tool_error.terminal_status(Era::Legacy), TaskStatus::Failed);
        for origin in [Era::Modern, Era::Legacy] {
            assert_eq!(ok.terminal_status(origin), TaskStatus::Completed);
            assert_eq!(rpc.terminal_status(origin), TaskStatus::Failed);
        }
    }
}
