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
//! The checks need a Tokio runtime with the timer enabled; the macro's tests build a two-thread
//! one each. Waits for something that must happen give up after
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

mod changes;
mod durable;
mod lifecycle;
mod lifetimes;

use changes::*;
use durable::*;
use lifecycle::*;
use lifetimes::*;

/// How long a check waits for something that must happen (a wake-up, an event).
#[doc(hidden)] // a timing of the checks themselves; a store author never names it
pub const PATIENCE: Duration = Duration::from_secs(5);
/// How long a check watches for something that must not happen (a spurious wake-up).
#[doc(hidden)] // a timing of the checks themselves; a store author never names it
pub const QUIET: Duration = Duration::from_millis(50);

/// A store factory: given the clock to use, a fresh empty store.
pub(crate) type Factory<'a> = &'a dyn Fn(Arc<dyn Clock>) -> Arc<dyn TaskStore>;

type CheckFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// One rule of the contract.
#[derive(Clone, Copy)]
pub(crate) struct Check {
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
        pub(crate) const CHECKS: &[Check] = &[
            $(Check { name: stringify!($name), run: |make| Box::pin($name(make)) },)*
        ];
    };
}

crate::__task_store_contract_checks!([checks]);

/// The names of the contract's checks, the one list of them: `([callback] tokens…)` expands to
/// `callback! { tokens… name, name, … }`, the names in the order [`run_all`] runs them. Both `CHECKS` and
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
            take_response_is_idempotent,
            outputs_are_kept_for_the_owner_only,
            finish_is_final_and_idempotent,
            failure_outcomes_by_era,
            cancelled_stays_cancelled,
            cancel_on_ended_task_reports_already_terminal,
            ttl_never_ends_a_running_task,
            deadline_fails_overdue_tasks,
            lapsed_leases_fail_their_tasks,
            released_leases_fail_their_tasks,
            durable_tasks_are_queued_when_their_runner_stops,
            one_claim_of_a_queued_task_wins,
            only_the_runner_releases_a_durable_task,
            a_durable_task_fails_once_its_runs_are_spent,
            checkpoints_and_taken_answers_are_kept,
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
#[doc(hidden)] // what `task_store_contract_tests!` expands to; a store author calls `run`
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
