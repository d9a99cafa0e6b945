//! The persistence boundary: [`TaskStore`], the in-memory default [`MemoryTaskStore`], and the
//! `contract` every store must pass (a test suite, behind the `contract` feature: enable it in
//! the `[dev-dependencies]` of a store's tests).
//!
//! **The store is the truth.** Every state change of a task goes through its store, and the
//! engine keeps nothing about a task that the store does not have, so a durable or shared store
//! (SQLite, Redis, PostgreSQL) can replace the in-memory one and several server processes can share tasks.
//! In particular the engine learns about changes made elsewhere (an answer delivered by
//! `tasks/update`, a `tasks/cancel`) through [`TaskStore::changed`], never through a side channel.
//!
//! # Ownership
//!
//! Operations a client triggers (`get`, `list`, `deliver_responses`, `cancel`) take the caller's
//! [`Owner`]; a task that belongs to someone else behaves exactly like one that does not exist
//! (`None` or [`StoreError::NotFound`]). Operations only the engine performs on behalf of the
//! running tool take just the id.
//!
//! # Semantics in brief
//!
//! The state machine is written once, as methods of [`TaskRecord`]; see there ("The state
//! machine") for the rules.
//! - A task starts `working` at version 1 and is visible to `get` once `create` resolves.
//! - `add_input_request` → `input_required`; `deliver_responses` accepts answers to outstanding
//!   keys, ignores all others, and returns the task to `working` only when nothing is left
//!   outstanding; the tool then takes its answer with `take_response`. Keys are never reused.
//! - `finish` ends a task with its outcome; it does nothing to a task that has already ended, so
//!   a cancelled task stays cancelled. `cancel` makes a running task `cancelled` at once and
//!   reports [`CancelResult::AlreadyTerminal`] for one that has ended (the modern era acks that,
//!   the legacy era answers `-32602`).
//!
//! # Lifetimes: deadline, ttl, lease
//!
//! Three separate clocks end a task or its record; `expire` applies all three
//! ([`TaskRecord::expiry`]), by the store's clock:
//! - **deadline** (how long a task may *run*, [`NewTask::deadline`], off by default): a task still
//!   running at `created_at + deadline` fails with `-32603` and the status message
//!   [`TaskRecord::DEADLINE_MESSAGE`].
//! - **ttl** (how long the *record* is kept, the wire's `ttl`/`ttlMs`): an ended task is deleted
//!   at `terminal_at + ttl`, so a result stays readable for a whole TTL after the task ended (and
//!   so at least `ttl` from creation). It never ends a running task. `ttl: None` keeps it forever.
//! - **lease** (whether the server running it is alive): each engine instance renews a lease
//!   ([`TaskStore::renew_lease`]) and stamps the tasks it runs with its instance id
//!   ([`NewTask::runner`]). A running task whose runner holds no live lease fails with `-32603`
//!   and [`TaskRecord::RUNNER_STOPPED_MESSAGE`], so a task whose process died is never left
//!   running.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::protocol::Era;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::protocol::{InputRequest, ResourceContents, RpcError};

mod backend;
mod change;
mod clock;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod columns;
#[cfg(any(test, feature = "contract"))]
pub mod contract;
mod cursor;
mod durable;
mod fast;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod feed;
mod frozen;
mod machine;
mod memory;
#[cfg(feature = "metrics")]
pub(crate) mod metered;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod setters;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "redis")]
pub use self::redis::{RedisTaskStore, RedisTaskStoreBuilder};
pub use clock::{Clock, ManualClock, SystemClock};
pub use durable::{DurableRun, StoredCaller};
pub use machine::{Delivery, Expiry};
pub use memory::MemoryTaskStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresTaskStore, PostgresTaskStoreBuilder};
#[cfg(any(feature = "redis", feature = "postgres"))]
pub(crate) use record::StoredView;
pub use record::TaskRecord;
#[cfg(test)]
pub(crate) use record::fixture;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;

/// What every [`TaskStore`] operation returns: a boxed, `Send` future borrowing its arguments.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where tasks live. The engine holds an `Arc<dyn TaskStore>` and never knows which store it has.
///
/// Every operation is complete when its future resolves: a later operation, from this process or
/// another one sharing the store, sees its effect (strong consistency). Implementations should
/// apply the rules of the state machine (ideally by calling [`TaskRecord`]'s methods) and must
/// pass the `contract` suite (feature `contract`).
pub trait TaskStore: Send + Sync + fmt::Debug {
    /// Stores a new task (`working`, version 1, stamped with the store's clock) and returns it.
    /// Once this resolves, `get` finds it. [`StoreError::DuplicateId`] if the id is taken.
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord>;

    /// The task, if it exists and belongs to `owner`.
    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>>;

    /// The task, whoever owns it. For the engine only, never on behalf of a client.
    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>>;

    /// One page of `owner`'s tasks, oldest first (stable creation order), at most `limit` (at
    /// least 1) long. `cursor` is a `next_cursor` from an earlier page; a cursor the store did not
    /// make is [`StoreError::InvalidCursor`]. Tasks created after a page was read appear on later
    /// pages; deleted ones vanish.
    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage>;

    /// Sets or clears the status message ([`TaskRecord::set_status_message`]).
    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord>;

    /// Adds an outstanding input request under `key` and makes the task `input_required`
    /// ([`TaskRecord::add_input_request`]); returns the task's version afterwards (what a waiter
    /// passes to [`changed`](Self::changed)), not a copy of the record and its requests'
    /// schemas. [`StoreError::InputKeyReused`] if `key` was ever used by this task;
    /// [`StoreError::Terminal`] if the task has ended.
    fn add_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: String,
        request: InputRequest,
    ) -> StoreFuture<'a, u64>;

    /// Withdraws an outstanding input request nobody waits for any more
    /// ([`TaskRecord::withdraw_input_request`]).
    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord>;

    /// Delivers a client's answers (`tasks/update`, or a legacy response), applied before the
    /// future resolves ([`TaskRecord::deliver_responses`]). Unknown and already answered keys are
    /// ignored, and reported so; a task that has ended ignores every key.
    fn deliver_responses<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, DeliveryReport>;

    /// Takes the delivered answer for `key`, once ([`TaskRecord::take_response`]).
    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>>;

    /// Keeps `contents` as output `name` of a running task ([`TaskRecord::add_output`]);
    /// [`StoreError::Terminal`] once it has ended. Not a change clients see in the task.
    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()>;

    /// Output `name` of the task, if the task exists, belongs to `owner` and has that output.
    /// The default reads the whole record with [`get`](Self::get); a store that keeps outputs
    /// apart from the record can read just the one.
    fn read_output<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        name: &'a str,
    ) -> StoreFuture<'a, Option<ResourceContents>> {
        Box::pin(async move {
            let record = self.get(id, owner).await?;
            Ok(record.and_then(|mut record| record.outputs.remove(name)))
        })
    }

    /// Ends the task with this outcome; a no-op, returning the record as it is, if the task has
    /// already ended ([`TaskRecord::finish`]).
    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord>;

    /// A client cancels its task ([`TaskRecord::cancel`]).
    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult>;

    /// The time by this store's clock: what the engine's sweeper passes to [`Self::expire`]. The
    /// default is the system clock; a store with its own clock (a test's [`ManualClock`], a
    /// database's `now()`) overrides it.
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    /// Applies the lifetime rules as of `now` (normally [`Self::now`], [`TaskRecord::expiry`]):
    /// fails running tasks past their deadline, fails running tasks whose runner's lease has
    /// lapsed (at `now`) or was released, and deletes ended tasks whose retention ran out.
    /// Waiters on a deleted task get [`StoreError::NotFound`].
    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport>;

    /// Records that the engine instance `instance` is alive for `duration` from now, by the
    /// store's clock ([`Self::now`]). One lease per instance, not per task: the engine renews it
    /// every sweep while it runs, and [`Self::expire`] fails the running tasks whose
    /// [`runner`](TaskRecord::runner) holds no live lease. Renewing a lease that lapsed revives
    /// it (tasks already failed stay failed).
    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()>;

    /// Ends `instance`'s lease now (the instance stopped cleanly): from the next
    /// [`Self::expire`] on, its tasks still running fail as stopped. A no-op for an unknown
    /// instance.
    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()>;

    /// Resolves with the task as soon as its version exceeds `seen_version` — at once if it
    /// already does, or if it is below it (a remote store restored from an older copy lost the
    /// versions in between). This is how a tool waiting for input, and the engine waiting for
    /// cancellation, are woken, whichever process made the change. Only changes to this task
    /// wake its waiters. [`StoreError::NotFound`] if the task does not exist or is deleted while
    /// waiting.
    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord>;

    /// A feed of client-visible changes to every task (creation, and every change that updates
    /// `lastUpdatedAt`), for status notifications. Best effort: events of one task arrive in
    /// version order, but a receiver that falls behind gets
    /// [`RecvError::Lagged`](broadcast::error::RecvError::Lagged) and should re-read the tasks it
    /// cares about. Not a substitute for [`changed`](Self::changed).
    fn subscribe(&self) -> broadcast::Receiver<TaskEvent>;

    /// Claims a queued durable task for the engine instance `instance` ([`TaskRecord::claim`]):
    /// the task if this call won it, `None` if it is not queued (any more): another instance
    /// claimed it first, it ended, or it is gone. Of any number of instances claiming one task,
    /// exactly one wins. The default: this store keeps no durable tasks.
    fn claim<'a>(
        &'a self,
        id: &'a TaskId,
        instance: &'a str,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let _ = (id, instance);
        Box::pin(async { Err(StoreError::backend(NO_DURABLE_TASKS)) })
    }

    /// `instance` lets go of its running durable task `id` ([`TaskRecord::release`]), queueing
    /// it for another instance at once; whether it did.
    fn release<'a>(&'a self, id: &'a TaskId, instance: &'a str) -> StoreFuture<'a, bool> {
        let _ = (id, instance);
        Box::pin(async { Err(StoreError::backend(NO_DURABLE_TASKS)) })
    }

    /// Keeps `value` as the durable task's checkpoint ([`TaskRecord::checkpoint`]).
    fn checkpoint<'a>(&'a self, id: &'a TaskId, value: Value) -> StoreFuture<'a, ()> {
        let _ = (id, value);
        Box::pin(async { Err(StoreError::backend(NO_DURABLE_TASKS)) })
    }

    /// Not part of the store API: the built-in stores' shortcuts, which no other crate can
    /// implement (the type is not nameable). Leave the default; the crate then serves every
    /// operation from the ones above.
    #[doc(hidden)]
    fn fast_paths(&self) -> Option<&dyn fast::FastPaths> {
        None
    }
}

/// What a store without durable tasks answers to their calls.
const NO_DURABLE_TASKS: &str = "this task store keeps no durable tasks";

/// What the engine asks a store to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// The id; [`NewTask::new`] generates one ([`TaskId::generate`]).
    pub id: TaskId,
    /// Who may see and act on it.
    pub owner: Owner,
    /// The era of the request that created it.
    pub origin: Era,
    /// How long the record is kept (`None` = forever); see [`TaskRecord::ttl`].
    pub ttl: Option<Duration>,
    /// How long the task may run (`None` = no limit); see [`TaskRecord::deadline`].
    pub deadline: Option<Duration>,
    /// The engine instance that runs it (`None` = none); see [`TaskRecord::runner`].
    pub runner: Option<String>,
    /// Suggested polling interval.
    pub poll_interval: Option<Duration>,
    /// A first status message.
    pub status_message: Option<String>,
    /// The tool whose call creates it; see [`TaskRecord::tool`].
    pub tool: Option<String>,
    /// What a durable task keeps to run again elsewhere; see [`TaskRecord::durable`].
    pub durable: Option<Box<DurableRun>>,
}

impl NewTask {
    /// A task with a fresh id, unlimited TTL, no deadline, no runner and no poll interval.
    pub fn new(owner: Owner, origin: Era) -> Self {
        NewTask {
            id: TaskId::generate(),
            owner,
            origin,
            ttl: None,
            deadline: None,
            runner: None,
            poll_interval: None,
            status_message: None,
            tool: None,
            durable: None,
        }
    }

    /// With this id instead (a custom id source).
    pub fn id(mut self, id: TaskId) -> Self {
        self.id = id;
        self
    }

    /// With this TTL.
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// With this deadline.
    pub fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Created by a call of this tool.
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.tool = Some(name.into());
        self
    }

    /// Run by this engine instance.
    pub fn runner(mut self, instance: impl Into<String>) -> Self {
        self.runner = Some(instance.into());
        self
    }

    /// With this poll interval.
    pub fn poll_interval(mut self, poll_interval: Option<Duration>) -> Self {
        self.poll_interval = poll_interval;
        self
    }

    /// A durable task, keeping this to run again elsewhere.
    pub fn durable(mut self, durable: DurableRun) -> Self {
        self.durable = Some(Box::new(durable));
        self
    }

    /// With this status message.
    pub fn status_message(mut self, message: impl Into<String>) -> Self {
        self.status_message = Some(message.into());
        self
    }
}

/// One page of [`TaskStore::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// What [`TaskStore::deliver_responses`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryReport {
    /// Keys that answered an outstanding request.
    pub accepted: Vec<String>,
    /// Keys that were ignored.
    pub ignored: Vec<String>,
    /// The task's version afterwards.
    pub version: u64,
    /// The task's status afterwards (`working` once nothing is left outstanding).
    pub status: TaskStatus,
}

/// What [`TaskStore::cancel`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelResult {
    /// The task was running and is now `cancelled`.
    Cancelled(TaskRecord),
    /// The task had already ended, with the record's (terminal) status; nothing changed. The
    /// modern era acknowledges this like a cancel; the legacy era answers `-32602`.
    AlreadyTerminal(TaskRecord),
}

impl CancelResult {
    /// The task after the call.
    pub fn record(&self) -> &TaskRecord {
        match self {
            CancelResult::Cancelled(record) | CancelResult::AlreadyTerminal(record) => record,
        }
    }

    /// The task after the call.
    pub fn into_record(self) -> TaskRecord {
        match self {
            CancelResult::Cancelled(record) | CancelResult::AlreadyTerminal(record) => record,
        }
    }
}

/// What [`TaskStore::expire`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExpiryReport {
    /// Tasks that ran past their deadline or whose runner stopped, and are now `failed`.
    pub failed: Vec<TaskRecord>,
    /// Tasks deleted after their retention ran out.
    pub removed: Vec<TaskId>,
    /// Durable tasks whose runner stopped, now queued for another instance to claim.
    pub released: Vec<TaskRecord>,
    /// Durable tasks that were already queued, waiting for an instance to claim them.
    pub queued: Vec<TaskId>,
}

impl ExpiryReport {
    /// Files a record the rules just changed: failed if it ended, released if it was queued.
    pub(crate) fn changed(&mut self, record: TaskRecord) {
        if record.status.is_terminal() {
            self.failed.push(record);
        } else {
            self.released.push(record);
        }
    }

    /// Files a task the rules left as it is: queued, if it waits for an instance.
    pub(crate) fn unchanged(&mut self, record: &TaskRecord) {
        if record.is_queued() {
            self.queued.push(record.id.clone());
        }
    }
}

/// A change on [`TaskStore::subscribe`].
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEvent {
    /// The task was created or changed visibly; this is the record right after the change.
    Updated(Arc<TaskRecord>),
    /// The task was deleted.
    Removed {
        /// Its id.
        id: TaskId,
        /// Its owner.
        owner: Owner,
    },
}

/// Why a store operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// No such task for this caller: unknown, someone else's, or deleted. `-32602` on the wire.
    NotFound,
    /// A `list` cursor this store did not make. `-32602` on the wire.
    InvalidCursor,
    /// `create` with an id that is taken.
    DuplicateId(TaskId),
    /// `add_input_request` with a key this task has used before.
    InputKeyReused(String),
    /// The task has ended (with this status), so it can no longer ask for input.
    Terminal(TaskStatus),
    /// The storage itself failed (I/O, connection, encoding).
    Backend(Box<dyn Error + Send + Sync>),
}

impl StoreError {
    /// A storage failure.
    pub fn backend(error: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        StoreError::Backend(error.into())
    }

    /// The JSON-RPC error a client gets for this: `-32602` for an unknown task or a bad cursor,
    /// `-32603` for anything else (which is the server's fault, not the client's).
    pub fn to_rpc_error(&self) -> RpcError {
        match self {
            StoreError::NotFound => RpcError::invalid_params("Task not found"),
            StoreError::InvalidCursor => RpcError::invalid_params("Invalid cursor"),
            other => RpcError::internal(other.to_string()),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NotFound => f.write_str("task not found"),
            StoreError::InvalidCursor => f.write_str("invalid cursor"),
            StoreError::DuplicateId(id) => write!(f, "a task with id {id} already exists"),
            StoreError::InputKeyReused(key) => {
                write!(f, "input request key {key:?} was already used by this task")
            }
            StoreError::Terminal(status) => write!(f, "the task has already ended ({status})"),
            StoreError::Backend(error) => write!(f, "task store failure: {error}"),
        }
    }
}

impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            StoreError::Backend(error) => Some(&**error),
            _ => None,
        }
    }
}

impl From<StoreError> for RpcError {
    fn from(error: StoreError) -> Self {
        error.to_rpc_error()
    }
}
