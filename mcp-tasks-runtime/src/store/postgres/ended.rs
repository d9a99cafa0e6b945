//! The tasks that ended lately, kept for reads: an ended task changes no more until it is
//! deleted.

use std::sync::Arc;

use serde_json::Value;

use super::{Shared, lock};
use crate::protocol::task::{Owner, TaskId, TaskOutcome};
use crate::store::TaskRecord;

/// The most ended tasks a store keeps for reads ([`Shared::ended`]).
pub(super) const ENDED_KEPT: usize = 4096;
/// About the most bytes of an ended task kept for reads: its outcome's strings, numbers and
/// keys; a task with outputs, or with more, is read from the table.
pub(super) const ENDED_SIZE: usize = 16 * 1024;

/// Whether `record` is within [`ENDED_SIZE`] (its outcome, its status message, its retired
/// keys), counted without encoding it and no further than the bound.
pub(super) fn small(record: &TaskRecord) -> bool {
    pub(super) fn within(value: &Value, left: &mut usize) -> bool {
        let cost = match value {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                return take(left, 2) && items.iter().all(|item| within(item, left));
            }
            Value::Object(entries) => {
                return take(left, 2)
                    && entries
                        .iter()
                        .all(|(key, item)| take(left, key.len() + 3) && within(item, left));
            }
            _ => 8,
        };
        take(left, cost)
    }
    pub(super) fn take(left: &mut usize, cost: usize) -> bool {
        *left = left.saturating_sub(cost);
        *left > 0
    }
    let mut left = ENDED_SIZE;
    if !record.outputs.is_empty()
        || !take(
            &mut left,
            record.status_message.as_ref().map_or(0, String::len),
        )
        || !record
            .retired_keys
            .iter()
            .all(|key| take(&mut left, key.len() + 3))
    {
        return false;
    }
    match &record.outcome {
        Some(TaskOutcome::Result(value)) => within(value, &mut left),
        Some(TaskOutcome::Error(error)) => {
            take(&mut left, error.message.len())
                && error
                    .data
                    .as_ref()
                    .is_none_or(|data| within(data, &mut left))
        }
        None => true,
    }
}

impl Shared {
    /// An ended task as this instance last saw it committed (`Some(None)`: another owner's),
    /// while its retention lasts by the store's clock; `None` when not kept.
    pub(super) fn ended(&self, id: &TaskId, owner: Option<&Owner>) -> Option<Option<TaskRecord>> {
        let record = {
            let mut ended = lock(&self.ended);
            let record = ended.get(id)?.clone();
            if record.due_at().is_some_and(|due| self.clock.now() >= due) {
                // Deleted by now, or about to be: the table says which.
                ended.remove(id);
                return None;
            }
            record
        };
        // Copied once the map is let go of: other reads do not wait for the copy.
        Some(
            owner
                .is_none_or(|owner| *owner == record.owner)
                .then(|| (*record).clone()),
        )
    }

    /// Keeps `record` for reads if it has ended ([`Shared::ended`]) and is small: what it keeps
    /// stays within [`ENDED_KEPT`] times [`ENDED_SIZE`], whatever the tools return.
    pub(super) fn keep_ended(&self, record: &Arc<TaskRecord>) {
        if !record.status.is_terminal() || !small(record) {
            return;
        }
        let mut ended = lock(&self.ended);
        if ended.len() >= ENDED_KEPT && !ended.contains_key(&record.id) {
            // Full: start again (the records are only a shortcut).
            ended.clear();
        }
        ended.insert(record.id.clone(), record.clone());
    }
}
