//! The contract every [`TaskStore`] must pass, as a reusable test suite.
//!
//! A store is handed to the suite through a factory that receives the [`Clock`] the store must
//! use (a [`ManualClock`] the checks move, so TTL checks never sleep) and returns a fresh, empty
//! store. Two ways to run it:
//!
//! - one `#[test]` per check, so a failure names the rule that broke:
//!   [`task_store_contract_tests!`](crate::task_store_contract_tests);
//! - everything from one async test: [`run_all`] (or a single check: [`run`]).
//!
//! The checks need a Tokio runtime with the timer enabled; [`run_blocking`] (what the macro's
//! tests call) builds a two-thread one. Waits for something that must happen give up after
//! five seconds; checks that something does *not* happen watch for 50 ms.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio::time::timeout;

use super::TaskRecord;
use super::{
    CancelResult, Clock, DeliveryReport, ManualClock, NewTask, StoreError, TaskEvent, TaskStore,
};
use crate::protocol::Era;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::protocol::{InputRequest, ResourceContents, RpcError};

/// How long a check waits for something that must happen (a wake-up, an event).
#[doc(hidden)] // a timing of the checks themselves; a store author never names it
pub const PATIENCE: Duration = Duration::from_secs(5);
/// How long a check watches for something that must not happen (a spurious wake-up).
#[doc(hidden)] // a timing of the checks themselves; a store author never names it
pub const QUIET: Duration = Duration::from_millis(50);

/// A store factory: given the clock to use, a fresh empty store.
pub type Factory<'a> = &'a dyn Fn(Arc<dyn Clock>) -> Arc<dyn TaskStore>;

type CheckFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// One rule of the contract.
#[derive(Clone, Copy)]
pub struct Check {
    /// Its name, also the name of its test in [`task_store_contract_tests!`](crate::task_store_contract_tests).
    pub name: &'static str,
    run: for<'a> fn(Factory<'a>) -> CheckFuture<'a>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! checks {
    ($($name:ident),* $(,)?) => {
        /// Every check, in the order [`run_all`] runs them.
        pub const CHECKS: &[Check] = &[
            $(Check { name: stringify!($name), run: |make| Box::pin($name(make)) },)*
        ];
    };
}

crate::__task_store_contract_checks!([checks]);

/// The names of the contract's checks, the one list of them: `([callback] tokens…)` expands to
/// `callback! { tokens… name, name, … }`, the names in the order [`run_all`] runs them. Both [`CHECKS`] and
/// [`task_store_contract_tests!`](crate::task_store_contract_tests) are made from it.
#[doc(hidden)]
#[macro_export]
macro_rules! __task_store_contract_checks {
    ([$($callback:tt)*] $($first:tt)*) => {
        $($callback)*! {
            $($first)*
            create_then_get_is_visible,
            create_rejects_a_taken_id,
            foreign_tasks_look_unknown,
            input_request_lifecycle,
            input_keys_are_never_reused,
            take_response_consumes_once,
            outputs_are_kept_for_the_owner_only,
            finish_is_final_and_idempotent,
            failure_outcomes_by_era,
            cancelled_stays_cancelled,
            cancel_on_ended_task_reports_already_terminal,
            ttl_never_ends_a_running_task,
            deadline_fails_overdue_tasks,
            lapsed_leases_fail_their_tasks,
            released_leases_fail_their_tasks,
            ended_tasks_are_kept_for_their_ttl,
            list_pages_in_creation_order,
            list_rejects_invalid_cursor,
            changed_resolves_at_once_when_newer,
            changed_waits_for_a_later_change,
            changed_fails_for_missing_or_deleted_task,
            concurrent_waiters_are_woken_by_their_own_task_only,
            versions_increase_with_every_change_only,
            subscribe_reports_visible_changes,
        }
    };
}

/// Runs every check against stores from `make`, one after the other, each on a fresh store.
/// Panics on the first failure; the check's name is printed before it runs.
pub async fn run_all<S: TaskStore + 'static>(make: impl Fn(Arc<dyn Clock>) -> S) {
    let make = |clock: Arc<dyn Clock>| Arc::new(make(clock)) as Arc<dyn TaskStore>;
    for check in CHECKS {
        eprintln!("task store contract: {}", check.name);
        (check.run)(&make).await;
    }
}

/// Runs the check called `name`. Panics if there is no such check, or if it fails.
pub async fn run<S: TaskStore + 'static>(name: &str, make: impl Fn(Arc<dyn Clock>) -> S) {
    let check = CHECKS
        .iter()
        .find(|check| check.name == name)
        .unwrap_or_else(|| panic!("no task store contract check is called {name:?}"));
    let make = |clock: Arc<dyn Clock>| Arc::new(make(clock)) as Arc<dyn TaskStore>;
    (check.run)(&make).await;
}

/// Runs the check called `name` on a new two-thread Tokio runtime.
pub fn run_blocking<S: TaskStore + 'static>(name: &str, make: impl Fn(Arc<dyn Clock>) -> S) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime for the task store contract")
        .block_on(run(name, make));
}

/// Expands to one `#[test]` per [contract](crate::store::contract) check, run against stores
/// from the factory, which receives an `Arc<dyn Clock>` and returns a fresh store. Use it inside
/// a test module of the crate that implements the store.
///
/// ```
/// # mod wrapper {
/// use mcp_tasks_runtime::store::MemoryTaskStore;
/// mcp_tasks_runtime::task_store_contract_tests!(MemoryTaskStore::with_clock);
/// # }
/// ```
#[macro_export]
macro_rules! task_store_contract_tests {
    ($make:expr) => {
        $crate::__task_store_contract_checks! {
            [$crate::__task_store_contract_tests] $make;
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __task_store_contract_tests {
    ($make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::store::contract::run_blocking(::core::stringify!($name), $make);
            }
        )*
    };
}

// ---------------------------------------------------------------------------------------------
// Helpers

struct Env {
    clock: ManualClock,
    store: Arc<dyn TaskStore>,
}

fn env(make: Factory<'_>) -> Env {
    let clock = ManualClock::new();
    let store = make(Arc::new(clock.clone()));
    Env { clock, store }
}

fn alice() -> Owner {
    Owner::new("alice")
}

fn bob() -> Owner {
    Owner::new("bob")
}

const TTL: Duration = Duration::from_secs(60);

fn new_task(owner: Owner) -> NewTask {
    NewTask::new(owner, Era::Modern)
        .ttl(Some(TTL))
        .poll_interval(Some(Duration::from_secs(1)))
}

fn ask(message: &str) -> InputRequest {
    InputRequest::new(
        "elicitation/create",
        json!({"mode": "form", "message": message, "requestedSchema": {"type": "object"}}),
    )
}

fn answer(text: &str) -> Value {
    json!({"action": "accept", "content": {"input": text}})
}

fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect()
}

fn keys(record: &TaskRecord) -> Vec<&str> {
    record.input_requests.keys().map(String::as_str).collect()
}

fn done(text: &str) -> TaskOutcome {
    TaskOutcome::Result(json!({"content": [{"type": "text", "text": text}], "isError": false}))
}

impl Env {
    async fn create(&self, owner: Owner) -> TaskRecord {
        self.store.create(new_task(owner)).await.expect("create")
    }

    async fn read(&self, id: &TaskId) -> TaskRecord {
        self.store
            .get_unchecked(id)
            .await
            .expect("get_unchecked")
            .expect("the task exists")
    }

    /// Asks under `key`; the record afterwards, checked against the version
    /// `add_input_request` returned.
    async fn ask(&self, id: &TaskId, key: &str) -> TaskRecord {
        let version = self
            .store
            .add_input_request(id, key.to_owned(), ask(key))
            .await
            .expect("add_input_request");
        let record = self.read(id).await;
        assert_eq!(
            version, record.version,
            "add_input_request returns the new version"
        );
        record
    }

    /// The task after a delivery, checked against what the report says of it.
    async fn delivered(&self, id: &TaskId, report: &DeliveryReport) -> TaskRecord {
        let record = self.read(id).await;
        assert_eq!(
            (report.version, report.status),
            (record.version, record.status),
            "the delivery report tells the task's version and status afterwards"
        );
        record
    }

    /// Spawns `changed(id, seen)`.
    fn wait(
        &self,
        id: &TaskId,
        seen: u64,
    ) -> tokio::task::JoinHandle<Result<TaskRecord, StoreError>> {
        let (store, id) = (self.store.clone(), id.clone());
        tokio::spawn(async move { store.changed(&id, seen).await })
    }
}

async fn resolved<T>(waiter: tokio::task::JoinHandle<T>) -> T {
    timeout(PATIENCE, waiter)
        .await
        .expect("the waiter was not woken")
        .expect("the waiter panicked")
}

async fn still_waiting<T>(waiter: &tokio::task::JoinHandle<T>) {
    tokio::time::sleep(QUIET).await;
    assert!(!waiter.is_finished(), "woken although nothing changed");
}

fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(
        matches!(result, Err(StoreError::NotFound)),
        "{what}: expected NotFound, got {result:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Checks

/// A created task is readable as soon as `create` resolves, by its owner and by the engine, with
/// every field as created.
async fn create_then_get_is_visible(make: Factory<'_>) {
    let env = env(make);
    let now = env.clock.now();
    let created = env
        .store
        .create(
            new_task(alice())
                .status_message("starting")
                .deadline(Some(TTL * 3))
                .runner("engine-1"),
        )
        .await
        .unwrap();
    assert_eq!(created.status, TaskStatus::Working);
    assert_eq!(created.version, 1);
    assert_eq!(created.owner, alice());
    assert_eq!(created.origin, Era::Modern);
    assert_eq!(created.status_message.as_deref(), Some("starting"));
    assert_eq!(created.created_at, now);
    assert_eq!(created.last_updated_at, now);
    assert_eq!(created.ttl, Some(TTL));
    assert_eq!(created.deadline, Some(TTL * 3));
    assert_eq!(created.runner.as_deref(), Some("engine-1"));
    assert_eq!(created.poll_interval, Some(Duration::from_secs(1)));
    assert!(created.input_requests.is_empty() && created.outcome.is_none());
    assert_eq!(created.terminal_at, None);

    let got = env.store.get(&created.id, &alice()).await.unwrap();
    assert_eq!(got.as_ref(), Some(&created));
    assert_eq!(env.read(&created.id).await, created);

    let legacy = env
        .store
        .create(NewTask::new(alice(), Era::Legacy))
        .await
        .unwrap();
    assert_eq!(legacy.origin, Era::Legacy);
    assert_eq!((legacy.ttl, legacy.poll_interval), (None, None));
    assert_eq!((legacy.deadline, legacy.runner), (None, None));
    assert_ne!(legacy.id, created.id);

    let unknown = TaskId::new("no-such-task");
    assert_eq!(env.store.get(&unknown, &alice()).await.unwrap(), None);
    assert_eq!(env.store.get_unchecked(&unknown).await.unwrap(), None);
}

/// Creating a task under an id that is taken fails and leaves the first task alone.
async fn create_rejects_a_taken_id(make: Factory<'_>) {
    let env = env(make);
    let id = TaskId::new("chosen-by-a-custom-id-source");
    let first = env
        .store
        .create(new_task(alice()).id(id.clone()))
        .await
        .unwrap();
    assert_eq!(first.id, id);
    let second = env.store.create(new_task(bob()).id(id.clone())).await;
    assert!(
        matches!(&second, Err(StoreError::DuplicateId(taken)) if *taken == id),
        "{second:?}"
    );
    assert_eq!(env.read(&id).await, first);
    assert!(
        env.store
            .list(&bob(), None, 10)
            .await
            .unwrap()
            .tasks
            .is_empty()
    );
}

/// Someone else's task answers exactly like an unknown one, for every client operation, and
/// is not changed by the attempt.
async fn foreign_tasks_look_unknown(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let task = env.ask(&task.id, "name").await;
    let bobs = env.create(bob()).await;

    assert_eq!(env.store.get(&task.id, &bob()).await.unwrap(), None);
    let listed = env.store.list(&bob(), None, 100).await.unwrap();
    let ids: Vec<_> = listed.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&bobs.id]);
    assert_not_found(
        env.store
            .deliver_responses(&task.id, &bob(), answers(&[("name", answer("mallory"))]))
            .await,
        "deliver_responses by another owner",
    );
    assert_not_found(
        env.store.cancel(&task.id, &bob()).await,
        "cancel by another owner",
    );

    // Untouched: still asking, same version, and its owner still sees it.
    assert_eq!(env.read(&task.id).await, task);
    assert_eq!(env.store.get(&task.id, &alice()).await.unwrap(), Some(task));
}

/// Asking makes a task `input_required` with every outstanding request; a partial answer keeps
/// it there with only the unanswered keys; unknown and already answered keys are ignored; the
/// last answer returns it to `working`.
async fn input_request_lifecycle(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let asked = env.ask(&task.id, "a").await;
    assert_eq!(asked.status, TaskStatus::InputRequired);
    assert_eq!(asked.input_requests["a"], ask("a"));
    let asked = env.ask(&task.id, "b").await;
    assert_eq!(asked.status, TaskStatus::InputRequired);
    assert_eq!(keys(&asked), ["a", "b"]);

    let report = env
        .store
        .deliver_responses(
            &task.id,
            &alice(),
            answers(&[("a", answer("1")), ("never-asked", answer("x"))]),
        )
        .await
        .unwrap();
    let record = env.delivered(&task.id, &report).await;
    assert_eq!(report.accepted, ["a"]);
    assert_eq!(report.ignored, ["never-asked"]);
    assert_eq!(record.status, TaskStatus::InputRequired);
    assert_eq!(keys(&record), ["b"]);
    assert_eq!(record.input_responses["a"], answer("1"));
    // Applied before the call resolved: a read right away agrees.
    let read = env.store.get(&task.id, &alice()).await.unwrap().unwrap();
    assert_eq!(read, record);

    let report = env
        .store
        .deliver_responses(
            &task.id,
            &alice(),
            answers(&[("a", answer("again")), ("b", answer("2"))]),
        )
        .await
        .unwrap();
    let record = env.delivered(&task.id, &report).await;
    assert_eq!(report.accepted, ["b"]);
    assert_eq!(report.ignored, ["a"]);
    assert_eq!(record.status, TaskStatus::Working);
    assert!(record.input_requests.is_empty());
    assert_eq!(
        record.input_responses["a"],
        answer("1"),
        "first answer wins"
    );
    assert_eq!(record.input_responses["b"], answer("2"));

    // Nothing outstanding: everything is ignored and nothing changes.
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("c", answer("3"))]))
        .await
        .unwrap();
    assert_eq!((report.accepted.len(), report.ignored.len()), (0, 1));
    assert_eq!(env.delivered(&task.id, &report).await, record);
}

/// A key names one request for the task's whole life: outstanding, answered and withdrawn keys
/// are all refused. Withdrawing the last outstanding request returns the task to `working`.
async fn input_keys_are_never_reused(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    let reuse = |key: &'static str| {
        env.store
            .add_input_request(&task.id, key.to_owned(), ask("other"))
    };
    let refused = reuse("a").await;
    assert!(
        matches!(&refused, Err(StoreError::InputKeyReused(key)) if key == "a"),
        "outstanding key: {refused:?}"
    );
    assert_eq!(env.read(&task.id).await.input_requests["a"], ask("a"));

    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let refused = reuse("a").await;
    assert!(
        matches!(refused, Err(StoreError::InputKeyReused(_))),
        "answered key: {refused:?}"
    );

    env.ask(&task.id, "w").await;
    let withdrawn = env
        .store
        .withdraw_input_request(&task.id, "w")
        .await
        .unwrap();
    assert_eq!(withdrawn.status, TaskStatus::Working);
    assert!(withdrawn.input_requests.is_empty());
    let refused = reuse("w").await;
    assert!(
        matches!(refused, Err(StoreError::InputKeyReused(_))),
        "withdrawn key: {refused:?}"
    );
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("w", answer("late"))]))
        .await
        .unwrap();
    assert_eq!(report.ignored, ["w"]);
    let record = env.delivered(&task.id, &report).await;
    assert!(!record.input_responses.contains_key("w"));

    // Withdrawing one of two keeps the task asking.
    env.ask(&task.id, "x").await;
    env.ask(&task.id, "y").await;
    let record = env
        .store
        .withdraw_input_request(&task.id, "x")
        .await
        .unwrap();
    assert_eq!(record.status, TaskStatus::InputRequired);
    assert_eq!(keys(&record), ["y"]);
}

/// A delivered answer can be taken once; taking bumps the version but is invisible to clients.
async fn take_response_consumes_once(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(1));
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let delivered = env.delivered(&task.id, &report).await;
    assert_eq!(
        env.store.take_response(&task.id, "nope").await.unwrap(),
        None
    );
    env.clock.advance(Duration::from_secs(1));
    assert_eq!(
        env.store.take_response(&task.id, "a").await.unwrap(),
        Some(answer("1"))
    );
    let after = env.read(&task.id).await;
    assert!(after.input_responses.is_empty());
    assert_eq!(after.version, delivered.version + 1);
    assert_eq!(after.last_updated_at, delivered.last_updated_at);
    assert_eq!(env.store.take_response(&task.id, "a").await.unwrap(), None);
    assert_eq!(env.read(&task.id).await.version, after.version);
    assert_not_found(
        env.store
            .take_response(&TaskId::new("no-such-task"), "a")
            .await,
        "take_response on an unknown task",
    );
}

/// A task's outputs: kept by name (a second one of a name replaces the first), read by the
/// task's owner only, not a change clients see in the task, and final once the task has ended.
async fn outputs_are_kept_for_the_owner_only(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let report = ResourceContents::text("task://t/report.md", "text/markdown", "# Report");
    env.clock.advance(Duration::from_secs(1));
    env.store
        .add_output(&task.id, "report.md".into(), report.clone())
        .await
        .expect("add_output");
    let after = env.read(&task.id).await;
    assert_eq!(after.version, task.version + 1);
    assert_eq!(after.last_updated_at, task.last_updated_at);
    let read = |owner: Owner, name: &'static str| {
        let (store, id) = (env.store.clone(), task.id.clone());
        async move { store.read_output(&id, &owner, name).await.unwrap() }
    };
    assert_eq!(read(alice(), "report.md").await, Some(report.clone()));
    assert_eq!(
        read(bob(), "report.md").await,
        None,
        "another owner's output"
    );
    assert_eq!(read(alice(), "other").await, None);
    // The same contents again change nothing; new contents replace the old.
    env.store
        .add_output(&task.id, "report.md".into(), report.clone())
        .await
        .unwrap();
    assert_eq!(env.read(&task.id).await.version, after.version);
    let data = ResourceContents::blob("task://t/data.bin", "application/octet-stream", [0u8, 255]);
    env.store
        .add_output(&task.id, "report.md".into(), data.clone())
        .await
        .unwrap();
    assert_eq!(read(alice(), "report.md").await, Some(data.clone()));
    // Ended: still readable, and nothing more is kept.
    env.store.finish(&task.id, done("ok")).await.unwrap();
    let refused = env
        .store
        .add_output(&task.id, "late".into(), report.clone())
        .await;
    assert!(
        matches!(refused, Err(StoreError::Terminal(TaskStatus::Completed))),
        "add_output on an ended task: {refused:?}"
    );
    assert_eq!(read(alice(), "report.md").await, Some(data));
    assert_eq!(read(alice(), "late").await, None);
    assert_not_found(
        env.store
            .add_output(&TaskId::new("no-such-task"), "a".into(), report)
            .await,
        "add_output on an unknown task",
    );
    let unknown = env
        .store
        .read_output(&TaskId::new("no-such-task"), &alice(), "a")
        .await;
    assert_eq!(unknown.unwrap(), None);
}

/// `finish` ends a task once; afterwards the task never changes: a second `finish`, a status
/// message, an answer or a new request leave it as it is.
async fn finish_is_final_and_idempotent(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(3));
    let now = env.clock.now();
    let finished = env.store.finish(&task.id, done("hello")).await.unwrap();
    assert_eq!(finished.status, TaskStatus::Completed);
    assert_eq!(finished.outcome, Some(done("hello")));
    assert_eq!(finished.terminal_at, Some(now));
    assert_eq!(finished.last_updated_at, now);
    assert!(
        finished.input_requests.is_empty(),
        "nobody will answer any more"
    );
    assert_eq!(env.read(&task.id).await, finished);

    env.clock.advance(Duration::from_secs(1));
    let again = env
        .store
        .finish(&task.id, TaskOutcome::Error(RpcError::internal("late")))
        .await
        .unwrap();
    assert_eq!(again, finished);
    let message = env
        .store
        .set_status_message(&task.id, Some("x".into()))
        .await
        .unwrap();
    assert_eq!(message, finished);
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    assert_eq!(report.ignored, ["a"]);
    assert_eq!(env.delivered(&task.id, &report).await, finished);
    let refused = env
        .store
        .add_input_request(&task.id, "b".into(), ask("b"))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Terminal(TaskStatus::Completed))),
        "{refused:?}"
    );
    assert_eq!(env.read(&task.id).await, finished);
    assert_not_found(
        env.store
            .finish(&TaskId::new("no-such-task"), done("x"))
            .await,
        "finish on an unknown task",
    );
}

/// An error fails a task (with its message as the status message); a tool error (`isError`)
/// completes a modern task but fails a legacy one, keeping the result.
async fn failure_outcomes_by_era(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let error = RpcError::internal("rate limit exceeded");
    let failed = env
        .store
        .finish(&task.id, TaskOutcome::Error(error.clone()))
        .await
        .unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.outcome, Some(TaskOutcome::Error(error)));
    assert_eq!(
        failed.status_message.as_deref(),
        Some("rate limit exceeded")
    );

    let tool_error = TaskOutcome::Result(json!({"content": [], "isError": true}));
    for (origin, status) in [
        (Era::Modern, TaskStatus::Completed),
        (Era::Legacy, TaskStatus::Failed),
    ] {
        let task = env
            .store
            .create(NewTask::new(alice(), origin).status_message("working on it"))
            .await
            .unwrap();
        let ended = env
            .store
            .finish(&task.id, tool_error.clone())
            .await
            .unwrap();
        assert_eq!(ended.status, status, "{origin:?}");
        assert_eq!(ended.outcome.as_ref(), Some(&tool_error));
        assert_eq!(ended.status_message.as_deref(), Some("working on it"));
    }
}

/// `cancel` makes a running task `cancelled` at once; work finishing afterwards does not change
/// that.
async fn cancelled_stays_cancelled(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(2));
    let now = env.clock.now();
    let result = env.store.cancel(&task.id, &alice()).await.unwrap();
    let CancelResult::Cancelled(cancelled) = result else {
        panic!("expected Cancelled, got {result:?}");
    };
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message.as_deref(),
        Some(TaskRecord::CANCELLED_MESSAGE)
    );
    assert_eq!(cancelled.terminal_at, Some(now));
    assert_eq!(cancelled.outcome, None);
    assert!(cancelled.input_requests.is_empty());
    assert_eq!(
        env.store.get(&task.id, &alice()).await.unwrap(),
        Some(cancelled.clone())
    );

    let after = env.store.finish(&task.id, done("too late")).await.unwrap();
    assert_eq!(after, cancelled);
    assert_eq!(env.read(&task.id).await, cancelled);
}

/// Cancelling a task that has ended changes nothing and says how it ended; an unknown task is
/// NotFound.
async fn cancel_on_ended_task_reports_already_terminal(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    let result = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(result, CancelResult::AlreadyTerminal(finished.clone()));
    assert_eq!(result.record().status, TaskStatus::Completed);
    assert_eq!(env.read(&task.id).await, finished);

    let task = env.create(alice()).await;
    let first = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert!(matches!(first, CancelResult::Cancelled(_)), "{first:?}");
    let second = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(second, CancelResult::AlreadyTerminal(first.into_record()));

    assert_not_found(
        env.store
            .cancel(&TaskId::new("no-such-task"), &alice())
            .await,
        "cancel of an unknown task",
    );
}

/// A running task outlives its `ttl`: `ttl` is how long the record is kept, not how long the
/// task may run (a task waiting on a person may take longer). Once it ends, its record is kept a
/// whole `ttl` from then.
async fn ttl_never_ends_a_running_task(make: Factory<'_>) {
    let env = env(make);
    let working = env.create(alice()).await;
    let waiting = env.create(alice()).await;
    let waiting = env.ask(&waiting.id, "a").await;

    env.clock.advance(TTL * 100);
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
    assert_eq!(env.read(&working.id).await, working);
    assert_eq!(env.read(&waiting.id).await, waiting);

    let finished = env.store.finish(&working.id, done("ok")).await.unwrap();
    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "{report:?}");
    assert_eq!(env.read(&working.id).await, finished);
    env.clock.advance(Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, std::slice::from_ref(&working.id));
    assert_eq!(env.read(&waiting.id).await, waiting);
}

/// `expire` fails running tasks once `created_at + deadline` is reached — not before — with
/// `-32603` and a status message that says the deadline ended it; tasks without a deadline run
/// on. A task failed this way is kept for a further TTL like any ended task.
async fn deadline_fails_overdue_tasks(make: Factory<'_>) {
    let env = env(make);
    let deadline = Duration::from_secs(30);
    let short = env
        .store
        .create(new_task(alice()).deadline(Some(deadline)))
        .await
        .unwrap();
    env.ask(&short.id, "a").await;
    let long = env
        .store
        .create(new_task(alice()).deadline(Some(deadline * 4)))
        .await
        .unwrap();
    let unlimited = env.create(alice()).await;

    env.clock.advance(deadline - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );

    env.clock.advance(Duration::from_secs(1));
    let now = env.clock.now();
    let report = env.store.expire(now).await.unwrap();
    assert_eq!(report.removed, Vec::<TaskId>::new());
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&short.id]);
    let expired = env.read(&short.id).await;
    assert_eq!(report.failed[0], expired);
    assert_eq!(expired.status, TaskStatus::Failed);
    assert_eq!(
        expired.outcome,
        Some(TaskOutcome::Error(RpcError::new(
            RpcError::INTERNAL_ERROR,
            TaskRecord::DEADLINE_MESSAGE
        )))
    );
    assert_eq!(
        expired.status_message.as_deref(),
        Some(TaskRecord::DEADLINE_MESSAGE)
    );
    assert_eq!(expired.terminal_at, Some(now));
    assert!(expired.input_requests.is_empty());
    assert_eq!(env.read(&long.id).await, long);

    // Failed by its deadline, kept for a further TTL like any ended task.
    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "{report:?}");

    env.clock.advance(Duration::from_secs(365 * 24 * 3600));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&long.id]);
    assert_eq!(report.removed, [short.id]);
    assert_eq!(env.read(&unlimited.id).await, unlimited);
}

const LEASE: Duration = Duration::from_secs(10);

/// A running task whose runner's lease has lapsed fails with `-32603` and
/// [`TaskRecord::RUNNER_STOPPED_MESSAGE`]; tasks of an instance whose lease is live or renewed,
/// and tasks without a runner, run on; a runner that never took a lease counts as stopped. Ended
/// tasks are untouched.
async fn lapsed_leases_fail_their_tasks(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    env.store.renew_lease("b", LEASE).await.unwrap();
    let on_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let asking_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    env.ask(&asking_a.id, "k").await;
    let done_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let done_a = env.store.finish(&done_a.id, done("ok")).await.unwrap();
    let on_b = env.store.create(new_task(bob()).runner("b")).await.unwrap();
    let nobody = env.create(alice()).await;

    env.clock.advance(LEASE - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.failed.is_empty(), "leases still live: {report:?}");
    env.store.renew_lease("b", LEASE).await.unwrap();

    env.clock.advance(Duration::from_secs(1));
    let now = env.clock.now();
    let report = env.store.expire(now).await.unwrap();
    let mut failed: Vec<_> = report.failed.iter().map(|t| t.id.clone()).collect();
    failed.sort();
    let mut expected = vec![on_a.id.clone(), asking_a.id.clone()];
    expected.sort();
    assert_eq!(failed, expected, "a's lease lapsed: its running tasks fail");
    for id in [&on_a.id, &asking_a.id] {
        let stopped = env.read(id).await;
        assert_eq!(stopped.status, TaskStatus::Failed);
        assert_eq!(
            stopped.outcome,
            Some(TaskOutcome::Error(RpcError::new(
                RpcError::INTERNAL_ERROR,
                TaskRecord::RUNNER_STOPPED_MESSAGE
            )))
        );
        assert_eq!(
            stopped.status_message.as_deref(),
            Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
        );
        assert_eq!(stopped.terminal_at, Some(now));
        assert!(stopped.input_requests.is_empty());
    }
    assert_eq!(env.read(&done_a.id).await, done_a);
    assert_eq!(env.read(&on_b.id).await, on_b, "b renewed its lease");
    assert_eq!(env.read(&nobody.id).await, nobody, "no runner, no lease");

    // Renewing a lapsed lease does not revive failed tasks; new tasks of `a` run again.
    env.store.renew_lease("a", LEASE).await.unwrap();
    let again = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(env.read(&on_a.id).await.status, TaskStatus::Failed);
    assert_eq!(env.read(&again.id).await, again);

    // A runner that never took a lease is not alive.
    let orphan = env
        .store
        .create(new_task(alice()).runner("ghost"))
        .await
        .unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&orphan.id]);
}

/// Releasing a lease (a clean stop) fails the instance's running tasks at the next `expire`,
/// without waiting for the lease to run out; other instances' tasks run on. Releasing an unknown
/// instance's lease is harmless.
async fn released_leases_fail_their_tasks(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    env.store.renew_lease("b", LEASE).await.unwrap();
    let on_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let on_b = env
        .store
        .create(new_task(alice()).runner("b"))
        .await
        .unwrap();
    env.store.release_lease("a").await.unwrap();
    env.store.release_lease("never-seen").await.unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&on_a.id]);
    let stopped = env.read(&on_a.id).await;
    assert_eq!(
        stopped.status_message.as_deref(),
        Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
    );
    assert_eq!(env.read(&on_b.id).await, on_b);
}

/// An ended task stays readable for its TTL after it ended, even past `created_at + ttl`, and is
/// deleted (gone from get, list and the engine's view) once that has passed.
async fn ended_tasks_are_kept_for_their_ttl(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let forever = env.store.create(new_task(alice()).ttl(None)).await.unwrap();
    env.clock.advance(TTL - Duration::from_secs(10));
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    env.store.finish(&forever.id, done("ok")).await.unwrap();

    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
    assert_eq!(
        env.store.get(&task.id, &alice()).await.unwrap(),
        Some(finished)
    );

    env.clock.advance(Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, std::slice::from_ref(&task.id));
    assert!(report.failed.is_empty());
    assert_eq!(env.store.get(&task.id, &alice()).await.unwrap(), None);
    assert_eq!(env.store.get_unchecked(&task.id).await.unwrap(), None);
    let listed = env.store.list(&alice(), None, 100).await.unwrap();
    let ids: Vec<_> = listed.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&forever.id]);
    assert_not_found(
        env.store.cancel(&task.id, &alice()).await,
        "cancel after deletion",
    );

    env.clock.advance(Duration::from_secs(10 * 365 * 24 * 3600));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "unlimited TTL: kept forever");
    assert_eq!(env.read(&forever.id).await.status, TaskStatus::Completed);
}

/// `list` returns only the caller's tasks, oldest first, in pages of at most `limit`, with a
/// cursor exactly when more follow; ended tasks are listed too.
async fn list_pages_in_creation_order(make: Factory<'_>) {
    let env = env(make);
    let mut created = Vec::new();
    for i in 0..5 {
        created.push(env.create(alice()).await.id);
        if i % 2 == 0 {
            env.create(bob()).await;
        }
        env.clock.advance(Duration::from_millis(1));
    }
    env.store.finish(&created[1], done("ok")).await.unwrap();

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut sizes = Vec::new();
    loop {
        let page = env
            .store
            .list(&alice(), cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(page.tasks.iter().all(|t| t.owner == alice()));
        sizes.push(page.tasks.len());
        seen.extend(page.tasks.into_iter().map(|t| t.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(sizes.len() < 10, "pagination does not end");
    }
    assert_eq!(sizes, [2, 2, 1]);
    assert_eq!(seen, created);

    let all = env.store.list(&alice(), None, 100).await.unwrap();
    assert_eq!(all.next_cursor, None);
    let ids: Vec<_> = all.tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(ids, created);
    assert_eq!(all.tasks[1].status, TaskStatus::Completed);

    let exact = env.store.list(&alice(), None, 5).await.unwrap();
    assert_eq!((exact.tasks.len(), exact.next_cursor), (5, None));

    let one = env.store.list(&alice(), None, 0).await.unwrap();
    assert_eq!(one.tasks.len(), 1, "a limit of 0 is read as 1");
    assert!(one.next_cursor.is_some());

    assert_eq!(
        env.store.list(&bob(), None, 100).await.unwrap().tasks.len(),
        3
    );
    let nobody = env
        .store
        .list(&Owner::new("carol"), None, 100)
        .await
        .unwrap();
    assert!(nobody.tasks.is_empty() && nobody.next_cursor.is_none());

    // A task created after a page was read shows up on a later page.
    let page = env.store.list(&alice(), None, 4).await.unwrap();
    let newer = env.create(alice()).await;
    let rest = env
        .store
        .list(&alice(), page.next_cursor.as_deref(), 10)
        .await
        .unwrap();
    let ids: Vec<_> = rest.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&created[4], &newer.id]);
}

/// A cursor the store did not make is rejected with its own error (`-32602` on the wire).
async fn list_rejects_invalid_cursor(make: Factory<'_>) {
    let env = env(make);
    env.create(alice()).await;
    for bad in ["not-a-cursor", "", "%%%", "\u{1F600}"] {
        let result = env.store.list(&alice(), Some(bad), 10).await;
        assert!(
            matches!(result, Err(StoreError::InvalidCursor)),
            "cursor {bad:?}: {result:?}"
        );
    }
    assert_eq!(
        StoreError::InvalidCursor.to_rpc_error().code,
        RpcError::INVALID_PARAMS
    );
}

/// `changed` resolves at once when the task is already newer than what the caller saw.
async fn changed_resolves_at_once_when_newer(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let record = timeout(PATIENCE, env.store.changed(&task.id, 0))
        .await
        .expect("changed(0) on a version-1 task must not wait")
        .unwrap();
    assert_eq!(record, task);
    let asked = env.ask(&task.id, "a").await;
    let record = timeout(PATIENCE, env.store.changed(&task.id, task.version))
        .await
        .expect("changed must not wait for a change it has missed")
        .unwrap();
    assert_eq!(record, asked);
}

/// `changed` waits while nothing changes, and wakes on the next change, whoever makes it: the
/// engine, a client's answer, a client's cancel.
async fn changed_waits_for_a_later_change(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let waiter = env.wait(&task.id, task.version);
    still_waiting(&waiter).await;
    let updated = env
        .store
        .set_status_message(&task.id, Some("halfway".into()))
        .await
        .unwrap();
    let woken = resolved(waiter).await.unwrap();
    assert_eq!(woken, updated);

    let asked = env.ask(&task.id, "a").await;
    let waiter = env.wait(&task.id, asked.version);
    still_waiting(&waiter).await;
    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let woken = resolved(waiter).await.unwrap();
    assert_eq!(woken.status, TaskStatus::Working);
    assert!(woken.input_responses.contains_key("a"));

    let waiter = env.wait(&task.id, woken.version);
    still_waiting(&waiter).await;
    env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(
        resolved(waiter).await.unwrap().status,
        TaskStatus::Cancelled
    );
}

/// `changed` is NotFound for an unknown task, and wakes its waiters with NotFound when the task
/// is deleted.
async fn changed_fails_for_missing_or_deleted_task(make: Factory<'_>) {
    let env = env(make);
    assert_not_found(
        timeout(PATIENCE, env.store.changed(&TaskId::new("no-such-task"), 0))
            .await
            .expect("changed on an unknown task must not wait"),
        "changed on an unknown task",
    );
    let task = env.create(alice()).await;
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    let waiter = env.wait(&task.id, finished.version);
    still_waiting(&waiter).await;
    env.clock.advance(TTL);
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, [task.id]);
    assert_not_found(resolved(waiter).await, "waiter on a deleted task");
}

/// Many tasks with a waiter each: changing one task wakes its waiter, with its record, and no
/// other.
async fn concurrent_waiters_are_woken_by_their_own_task_only(make: Factory<'_>) {
    const TASKS: usize = 100;
    let env = env(make);
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        tasks.push(env.create(alice()).await);
    }
    let mut waiters: Vec<_> = tasks
        .iter()
        .map(|task| Some(env.wait(&task.id, task.version)))
        .collect();
    still_waiting(waiters[0].as_ref().unwrap()).await;
    for (i, task) in tasks.iter().enumerate() {
        let changed = env
            .store
            .set_status_message(&task.id, Some(format!("task {i}")))
            .await
            .unwrap();
        let woken = resolved(waiters[i].take().unwrap()).await.unwrap();
        assert_eq!(woken, changed);
        // Give a wrongly woken waiter a moment to finish, then check that none did.
        if i % 25 == 0 {
            tokio::time::sleep(QUIET).await;
        } else {
            tokio::task::yield_now().await;
        }
        let early = waiters
            .iter()
            .enumerate()
            .find(|(_, waiter)| waiter.as_ref().is_some_and(|w| w.is_finished()));
        assert!(
            early.is_none(),
            "a change to task {i} woke the waiter of task {:?}",
            early.map(|e| e.0)
        );
    }
}

/// Every change bumps the version and every operation that changes nothing leaves it alone;
/// visible changes also move `last_updated_at` to the store's clock.
async fn versions_increase_with_every_change_only(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let id = task.id.clone();
    let mut last = task.version;
    let mut step = |record: &TaskRecord, changes: bool, what: &str| {
        if changes {
            assert!(
                record.version > last,
                "{what}: version {} after {last}",
                record.version
            );
        } else {
            assert_eq!(
                record.version, last,
                "{what} changed nothing but bumped the version"
            );
        }
        last = record.version;
    };
    let tick = || {
        env.clock.advance(Duration::from_secs(1));
        env.clock.now()
    };

    let now = tick();
    let r = env
        .store
        .set_status_message(&id, Some("a".into()))
        .await
        .unwrap();
    step(&r, true, "set_status_message");
    assert_eq!(r.last_updated_at, now);
    let r = env
        .store
        .set_status_message(&id, Some("a".into()))
        .await
        .unwrap();
    step(&r, false, "the same status message");
    let r = env
        .store
        .withdraw_input_request(&id, "nothing")
        .await
        .unwrap();
    step(&r, false, "withdrawing a key that is not outstanding");
    let now = tick();
    let r = env.ask(&id, "k").await;
    step(&r, true, "add_input_request");
    assert_eq!(r.last_updated_at, now);
    let report = env
        .store
        .deliver_responses(&id, &alice(), answers(&[("zzz", answer("x"))]))
        .await
        .unwrap();
    let r = env.delivered(&id, &report).await;
    step(&r, false, "delivering only unknown keys");
    let now = tick();
    let report = env
        .store
        .deliver_responses(&id, &alice(), answers(&[("k", answer("x"))]))
        .await
        .unwrap();
    let r = env.delivered(&id, &report).await;
    step(&r, true, "deliver_responses");
    assert_eq!(r.last_updated_at, now);
    env.store.take_response(&id, "k").await.unwrap();
    step(&env.read(&id).await, true, "take_response");
    env.store.take_response(&id, "k").await.unwrap();
    step(&env.read(&id).await, false, "taking nothing");
    let now = tick();
    let r = env.store.finish(&id, done("ok")).await.unwrap();
    step(&r, true, "finish");
    assert_eq!(r.last_updated_at, now);
    tick();
    let r = env.store.finish(&id, done("again")).await.unwrap();
    step(&r, false, "finishing an ended task");
    let r = env.store.cancel(&id, &alice()).await.unwrap().into_record();
    step(&r, false, "cancelling an ended task");
    assert_eq!(r.last_updated_at, now);
}

/// `subscribe` reports creation and every visible change of every task, in version order, and
/// deletions; taking a response is not reported.
async fn subscribe_reports_visible_changes(make: Factory<'_>) {
    let env = env(make);
    let mut events = env.store.subscribe();
    let task = env.create(alice()).await;
    env.ask(&task.id, "k").await;
    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("k", answer("x"))]))
        .await
        .unwrap();
    env.store.take_response(&task.id, "k").await.unwrap();
    let other = env
        .store
        .create(new_task(bob()).deadline(Some(TTL)))
        .await
        .unwrap();
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    env.clock.advance(TTL);
    env.store.expire(env.clock.now()).await.unwrap();

    let mut updates: BTreeMap<TaskId, Vec<u64>> = BTreeMap::new();
    let mut last = None;
    while updates.get(&task.id).map_or(0, Vec::len) < 4
        || updates.get(&other.id).map_or(0, Vec::len) < 2
        || last.is_none()
    {
        let event = timeout(PATIENCE, events.recv())
            .await
            .expect("an event was not reported")
            .expect("the receiver lagged or the store closed the feed");
        match event {
            TaskEvent::Updated(record) => updates
                .entry(record.id.clone())
                .or_default()
                .push(record.version),
            TaskEvent::Removed { id, owner } => {
                assert_eq!((&id, &owner), (&task.id, &alice()));
                last = Some(id);
            }
        }
    }
    // created, asked, answered, (taken: not reported), finished.
    assert_eq!(updates[&task.id], [1, 2, 3, finished.version]);
    assert_eq!(finished.version, 5);
    // created, then failed by the sweep (its deadline).
    assert_eq!(updates[&other.id], [1, 2]);
    match events.try_recv() {
        Err(broadcast::error::TryRecvError::Empty) => {}
        other => panic!("unexpected event: {other:?}"),
    }
}
