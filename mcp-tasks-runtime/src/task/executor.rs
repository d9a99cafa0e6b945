//! Where a durable task's body starts ([`Executor`], [`Placement`]) and what the engine keeps to
//! start it again ([`Resume`], [`first_run`]): what the engine names of durable tasks, below the
//! engine's own durable methods (`durable.rs`), which claim, run, drain and hand off.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::protocol::ClientCapabilities;
use crate::protocol::task::TaskId;
use crate::store::{DurableRun, StoredCaller};
use crate::tool::{RegisteredTool, RequestInfo, StateMap};

/// Where a durable task's body starts: the seam between the task engine and an application's
/// own job system ([`ServerBuilder::executor`](crate::ServerBuilder::executor)). Its two
/// implementations here are the placements themselves: [`Placement::Here`] runs every durable
/// task in the process that created it (the default), [`Placement::Queue`] queues every one in
/// the store for the workers sharing it (what a [`Role::Front`](crate::server::Role::Front)
/// does).
///
/// To hand execution to a job system, answer [`Placement::Queue`] after giving the task's id to
/// that system; its consumer, in any process with a server built with the same tools and store,
/// calls [`Server::run_queued`](crate::Server::run_queued) to claim the task and run its body.
pub trait Executor: Send + Sync + std::fmt::Debug + 'static {
    /// The durable task `task`, of tool `tool`, is being created: where its body starts.
    fn place(&self, task: &TaskId, tool: &str) -> Placement;
}

/// Where a durable task's body starts ([`Executor::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In this process, now.
    Here,
    /// Nowhere yet: the task waits in the store for an instance to claim it (a worker's sweep,
    /// or [`Server::run_queued`](crate::Server::run_queued)).
    Queue,
}

/// Every durable task placed the same way: `Here`, the in-process runner, or `Queue`, the
/// store-backed queue.
impl Executor for Placement {
    fn place(&self, _: &TaskId, _: &str) -> Placement {
        *self
    }
}

/// What the engine needs to run a durable task's body again: its tool, by name, and the
/// application state.
#[derive(Debug)]
pub(crate) struct Resume {
    pub(super) tools: HashMap<&'static str, Arc<RegisteredTool>>,
    pub(super) state: Arc<StateMap>,
}

impl Resume {
    /// The durable tools among `tools`, and `state`.
    pub(crate) fn new<'a>(
        tools: impl Iterator<Item = &'a Arc<RegisteredTool>>,
        state: Arc<StateMap>,
    ) -> Option<Self> {
        let tools: HashMap<_, _> = tools
            .filter(|tool| tool.info.durable)
            .map(|tool| (tool.info.name, tool.clone()))
            .collect();
        (!tools.is_empty()).then_some(Resume { tools, state })
    }
}

/// What a new durable task keeps of its call.
pub(super) fn first_run(
    arguments: Option<&Value>,
    request: &RequestInfo,
    capabilities: &ClientCapabilities,
    max_attempts: u32,
) -> DurableRun {
    DurableRun {
        arguments: arguments.cloned(),
        caller: request.principal.as_ref().map(|p| StoredCaller {
            id: p.as_str().to_owned(),
            scopes: p.scopes().map(<[String]>::to_vec),
        }),
        capabilities: serde_json::to_value(capabilities).unwrap_or(Value::Null),
        protocol_version: request.protocol_version.clone(),
        attempt: 1,
        max_attempts,
        checkpoint: None,
    }
}
