//! The columns the SQL stores (SQLite, Postgres) index a task by, besides its id and owner.

use std::time::{SystemTime, UNIX_EPOCH};

use super::TaskRecord;

/// The runner, while the task runs: only running tasks are in the runner index.
pub(super) fn runner_column(record: &TaskRecord) -> Option<&str> {
    if record.status.is_terminal() {
        None
    } else {
        record.runner.as_deref()
    }
}

/// When the rules next act on the task, in microseconds since the epoch (rounded down, so a task
/// is never found late; [`TaskRecord::expiry`] has the last word).
pub(super) fn due_column(record: &TaskRecord) -> Option<i64> {
    record.due_at().map(micros)
}

/// `at` in microseconds since the epoch (negative before it), saturating.
pub(super) fn micros(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_micros()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_micros()).map_or(i64::MIN, |us| -us),
    }
}
