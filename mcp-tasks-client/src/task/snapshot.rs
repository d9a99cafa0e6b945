//! A task's state as the server reports it (`tasks/get`, a pushed notification, a
//! `CreateTaskResult`), read into a [`TaskSnapshot`]; and a failed task's error.

use super::Shared;
use crate::error::Error;
use mcp_tasks_runtime::protocol::RpcError;
use mcp_tasks_runtime::protocol::task::TaskStatus;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// Progress a legacy task reported (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// A task's state as last seen.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Its `statusMessage`.
    pub status_message: Option<String>,
    /// Its latest progress (legacy era; modern tasks carry none).
    pub progress: Option<Progress>,
    /// The poll interval the server suggests.
    pub poll_interval: Option<Duration>,
    /// How long the server keeps the task (`None`: unlimited or not said).
    pub ttl: Option<Duration>,
    /// `createdAt`, as sent.
    pub created_at: Option<String>,
    /// `lastUpdatedAt`, as sent.
    pub last_updated_at: Option<String>,
}

impl TaskSnapshot {
    /// Reads either era's task object (`ttlMs`/`pollIntervalMs` or `ttl`/`pollInterval`).
    pub(super) fn parse(v: &Value) -> Result<TaskSnapshot, String> {
        /// A task as `tasks/get` (a modern `DetailedTask` or a legacy `Task`), a
        /// `CreateTaskResult` or a status notification carries it.
        #[derive(mcp_tasks_wire::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct WireTask {
            task_id: String,
            status: TaskStatus,
            status_message: Option<String>,
            poll_interval_ms: Option<f64>,
            poll_interval: Option<f64>,
            ttl_ms: Option<f64>,
            ttl: Option<f64>,
            created_at: Option<String>,
            last_updated_at: Option<String>,
        }
        let task = WireTask::deserialize(v).map_err(|e| format!("not a task: {e}"))?;
        let ms = |modern: Option<f64>, legacy: Option<f64>| {
            (modern.or(legacy))
                .filter(|n| *n >= 0.0)
                .map(|n| Duration::from_millis(n as u64))
        };
        Ok(TaskSnapshot {
            task_id: task.task_id,
            status: task.status,
            status_message: task.status_message,
            progress: None,
            poll_interval: ms(task.poll_interval_ms, task.poll_interval),
            ttl: ms(task.ttl_ms, task.ttl),
            created_at: task.created_at,
            last_updated_at: task.last_updated_at,
        })
    }

    /// Whether this state is older than `other` by the task's own clock: both carry a
    /// `lastUpdatedAt` the client can read, and this one's is earlier. States without a readable
    /// time are never called older (they are taken in the order they arrive).
    pub(super) fn is_older_than(&self, other: &TaskSnapshot) -> bool {
        let time = |s: &TaskSnapshot| s.last_updated_at.as_deref().and_then(rfc3339_nanos);
        matches!((time(self), time(other)), (Some(a), Some(b)) if a < b)
    }

    /// Whether both states carry the same readable `lastUpdatedAt`.
    fn same_time(&self, other: &TaskSnapshot) -> bool {
        let time = |s: &TaskSnapshot| s.last_updated_at.as_deref().and_then(rfc3339_nanos);
        matches!((time(self), time(other)), (Some(a), Some(b)) if a == b)
    }

    /// Whether this state, arriving after `latest`, is older news than it: earlier by the task's
    /// clock; or, when this one was pushed and `latest` was an answer, of the same clock tick
    /// but with another status or message (two changes within one tick, the push possibly
    /// queued from before the answer). A terminal state is never such a push: no state of a
    /// task comes after it.
    pub(super) fn is_stale_after(&self, latest: &TaskSnapshot, pushed_after_answer: bool) -> bool {
        self.is_older_than(latest)
            || pushed_after_answer
                && !self.status.is_terminal()
                && self.same_time(latest)
                && (self.status != latest.status || self.status_message != latest.status_message)
    }

    pub(super) fn same_state(&self, other: &TaskSnapshot) -> bool {
        self.status == other.status
            && self.status_message == other.status_message
            && self.progress == other.progress
    }
}

/// An RFC 3339 time (`2025-11-25T10:40:00Z`, `2025-11-25T10:40:00.250+02:00`) as nanoseconds
/// since 1970 (UTC); `None` when it is not one.
pub(super) fn rfc3339_nanos(text: &str) -> Option<i128> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, allowed: &[u8]| b.get(at).is_some_and(|c| allowed.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Leap seconds (`:60`) count as the next second's start.
    if second > 60 {
        return None;
    }
    let mut at = 19;
    let mut nanos: i128 = 0;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        let frac = &text[start..at];
        if frac.is_empty() {
            return None;
        }
        // Nanosecond precision; further digits cannot change an order the client acts on.
        let padded = format!("{:0<9}", &frac[..frac.len().min(9)]);
        nanos = padded.parse().ok()?;
    }
    let offset_minutes = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && sep(at + 3, b":") => {
            let minutes = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(i128::from(seconds) * 1_000_000_000 + nanos)
}

pub(super) fn parse_snapshot(
    shared: &Shared,
    method: &str,
    task: &Value,
) -> Result<TaskSnapshot, Error> {
    let snap = TaskSnapshot::parse(task).map_err(|why| Error::invalid(method, why))?;
    if snap.task_id != shared.id {
        return Err(Error::invalid(
            method,
            format!("asked about task {}, got task {}", shared.id, snap.task_id),
        ));
    }
    Ok(snap)
}

pub(super) fn parse_rpc_error(task: &Value, fallback: Option<String>) -> RpcError {
    task.get("error")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_else(|| {
            RpcError::new(
                RpcError::INTERNAL_ERROR,
                fallback.unwrap_or_else(|| "the task failed".into()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::{TaskSnapshot, rfc3339_nanos};
    use serde_json::json;

    fn state(status: &str, message: &str, at: &str) -> TaskSnapshot {
        TaskSnapshot::parse(&json!({
            "taskId": "t", "status": status, "statusMessage": message,
            "createdAt": "2025-11-25T10:40:00Z", "lastUpdatedAt": at,
        }))
        .unwrap()
    }

    /// Over HTTP a task created and cancelled within one millisecond had its pushed `cancelled`
    /// dropped as "same tick as an answer", and the handle kept saying `working`.
    #[test]
    fn a_pushed_terminal_state_is_taken_even_within_the_answers_tick() {
        let tick = "2025-11-25T10:40:00.250Z";
        let answered = state("working", "30s left", tick);
        assert!(!state("cancelled", "cancelled by request", tick).is_stale_after(&answered, true));
        assert!(!state("completed", "", tick).is_stale_after(&answered, true));
        // A non-terminal push of that tick is still left to the next poll; an answer is taken.
        assert!(state("input_required", "asking", tick).is_stale_after(&answered, true));
        assert!(!state("input_required", "asking", tick).is_stale_after(&answered, false));
        // Anything older by the task's clock is dropped, pushed or answered.
        let earlier = "2025-11-25T10:40:00.249Z";
        assert!(state("cancelled", "", earlier).is_stale_after(&answered, false));
    }

    #[test]
    fn rfc3339_times_order_as_the_instants_they_name() {
        let t = |s| rfc3339_nanos(s).unwrap_or_else(|| panic!("{s} is RFC 3339"));
        assert_eq!(t("1970-01-01T00:00:00Z"), 0);
        assert_eq!(t("2025-11-25T10:40:00Z"), 1_764_067_200 * 1_000_000_000);
        // Text order is not time order: fractions and offsets.
        assert!(t("2025-11-25T10:40:00Z") < t("2025-11-25T10:40:00.5Z"));
        assert!(t("2025-11-25T10:40:00.25Z") < t("2025-11-25T10:40:00.3Z"));
        assert_eq!(t("2025-11-25T12:40:00+02:00"), t("2025-11-25T10:40:00Z"));
        assert_eq!(
            t("2025-11-25T10:40:00.000000001z"),
            t("2025-11-25T10:40:00Z") + 1
        );
        assert!(t("2024-02-29T23:59:59Z") < t("2024-03-01T00:00:00Z"));
        for bad in [
            "",
            "yesterday",
            "2025-11-25",
            "2025-11-25T10:40:00",
            "2025-13-25T10:40:00Z",
            "2025-11-25T10:40:00.Z",
            "2025-11-25T10:40:00+0200",
            "2025-11-25T10:40:00Zjunk",
        ] {
            assert_eq!(rfc3339_nanos(bad), None, "{bad}");
        }
    }
}
