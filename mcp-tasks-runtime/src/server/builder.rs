//! [`ServerBuilder`]: records the server's setup, then checks all of it at once in
//! [`build`](ServerBuilder::build) (the facade, `mod.rs`, wraps what [`ServerBuilder::inner`]
//! makes). Nothing here panics, and nothing is configured on a [`Server`](crate::Server)
//! afterwards.

use super::config::ServerConfig;
use super::fallback::{COMPANION_TOOLS, may_start};
use super::inner::ServerInner;
use super::limits::Limits;
use super::setup::{SetupError, SetupProblem};
use crate::completion::{CompletionRef, CompletionRegistry};
use crate::prompt::{Prompt, PromptRegistry, RegisteredPrompt};
use crate::protocol::Implementation;
use crate::resource::{RegisteredResource, Resource, ResourceNotifier, ResourceRegistry};
use crate::skill::{SkillRegistry, Skills};
use crate::store::{MemoryTaskStore, TaskStore};
use crate::task::state::StateKey;
use crate::tool::{RegisteredTool, StateMap, TaskSupport, Tool, ToolRegistry};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// One recorded [`ServerBuilder::tool`]: the tool is described (its schemas computed, its
/// headers checked) by `build`.
#[derive(Debug, Clone, Copy)]
struct ToolEntry {
    describe: fn() -> Result<RegisteredTool, String>,
    name: &'static str,
}

/// One recorded [`ServerBuilder::resource`], described by `build`.
#[derive(Debug, Clone, Copy)]
struct ResourceEntry {
    describe: fn() -> Result<RegisteredResource, String>,
    uri: &'static str,
}

/// The setup of a [`Server`](crate::Server): its tools, state and settings. Made by
/// [`Server::builder`](crate::Server::builder); every method only records, and
/// [`build`](Self::build) checks everything together.
///
/// ```no_run
/// use mcp_tasks_runtime::{Server, ServerConfig, tool};
/// use std::time::Duration;
///
/// /// Say hello.
/// #[tool]
/// async fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// #[tokio::main]
/// async fn main() -> std::io::Result<()> {
///     let server = Server::builder("hello", "1.0.0")
///         .tool::<greet>()
///         .config(ServerConfig::default().default_ttl(Duration::from_secs(3600)))
///         .build()?;
///     server.serve_stdio().await
/// }
/// ```
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolEntry>,
    resources: Vec<ResourceEntry>,
    resource_notifier: ResourceNotifier,
    prompts: Vec<fn() -> RegisteredPrompt>,
    skills: Vec<Skills>,
    config: ServerConfig,
    limits: Limits,
    state_key: Option<StateKey>,
    store: Option<Arc<dyn TaskStore>>,
    state: StateMap,
    promote_after: HashMap<&'static str, Duration>,
    task_fallback: bool,
    executor: Arc<dyn crate::task::executor::Executor>,
}

impl ServerBuilder {
    /// The setup of a server with this name and version (`Server::builder`).
    pub(super) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerBuilder {
            info: Implementation {
                name: name.into(),
                version: version.into(),
                title: None,
            },
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            resource_notifier: ResourceNotifier::default(),
            prompts: Vec::new(),
            skills: Vec::new(),
            config: ServerConfig::default(),
            limits: Limits::default(),
            state_key: None,
            store: None,
            state: StateMap::default(),
            promote_after: HashMap::new(),
            task_fallback: true,
            executor: Arc::new(crate::task::executor::Placement::Here),
        }
    }
}

impl ServerBuilder {
    /// Registers a tool: the type `#[tool]` generates next to the function, named like it. Two
    /// tools of one name, or a tool whose `x-mcp-header` breaks SEP-2243's rules, make
    /// [`build`](Self::build) fail.
    pub fn tool<T: Tool>(mut self) -> Self {
        self.tools.push(ToolEntry {
            describe: RegisteredTool::try_of::<T>,
            name: T::INFO.name,
        });
        self
    }

    /// Registers a resource or resource template: the type `#[resource]` generates next to the
    /// function, named like it. Two resources of one URI, two templates that match the same URIs
    /// (`notes://{a}` and `notes://{b}`), or a `uri` that is not a URI (template) make
    /// [`build`](Self::build) fail.
    pub fn resource<R: Resource>(mut self) -> Self {
        self.resources.push(ResourceEntry {
            describe: RegisteredResource::try_of::<R>,
            uri: R::INFO.uri,
        });
        self
    }

    /// Serves skills (the extension `io.modelcontextprotocol/skills`, SEP-2640): a folder of them
    /// or files built in (see [`Skills`]). May be called more than once. [`build`](Self::build)
    /// reads every file and fails, naming the file and the rule, on a `SKILL.md` without
    /// frontmatter, a name that breaks the naming rules or is not its folder's name, a skill over
    /// 512 files or 16 MiB, or a URI served twice.
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills.push(skills);
        self
    }

    /// The handle that tells subscribed clients a resource changed
    /// ([`ResourceNotifier::updated`]) or the list did ([`ResourceNotifier::list_changed`]):
    /// keep it in the application, or take it in a tool as `State<ResourceNotifier>` (every
    /// server this builder builds registers it as state). Every server built from this builder
    /// shares it.
    pub fn resource_notifier(&self) -> ResourceNotifier {
        self.resource_notifier.clone()
    }

    /// Registers a prompt: the type `#[prompt]` generates next to the function, named like it.
    /// Two prompts of one name, or a prompt taking a `State<T>` nobody registered, make
    /// [`build`](Self::build) fail. A server with prompts declares the `prompts` capability and
    /// serves `prompts/list` and `prompts/get`; one whose prompts complete an argument
    /// (`#[complete(...)]`) declares `completions` and serves `completion/complete`.
    pub fn prompt<P: Prompt>(mut self) -> Self {
        self.prompts.push(RegisteredPrompt::of::<P>);
        self
    }

    /// Registers application state: a value every tool can take as a [`State<T>`] parameter
    /// (or reach with [`ToolContext::state`]). One value per type; call it once per type you
    /// share (a pool, a client, a cache; wrap it in your own struct to tell two of a type apart).
    /// Registering a type again replaces the earlier value. A tool that takes a `State<T>` with
    /// no `T` registered makes [`build`](Self::build) fail, naming the tool and the type.
    ///
    /// [`State<T>`]: crate::State
    /// [`ToolContext::state`]: crate::ToolContext::state
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Instructions for the client's model (in `initialize` and `server/discover`).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// A display title for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Promotes long inline calls of tool `T` (see [`ServerConfig::promote_after`]): a call from a
    /// 2026-07-28 client that declared the tasks extension runs inline, and turns into a task if
    /// it is still running after `after`. `T` must be registered and `task_support = "optional"`
    /// ([`build`](Self::build) fails otherwise).
    ///
    /// The threshold that applies to a call is the first of: this setting, the tool's
    /// `#[tool(promote_after = "...")]`, [`ServerConfig::promote_after`].
    pub fn promote_after<T: Tool>(mut self, after: Duration) -> Self {
        self.promote_after.insert(T::INFO.name, after);
        self
    }

    /// Turns the **fallback for clients without tasks** on or off (on by default), which lets
    /// any MCP client use a tool that runs only as a task (`task_support = "required"`). It is
    /// in use on a server with such a tool, or an `optional` one with a promotion threshold;
    /// otherwise nothing below happens (no companion tools are listed).
    ///
    /// - A `tools/call` of such a tool that does not ask for a task (2025-11-25: no `task` param;
    ///   2025-06-18 and 2025-03-26, which cannot ask for one; 2026-07-28: the request does not
    ///   declare the `io.modelcontextprotocol/tasks` extension), which otherwise is an error,
    ///   starts the task and answers at once with an ordinary
    ///   `CallToolResult`: a text naming the task id and the companion tools, the id in `_meta`
    ///   (`io.modelcontextprotocol/related-task`) and, when the tool declares no `outputSchema`,
    ///   `structuredContent: {taskId, status}`.
    /// - Three companion tools are listed in `tools/list` and served, each taking
    ///   `{"taskId": string}`: **`tasks_status`** (the task's status, status message and
    ///   progress, and any question it waits on), **`tasks_result`** (the tool's own
    ///   `CallToolResult` once the task has ended with one; a note while it still runs) and
    ///   **`tasks_cancel`**. Whatever happened to the task, they answer a tool result a model can
    ///   read, never a JSON-RPC error: a task that failed with an error or was cancelled is an
    ///   `isError: true` result with the task's own message, and so is a wrong argument or an id
    ///   that is unknown or another client's (the two read the same: they see only the caller's
    ///   own tasks, by the owner rules of `tasks/get`). Their structured content is the task in
    ///   the field names of the client's era. [`build`](Self::build) refuses a registered tool
    ///   with one of these three names.
    /// - A fallback task that asks for input asks by the inline route its client declared: on a
    ///   2025-11-25 session the question goes out as an ordinary server-to-client request
    ///   (`elicitation/create`, ...); a 2026-07-28 client's companion call
    ///   (`tasks_status`/`tasks_result`) answers an MRTR `InputRequiredResult` carrying the
    ///   task's question, and the retry's `inputResponses` are delivered to the task. The client
    ///   must have declared the capability (`elicitation`, `sampling`, `roots`); otherwise the
    ///   tool's request fails at once with [`InputError::NotSupported`](crate::InputError) naming
    ///   it. `tasks_status` shows the question while it waits.
    /// - An `optional` tool with a promotion threshold ([`promote_after`](Self::promote_after),
    ///   [`ServerConfig::promote_after`]) called by such a client runs inline; if it is still
    ///   running at the threshold, the same run goes on as a task and the client gets the same
    ///   answer as above (a call that ends sooner answers inline).
    /// - `tools/list` shows such a client (2026-07-28: no tasks extension in the request;
    ///   2025-11-25: no `tasks` in the session's `initialize` capabilities) the tools the way
    ///   its library will call them: a `required` tool as `execution.taskSupport: "optional"`
    ///   (2025-11-25; client libraries refuse to call a `required` tool without a task, the
    ///   TypeScript SDK 1.x with a local `-32600`), and no `outputSchema` for the tools that may
    ///   answer with the fallback's text, which cannot match one. The companion tools are listed
    ///   to every client.
    ///
    /// Clients that ask for tasks are served exactly as without the fallback.
    ///
    /// With `task_fallback(false)`, a client that cannot take a task (a 2026-07-28 request without
    /// the extension, a 2025-06-18 or 2025-03-26 session) is not offered a tool that runs only as
    /// a task: `tools/list` leaves it out for that client (a call of it is the era's error), while
    /// a client that takes tasks still sees and runs it. A 2025-11-25 session sees it listed
    /// `execution.taskSupport: "required"`: it may send `task` whatever it declared.
    pub fn task_fallback(mut self, on: bool) -> Self {
        self.task_fallback = on;
        self
    }

    /// Where a new durable task's body starts (`#[tool(durable)]`):
    /// [`Placement::Here`](crate::server::Placement::Here) (in this process) by default;
    /// [`Placement::Queue`](crate::server::Placement::Queue) leaves it to the workers sharing
    /// the store, and an application's own [`Executor`](crate::server::Executor) can hand it to
    /// its job system. A [`Role::Front`](crate::server::Role::Front) always queues.
    pub fn executor(mut self, executor: impl crate::task::executor::Executor) -> Self {
        self.executor = Arc::new(executor);
        self
    }

    /// Replaces the server-wide defaults ([`ServerConfig::default`] otherwise). Values the server
    /// cannot run with (a `lease` under 100 ms, a zero `sweep_every`) make
    /// [`build`](Self::build) fail.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Replaces the default [`Limits`] (tasks per owner and in total, outstanding input
    /// requests, message size on stdio).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The secret that seals `requestState` (inline input, MRTR). The default is random for each
    /// built server, so a retry must come back to the same process. **Several instances sharing a
    /// store** (behind a load balancer), or a server that restarts, set the same secret on each:
    /// it is the one setting a multi-instance deployment needs (task owners are derived from the
    /// authenticated principal, or are the same anonymous owner, on every instance).
    pub fn request_state_key(mut self, secret: &[u8]) -> Self {
        self.state_key = Some(StateKey::from_secret(secret));
        self
    }

    /// Keeps tasks in this store instead of a fresh in-memory one: a durable or shared store,
    /// such as [`SqliteTaskStore`](crate::store) (feature `sqlite`), kept across restarts.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Checks the whole setup and makes what the server shares (`build` is this, in an `Arc`).
    pub(super) fn inner(&self) -> Result<ServerInner, SetupError> {
        let mut problems = Vec::new();
        let mut tools = ToolRegistry::default();
        for entry in &self.tools {
            match (entry.describe)() {
                Ok(tool) => {
                    if !tools.insert(tool) {
                        problems.push(SetupProblem::DuplicateTool { name: entry.name });
                    }
                }
                Err(why) => problems.push(SetupProblem::BadHeader {
                    tool: entry.name,
                    why,
                }),
            }
        }
        let mut resources = ResourceRegistry::default();
        for entry in &self.resources {
            match (entry.describe)() {
                Ok(resource) => {
                    if let Err(taken) = resources.insert(resource) {
                        problems.push(SetupProblem::DuplicateResource {
                            uri: entry.uri,
                            taken,
                        });
                    }
                }
                Err(why) => problems.push(SetupProblem::BadResourceUri {
                    uri: entry.uri,
                    why,
                }),
            }
        }
        let mut state = self.state.clone();
        state.insert(self.resource_notifier.clone());
        for resource in resources.iter() {
            for need in resource.state_needs() {
                if !state.contains(need) {
                    problems.push(SetupProblem::MissingResourceState {
                        resource: resource.info.uri,
                        state: need.name,
                    });
                }
            }
        }
        for tool in tools.iter() {
            for need in tool.state_needs() {
                if !state.contains(need) {
                    problems.push(SetupProblem::MissingState {
                        tool: tool.info.name,
                        state: need.name,
                    });
                }
            }
        }
        for tool in tools.iter() {
            // An MCP Apps tool's view must be served, or hosts that render apps show nothing.
            if let Some(ui) = tool.info.ui
                && resources.find(ui.resource_uri).is_none()
            {
                problems.push(SetupProblem::MissingUiResource {
                    tool: tool.info.name,
                    uri: ui.resource_uri,
                });
            }
        }
        let (prompts, mut completions) = self.prompts(&mut problems);
        // A template's variables complete under `ref/resource` with its URI template.
        for resource in resources.templates() {
            let Some(template) = resource.template() else {
                continue;
            };
            let reference = CompletionRef::Resource(resource.info.uri.to_owned());
            let variables: Vec<String> = template.variables().map(str::to_owned).collect();
            completions.declare(reference.clone(), variables);
            for &(variable, completer) in resource.completers() {
                completions.insert(reference.clone(), variable, completer);
            }
        }
        let mut promoted: Vec<&'static str> = self.promote_after.keys().copied().collect();
        promoted.sort_unstable();
        for name in promoted {
            match tools.get(name).map(|t| t.info.task_support) {
                None => problems.push(SetupProblem::PromotedToolMissing { tool: name }),
                Some(TaskSupport::Optional) => {}
                Some(_) => problems.push(SetupProblem::PromotedToolNotOptional { tool: name }),
            }
        }
        // The fallback is in use where a tool may answer a taskless call with it: then the
        // companion tools are listed and served.
        let task_fallback = self.task_fallback
            && tools.iter().any(|tool| {
                let promoted = self.promote_after.contains_key(tool.info.name)
                    || self.config.promote_after.is_some();
                may_start(tool, promoted)
            });
        if task_fallback {
            for name in COMPANION_TOOLS {
                if let Some(tool) = tools.get(name) {
                    problems.push(SetupProblem::CompanionToolName {
                        tool: tool.info.name,
                    });
                }
            }
        }
        let skills = SkillRegistry::build(&self.skills).unwrap_or_else(|found| {
            problems.extend((found.into_iter()).map(|p| SetupProblem::BadSkill {
                file: p.file,
                rule: p.rule,
            }));
            SkillRegistry::default()
        });
        for (setting, why) in self.config.problems() {
            problems.push(SetupProblem::BadConfig { setting, why });
        }
        SetupError::check(problems)?;
        let task_outputs = tools
            .iter()
            .any(|tool| tool.info.task_support != TaskSupport::Forbidden);
        Ok(ServerInner {
            info: self.info.clone(),
            instructions: self.instructions.clone(),
            tools,
            prompts,
            completions,
            config: self.config.clone(),
            state_key: self.state_key.clone().unwrap_or_else(StateKey::random),
            store: metered(
                self.store
                    .clone()
                    .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
            ),
            state: Arc::new(state),
            limits: self.limits.clone(),
            promote_after: self.promote_after.clone(),
            task_fallback,
            resources,
            resource_notifier: self.resource_notifier.clone(),
            resource_sessions: Default::default(),
            skills,
            task_outputs,
            executor: self.executor.clone(),
            engine: OnceLock::new(),
            info_json: OnceLock::new(),
        })
    }
}

impl ServerBuilder {
    /// The prompts, and the completions their arguments declare; problems go to `problems`.
    fn prompts(&self, problems: &mut Vec<SetupProblem>) -> (PromptRegistry, CompletionRegistry) {
        let mut prompts = PromptRegistry::default();
        let mut completions = CompletionRegistry::default();
        for describe in &self.prompts {
            let prompt = describe();
            let name = prompt.info.name;
            for need in &prompt.state_needs {
                if !self.state.contains(need) {
                    problems.push(SetupProblem::PromptMissingState {
                        prompt: name,
                        state: need.name,
                    });
                }
            }
            let reference = CompletionRef::Prompt(name.to_owned());
            let arguments: Vec<String> = prompt.arguments.iter().map(|a| a.name.clone()).collect();
            let completers = prompt.completers.clone();
            if !prompts.insert(prompt) {
                problems.push(SetupProblem::DuplicatePrompt { name });
                continue;
            }
            completions.declare(reference.clone(), arguments);
            for (argument, completer) in completers {
                completions.insert(reference.clone(), argument, completer);
            }
        }
        (prompts, completions)
    }
}

/// The store, timed for the metrics when the feature `metrics` is on.
fn metered(store: Arc<dyn TaskStore>) -> Arc<dyn TaskStore> {
    #[cfg(feature = "metrics")]
    let store: Arc<dyn TaskStore> = Arc::new(crate::store::metered::Metered::new(store));
    store
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schemars::{self, JsonSchema};
    use crate::{Args, Server, State, resource, tool};

    /// A tool.
    #[tool]
    async fn plain() -> String {
        "plain".into()
    }

    mod other {
        /// Another tool with the same name.
        #[crate::tool(name = "plain")]
        pub async fn plain_again() -> String {
            "again".into()
        }
    }

    struct Missing;

    /// Takes state nobody registers.
    #[tool]
    async fn needs_state(missing: State<Missing>) -> String {
        let _ = &*missing;
        String::new()
    }

    #[derive(wire::Deserialize, JsonSchema)]
    struct BadHeader {
        /// Not an HTTP token: a space.
        #[schemars(extend("x-mcp-header" = "Bad Name"))]
        region: String,
    }

    /// Declares a header clients would drop.
    #[tool]
    async fn bad_header(Args(q): Args<BadHeader>) -> String {
        q.region
    }

    /// Named like a companion tool of the fallback.
    #[tool]
    async fn tasks_status() -> String {
        String::new()
    }

    /// A task tool that can be promoted.
    #[tool(task_support = "optional")]
    async fn promotable() -> String {
        String::new()
    }

    /// A tool that runs only as a task: the fallback is in use.
    #[tool(task_support = "required")]
    async fn only_a_task() -> String {
        String::new()
    }

    #[test]
    fn every_setup_problem_is_reported_together() {
        let builder = Server::builder("t", "0")
            .tool::<plain>()
            .tool::<other::plain_again>()
            .tool::<needs_state>()
            .tool::<bad_header>()
            .tool::<tasks_status>()
            .tool::<only_a_task>()
            .promote_after::<plain>(Duration::from_secs(1))
            .promote_after::<promotable>(Duration::from_secs(1))
            .task_fallback(true)
            .config(
                ServerConfig::default()
                    .lease(Duration::from_millis(99))
                    .sweep_every(Duration::ZERO),
            );
        let err = builder.build().expect_err("eight problems");
        let missing = std::any::type_name::<Missing>();
        let mut problems = err.problems().to_vec();
        let SetupProblem::BadHeader { why, .. } = &mut problems[1] else {
            panic!("{err}")
        };
        assert!(why.contains("HTTP field-name token"), "{why}");
        why.clear();
        assert_eq!(
            problems,
            [
                SetupProblem::DuplicateTool { name: "plain" },
                SetupProblem::BadHeader {
                    tool: "bad_header",
                    why: String::new(),
                },
                SetupProblem::MissingState {
                    tool: "needs_state",
                    state: missing,
                },
                SetupProblem::PromotedToolNotOptional { tool: "plain" },
                SetupProblem::PromotedToolMissing { tool: "promotable" },
                SetupProblem::CompanionToolName {
                    tool: "tasks_status"
                },
                SetupProblem::BadConfig {
                    setting: "lease",
                    why: "is 99ms; it must be at least 100ms, to outlast the time between two renewals"
                        .into(),
                },
                SetupProblem::BadConfig {
                    setting: "sweep_every",
                    why: "is zero; the lifetime rules need a period of more than zero".into(),
                },
            ]
        );
        // The message lists every problem, one a line.
        let message = err.to_string();
        assert!(
            message.starts_with(
                "the server cannot start (8 problems):\n- two tools are named `plain`"
            ),
            "{message}"
        );
        assert_eq!(message.lines().count(), 9, "{message}");
        for problem in err.problems() {
            assert!(message.contains(&problem.to_string()), "{message}");
        }
        // One problem reads as one sentence; `?` in an io `main` gives `InvalidInput`.
        let one = Server::builder("t", "0")
            .tool::<needs_state>()
            .build()
            .expect_err("one problem");
        assert_eq!(
            one.to_string(),
            format!(
                "the server cannot start: tool `needs_state` takes `State<{missing}>`, but no `{missing}` is registered (add `.state(value)` to the server)"
            )
        );
        assert_eq!(
            std::io::Error::from(one).kind(),
            std::io::ErrorKind::InvalidInput
        );
    }

    mod resources {
        use crate::{State, resource};

        /// A note.
        #[resource(uri = "notes://{title}")]
        pub(super) async fn note(title: String) -> String {
            title
        }

        /// The same URIs under another variable name.
        #[resource(uri = "notes://{name}")]
        pub(super) async fn same_shape(name: String) -> String {
            name
        }

        /// A fixed resource.
        #[resource(uri = "config://app")]
        pub(super) async fn config() -> &'static str {
            ""
        }

        /// The same URI again.
        #[resource(uri = "config://app", name = "again")]
        pub(super) async fn config_again() -> &'static str {
            ""
        }

        /// Needs state nobody registers.
        #[resource(uri = "state://x")]
        pub(super) async fn stateful(_: State<super::Missing>) -> &'static str {
            ""
        }
    }

    /// An MCP Apps tool.
    #[tool(ui = "ui://forecast/view.html")]
    async fn forecast() -> String {
        String::new()
    }

    /// Its view.
    #[resource(
        uri = "ui://forecast/view.html",
        mime_type = "text/html;profile=mcp-app"
    )]
    async fn forecast_view() -> &'static str {
        "<html></html>"
    }

    #[test]
    fn a_tool_whose_app_view_no_resource_serves_stops_start_up() {
        let err = Server::builder("t", "0")
            .tool::<forecast>()
            .build()
            .expect_err("refused");
        assert_eq!(
            err.problems(),
            [SetupProblem::MissingUiResource {
                tool: "forecast",
                uri: "ui://forecast/view.html"
            }]
        );
        assert!(err.to_string().contains("no resource serves it"), "{err}");
        Server::builder("t", "0")
            .tool::<forecast>()
            .resource::<forecast_view>()
            .build()
            .expect("served");
    }

    #[test]
    fn resource_problems_are_found_together() {
        use resources::*;
        let err = Server::builder("t", "0")
            .resource::<note>()
            .resource::<same_shape>()
            .resource::<config>()
            .resource::<config_again>()
            .resource::<stateful>()
            .build()
            .expect_err("refused");
        assert_eq!(
            err.problems(),
            [
                SetupProblem::DuplicateResource {
                    uri: "notes://{name}",
                    taken: "notes://{title}"
                },
                SetupProblem::DuplicateResource {
                    uri: "config://app",
                    taken: "config://app"
                },
                SetupProblem::MissingResourceState {
                    resource: "state://x",
                    state: std::any::type_name::<Missing>()
                },
            ]
        );
        let text = err.to_string();
        assert!(
            text.contains("matches the same URIs as `notes://{title}`"),
            "{text}"
        );
        assert!(
            text.contains("two resources have the URI `config://app`"),
            "{text}"
        );
        // The notifier is state every server registers: a tool may take it.
        assert!(
            Server::builder("t", "0")
                .resource::<note>()
                .resource::<config>()
                .build()
                .is_ok()
        );
    }

    #[test]
    fn the_shortest_lease_and_state_registered_build() {
        let config = ServerConfig::default().lease(super::super::config::MIN_LEASE);
        assert!(
            Server::builder("t", "0")
                .tool::<plain>()
                .tool::<needs_state>()
                .state(Missing)
                .config(config)
                .build()
                .is_ok()
        );
    }

    #[tokio::test]
    async fn building_twice_and_cloning_cannot_panic() {
        let builder = Server::builder("t", "0").tool::<plain>();
        let copy = builder.clone().title("copy");
        let one = builder.build().expect("first build");
        let two = builder.build().expect("second build");
        let three = copy.build().expect("a cloned builder builds");
        let clone = one.clone();
        // Servers of one builder are separate: each has its own tools and store.
        assert!(!Arc::ptr_eq(&one.inner, &two.inner));
        assert!(Arc::ptr_eq(&one.inner, &clone.inner));
        assert_eq!(three.inner.info.title.as_deref(), Some("copy"));
        assert_eq!(one.inner.info.title, None);
        // A clone serves like the original, at the same time.
        for server in [&one, &clone, &two, &three] {
            let mut c = server.connect_in_memory();
            assert!(c.send(serde_json::json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "plain", "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                } }
            })));
            let reply = c.recv().await.expect("a reply");
            assert_eq!(reply["result"]["content"][0]["text"], "plain", "{reply}");
        }
    }
}
