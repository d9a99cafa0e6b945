//! Durable tasks in the engine (`#[tool(durable)]`): what a new durable task keeps, claiming the
//! queued ones the sweeper finds and running their body again, and letting go of them when the
//! server drains or stops.
//!
//! The store decides who runs a durable task: when an instance dies (its lease lapses) or lets
//! go of one, the task is *queued* (see `store/durable.rs`); every instance that runs durable
//! tasks tries to claim the queued tasks its sweeps find, and the store gives each to exactly
//! one. The claimer runs the tool's body again from the stored arguments and caller, with the
//! answers the task already received and its last checkpoint.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::backend::{DurableCtx, TaskBackend};
use super::engine::{TaskEngine, lock};
use super::executor::{Placement, Resume};
use super::run::{CaughtFuture, Created};
use crate::protocol::task::{TaskId, TaskOutcome};
use crate::protocol::{ClientCapabilities, RpcError};
use crate::store::{DurableRun, StoreError, TaskRecord};
use crate::tool::{Principal, RequestInfo, ToolContext};

impl DurableCtx {
    /// What a run of a claimed task starts from: its run number, checkpoint and answers.
    fn resumed(record: &TaskRecord, run: &DurableRun) -> Self {
        DurableCtx {
            attempt: run.attempt,
            resumed: run.checkpoint.clone(),
            kept: record.answers.clone(),
            delivered: record.input_responses.keys().cloned().collect(),
            outstanding: record.input_requests.keys().cloned().collect(),
        }
    }

    /// A first run.
    pub(super) fn first() -> Self {
        DurableCtx {
            attempt: 1,
            resumed: None,
            kept: BTreeMap::new(),
            delivered: BTreeSet::new(),
            outstanding: BTreeSet::new(),
        }
    }
}

impl TaskEngine {
    /// Claims each of these queued durable tasks that this engine can run, and runs it.
    pub(super) async fn claim_queued(self: &Arc<Self>, ids: Vec<TaskId>) {
        let Some(resume) = self.resume.get() else {
            return;
        };
        // Not on a front, nor once the server drains or has stopped serving (it just let go of
        // its own durable tasks, for another instance).
        if !self.config.runs_durable || self.draining.is_cancelled() || !self.is_serving() {
            return;
        }
        for id in ids {
            if let Err(e) = self.claim_one(resume, &id).await {
                tracing::warn!(task = %id, error = %e, "claiming a queued durable task failed");
            }
        }
    }

    /// Claims the queued durable task `id` and runs its body here: whether it did (`false`:
    /// not queued any more, or no durable tool of that name here).
    pub(crate) async fn run_queued(self: &Arc<Self>, id: &TaskId) -> Result<bool, RpcError> {
        let Some(resume) = self.resume.get() else {
            return Ok(false);
        };
        self.start_sweeper();
        self.claim_one(resume, id).await
    }

    async fn claim_one(self: &Arc<Self>, resume: &Resume, id: &TaskId) -> Result<bool, RpcError> {
        if lock(&self.running).contains_key(id) {
            return Ok(false);
        }
        self.hold_lease().await?;
        let Some(record) = self.store.claim(id, &self.instance).await? else {
            return Ok(false);
        };
        let tool = record
            .tool
            .as_deref()
            .and_then(|name| resume.tools.get(name))
            .cloned();
        let (Some(tool), Some(run)) = (tool, record.durable.as_deref()) else {
            // Claimed, but this server has no such durable tool: another may. Let go of it.
            self.store.release(id, &self.instance).await?;
            return Ok(false);
        };
        let slot = match self.slots.reserve(&record.owner) {
            Ok(slot) => slot,
            Err(e) => {
                self.store.release(id, &self.instance).await?;
                return Err(e);
            }
        };
        crate::telemetry::durable_resumed();
        tracing::info!(task = %id, tool = tool.info.name, attempt = run.attempt, "resuming a durable task");
        let capabilities: ClientCapabilities =
            serde_json::from_value(run.capabilities.clone()).unwrap_or_default();
        let principal = run.caller.as_ref().map(|caller| {
            let principal = Principal::new(caller.id.clone());
            match &caller.scopes {
                Some(scopes) => principal.with_scopes(scopes.iter().cloned()),
                None => principal,
            }
        });
        let request =
            RequestInfo::new(record.origin, run.protocol_version.clone()).with_principal(principal);
        let backend = Arc::new(
            TaskBackend::new(
                self.store.clone(),
                record.id.clone(),
                record.owner.clone(),
                record.origin,
                None,
                None,
                self.bounds(),
            )
            .with_durable(DurableCtx::resumed(&record, run))
            .with_draining(self.draining.clone()),
        );
        let status = backend.status_slot();
        let cancel = CancellationToken::new();
        let ctx = ToolContext::new(backend, Arc::new(capabilities), cancel.clone())
            .with_request(Arc::new(request))
            .with_state(resume.state.clone());
        let fut: CaughtFuture = match tool.call(ctx, run.arguments.clone()) {
            Ok(fut) => {
                let fut = crate::telemetry::timed_tool(tool.info.name, true, fut);
                Box::pin(std::panic::AssertUnwindSafe(fut).catch_unwind())
            }
            Err(err) => {
                let outcome = err
                    .into_outcome()
                    .map_or_else(TaskOutcome::Error, |result| {
                        TaskOutcome::Result(serde_json::to_value(result).unwrap_or(Value::Null))
                    });
                self.store.finish(id, outcome).await?;
                return Ok(true);
            }
        };
        let starting = super::engine::Starting {
            id: record.id.clone(),
            owner: record.owner.clone(),
            origin: record.origin,
            status,
            tool: tool.info.name,
            channel: None,
            durable: true,
        };
        self.drive(
            starting,
            fut,
            cancel,
            slot,
            Created::Already(record.version, record.status),
        );
        Ok(true)
    }

    /// Starts draining: `ctx.draining()` resolves for every tool, `/readyz` answers 503, and no
    /// queued task is claimed here any more. Waits until the tasks running here have ended, or
    /// `period` has passed.
    pub(crate) async fn drain(&self, period: std::time::Duration) {
        self.draining.cancel();
        let deadline = tokio::time::Instant::now() + period;
        while !lock(&self.running).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// This instance's lease lapsed while the store could not be reached: the durable tasks
    /// running here may be claimed elsewhere, so their runs stop here without recording
    /// anything (the store keeps their answers and checkpoints for the next run).
    pub(super) fn fence(&self) {
        let running = lock(&self.running);
        let mut fenced = lock(&self.fenced);
        for (id, task) in running.iter() {
            if let Some(handed_off) = &task.handed_off
                && !handed_off.is_cancelled()
            {
                tracing::warn!(task = %id, "the task lease lapsed while the store was unreachable; stopping this run of the durable task");
                handed_off.cancel();
                fenced.push(id.clone());
            }
        }
    }

    /// The store answers again: the durable tasks [`fence`](Self::fence) stopped here are let go
    /// of (those another instance claimed meanwhile are its own), to be claimed and run again.
    pub(super) async fn unfence(&self) {
        let fenced = std::mem::take(&mut *lock(&self.fenced));
        if fenced.is_empty() {
            return;
        }
        for id in fenced {
            match self.store.release(&id, &self.instance).await {
                Ok(true) => crate::telemetry::durable_released(),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(task = %id, error = %e, "releasing a fenced durable task failed; retrying at the next renewal");
                    lock(&self.fenced).push(id);
                }
            }
        }
    }

    /// Whether the server is draining ([`drain`](Self::drain)): what `/readyz` says.
    #[cfg(feature = "http")]
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.is_cancelled()
    }

    /// Lets go of a durable task running here (the server stops): its tool is stopped without
    /// recording an outcome, and the store queues it for another instance at once. Whether it
    /// did; `false` (nothing done) for a task that ended meanwhile.
    pub(super) async fn hand_off(&self, id: &TaskId, handed_off: &CancellationToken) -> bool {
        handed_off.cancel();
        match self.store.release(id, &self.instance).await {
            Ok(true) => {
                crate::telemetry::durable_released();
                true
            }
            Ok(false) => false,
            Err(StoreError::NotFound) => false,
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "releasing a durable task failed; it resumes once the lease lapses");
                true
            }
        }
    }

    /// Where the body of the new durable task `id` of `tool` starts.
    pub(super) fn placement(&self, id: &TaskId, tool: &str) -> Placement {
        match self.config.runs_durable {
            true => self.config.executor.place(id, tool),
            false => Placement::Queue,
        }
    }
}
