//! The state every part of the server shares ([`ServerInner`]): its tools, prompts, resources,
//! configuration, store and task engine, and what it declares from them (its capabilities). The
//! bottom of `server/`: the facade (`mod.rs`, [`Server`](crate::Server)) holds one behind an
//! `Arc`, and the transports, the driver and dispatch reach it from here, never through the facade.

use super::config::ServerConfig;
use super::limits::Limits;
use crate::protocol::Implementation;
use crate::store::TaskStore;
use crate::task::engine::{EngineConfig, TaskEngine};
use crate::tool::ToolRegistry;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The URIs one legacy session subscribed to (`resources/subscribe`, served by `resources.rs`).
pub(crate) type Subscribed = Arc<Mutex<HashSet<String>>>;

/// What each legacy session subscribed to, by session id.
pub(crate) type SessionMap = Mutex<HashMap<String, Subscribed>>;

/// What a [`Server`](crate::Server) is: made once by `ServerBuilder::build`, then shared (`Arc`)
/// by every connection and request.
#[derive(Debug)]
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: ToolRegistry,
    /// The prompts (`ServerBuilder::prompt`).
    pub(crate) prompts: crate::prompt::PromptRegistry,
    /// Argument completions, by reference (prompts' `#[complete]` arguments).
    pub(crate) completions: crate::completion::CompletionRegistry,
    pub(crate) config: ServerConfig,
    pub(crate) state_key: crate::task::state::StateKey,
    pub(crate) store: Arc<dyn TaskStore>,
    /// Application state (`ServerBuilder::state`), handed to every call's context.
    pub(crate) state: Arc<crate::tool::StateMap>,
    pub(crate) limits: Limits,
    /// Per-tool promotion thresholds
    /// ([`ServerBuilder::promote_after`](crate::server::ServerBuilder::promote_after)), over the
    /// tool's attribute and `config.promote_after` (see `plan.rs`).
    pub(crate) promote_after: HashMap<&'static str, Duration>,
    /// [`ServerBuilder::task_fallback`](crate::server::ServerBuilder::task_fallback): taskless
    /// clients get a task id and the companion tools.
    pub(crate) task_fallback: bool,
    /// The resources (`#[resource]`), and the notifier that tells their subscribers of changes.
    pub(crate) resources: crate::resource::ResourceRegistry,
    pub(crate) resource_notifier: crate::resource::ResourceNotifier,
    /// What each legacy session subscribed to (`resources.rs`).
    pub(crate) resource_sessions: Arc<SessionMap>,
    /// The skills (`ServerBuilder::skills`, `server/skills.rs`); their files are resources too.
    pub(crate) skills: crate::skill::SkillRegistry,
    /// Whether a tool may run as a task (its `task_support` is not `forbidden`), and so publish
    /// outputs that `resources/read` serves (`ToolContext::publish_text`).
    pub(crate) task_outputs: bool,
    /// Where a new durable task's body starts
    /// ([`ServerBuilder::executor`](crate::server::ServerBuilder::executor)).
    pub(crate) executor: Arc<dyn crate::task::executor::Executor>,
    pub(super) engine: OnceLock<Arc<TaskEngine>>,
    /// `info` as JSON, made once for the `serverInfo` of every modern result.
    pub(super) info_json: OnceLock<Arc<serde_json::Value>>,
}

impl ServerInner {
    /// The capabilities this server declares beside tools: `resources` when it serves them
    /// ([`serves_resources`](Self::serves_resources)), `prompts` when it has any, `completions`
    /// when any argument completes, the skills extension when it has skills.
    pub(crate) fn capabilities(
        &self,
        base: crate::protocol::ServerCapabilities,
    ) -> crate::protocol::ServerCapabilities {
        base.with_prompts(!self.prompts.is_empty(), self.completions.has_completers())
            .with_resources(self.serves_resources())
            .with_skills(!self.skills.is_empty())
    }

    /// Whether the resource methods are served: the server has resources, skills (whose files
    /// are resources), or tasks whose outputs are read as resources.
    pub(crate) fn serves_resources(&self) -> bool {
        !self.resources.is_empty() || !self.skills.is_empty() || self.task_outputs
    }

    /// `info` as JSON (made on first use, once the server is set up).
    pub(crate) fn info_json(&self) -> &Arc<serde_json::Value> {
        self.info_json
            .get_or_init(|| Arc::new(serde_json::json!(self.info)))
    }

    /// The task engine, built on first use from the configuration and the store.
    pub(crate) fn engine(&self) -> &Arc<TaskEngine> {
        self.engine.get_or_init(|| {
            let c = &self.config;
            let engine = TaskEngine::new(
                self.store.clone(),
                EngineConfig {
                    default_ttl: c.default_ttl,
                    deadline: c.task_deadline,
                    lease: c.lease,
                    default_poll_interval: c.default_poll_interval,
                    max_ttl: c.max_ttl,
                    cancel_grace: c.cancel_grace,
                    sweep_every: c.sweep_every,
                    max_tasks: self.limits.tasks,
                    max_tasks_per_owner: self.limits.tasks_per_owner,
                    max_inputs_per_task: self.limits.inputs_per_task,
                    max_outputs_per_task: self.limits.outputs_per_task,
                    max_output_bytes_per_task: self.limits.output_bytes_per_task,
                    store_patience: c.store_patience,
                    durable_attempts: c.durable_attempts,
                    checkpoint_bytes: self.limits.checkpoint_bytes,
                    runs_durable: c.role != super::config::Role::Front,
                    executor: self.executor.clone(),
                },
            );
            if let Some(resume) =
                crate::task::executor::Resume::new(self.tools.iter(), self.state.clone())
            {
                engine.set_resume(resume);
            }
            engine
        })
    }
}
