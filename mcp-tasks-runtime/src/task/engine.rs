//! Runs tools as tasks: creates the task in the store, runs the tool in the background, routes the
//! tool's input requests through the store (modern) or to the client (legacy), ends the task with
//! the tool's outcome, notices cancellation and expiry, and sweeps expired tasks.
//!
//! This file is the engine's life: launching a task (prepare, then start), the lease and the
//! sweeper, and [`TaskEngine::stop_tasks`]. The limits on running tasks are counted in
//! [`limits`](super::limits), each task is driven by [`run`](super::run), and the tool's context
//! talks to the store through [`backend`](super::backend).
//!
//! Each engine is one *instance* (a random id): the tasks it runs are stamped with it
//! ([`NewTask::runner`](crate::store::NewTask::runner)) and it keeps a lease in the store, renewed
//! on every sweep, so that when the process dies the tasks it ran fail once the lease lapses
//! (whichever instance sweeps). When serving ends, [`TaskEngine::stop_tasks`] settles the tasks
//! still running here.

use crate::protocol::Era;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOutcome};
use crate::protocol::{CallToolResult, ClientCapabilities};
use crate::store::TaskRecord;
use crate::store::{StoreError, TaskStore};
use crate::tool::{ContextBackend, RegisteredTool, RequestInfo, StateMap, ToolContext};
use crate::tracker::TaskTracker;
use foldhash::HashMap;
use futures_util::FutureExt;
use serde_json::Value;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::backend::{StatusSlot, TaskBackend, ToolBounds};
use super::limits::Running;
use super::recorded::Recorded;
use super::run::{Created, Run, Settling};

pub use super::backend::ClientChannel;
pub(crate) use super::run::CaughtFuture;

/// The shortest lease an engine takes: a lease must outlast the time between two renewals.
const MIN_LEASE: Duration = Duration::from_millis(100);

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// How long a task's record is kept (its `ttl`) for tools that declare none.
    pub default_ttl: Duration,
    /// How long a task may run before it fails (`None`: no limit).
    pub deadline: Option<Duration>,
    /// How long this engine's lease lasts; it is renewed at least every third of that.
    pub lease: Duration,
    /// Poll interval for tools that declare none.
    pub default_poll_interval: Duration,
    /// The longest TTL a client may request.
    pub max_ttl: Duration,
    /// How long a cancelled tool may take to wind down before it is dropped.
    pub cancel_grace: Duration,
    /// How often expired tasks are swept (and the lease renewed, at least every `lease / 3`).
    pub sweep_every: Duration,
    /// How many tasks may run at once in this engine, all owners together.
    pub max_tasks: usize,
    /// How many tasks one owner may have running at once.
    pub max_tasks_per_owner: usize,
    /// How many input requests one task may have outstanding at once.
    pub max_inputs_per_task: usize,
    /// How many outputs one task may keep.
    pub max_outputs_per_task: usize,
    /// How many bytes one task's outputs may hold in all.
    pub max_output_bytes_per_task: usize,
    /// How long a tool's store calls are tried again while the store cannot be reached.
    pub store_patience: Duration,
    /// How many runs a durable task's body may have in all.
    pub durable_attempts: u32,
    /// The largest checkpoint a durable task's tool may keep, in bytes of JSON.
    pub checkpoint_bytes: usize,
    /// Whether this engine runs durable tasks (else it queues them for workers: a front).
    pub runs_durable: bool,
    /// Where a new durable task's body starts, on an engine that runs them.
    pub executor: Arc<dyn super::executor::Executor>,
}

/// Everything needed to start one task.
pub struct Launch {
    /// The tool.
    pub tool: Arc<RegisteredTool>,
    /// Its `arguments`.
    pub arguments: Option<Value>,
    /// Who owns the task.
    pub owner: Owner,
    /// The era it is created in.
    pub origin: Era,
    /// A TTL the client asked for (legacy `task.ttl`), honoured within limits.
    pub requested_ttl: Option<Duration>,
    /// The client's capabilities for this call.
    pub capabilities: Arc<ClientCapabilities>,
    /// The legacy client's session, for input requests and status notifications.
    pub channel: Option<Arc<dyn ClientChannel>>,
    /// A progress token from the creating request (legacy: valid until the task ends).
    pub progress_token: Option<Value>,
    /// The tool runs only once this resolves (or its sender is dropped): for a transport to say
    /// the `CreateTaskResult` has gone out.
    pub start_after: Option<oneshot::Receiver<()>>,
    /// The least severe level the client wants log messages for (legacy tasks send them on the
    /// session, tagged with the task; a modern task has no stream to send them on).
    pub log_level: Option<crate::protocol::LogLevel>,
    /// The creating request as the tool sees it (its principal above all): the task keeps it.
    pub request: Arc<RequestInfo>,
    /// The application state the tool can reach.
    pub state: Arc<StateMap>,
}

impl fmt::Debug for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launch")
            .field("tool", &self.tool.info.name)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// What [`TaskEngine::launch`] did.
pub(crate) enum Launched {
    /// The task exists and its tool runs.
    Task(TaskRecord),
    /// The arguments do not fit the tool's input: nothing runs and no task exists. The caller
    /// answers [`Refused::result`] at once, or makes it a task's outcome ([`Refused::into_task`]).
    Refused(Refused),
}

/// A launch whose arguments did not decode: the `isError` result that says why, and the task
/// that was about to start, for a caller whose client waits for a task in any case.
pub(crate) struct Refused {
    result: CallToolResult,
    prepared: Prepared,
    start_after: Option<oneshot::Receiver<()>>,
}

impl Refused {
    /// The `isError` result naming the argument at fault.
    pub(crate) fn result(self) -> CallToolResult {
        self.result
    }

    /// Creates the task anyway, ending at once with the `isError` result as its outcome (a
    /// legacy task-augmented call: its client expects a `CreateTaskResult`, and in 2025-11-25 an
    /// `isError` result makes the task `failed`, whose `tasks/result` is that result). As for
    /// any task, the outcome is recorded only after `start_after`.
    pub(crate) async fn into_task(self, engine: &Arc<TaskEngine>) -> Result<TaskRecord, RpcError> {
        let Refused {
            result,
            prepared,
            start_after,
        } = self;
        let fut: CaughtFuture = Box::pin(async move {
            if let Some(gate) = start_after {
                let _ = gate.await;
            }
            Ok(Ok(result))
        });
        let cancel = CancellationToken::new();
        match engine.store.creates_in_order() {
            true => engine.start_fresh(prepared, fut, cancel).await,
            false => engine.start(prepared, fut, cancel, |_| {}).await,
        }
    }
}

/// A task about to start: created in the store once [`TaskEngine::start`] runs.
pub(crate) struct Prepared {
    new: crate::store::NewTask,
    backend: Arc<TaskBackend>,
    status: Arc<StatusSlot>,
    tool: &'static str,
    channel: Option<Arc<dyn ClientChannel>>,
}

impl Prepared {
    /// The backend the tool's context must use once it runs as this task.
    pub(crate) fn backend(&self) -> Arc<dyn ContextBackend> {
        self.backend.clone()
    }

    /// What the store creates, and what driving the task needs.
    fn split(self) -> (crate::store::NewTask, Starting) {
        let starting = Starting {
            id: self.new.id.clone(),
            owner: self.new.owner.clone(),
            origin: self.new.origin,
            status: self.status,
            tool: self.tool,
            channel: self.channel,
            durable: self.new.durable.is_some(),
        };
        (self.new, starting)
    }
}

/// What driving a task needs of it, besides its tool's future.
pub(super) struct Starting {
    pub(super) id: TaskId,
    pub(super) owner: Owner,
    pub(super) origin: Era,
    pub(super) status: Arc<StatusSlot>,
    pub(super) tool: &'static str,
    pub(super) channel: Option<Arc<dyn ClientChannel>>,
    /// A durable task: at a stop, it is handed off instead of failed.
    pub(super) durable: bool,
}

/// A task running here: how to stop its tool, and (durable) how to hand it off.
pub(super) struct RunningTask {
    cancel: CancellationToken,
    pub(super) handed_off: Option<CancellationToken>,
}

/// The task engine. Holds the store; keeps nothing about a task that the store does not have
/// (beyond the handles of the tools it runs, and how many run, for the limits).
pub struct TaskEngine {
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) config: EngineConfig,
    sweeper: OnceLock<()>,
    /// This engine's instance id: the runner of its tasks, the name of its lease.
    pub(super) instance: String,
    /// Whether the lease is held (taken, and not released by `stop_tasks`).
    leased: AtomicBool,
    /// The tasks running here, with their tools' cancellation tokens.
    pub(super) running: Arc<Mutex<HashMap<TaskId, RunningTask>>>,
    /// The tasks whose tool has returned here and whose outcome is being recorded: what a poll
    /// may wait for ([`Self::settling`]).
    settling: Settling,
    /// The outcomes recorded lately, if the store may forget them (`recorded.rs`).
    recorded: Recorded,
    /// The drivers of those tasks.
    drivers: TaskTracker,
    /// Serve loops using this engine; the last one to end settles the tasks.
    serving: AtomicUsize,
    /// How many tasks run here, per owner and in all, for the limits.
    pub(super) slots: Arc<Running>,
    /// The durable tools, to run a claimed task's body (set once the server is built).
    pub(super) resume: OnceLock<super::executor::Resume>,
    /// Cancelled when the server starts draining.
    pub(super) draining: CancellationToken,
    /// Durable tasks whose run here was stopped when the lease lapsed in a store outage: let
    /// go of once the store answers again, for an instance to claim.
    pub(super) fenced: Mutex<Vec<TaskId>>,
}

impl fmt::Debug for TaskEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskEngine")
            .field("store", &self.store)
            .field("config", &self.config)
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

impl TaskEngine {
    /// An engine over this store. A lease shorter than 100 ms is taken as 100 ms.
    pub fn new(store: Arc<dyn TaskStore>, mut config: EngineConfig) -> Arc<Self> {
        config.lease = config.lease.max(MIN_LEASE);
        let slots = Arc::new(Running::new(config.max_tasks, config.max_tasks_per_owner));
        let recorded = Recorded::new(&*store);
        Arc::new(TaskEngine {
            store,
            config,
            sweeper: OnceLock::new(),
            instance: format!("engine-{}", TaskId::generate().as_str()),
            leased: AtomicBool::new(false),
            running: Arc::default(),
            settling: Settling::default(),
            recorded,
            drivers: TaskTracker::new(),
            serving: AtomicUsize::new(0),
            slots,
            resume: OnceLock::new(),
            draining: CancellationToken::new(),
            fenced: Mutex::default(),
        })
    }

    /// The durable tools this engine can run again when it claims their tasks.
    pub(crate) fn set_resume(&self, resume: super::executor::Resume) {
        let _ = self.resume.set(resume);
    }

    /// What bounds a tool's use of the store.
    pub(super) fn bounds(&self) -> ToolBounds {
        ToolBounds {
            max_outstanding: self.config.max_inputs_per_task,
            store_patience: self.config.store_patience,
            checkpoint_bytes: self.config.checkpoint_bytes,
            max_outputs: self.config.max_outputs_per_task,
            max_output_bytes: self.config.max_output_bytes_per_task,
        }
    }

    /// Takes the lease if it is not held (before the first task is created, and again after
    /// [`Self::stop_tasks`]), so that no sweep sees a task of this engine without a live lease.
    pub(super) async fn hold_lease(&self) -> Result<(), StoreError> {
        if !self.leased.load(Ordering::Acquire) {
            self.store
                .renew_lease(&self.instance, self.config.lease)
                .await?;
            self.leased.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Settles every task running in this engine, for a server that stops serving: each fails
    /// with `-32603` and [`TaskRecord::RUNNER_STOPPED_MESSAGE`] (a task that ends on its own first
    /// keeps its outcome), its tool is cancelled and given [`EngineConfig::cancel_grace`] to wind
    /// down, and the lease is released. No store is left holding a task that nobody runs. Tasks
    /// started afterwards run as usual (under a new lease). Returns how many tasks were settled.
    pub async fn stop_tasks(&self) -> usize {
        let running: Vec<(TaskId, RunningTask)> = lock(&self.running).drain().collect();
        let outcome = TaskOutcome::Error(RpcError::internal(TaskRecord::RUNNER_STOPPED_MESSAGE));
        let mut settled = 0;
        let mut released = 0;
        for (id, task) in &running {
            let cancel = &task.cancel;
            if let Some(handed_off) = &task.handed_off {
                if self.hand_off(id, handed_off).await {
                    released += 1;
                }
                cancel.cancel();
                continue;
            }
            match self.store.finish(id, outcome.clone()).await {
                Ok(_) => settled += 1,
                Err(StoreError::NotFound) => {}
                Err(e) => tracing::warn!(task = %id, error = %e, "settling a running task failed"),
            }
            cancel.cancel();
        }
        self.drivers.close();
        let _ = tokio::time::timeout(self.config.cancel_grace, self.drivers.wait()).await;
        self.drivers.reopen();
        if self.leased.swap(false, Ordering::AcqRel)
            && let Err(e) = self.store.release_lease(&self.instance).await
        {
            tracing::warn!(error = %e, "releasing the task lease failed");
        }
        if settled > 0 {
            tracing::info!(settled, "server stopping: running tasks failed");
        }
        if released > 0 {
            tracing::info!(
                released,
                "server stopping: durable tasks released for another instance"
            );
        }
        settled + released
    }

    /// A serve loop starts using this engine. The sweeper starts with it, not with the first
    /// task: an instance that serves sweeps the shared store (the lapsed leases of instances that
    /// died, expired tasks, queued durable tasks to claim) though it never runs a task itself.
    pub(crate) fn serve_started(self: &Arc<Self>) {
        self.serving.fetch_add(1, Ordering::AcqRel);
        self.start_sweeper();
    }

    /// Whether a serve loop uses this engine.
    pub(super) fn is_serving(&self) -> bool {
        self.serving.load(Ordering::Acquire) > 0
    }

    /// A serve loop ended; the last one settles the running tasks ([`Self::stop_tasks`]).
    pub(crate) async fn serve_ended(&self) {
        if self.serving.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.stop_tasks().await;
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    /// The TTL a task of this tool gets.
    fn ttl_for(&self, tool: &RegisteredTool, requested: Option<Duration>) -> Duration {
        let base = tool.info.ttl.unwrap_or(self.config.default_ttl);
        match requested {
            Some(asked) if !asked.is_zero() => asked.min(self.config.max_ttl),
            _ => base,
        }
    }

    /// Creates the task and starts the tool. Arguments are decoded first: arguments that do not
    /// fit the tool's input make no task ([`Launched::Refused`], the caller decides what the
    /// client gets), a malformed `arguments` is the call's `-32602`. Returns once `tasks/get`
    /// would find the task.
    pub(crate) async fn launch(self: &Arc<Self>, launch: Launch) -> Result<Launched, RpcError> {
        let prepared = self.prepare(&launch);
        if prepared.new.runner.as_deref() == Some(TaskRecord::QUEUED) {
            // A front: the task waits in the store for a worker; its arguments are checked there.
            self.start_sweeper();
            return Ok(Launched::Task(self.store.create(prepared.new).await?));
        }
        let cancel = CancellationToken::new();
        let ctx = ToolContext::new(prepared.backend(), launch.capabilities, cancel.clone())
            .with_log_level(launch.log_level)
            .with_request(launch.request)
            .with_state(launch.state);
        let tool_name = launch.tool.info.name;
        let fut = match launch.tool.call(ctx, launch.arguments) {
            Ok(fut) => crate::telemetry::timed_tool(tool_name, true, fut),
            Err(err) => {
                return err.into_outcome().map(|result| {
                    Launched::Refused(Refused {
                        result,
                        prepared,
                        start_after: launch.start_after,
                    })
                });
            }
        };
        let caught: CaughtFuture = Box::pin(AssertUnwindSafe(fut).catch_unwind());
        let fut: CaughtFuture = match launch.start_after {
            Some(gate) => Box::pin(async move {
                let _ = gate.await;
                caught.await
            }),
            None => caught,
        };
        match self.store.creates_in_order() {
            true => self.start_fresh(prepared, fut, cancel).await,
            false => self.start(prepared, fut, cancel, |_| {}).await,
        }
        .map(Launched::Task)
    }

    /// Everything about a task but the store record and the running tool.
    pub(crate) fn prepare(&self, launch: &Launch) -> Prepared {
        let ttl = self.ttl_for(&launch.tool, launch.requested_ttl);
        let poll = launch
            .tool
            .info
            .poll_interval
            .unwrap_or(self.config.default_poll_interval);
        let durable = launch.tool.info.durable;
        let mut new = crate::store::NewTask::new(launch.owner.clone(), launch.origin)
            .ttl(Some(ttl))
            .deadline(self.config.deadline)
            .runner(self.instance.clone())
            .poll_interval(Some(poll))
            .tool(launch.tool.info.name);
        let mut backend = TaskBackend::new(
            self.store.clone(),
            new.id.clone(),
            launch.owner.clone(),
            launch.origin,
            launch.channel.clone(),
            launch.progress_token.clone(),
            self.bounds(),
        )
        .with_draining(self.draining.clone());
        if durable {
            let mut run = super::executor::first_run(
                launch.arguments.as_ref(),
                &launch.request,
                &launch.capabilities,
                self.config.durable_attempts,
            );
            let tool = launch.tool.info.name;
            if self.placement(&new.id, tool) == super::executor::Placement::Queue {
                // No run yet: the claim that starts the first makes it run 1.
                run.attempt = 0;
                new = new.runner(TaskRecord::QUEUED);
            }
            new = new.durable(run);
            backend = backend.with_durable(super::backend::DurableCtx::first());
        }
        let backend = Arc::new(backend);
        let status = backend.status_slot();
        Prepared {
            new,
            backend,
            status,
            tool: launch.tool.info.name,
            channel: launch.channel.clone(),
        }
    }

    /// Creates the task in the store, calls `before_run` (once `tasks/get` finds the task, before the
    /// tool goes on), and drives the tool in the background.
    pub(crate) async fn start(
        self: &Arc<Self>,
        prepared: Prepared,
        fut: CaughtFuture,
        cancel: CancellationToken,
        before_run: impl FnOnce(&TaskRecord),
    ) -> Result<TaskRecord, RpcError> {
        self.start_sweeper();
        let slot = self.slots.reserve(&prepared.new.owner)?;
        self.hold_lease().await?;
        let (new, task) = prepared.split();
        let record = self.store.create(new).await?;
        before_run(&record);
        let tool = task.tool;
        let created = Created::Already(record.version, record.status);
        self.drive(task, fut, cancel, slot, created);
        crate::telemetry::task_created(tool);
        Ok(record)
    }

    /// [`start`](Self::start) for a tool that has not begun and needs nothing done before it
    /// goes on, with a store that applies a task's writes in order
    /// ([`creates_in_order`](crate::store::fast::FastPaths::creates_in_order): SQLite's): the
    /// tool starts while its task's creation commits, so that a quick tool's outcome is written
    /// in the same transaction or the next, not one commit later. Nothing is answered sooner:
    /// the caller still gets the task once its creation has committed, and a poll sees the
    /// outcome once that has. If the creation fails, the caller gets that error and the tool is
    /// cancelled (it may have begun its work, as an inline call's tool has when its answer
    /// cannot be sent); whatever it writes for the task fails, as the task does not exist (the
    /// engine's ids carry 128 random bits, so a creation does not fail for an id in use). The
    /// creation is the driver's, not the caller's: a caller that goes away meanwhile leaves a
    /// task that is created and runs all the same, not one created without its tool.
    pub(crate) async fn start_fresh(
        self: &Arc<Self>,
        prepared: Prepared,
        fut: CaughtFuture,
        cancel: CancellationToken,
    ) -> Result<TaskRecord, RpcError> {
        self.start_sweeper();
        let slot = self.slots.reserve(&prepared.new.owner)?;
        self.hold_lease().await?;
        let (new, task) = prepared.split();
        // The driver queues the creation before it first polls the tool.
        let (reply, created) = oneshot::channel();
        self.drive(task, fut, cancel, slot, Created::Creating(new, reply));
        match created.await {
            Ok(created) => Ok(created?),
            Err(_) => Err(StoreError::backend(
                "the task's driver stopped before its creation was known",
            )
            .into()),
        }
    }

    /// Drives the tool of `task` in the background, from its creation on (`created`).
    pub(super) fn drive(
        &self,
        task: Starting,
        fut: CaughtFuture,
        cancel: CancellationToken,
        slot: super::limits::RunningSlot,
        created: Created,
    ) {
        let Starting {
            id,
            owner,
            origin,
            status,
            tool,
            channel,
            durable,
        } = task;
        let handed_off = durable.then(CancellationToken::new);
        lock(&self.running).insert(
            id.clone(),
            RunningTask {
                cancel: cancel.clone(),
                handed_off: handed_off.clone(),
            },
        );
        // The task's own span: its id, tool, era and owner (in `tracing`, a child of the request
        // that started it; in OpenTelemetry, the root of a trace linked to that request).
        let span = crate::telemetry::trace::task_span(|left_out| {
            crate::telemetry::trace::root_span!(
                left_out,
                "task",
                task = %id.as_str(),
                tool,
                era = ?origin,
                owner = %owner.as_str(),
            )
        });
        let run = Run {
            store: self.store.clone(),
            id,
            owner,
            tool,
            cancel,
            grace: self.config.cancel_grace,
            channel,
            _slot: slot,
            _running: crate::telemetry::Held::new(crate::telemetry::Gauge::RunningTasks),
            settling: self.settling.clone(),
            recorded: self.recorded.clone(),
            handed_off,
        };
        let running = self.running.clone();
        self.drivers.spawn(crate::telemetry::trace::instrument(
            async move {
                let id = run.id.clone();
                run.drive(fut, status, created).await;
                lock(&running).remove(&id);
            },
            span,
        ));
    }

    /// When the tool of task `id`, of `owner`, has returned in this engine and its outcome is
    /// being recorded: a future that resolves once it is (or the recording gave up). `None`
    /// otherwise, which is nearly always, and for another owner's task. A `tasks/get` waits on
    /// it for a moment (see `server/tasks.rs`), so that a client polling right after the tool
    /// returned sees the task ended instead of polling again while the store commits.
    pub(crate) fn settling(
        &self,
        id: &TaskId,
        owner: &Owner,
    ) -> Option<impl Future<Output = ()> + Send + use<>> {
        let mut recorded = self.settling.watch(id, owner)?;
        Some(async move {
            // The sender goes when the outcome is recorded: `changed` then fails.
            let _ = recorded.changed().await;
        })
    }

    /// Starts the background sweeper once. It holds only a weak reference: it ends with the engine.
    ///
    /// Each round renews this engine's lease (while held), then applies the store's lifetime
    /// rules. The time is read before the renewal, so the lease this engine just renewed is live
    /// at the time its own sweep judges by.
    ///
    /// **After an outage** (the store could not be reached, by the renewal or the sweep), the
    /// sweeper probes the store with a renewal each round, and once the store answers again it
    /// applies no lifetime rule for a whole lease period (by the store's clock), while it keeps
    /// renewing. Every live instance sharing the store saw the outage too and renews within that
    /// period, so no instance's tasks are failed because its lease lapsed while nobody could
    /// renew; an instance that died meanwhile is found out one lease period later than
    /// otherwise, and deadlines and retention act as late.
    pub(super) fn start_sweeper(self: &Arc<Self>) {
        self.sweeper.get_or_init(|| {
            let weak: Weak<TaskEngine> = Arc::downgrade(self);
            let every = self.config.sweep_every.min(self.config.lease / 3);
            let every = every.max(Duration::from_millis(1));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let mut outage = Outage::default();
                loop {
                    tick.tick().await;
                    let Some(engine) = weak.upgrade() else { return };
                    engine.sweep(&mut outage).await;
                }
            });
        });
    }

    /// Over a store that may forget writes it acknowledged: once it reconnected (its epoch
    /// moved on), the outcomes recorded here lately that it forgot are written again
    /// (`recorded.rs`); tried again each round until the store answers.
    async fn restore_forgotten(&self, outage: &mut Outage) {
        let Some(epoch) = self.store.forgetful_epoch() else {
            return;
        };
        if outage.epoch == Some(epoch) {
            return;
        }
        if outage.epoch.is_some() {
            let running = |id: &TaskId| lock(&self.running).contains_key(id);
            if let Err(e) = self.recorded.restore(&*self.store, running).await {
                tracing::warn!(error = %e, "looking for the outcomes the task store may have forgotten failed; trying again");
                return;
            }
        }
        outage.epoch = Some(epoch);
    }

    /// One round of the sweeper (see [`start_sweeper`](Self::start_sweeper)).
    async fn sweep(self: &Arc<Self>, outage: &mut Outage) {
        let now = self.store.now();
        if self.leased.load(Ordering::Acquire) || outage.down {
            match self
                .store
                .renew_lease(&self.instance, self.config.lease)
                .await
            {
                Ok(()) if outage.down => {
                    outage.renewed_at = Some(tokio::time::Instant::now());
                    self.unfence().await;
                    outage.down = false;
                    outage.quiet_until = Some(now + self.config.lease);
                    tracing::info!(
                        lease = ?self.config.lease,
                        "the task store answers again; no task is judged by its lease for one lease period"
                    );
                }
                Ok(()) => {
                    outage.renewed_at = Some(tokio::time::Instant::now());
                    self.unfence().await;
                }
                Err(e) => {
                    if !std::mem::replace(&mut outage.down, true) {
                        tracing::warn!(error = %e, "the task store cannot be reached; renewing the task lease failed");
                    }
                    // Past the lease, another instance may have claimed this one's durable tasks:
                    // their runs here stop, so that no body runs twice at the same time.
                    if outage
                        .renewed_at
                        .is_some_and(|at| at.elapsed() >= self.config.lease)
                    {
                        self.fence();
                    }
                    return;
                }
            }
        }
        self.restore_forgotten(outage).await;
        if outage.quiet_until.is_some_and(|until| now < until) {
            return;
        }
        outage.quiet_until = None;
        match self.store.expire(now).await {
            Ok(report) => {
                if !report.failed.is_empty() || !report.removed.is_empty() {
                    tracing::debug!(
                        failed = report.failed.len(),
                        removed = report.removed.len(),
                        "swept expired tasks"
                    );
                }
                for failed in &report.failed {
                    let exhausted = failed.durable.as_ref().is_some_and(|d| {
                        failed.status_message == Some(TaskRecord::exhausted_message(d.attempt))
                    });
                    if exhausted {
                        crate::telemetry::durable_exhausted();
                    }
                }
                let mut queued = report.queued;
                queued.extend(report.released.into_iter().map(|record| record.id));
                if !queued.is_empty() {
                    self.claim_queued(queued).await;
                }
            }
            Err(e) => {
                outage.down = true;
                tracing::warn!(error = %e, "sweeping expired tasks failed");
            }
        }
    }
}

/// What the sweeper knows of the store's reachability.
#[derive(Debug, Default)]
struct Outage {
    /// When the lease was last renewed.
    renewed_at: Option<tokio::time::Instant>,
    /// The last call to the store failed.
    down: bool,
    /// The store answered again after an outage: no lifetime rule is applied before this time
    /// (by the store's clock).
    quiet_until: Option<std::time::SystemTime>,
    /// The store's `forgetful_epoch` when the outcomes it may have forgotten were last restored.
    epoch: Option<u64>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
