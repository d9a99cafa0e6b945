//! The changes a [`TaskStore`](super::TaskStore) makes to one task, each a method of
//! [`TaskRecord`] with its arguments, and what a caller reads of the record afterwards. A backend
//! ([`Records`](super::backend::Records)) applies them; which one it is, it need not know.

use std::time::SystemTime;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::frozen;
use super::{Delivery, StoreError, TaskRecord};
use crate::protocol::task::{TaskOutcome, TaskStatus};
use crate::protocol::{InputRequest, ResourceContents};

/// A change of one task's record. Not nameable outside this crate.
pub trait Change: Send + Sync + 'static {
    /// What it returns besides the record.
    type Out: Send + 'static;
    /// Whether clients see it: an event on the feed (else only waiters learn of it).
    const VISIBLE: bool;
    /// A change of the task's lifecycle, cheap to compute and often made: a backend may compute
    /// it beside its caller, and again if the record moved meanwhile (the SQLite store).
    const AHEAD: bool = false;

    /// Applies it, keeping its arguments: a backend may apply it again (to the record another
    /// writer left, or when computed ahead).
    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<Self::Out, StoreError>;

    /// Applies it once, moving its arguments into the record.
    fn apply_once(self, record: &mut TaskRecord, now: SystemTime) -> Result<Self::Out, StoreError>
    where
        Self: Sized,
    {
        self.apply(record, now)
    }
}

/// [`TaskRecord::set_status_message`].
pub struct SetStatusMessage(pub Option<String>);

impl Change for SetStatusMessage {
    type Out = ();
    const VISIBLE: bool = true;
    const AHEAD: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.set_status_message(self.0.clone(), now);
        Ok(())
    }

    fn apply_once(self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.set_status_message(self.0, now);
        Ok(())
    }
}

/// [`TaskRecord::add_input_request`].
pub struct AddInputRequest(pub String, pub InputRequest);

impl Change for AddInputRequest {
    type Out = ();
    const VISIBLE: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.add_input_request(self.0.clone(), self.1.clone(), now)
    }

    fn apply_once(self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.add_input_request(self.0, self.1, now)
    }
}

/// [`TaskRecord::withdraw_input_request`].
pub struct WithdrawInputRequest(pub String);

impl Change for WithdrawInputRequest {
    type Out = ();
    const VISIBLE: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.withdraw_input_request(&self.0, now);
        Ok(())
    }
}

/// [`TaskRecord::deliver_responses`].
pub struct DeliverResponses(pub Map<String, Value>);

impl Change for DeliverResponses {
    type Out = Delivery;
    const VISIBLE: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<Delivery, StoreError> {
        Ok(record.deliver_responses(self.0.clone(), now))
    }

    fn apply_once(self, record: &mut TaskRecord, now: SystemTime) -> Result<Delivery, StoreError> {
        Ok(record.deliver_responses(self.0, now))
    }
}

/// [`TaskRecord::take_response`]: not a change clients see.
pub struct TakeResponse(pub String);

impl Change for TakeResponse {
    type Out = Option<Value>;
    const VISIBLE: bool = false;

    fn apply(&self, record: &mut TaskRecord, _: SystemTime) -> Result<Option<Value>, StoreError> {
        Ok(record.take_response(&self.0))
    }
}

/// [`TaskRecord::add_output`]: not a change clients see.
pub struct AddOutput(pub String, pub ResourceContents);

impl Change for AddOutput {
    type Out = ();
    const VISIBLE: bool = false;

    fn apply(&self, record: &mut TaskRecord, _: SystemTime) -> Result<(), StoreError> {
        record.add_output(self.0.clone(), self.1.clone())
    }

    fn apply_once(self, record: &mut TaskRecord, _: SystemTime) -> Result<(), StoreError> {
        record.add_output(self.0, self.1)
    }
}

/// [`TaskRecord::finish`].
pub struct Finish(pub TaskOutcome);

impl Change for Finish {
    type Out = ();
    const VISIBLE: bool = true;
    const AHEAD: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.finish(self.0.clone(), now);
        Ok(())
    }

    fn apply_once(self, record: &mut TaskRecord, now: SystemTime) -> Result<(), StoreError> {
        record.finish(self.0, now);
        Ok(())
    }
}

/// [`TaskRecord::cancel`]: whether it cancelled the task.
pub struct Cancel;

impl Change for Cancel {
    type Out = bool;
    const VISIBLE: bool = true;
    const AHEAD: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<bool, StoreError> {
        Ok(record.cancel(now))
    }
}

/// [`TaskRecord::claim`]: whether this instance won the task.
pub struct Claim(pub String);

impl Change for Claim {
    type Out = bool;
    const VISIBLE: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<bool, StoreError> {
        Ok(record.claim(&self.0, now))
    }
}

/// [`TaskRecord::release`]: whether the task was let go of.
pub struct Release(pub String);

impl Change for Release {
    type Out = bool;
    const VISIBLE: bool = true;

    fn apply(&self, record: &mut TaskRecord, now: SystemTime) -> Result<bool, StoreError> {
        Ok(record.release(&self.0, now))
    }
}

/// [`TaskRecord::checkpoint`]: not a change clients see.
pub struct Checkpoint(pub Value);

impl Change for Checkpoint {
    type Out = ();
    const VISIBLE: bool = false;

    fn apply(&self, record: &mut TaskRecord, _: SystemTime) -> Result<(), StoreError> {
        record.checkpoint(self.0.clone())
    }

    fn apply_once(self, record: &mut TaskRecord, _: SystemTime) -> Result<(), StoreError> {
        record.checkpoint(self.0)
    }
}

/// What a caller reads of a task after a change or a wait, read where the backend holds the
/// record (under a lock, say), so that nothing more is copied. Not nameable outside this crate.
pub trait Project: Send + 'static {
    /// What is read.
    type Out: Send + 'static;

    /// Reads it from `record`.
    fn of(record: &TaskRecord) -> Self::Out;

    /// Reads it from `record`, which the caller gives up.
    fn owned(record: TaskRecord) -> Self::Out {
        Self::of(&record)
    }

    /// Reads it from `record` whose result is kept as the text `result` (see `frozen.rs`).
    fn kept(record: &TaskRecord, result: Option<&RawValue>) -> Self::Out {
        let _ = result;
        Self::of(record)
    }
}

/// The whole record.
pub struct Whole;

impl Project for Whole {
    type Out = TaskRecord;

    fn of(record: &TaskRecord) -> TaskRecord {
        record.clone()
    }

    fn owned(record: TaskRecord) -> TaskRecord {
        record
    }

    fn kept(record: &TaskRecord, result: Option<&RawValue>) -> TaskRecord {
        let mut record = record.clone();
        frozen::thaw(&mut record, result);
        record
    }
}

/// The version.
pub struct Version;

impl Project for Version {
    type Out = u64;

    fn of(record: &TaskRecord) -> u64 {
        record.version
    }
}

/// Where the task stands: its version and status.
pub struct Standing;

impl Project for Standing {
    type Out = (u64, TaskStatus);

    fn of(record: &TaskRecord) -> (u64, TaskStatus) {
        (record.version, record.status)
    }
}

/// Nothing.
pub struct Nothing;

impl Project for Nothing {
    type Out = ();

    fn of(_: &TaskRecord) {}
}
