//! An ended task's result kept as the JSON text it is answered with, for the stores that keep
//! records in memory (the memory store, and the SQLite store's records written lately).
//!
//! As a `Value` tree every object of a result is a B-tree node of about 600 bytes, and each read
//! of the task writes the whole tree out again; as text the result takes its length, is written
//! out once when the task ends, and every read copies it ([`OutcomeView::ResultText`]). It is
//! parsed back into a tree only for a caller that asks for the whole [`TaskRecord`].

use serde_json::Value;
use serde_json::value::RawValue;

use super::TaskRecord;
use crate::protocol::task::{AsTaskView, OutcomeView, TaskOutcome, TaskView};

/// Results nested deeper than this stay trees: `serde_json` refuses to parse text nested deeper
/// than 128 levels, so such a result could not be read back.
const MAX_FROZEN_DEPTH: usize = 100;

/// A record with its result, if it ended with one, as text (the record's `outcome` is then
/// `None`).
#[cfg(feature = "sqlite")]
#[derive(Debug, Clone)]
pub(crate) struct Frozen {
    pub(crate) record: TaskRecord,
    pub(crate) result: Option<Box<RawValue>>,
}

#[cfg(feature = "sqlite")]
impl Frozen {
    /// `record`, its result (if it ended with one) moved into text.
    pub(crate) fn new(mut record: TaskRecord) -> Frozen {
        let result = freeze(&mut record);
        Frozen { record, result }
    }

    /// The task's view, its result as the text kept, without copying the record.
    pub(crate) fn view(&self) -> TaskView<'_> {
        view(&self.record, self.result.as_deref())
    }

    /// The whole record, its result parsed back into a tree.
    pub(crate) fn snapshot(&self) -> TaskRecord {
        let mut record = self.record.clone();
        thaw(&mut record, self.result.as_deref());
        record
    }

    /// [`snapshot`](Self::snapshot), without copying the record.
    pub(crate) fn into_record(self) -> TaskRecord {
        let Frozen { mut record, result } = self;
        thaw(&mut record, result.as_deref());
        record
    }
}

/// Moves the result of an ended task out of `record` into text, if it has one that can be read
/// back; `None` leaves the record as it is.
pub(crate) fn freeze(record: &mut TaskRecord) -> Option<Box<RawValue>> {
    let Some(TaskOutcome::Result(result)) = &record.outcome else {
        return None;
    };
    if !record.status.is_terminal() || !depth_within(result, MAX_FROZEN_DEPTH) {
        return None;
    }
    let text = crate::protocol::json_text::value_to_raw(result);
    record.outcome = None;
    Some(text)
}

/// Puts a result kept as text back into `record`.
pub(crate) fn thaw(record: &mut TaskRecord, result: Option<&RawValue>) {
    if let Some(result) = result {
        // The text was written from a `Value` no deeper than `MAX_FROZEN_DEPTH`, or read back
        // from a store that checked it is JSON, so it parses.
        let tree = serde_json::from_str(result.get()).unwrap_or(Value::Null);
        record.outcome = Some(TaskOutcome::Result(tree));
    }
}

/// The view of `record` whose result is kept as `result`.
pub(crate) fn view<'a>(record: &'a TaskRecord, result: Option<&'a RawValue>) -> TaskView<'a> {
    let mut view = record.task_view();
    if let Some(result) = result {
        view.outcome = Some(OutcomeView::ResultText(result));
    }
    view
}

fn depth_within(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit > 0 && items.iter().all(|v| depth_within(v, limit - 1)),
        Value::Object(map) => limit > 0 && map.values().all(|v| depth_within(v, limit - 1)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Era;
    use crate::protocol::task::{Owner, TaskStatus};
    use crate::store::NewTask;
    use serde_json::json;
    use std::time::SystemTime;

    fn ended(result: Value) -> TaskRecord {
        let mut record = TaskRecord::new(
            NewTask::new(Owner::new("o"), Era::Modern),
            SystemTime::UNIX_EPOCH,
        );
        record.finish(TaskOutcome::Result(result), SystemTime::UNIX_EPOCH);
        record
    }

    #[test]
    fn a_result_kept_as_text_reads_back_the_same() {
        let record = ended(json!({"content": [{"type": "text", "text": "a \"quoted\" ✓"}]}));
        let mut frozen = record.clone();
        let text = freeze(&mut frozen);
        assert!(frozen.outcome.is_none());
        assert_eq!(
            text.as_deref().map(RawValue::get),
            Some(r#"{"content":[{"text":"a \"quoted\" ✓","type":"text"}]}"#)
        );
        thaw(&mut frozen, text.as_deref());
        assert_eq!(frozen, record);
    }

    #[test]
    fn what_cannot_be_read_back_stays_a_tree() {
        let mut deep = json!(1);
        for _ in 0..=MAX_FROZEN_DEPTH {
            deep = json!([deep]);
        }
        let mut record = ended(deep.clone());
        assert!(freeze(&mut record).is_none());
        assert_eq!(record.outcome, Some(TaskOutcome::Result(deep)));

        let mut running = TaskRecord::new(
            NewTask::new(Owner::new("o"), Era::Modern),
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(running.status, TaskStatus::Working);
        assert!(freeze(&mut running).is_none());
    }
}
