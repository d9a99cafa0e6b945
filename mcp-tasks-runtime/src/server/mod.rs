//! The server: era detection, dispatch by method, legacy sessions, and JSON-RPC errors. The only
//! layer that knows both protocol eras.
//!
//! Data flows one way through it (README, "Layout"): the transports (`stdio.rs`, `memory.rs`,
//! `http/`) own their loops and hand each message to `driver.rs`, which keeps requests in flight
//! on the per-peer state (`connection.rs`) and calls `dispatch.rs` with the connection seen only
//! as a `Peer` (`peer.rs`: send, request, owner, session). Dispatch decides how a `tools/call`
//! runs with the pure function in `plan.rs` and carries the plan out on the task engine.

#[cfg(feature = "http")]
mod auth;
mod call;
mod connection;
pub(crate) mod dispatch;
mod driver;
mod era;
mod fallback;
#[cfg(feature = "http")]
mod http;
mod incoming;
mod inline;
mod limits;
mod listen;
mod memory;
mod peer;
mod plan;
mod session;
mod stdio;
mod tasks;

#[cfg(feature = "http")]
pub use auth::{
    AuthFuture, Authenticator, BearerTokens, Principal, RequestParts, Unauthorized, auth_future,
};
pub use era::Era;
pub use fallback::{COMPANION_TOOLS, TASK_CANCEL_TOOL, TASK_RESULT_TOOL, TASK_STATUS_TOOL};
#[cfg(feature = "http")]
pub use http::HttpConfig;
pub use limits::Limits;
pub use memory::{InMemoryConnection, InMemoryReceiver, InMemorySender};
pub use stdio::shutdown_signal;

use crate::protocol::Implementation;
use crate::store::{MemoryTaskStore, TaskStore};
use crate::task::engine::{EngineConfig, TaskEngine};
use crate::tool::{RegisteredTool, Tool, ToolRegistry};
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Settings that apply to every tool unless the tool says otherwise.
///
/// A task has two separate lifetimes: how long it may *run* ([`task_deadline`](Self::task_deadline),
/// no limit by default) and how long its record is *kept* (its `ttl`, reported to clients: for
/// [`default_ttl`](Self::default_ttl) after the task ended). A task that runs, or waits for a
/// person's answer, longer than its `ttl` is not ended by it.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How long a task's record is kept, its `ttl` on the wire, when the tool declares none:
    /// a finished task stays readable this long after it ended (default 10 minutes). It does not
    /// limit how long a task runs.
    pub default_ttl: Duration,
    /// How long a task may run, from creation, before it fails with a status message that says
    /// its deadline ended it (default `None`: no limit; a tool can also limit itself with
    /// `tokio::time::timeout`).
    pub task_deadline: Option<Duration>,
    /// How long this server's lease on its running tasks lasts (default 15 s). It is renewed at
    /// least every third of that while the server runs; if the process dies, any server sharing
    /// the store fails the tasks it was running ("the server running this task stopped") within
    /// `lease` plus one [`sweep_every`](Self::sweep_every). At least 100 ms.
    pub lease: Duration,
    /// Suggested poll interval when a tool declares none (default 1 second).
    pub default_poll_interval: Duration,
    /// The longest `ttl` a client may ask for (legacy `task.ttl`; default 24 hours).
    pub max_ttl: Duration,
    /// How long in-flight requests may take to finish after the input closes (default 10 s).
    pub shutdown_grace: Duration,
    /// How long a cancelled task's tool may take to wind down before it is dropped (default 5 s).
    pub cancel_grace: Duration,
    /// How often the lifetime rules (deadline, `ttl`, leases) are applied (default 1 s).
    pub sweep_every: Duration,
    /// Promotion of long inline calls, server-wide (default `None`: off). With `Some(after)`, a
    /// call of a `task_support = "optional"` tool from a 2026-07-28 client that declared the tasks
    /// extension starts inline; if it has not finished after `after`, the client gets a
    /// `CreateTaskResult` and the same run goes on as that task (nothing restarts). A call that
    /// finishes sooner answers inline. A tool's own `#[tool(promote_after = "...")]` wins over
    /// this, and [`Server::promote_after`] (for one tool) wins over both.
    pub promote_after: Option<Duration>,
    /// How long the stdio loop ([`Server::serve_stdio`], [`Server::serve_io`]) keeps polling its
    /// input after it last read or wrote a message, before its thread sleeps until input comes
    /// (default 50 µs; `Duration::ZERO`: sleep at once). A client that sends its next request
    /// within that time is answered without a thread being woken: on a virtual machine whose
    /// idle vCPU halts, that wake costs tens of microseconds, more than an inline call's own
    /// work. The cost is about this much CPU time after each burst of messages (the window
    /// counts from the last message read or written), none while the connection is idle.
    pub stdio_spin: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            default_ttl: Duration::from_secs(600),
            task_deadline: None,
            lease: Duration::from_secs(15),
            default_poll_interval: Duration::from_secs(1),
            max_ttl: Duration::from_secs(24 * 3600),
            shutdown_grace: Duration::from_secs(10),
            cancel_grace: Duration::from_secs(5),
            sweep_every: Duration::from_secs(1),
            promote_after: None,
            stdio_spin: Duration::from_micros(50),
        }
    }
}

/// An MCP server: a name, a version, tools, and how to serve them.
///
/// ```no_run
/// use mcp_tasks_runtime::{Server, tool};
///
/// /// Say hello.
/// #[tool]
/// async fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// #[tokio::main]
/// async fn main() -> std::io::Result<()> {
///     Server::new("hello", "1.0.0").tool::<greet>().serve_stdio().await
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

#[derive(Debug)]
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: ToolRegistry,
    pub(crate) config: ServerConfig,
    pub(crate) state_key: crate::task::state::StateKey,
    pub(crate) store: Arc<dyn TaskStore>,
    /// Application state (`Server::state`), handed to every call's context.
    pub(crate) state: Arc<crate::tool::StateMap>,
    pub(crate) limits: Limits,
    /// Per-tool promotion thresholds ([`Server::promote_after`]), over the tool's attribute and
    /// `config.promote_after` (see `plan.rs`).
    pub(crate) promote_after: std::collections::HashMap<&'static str, Duration>,
    /// [`Server::task_fallback`]: taskless clients get a task id and the companion tools.
    pub(crate) task_fallback: bool,
    engine: OnceLock<Arc<TaskEngine>>,
    /// `info` as JSON, made once for the `serverInfo` of every modern result.
    info_json: OnceLock<Arc<serde_json::Value>>,
}

impl ServerInner {
    /// `info` as JSON (made on first use, once the server is set up).
    pub(crate) fn info_json(&self) -> &Arc<serde_json::Value> {
        self.info_json
            .get_or_init(|| Arc::new(serde_json::json!(self.info)))
    }

    /// The task engine, built on first use from the configuration and the store.
    pub(crate) fn engine(&self) -> &Arc<TaskEngine> {
        self.engine.get_or_init(|| {
            let c = &self.config;
            TaskEngine::new(
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
                },
            )
        })
    }
}

impl Server {
    /// A server with this name and version and no tools yet.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Server {
            inner: Arc::new(ServerInner {
                info: Implementation {
                    name: name.into(),
                    version: version.into(),
                    title: None,
                },
                instructions: None,
                tools: ToolRegistry::default(),
                config: ServerConfig::default(),
                state_key: crate::task::state::StateKey::random(),
                store: Arc::new(MemoryTaskStore::new()),
                state: Arc::default(),
                limits: Limits::default(),
                promote_after: std::collections::HashMap::new(),
                task_fallback: false,
                engine: OnceLock::new(),
                info_json: OnceLock::new(),
            }),
        }
    }

    fn inner_mut(&mut self) -> &mut ServerInner {
        Arc::get_mut(&mut self.inner).expect("a Server is configured before it is served or cloned")
    }

    /// Registers a tool: the type `#[tool]` generates next to the function, named like it.
    ///
    /// # Panics
    /// When a tool of the same name is already registered.
    pub fn tool<T: Tool>(mut self) -> Self {
        self.inner_mut().tools.insert(RegisteredTool::of::<T>());
        self
    }

    /// Registers application state: a value every tool can take as a [`State<T>`] parameter
    /// (or reach with [`ToolContext::state`]). One value per type; call it once per type you
    /// share (a pool, a client, a cache; wrap it in your own struct to tell two of a type apart).
    /// Registering a type again replaces the earlier value.
    ///
    /// [`State<T>`]: crate::State
    /// [`ToolContext::state`]: crate::ToolContext::state
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.inner_mut().state).insert(value);
        self
    }

    /// Checks that the server can serve: every [`State<T>`] a tool takes was registered with
    /// [`state`](Self::state). The error names each tool and type that is missing. Every
    /// `serve_*` method runs this first and fails with it ([`std::io::ErrorKind::InvalidInput`]);
    /// [`http_router`](Self::http_router) panics with it.
    ///
    /// [`State<T>`]: crate::State
    pub fn check(&self) -> Result<(), SetupError> {
        let mut missing: Vec<String> = self
            .inner
            .tools
            .iter()
            .flat_map(|tool| {
                tool.state_needs()
                    .iter()
                    .filter(|need| !self.inner.state.contains(need))
                    .map(|need| {
                        format!(
                            "tool `{}` takes `State<{}>`, but no `{}` is registered (add `.state(value)` to the server)",
                            tool.info.name, need.name, need.name
                        )
                    })
            })
            .collect();
        for name in self.inner.promote_after.keys() {
            let optional = self
                .inner
                .tools
                .iter()
                .find(|t| t.info.name == *name)
                .map(|t| t.info.task_support == crate::tool::TaskSupport::Optional);
            match optional {
                None => missing.push(format!("`promote_after` names tool `{name}`, which is not registered")),
                Some(false) => missing.push(format!("tool `{name}` is promoted (`promote_after`), so it must be `task_support = \"optional\"`")),
                Some(true) => {}
            }
        }
        if self.inner.task_fallback {
            for name in COMPANION_TOOLS {
                if self.inner.tools.get(name).is_some() {
                    missing.push(format!("tool `{name}` has the name of a companion tool of the task fallback (`task_fallback`); rename the tool or leave the fallback off"));
                }
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(SetupError(missing.join("; ")))
        }
    }

    /// Instructions for the client's model (in `initialize` and `server/discover`).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.inner_mut().instructions = Some(text.into());
        self
    }

    /// A display title for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner_mut().info.title = Some(title.into());
        self
    }

    /// Promotes long inline calls of tool `T` (see [`ServerConfig::promote_after`]): a call from a
    /// 2026-07-28 client that declared the tasks extension runs inline, and turns into a task if
    /// it is still running after `after`. `T` must be `task_support = "optional"`
    /// ([`check`](Self::check) says so otherwise).
    ///
    /// The threshold that applies to a call is the first of: this setting, the tool's
    /// `#[tool(promote_after = "...")]`, [`ServerConfig::promote_after`].
    pub fn promote_after<T: Tool>(mut self, after: Duration) -> Self {
        self.inner_mut().promote_after.insert(T::INFO.name, after);
        self
    }

    /// Turns on the **fallback for clients without tasks** (off by default), so that any MCP
    /// client can use a tool that runs only as a task (`task_support = "required"`):
    ///
    /// - A `tools/call` of such a tool that does not ask for a task (2025-11-25: no `task` param;
    ///   2026-07-28: the request does not declare the `io.modelcontextprotocol/tasks` extension),
    ///   which otherwise is an error, starts the task and answers at once with an ordinary
    ///   `CallToolResult`: a text naming the task id and the companion tools, the id in `_meta`
    ///   (`io.modelcontextprotocol/related-task`) and, when the tool declares no `outputSchema`,
    ///   `structuredContent: {taskId, status}`.
    /// - Three companion tools are listed in `tools/list` and served, each taking
    ///   `{"taskId": string}`: **`tasks_status`** (the task's status, status message and
    ///   progress, and any question it waits on), **`tasks_result`** (the tool's own
    ///   `CallToolResult` once the task completed, its JSON-RPC error if it failed with one, a
    ///   note while it still runs) and **`tasks_cancel`**. They see only the caller's own tasks
    ///   (the owner rules of `tasks/get`); an unknown or foreign id is the same `-32602` "Task not
    ///   found". [`check`](Self::check) refuses a registered tool with one of these names
    ///   ([`COMPANION_TOOLS`]).
    /// - A fallback task that asks for input: on a 2025-11-25 session the question goes to the
    ///   client as an ordinary server-to-client request (`elicitation/create`, ...; the client
    ///   must have declared the capability) and `tasks_status` shows it while it waits; a
    ///   2026-07-28 client without the tasks extension cannot answer a task, so the tool's input
    ///   request fails at once with [`InputError::NotSupported`](crate::InputError) (`-32021` when
    ///   returned with `?`).
    ///
    /// - An `optional` tool with a promotion threshold ([`promote_after`](Self::promote_after),
    ///   [`ServerConfig::promote_after`]) called by such a client runs inline; if it is still
    ///   running at the threshold, the same run goes on as a task and the client gets the same
    ///   answer as above (a call that ends sooner answers inline).
    /// - `tools/list` shows such a client (2026-07-28: no tasks extension in the request;
    ///   2025-11-25: no `tasks` in the session's `initialize` capabilities) no `outputSchema` for
    ///   the tools that may answer it that way, since that answer cannot match one; the
    ///   companion tools are listed to every client.
    ///
    /// Clients that ask for tasks are served exactly as without the fallback.
    pub fn task_fallback(mut self) -> Self {
        self.inner_mut().task_fallback = true;
        self
    }

    /// Replaces the server-wide defaults.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.inner_mut().config = config;
        self
    }

    /// The secret that seals `requestState` (inline input, MRTR). The default is random per process,
    /// so a retry must come back to the same process. **Several instances sharing a store** (behind
    /// a load balancer), or a server that restarts, set the same secret on each: it is the one
    /// setting a multi-instance deployment needs (task owners are derived from the authenticated
    /// principal, or are the same anonymous owner, on every instance).
    pub fn request_state_key(mut self, secret: &[u8]) -> Self {
        self.inner_mut().state_key = crate::task::state::StateKey::from_secret(secret);
        self
    }

    /// Keeps tasks in this store instead of the in-memory default: a durable or shared store, such
    /// as [`SqliteTaskStore`](crate::store) (feature `sqlite`), kept across restarts.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.inner_mut().store = store;
        self
    }

    /// Settles the tasks running in this process: each fails with a status message saying the
    /// server stopped, and its tool is cancelled. The serve methods call this when serving ends;
    /// call it yourself when you serve [`http_router`](Self::http_router) in your own
    /// application, before it exits. Returns how many tasks were settled.
    pub async fn stop_tasks(&self) -> usize {
        self.inner.engine().stop_tasks().await
    }

    /// Replaces the default [`Limits`] (tasks per owner and in total, outstanding input
    /// requests, message size on stdio).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.inner_mut().limits = limits;
        self
    }

    /// The registered tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// Serves one client over this process's stdin and stdout until stdin closes or the process
    /// gets SIGTERM / Ctrl-C (this installs handlers for both; see
    /// [`serve_stdio_with_shutdown`](Self::serve_stdio_with_shutdown) to stop on a future of your
    /// own instead). Logging goes to stderr (see [`crate::init_logging`]).
    ///
    /// When stdin and stdout are pipes or sockets (as when a client spawns the server) they are
    /// driven by tokio's reactor, without a blocking thread per read and write.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        self.serve_stdio_with_shutdown(shutdown_signal()).await
    }

    /// [`serve_stdio`](Self::serve_stdio) until stdin closes or `shutdown` resolves, for a host
    /// program that decides when the server stops. No signal handler is installed. When
    /// `shutdown` resolves, requests in flight are cancelled (as on SIGTERM); when stdin closes,
    /// they get [`ServerConfig::shutdown_grace`] to finish.
    pub async fn serve_stdio_with_shutdown(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (reader, writer) = crate::transport::std_streams::std_streams();
        self.serve_io_with_shutdown(reader, writer, shutdown).await
    }

    /// Serves one client over any reader and writer (newline-delimited JSON-RPC) until the reader
    /// ends or the process gets SIGTERM / Ctrl-C (this installs handlers for both).
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_io_with_shutdown(reader, writer, shutdown_signal())
            .await
    }

    /// [`serve_io`](Self::serve_io) until the reader ends or `shutdown` resolves; no signal
    /// handler is installed.
    pub async fn serve_io_with_shutdown<R, W>(
        self,
        reader: R,
        writer: W,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.check()?;
        stdio::serve(self.inner.clone(), reader, writer, shutdown).await
    }

    /// Connects one client to this server in the same process: messages are handed over as
    /// JSON values, with no process, pipe or socket in between (see [`InMemoryConnection`]).
    /// The server side runs on the current tokio runtime.
    ///
    /// # Panics
    /// When called outside a tokio runtime, or when [`check`](Self::check) fails (a tool takes
    /// state nobody registered).
    pub fn connect_in_memory(&self) -> InMemoryConnection {
        if let Err(e) = self.check() {
            panic!("mcp-tasks: {e}");
        }
        memory::connect(self.inner.clone())
    }

    /// Serves over Streamable HTTP at `addr` (endpoint `/mcp`, default [`HttpConfig`]) until the
    /// process gets SIGTERM / Ctrl-C (this installs handlers for both); then in-flight responses
    /// finish (within [`ServerConfig::shutdown_grace`]) and this returns. Both protocol eras are
    /// served.
    #[cfg(feature = "http")]
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<()> {
        self.serve_http_with_shutdown(addr, shutdown_signal()).await
    }

    /// [`serve_http`](Self::serve_http) until `shutdown` resolves, for a host program that
    /// decides when the server stops; no signal handler is installed.
    #[cfg(feature = "http")]
    pub async fn serve_http_with_shutdown(
        self,
        addr: impl tokio::net::ToSocketAddrs,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_with(listener, HttpConfig::default(), shutdown)
            .await
    }

    /// Serves over Streamable HTTP on a bound listener with these settings until `shutdown`
    /// resolves, then finishes in-flight responses and returns. No signal handler is installed.
    #[cfg(feature = "http")]
    pub async fn serve_http_with(
        self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.check()?;
        http::serve(self.inner.clone(), listener, config, shutdown).await
    }

    /// The Streamable HTTP endpoint as an [`axum::Router`], to mount in an application of your
    /// own (`Router::merge`, `nest`, layers). `Host`/`Origin` checks apply only when set with
    /// [`HttpConfig::allowed_hosts`]; shutting down is the application's.
    #[cfg(feature = "http")]
    ///
    /// # Panics
    /// When [`check`](Self::check) fails.
    pub fn http_router(&self, config: HttpConfig) -> axum::Router {
        if let Err(e) = self.check() {
            panic!("mcp-tasks: {e}");
        }
        http::router(self.inner.clone(), config)
    }
}

/// Why a server cannot serve as configured (see [`Server::check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError(String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server cannot start: {}", self.0)
    }
}

impl std::error::Error for SetupError {}

impl From<SetupError> for std::io::Error {
    fn from(e: SetupError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}
