//! Runs tools as tasks: creates the task in the store, runs the tool in the background, routes the
//! tool's input requests through the store (modern) or to the client (legacy), ends the task with
//! the tool's outcome, notices cancellation and expiry, and sweeps expired tasks.
//!
//! Each engine is one *instance* (a random id): the tasks it runs are stamped with it
//! ([`NewTask::runner`](crate::store::NewTask::runner)) and it keeps a lease in the store, renewed
//! on every sweep, so that when the process dies the tasks it ran fail once the lease lapses
//! (whichever instance sweeps). When serving ends, [`TaskEngine::stop_tasks`] settles the tasks
//! still running here.

use crate::protocol::CallToolResult;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOrigin, TaskOutcome, TaskStatus};
use crate::protocol::{ClientCapabilities, InputRequest, meta};
use crate::store::TaskRecord;
use crate::store::{StoreError, TaskStore, machine};
use crate::tool::{
    ContextBackend, InputError, InputFuture, RegisteredTool, RequestInfo, StateMap, ToolContext,
};
use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The way back to a legacy client: server-to-client requests and notifications on its session.
/// Implemented by the server's connections; the engine knows only this trait.
pub trait ClientChannel: Send + Sync + 'static {
    /// Sends a request and waits for the client's answer.
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + '_>>;
    /// Sends a notification.
    fn notify(&self, method: &str, params: Value);
}

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
    pub origin: TaskOrigin,
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
    pub start_after: Option<tokio::sync::oneshot::Receiver<()>>,
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

/// A tool's future with panics caught: what a running task drives.
/// The first wait before recording a task's outcome again after the store failed.
const FINISH_RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between attempts to record a task's outcome.
const FINISH_RETRY_MAX: Duration = Duration::from_secs(5);

pub(crate) type CaughtFuture = Pin<
    Box<
        dyn Future<Output = Result<Result<CallToolResult, RpcError>, Box<dyn std::any::Any + Send>>>
            + Send,
    >,
>;

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
}

/// The task engine. Holds the store; keeps nothing about a task that the store does not have
/// (beyond the handles of the tools it runs, and how many run, for the limits).
pub struct TaskEngine {
    store: Arc<dyn TaskStore>,
    config: EngineConfig,
    sweeper: OnceLock<()>,
    /// This engine's instance id: the runner of its tasks, the name of its lease.
    instance: String,
    /// Whether the lease is held (taken, and not released by `stop_tasks`).
    leased: AtomicBool,
    /// The tasks running here, with their tools' cancellation tokens.
    running: Arc<Mutex<HashMap<TaskId, CancellationToken>>>,
    /// The drivers of those tasks.
    drivers: TaskTracker,
    /// Serve loops using this engine; the last one to end settles the tasks.
    serving: AtomicUsize,
    /// How many tasks run here, per owner and in all, for the limits.
    slots: Arc<Running>,
}

/// The tasks this engine runs, counted for [`EngineConfig::max_tasks`] and
/// [`EngineConfig::max_tasks_per_owner`].
#[derive(Default)]
struct Running {
    counts: Mutex<(usize, HashMap<Owner, usize>)>,
}

impl Running {
    /// Takes a place for one more task of `owner`, or says which limit is in the way.
    fn reserve(
        self: &Arc<Self>,
        owner: &Owner,
        config: &EngineConfig,
    ) -> Result<RunningSlot, RpcError> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_owner) = &mut *counts;
        let mine = per_owner.get(owner).copied().unwrap_or(0);
        if mine >= config.max_tasks_per_owner {
            return Err(RpcError::limit_reached(
                "tasks_per_owner",
                config.max_tasks_per_owner,
                "this requestor already has as many tasks running as it may; wait for one to end or cancel one",
            ));
        }
        if *total >= config.max_tasks {
            return Err(RpcError::limit_reached(
                "tasks",
                config.max_tasks,
                "the server is running as many tasks as it may; try again later",
            ));
        }
        *total += 1;
        *per_owner.entry(owner.clone()).or_default() += 1;
        Ok(RunningSlot {
            running: self.clone(),
            owner: owner.clone(),
        })
    }
}

/// One task's place in [`Running`], given back when the task's driver ends.
struct RunningSlot {
    running: Arc<Running>,
    owner: Owner,
}

impl Drop for RunningSlot {
    fn drop(&mut self) {
        let mut counts = self
            .running
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (total, per_owner) = &mut *counts;
        *total -= 1;
        if let Some(n) = per_owner.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                per_owner.remove(&self.owner);
            }
        }
    }
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
        Arc::new(TaskEngine {
            store,
            config,
            sweeper: OnceLock::new(),
            instance: format!("engine-{}", TaskId::generate().as_str()),
            leased: AtomicBool::new(false),
            running: Arc::default(),
            drivers: TaskTracker::new(),
            serving: AtomicUsize::new(0),
            slots: Arc::default(),
        })
    }

    /// This engine's instance id: recorded as the runner of every task it starts, and the name of
    /// its lease in the store.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// How many tasks are running in this engine.
    pub fn running(&self) -> usize {
        lock(&self.running).len()
    }

    /// Takes the lease if it is not held (before the first task is created, and again after
    /// [`Self::stop_tasks`]), so that no sweep sees a task of this engine without a live lease.
    async fn hold_lease(&self) -> Result<(), StoreError> {
        if !self.leased.load(Ordering::Acquire) {
            self.store
                .renew_lease(&self.instance, self.config.lease)
                .await?;
            self.leased.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Settles every task running in this engine, for a server that stops serving: each fails
    /// with `-32603` and [`machine::RUNNER_STOPPED_MESSAGE`] (a task that ends on its own first
    /// keeps its outcome), its tool is cancelled and given [`EngineConfig::cancel_grace`] to wind
    /// down, and the lease is released. No store is left holding a task that nobody runs. Tasks
    /// started afterwards run as usual (under a new lease). Returns how many tasks were settled.
    pub async fn stop_tasks(&self) -> usize {
        let running: Vec<(TaskId, CancellationToken)> = lock(&self.running).drain().collect();
        let outcome = TaskOutcome::Error(RpcError::internal(machine::RUNNER_STOPPED_MESSAGE));
        let mut settled = 0;
        for (id, cancel) in &running {
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
        settled
    }

    /// A serve loop starts using this engine.
    pub(crate) fn serve_started(&self) {
        self.serving.fetch_add(1, Ordering::AcqRel);
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

    /// Creates the task and starts the tool. Arguments are decoded first, so bad arguments are a
    /// `-32602` for the call, not a failed task. Returns once `tasks/get` would find the task.
    pub async fn launch(self: &Arc<Self>, launch: Launch) -> Result<TaskRecord, RpcError> {
        self.launch_with(launch, |backend| backend).await
    }

    /// As [`launch`](Self::launch), with the tool's context backend wrapped by `wrap` (the task
    /// fallback's tasks refuse input nobody could answer).
    pub(crate) async fn launch_with(
        self: &Arc<Self>,
        launch: Launch,
        wrap: impl FnOnce(Arc<dyn ContextBackend>) -> Arc<dyn ContextBackend>,
    ) -> Result<TaskRecord, RpcError> {
        let prepared = self.prepare(&launch);
        let cancel = CancellationToken::new();
        let ctx = ToolContext::new(
            wrap(prepared.backend()),
            launch.capabilities,
            cancel.clone(),
        )
        .with_log_level(launch.log_level)
        .with_request(launch.request)
        .with_state(launch.state);
        let fut = launch
            .tool
            .call(ctx, launch.arguments)
            .map_err(|e| e.to_rpc())?;
        let caught: CaughtFuture = Box::pin(AssertUnwindSafe(fut).catch_unwind());
        let fut: CaughtFuture = match launch.start_after {
            Some(gate) => Box::pin(async move {
                let _ = gate.await;
                caught.await
            }),
            None => caught,
        };
        self.start(prepared, fut, cancel, |_| {}).await
    }

    /// Everything about a task but the store record and the running tool.
    pub(crate) fn prepare(&self, launch: &Launch) -> Prepared {
        let ttl = self.ttl_for(&launch.tool, launch.requested_ttl);
        let poll = launch
            .tool
            .info
            .poll_interval
            .unwrap_or(self.config.default_poll_interval);
        let new = crate::store::NewTask::new(launch.owner.clone(), launch.origin)
            .ttl(Some(ttl))
            .deadline(self.config.deadline)
            .runner(self.instance.clone())
            .poll_interval(Some(poll));
        let status = Arc::new(StatusSlot::default());
        let backend = Arc::new(TaskBackend {
            store: self.store.clone(),
            id: new.id.clone(),
            owner: launch.owner.clone(),
            origin: launch.origin,
            channel: launch.channel.clone(),
            counter: AtomicUsize::new(0),
            status: status.clone(),
            progress_token: launch.progress_token.clone(),
            shown: Default::default(),
            outstanding: Arc::new(AtomicUsize::new(0)),
            max_outstanding: self.config.max_inputs_per_task,
        });
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
        let Prepared {
            new,
            status,
            tool,
            channel,
            ..
        } = prepared;
        let id = new.id.clone();
        let slot = self.slots.reserve(&new.owner, &self.config)?;
        self.hold_lease().await?;
        let record = self.store.create(new).await?;
        before_run(&record);
        lock(&self.running).insert(id.clone(), cancel.clone());
        let run = Run {
            store: self.store.clone(),
            id,
            tool,
            cancel,
            grace: self.config.cancel_grace,
            channel,
            _slot: slot,
        };
        let running = self.running.clone();
        let created = (record.version, record.status);
        // The task's own span: its id, tool, era and owner (a child of the request that started it).
        let span = tracing::info_span!(
            "task",
            task = %record.id.as_str(),
            tool = run.tool,
            era = ?record.origin,
            owner = %record.owner.as_str(),
        );
        self.drivers.spawn(tracing::Instrument::instrument(
            async move {
                let id = run.id.clone();
                run.drive(fut, status, created).await;
                lock(&running).remove(&id);
            },
            span,
        ));
        Ok(record)
    }

    /// Starts the background sweeper once. It holds only a weak reference: it ends with the engine.
    ///
    /// Each round renews this engine's lease (while held), then applies the store's lifetime
    /// rules. The time is read before the renewal, so the lease this engine just renewed is live
    /// at the time its own sweep judges by.
    fn start_sweeper(self: &Arc<Self>) {
        self.sweeper.get_or_init(|| {
            let weak: Weak<TaskEngine> = Arc::downgrade(self);
            let every = self.config.sweep_every.min(self.config.lease / 3);
            let every = every.max(Duration::from_millis(1));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(engine) = weak.upgrade() else { return };
                    let now = engine.store.now();
                    if engine.leased.load(Ordering::Acquire)
                        && let Err(e) = engine
                            .store
                            .renew_lease(&engine.instance, engine.config.lease)
                            .await
                    {
                        tracing::warn!(error = %e, "renewing the task lease failed");
                    }
                    match engine.store.expire(now).await {
                        Ok(report) if !report.failed.is_empty() || !report.removed.is_empty() => {
                            tracing::debug!(
                                failed = report.failed.len(),
                                removed = report.removed.len(),
                                "swept expired tasks"
                            );
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "sweeping expired tasks failed"),
                    }
                }
            });
        });
    }
}

/// One running task.
struct Run {
    store: Arc<dyn TaskStore>,
    id: TaskId,
    tool: &'static str,
    cancel: CancellationToken,
    grace: Duration,
    channel: Option<Arc<dyn ClientChannel>>,
    /// Held while the task runs.
    _slot: RunningSlot,
}

impl Run {
    /// Drives the tool of a task created at version and status `created` until it ends.
    async fn drive(
        self,
        mut run: CaughtFuture,
        status: Arc<StatusSlot>,
        created: (u64, TaskStatus),
    ) {
        let (mut seen, mut last_status) = created;
        loop {
            tokio::select! {
                // The tool first: a tool that is done at once ends the task without a waiter on
                // the store ever being set up.
                biased;
                out = &mut run => {
                    if let Some(message) = status.take() {
                        let _ = self.store.set_status_message(&self.id, Some(message)).await;
                    }
                    let out = out.unwrap_or_else(|panic| Err(super::panic_error(self.tool, &*panic)));
                    if let Err(error) = &out {
                        // A failed task says why in its status message too (SEP-2663 SHOULD).
                        let message = format!("Tool execution failed: {}", error.message);
                        let _ = self.store.set_status_message(&self.id, Some(message)).await;
                    }
                    let outcome = || match &out {
                        Ok(result) => TaskOutcome::Result(serde_json::to_value(result).unwrap_or(Value::Null)),
                        Err(error) => TaskOutcome::Error(error.clone()),
                    };
                    self.record_outcome(outcome, &mut last_status).await;
                    return;
                }
                () = status.changed() => {
                    if let Some(message) = status.take()
                        && let Err(e) = self.store.set_status_message(&self.id, Some(message)).await
                    {
                        tracing::debug!(task = %self.id, error = %e, "status message not recorded");
                    }
                }
                changed = self.next_change(seen) => match changed {
                    Ok((version, status, record)) => {
                        seen = version;
                        match &record {
                            Some(record) => self.notify(record, &mut last_status),
                            None => last_status = status,
                        }
                        if status.is_terminal() {
                            // Cancelled or expired elsewhere: tell the tool, give it a moment.
                            tracing::debug!(task = %self.id, %status, "the task ended outside its tool; stopping the tool");
                            self.cancel.cancel();
                            let _ = tokio::time::timeout(self.grace, &mut run).await;
                            return;
                        }
                    }
                    Err(StoreError::NotFound) => {
                        self.cancel.cancel();
                        let _ = tokio::time::timeout(self.grace, &mut run).await;
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(task = %self.id, error = %e, "watching the task failed; retrying");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        }
    }

    /// Records the tool's outcome (made by `outcome`, again for each attempt). While the store
    /// itself fails (`StoreError::Backend`: Redis unreachable, a SQLite file locked), it tries
    /// again, waiting 100 ms, then twice as long each time up to 5 s, so an outage does not lose
    /// the result: it is kept until the store takes it, the task ends some other way (the store
    /// then refuses it), or the server shuts down (the task's cancel token; then it is lost, and
    /// said so in the log).
    async fn record_outcome(
        &self,
        outcome: impl Fn() -> TaskOutcome,
        last_status: &mut TaskStatus,
    ) {
        let mut delay = FINISH_RETRY_FIRST;
        let mut failures = 0u32;
        loop {
            // Only a legacy session is told about the ended task: nobody else needs the record
            // (with its result) back.
            let finished = if self.channel.is_some() {
                self.store
                    .finish(&self.id, outcome())
                    .await
                    .map(|record| self.notify(&record, last_status))
            } else {
                self.store
                    .finish_status(&self.id, outcome())
                    .await
                    .map(|_| ())
            };
            match finished {
                Ok(()) => {
                    if failures > 0 {
                        tracing::info!(task = %self.id, failures, "the task's outcome is recorded after the store came back");
                    }
                    return;
                }
                Err(StoreError::Backend(e)) if !self.cancel.is_cancelled() => {
                    if failures == 0 {
                        tracing::warn!(task = %self.id, error = %e, "recording the task's outcome failed; retrying until the store takes it");
                    }
                    failures += 1;
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = self.cancel.cancelled() => {}
                    }
                    delay = (delay * 2).min(FINISH_RETRY_MAX);
                }
                Err(e) => {
                    tracing::error!(task = %self.id, error = %e, failures, "the task's outcome could not be recorded; it is lost");
                    return;
                }
            }
        }
    }

    /// The task's next change after version `seen`: its version and status, with the record
    /// only when a legacy session is told about it (a copy of a record is not free).
    async fn next_change(
        &self,
        seen: u64,
    ) -> Result<(u64, TaskStatus, Option<TaskRecord>), StoreError> {
        if self.channel.is_some() {
            let record = self.store.changed(&self.id, seen).await?;
            Ok((record.version, record.status, Some(record)))
        } else {
            let (version, status) = self.store.changed_status(&self.id, seen).await?;
            Ok((version, status, None))
        }
    }

    /// Legacy sessions get `notifications/tasks/status` on every status change.
    fn notify(&self, record: &TaskRecord, last: &mut TaskStatus) {
        if record.status == *last {
            return;
        }
        *last = record.status;
        if let Some(channel) = &self.channel {
            channel.notify(
                "notifications/tasks/status",
                record.legacy_status_notification_params(),
            );
        }
    }
}

/// The backend of a tool running as a task.
pub(crate) struct TaskBackend {
    store: Arc<dyn TaskStore>,
    id: TaskId,
    owner: Owner,
    origin: TaskOrigin,
    channel: Option<Arc<dyn ClientChannel>>,
    counter: AtomicUsize,
    status: Arc<StatusSlot>,
    progress_token: Option<Value>,
    /// The last status and the last progress the tool reported; the status message shows both.
    shown: Mutex<StatusLine>,
    /// Input requests of this task waiting for an answer, for
    /// [`EngineConfig::max_inputs_per_task`].
    outstanding: Arc<AtomicUsize>,
    max_outstanding: usize,
}

/// One outstanding input request of a task, counted while it waits.
struct Asking(Arc<AtomicUsize>);

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a task's `statusMessage` is made of. `ctx.status(..)` replaces the status, `ctx.progress(..)`
/// replaces the progress; neither erases the other. The message is the status alone, the progress
/// alone (`3/10: copying`), or both: `{status} ({progress})`, e.g. `importing (3/10: copying)`.
#[derive(Debug, Default)]
struct StatusLine {
    status: Option<String>,
    progress: Option<String>,
}

impl StatusLine {
    fn message(&self) -> String {
        match (&self.status, &self.progress) {
            (Some(s), Some(p)) => format!("{s} ({p})"),
            (Some(s), None) => s.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => String::new(),
        }
    }
}

/// The newest status message a tool set that is not in the store yet. The task's driver writes
/// it soon after; an input request writes it first, so a client that sees `input_required` also
/// sees the message the tool set before asking. Newest wins: a message overtaken before it
/// reached the store was never visible to anyone.
#[derive(Default)]
pub(crate) struct StatusSlot {
    pending: Mutex<Option<String>>,
    notify: tokio::sync::Notify,
}

impl StatusSlot {
    fn set(&self, message: String) {
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        self.notify.notify_one();
    }

    fn take(&self) -> Option<String> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Resolves once a message was set since the last time this resolved.
    async fn changed(&self) {
        self.notify.notified().await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn store_err(e: StoreError) -> InputError {
    match e {
        StoreError::NotFound | StoreError::Terminal(_) => InputError::Cancelled,
        other => InputError::InvalidResponse(format!("the task store failed: {other}")),
    }
}

/// Withdraws an input request nobody waits for any more (the tool dropped the future).
struct Outstanding {
    store: Arc<dyn TaskStore>,
    id: TaskId,
    key: Option<String>,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let store = self.store.clone();
            let id = self.id.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = store.withdraw_input_request(&id, &key).await;
                });
            }
        }
    }
}

impl TaskBackend {
    fn next_key(&self, method: &str) -> String {
        super::input_key(method, self.counter.fetch_add(1, Ordering::SeqCst))
    }
}

impl ContextBackend for TaskBackend {
    fn input(&self, request: InputRequest) -> InputFuture {
        let key = match &request.key {
            Some(key) => key.clone(),
            None => self.next_key(&request.method),
        };
        let store = self.store.clone();
        let id = self.id.clone();
        let owner = self.owner.clone();
        let origin = self.origin;
        let channel = self.channel.clone();
        let status = self.status.clone();
        let asking = if self.outstanding.fetch_add(1, Ordering::SeqCst) >= self.max_outstanding {
            self.outstanding.fetch_sub(1, Ordering::SeqCst);
            let max = self.max_outstanding;
            return Box::pin(async move {
                Err(InputError::LimitReached(RpcError::limit_reached(
                    "inputs_per_task",
                    max,
                    "this task already waits on as many input requests as it may",
                )))
            });
        } else {
            Asking(self.outstanding.clone())
        };
        Box::pin(async move {
            let _asking = asking;
            if let Some(message) = status.take() {
                store
                    .set_status_message(&id, Some(message))
                    .await
                    .map_err(store_err)?;
            }
            // Only the 2025-11-25 path sends the request itself; the store takes the only copy
            // otherwise (a schema is a tree: copying it is not free).
            let sent = matches!((origin, &channel), (TaskOrigin::Legacy, Some(_)))
                .then(|| request.clone());
            let version = store
                .add_input_request(&id, key.clone(), request)
                .await
                .map_err(store_err)?;
            let mut guard = Outstanding {
                store: store.clone(),
                id: id.clone(),
                key: Some(key.clone()),
            };
            let answer = match (sent, channel) {
                (Some(request), Some(channel)) => {
                    // 2025-11-25: an ordinary server-to-client request tagged with the task.
                    let mut params = request.params;
                    if !params.is_object() {
                        params = json!({});
                    }
                    let meta = params
                        .as_object_mut()
                        .expect("object")
                        .entry("_meta")
                        .or_insert_with(|| json!({}));
                    if let Value::Object(m) = meta {
                        m.insert(meta::RELATED_TASK.into(), json!({ "taskId": id.as_str() }));
                    }
                    let answer = channel
                        .request(&request.method, params)
                        .await
                        .map_err(InputError::from_rpc)?;
                    let mut responses = Map::new();
                    responses.insert(key.clone(), answer);
                    store
                        .deliver_responses(&id, &owner, responses)
                        .await
                        .map_err(store_err)?;
                    wait_for_answer(&*store, &id, &key, version).await?
                }
                _ => wait_for_answer(&*store, &id, &key, version).await?,
            };
            guard.key = None;
            Ok(answer)
        })
    }

    fn status(&self, message: String) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        shown.status = Some(message);
        self.status.set(shown.message());
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        // Progress notifications are not part of tasks in 2026-07-28; the status message carries
        // it, next to the status the tool set (see `StatusLine`).
        let text = match (total, &message) {
            (Some(t), Some(m)) => format!("{progress}/{t}: {m}"),
            (Some(t), None) => format!("{progress}/{t}"),
            (None, Some(m)) => format!("{progress}: {m}"),
            (None, None) => format!("{progress}"),
        };
        {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            shown.progress = Some(text);
            self.status.set(shown.message());
        }
        if let (TaskOrigin::Legacy, Some(channel), Some(token)) =
            (self.origin, &self.channel, &self.progress_token)
        {
            let mut params = json!({ "progressToken": token, "progress": progress });
            if let Some(t) = total {
                params["total"] = json!(t);
            }
            if let Some(m) = message {
                params["message"] = json!(m);
            }
            channel.notify("notifications/progress", params);
        }
    }

    fn log(&self, mut params: Value) {
        // 2025-11-25: on the session, tagged with the task. The modern tasks extension has no
        // stream for a task's log messages; they are dropped.
        if let (TaskOrigin::Legacy, Some(channel)) = (self.origin, &self.channel) {
            params["_meta"] = json!({ meta::RELATED_TASK: { "taskId": self.id.as_str() } });
            channel.notify("notifications/message", params);
        }
    }

    fn task_id(&self) -> Option<&str> {
        Some(self.id.as_str())
    }
}

/// Waits, through the store's own wake-ups, until `key` is answered; the task ending means the
/// tool was cancelled.
async fn wait_for_answer(
    store: &dyn TaskStore,
    id: &TaskId,
    key: &str,
    mut seen: u64,
) -> Result<Value, InputError> {
    loop {
        if let Some(answer) = store.take_response(id, key).await.map_err(store_err)? {
            return Ok(answer);
        }
        let (version, status) = store.changed_status(id, seen).await.map_err(store_err)?;
        if status.is_terminal() {
            tracing::debug!(task = %id, %status, "the task ended while its tool waited for input; stopping the tool");
            return Err(InputError::Cancelled);
        }
        seen = version;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ManualClock, MemoryTaskStore, NewTask};

    #[test]
    fn the_status_message_shows_the_status_and_the_progress_side_by_side() {
        let mut line = StatusLine {
            status: None,
            progress: Some("3/10: copying".into()),
        };
        assert_eq!(line.message(), "3/10: copying");
        line.status = Some("importing".into());
        assert_eq!(line.message(), "importing (3/10: copying)");
        line.progress = None;
        assert_eq!(line.message(), "importing");
    }

    /// A status message set just before asking for input is in the store by the time the input
    /// request is: a client that sees `input_required` sees the message with it, whether or not
    /// the task's driver got round to writing it (here there is no driver at all).
    #[tokio::test]
    async fn the_status_set_before_an_input_request_lands_with_it() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
        let owner = Owner::new("a");
        let record = store
            .create(NewTask::new(owner.clone(), TaskOrigin::Modern))
            .await
            .unwrap();
        let backend = TaskBackend {
            store: store.clone(),
            id: record.id.clone(),
            owner: owner.clone(),
            origin: TaskOrigin::Modern,
            channel: None,
            counter: AtomicUsize::new(0),
            status: Arc::new(StatusSlot::default()),
            progress_token: None,
            shown: Default::default(),
            outstanding: Arc::new(AtomicUsize::new(0)),
            max_outstanding: 8,
        };
        backend.status("first".into());
        backend.status("planning".into());
        let asking = tokio::spawn(backend.input(InputRequest::new(
            "elicitation/create",
            serde_json::json!({ "message": "?" }),
        )));
        let mut seen = record.version;
        let now = loop {
            let now = store.changed(&record.id, seen).await.unwrap();
            seen = now.version;
            if now.status == TaskStatus::InputRequired {
                break now;
            }
        };
        assert_eq!(now.status_message.as_deref(), Some("planning"));
        asking.abort();
    }

    /// The sweeper asks the store what time it is: with a manual clock, a task reaches its
    /// deadline when the clock says so, not when the system's does.
    #[tokio::test]
    async fn the_sweeper_expires_tasks_by_the_store_clock() {
        let clock = ManualClock::new();
        let store = Arc::new(MemoryTaskStore::with_clock(Arc::new(clock.clone())));
        let config = EngineConfig {
            default_ttl: Duration::from_secs(60),
            deadline: Some(Duration::from_secs(60)),
            lease: Duration::from_secs(10),
            default_poll_interval: Duration::from_secs(1),
            max_ttl: Duration::from_secs(3600),
            cancel_grace: Duration::from_secs(1),
            sweep_every: Duration::from_millis(5),
            max_tasks: 10,
            max_tasks_per_owner: 10,
            max_inputs_per_task: 8,
        };
        let engine = TaskEngine::new(store.clone(), config);
        let owner = Owner::new("a");
        let task = NewTask::new(owner.clone(), TaskOrigin::Modern)
            .ttl(Some(Duration::from_secs(60)))
            .deadline(Some(Duration::from_secs(60)));
        let record = store.create(task).await.unwrap();
        engine.start_sweeper();

        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = store.get(&record.id, &owner).await.unwrap().unwrap();
        assert_eq!(
            now.status,
            TaskStatus::Working,
            "the manual clock has not moved"
        );

        clock.advance(Duration::from_secs(61));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let now = store.get(&record.id, &owner).await.unwrap().unwrap();
            if now.status == TaskStatus::Failed {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "not swept: {now:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
