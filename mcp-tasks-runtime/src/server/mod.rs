//! The server: era detection, dispatch by method, legacy sessions, and JSON-RPC errors. The only
//! layer that knows both protocol eras.
//!
//! Data flows one way through it (ARCHITECTURE.md): the transports (`stdio.rs`, `memory.rs`,
//! `http/`) own their loops and hand each message to `driver.rs`, which keeps requests in flight
//! on the per-peer state (`connection.rs`) and calls `dispatch.rs` with the connection seen only
//! as a `Peer` (`peer.rs`: send, request, owner, session). Dispatch decides how a `tools/call`
//! runs with the pure function in `plan.rs` and carries the plan out on the task engine.

#[cfg(feature = "http")]
mod auth;
mod authz;
mod builder;
mod call;
mod config;
mod connection;
pub(crate) mod dispatch;
mod driver;
mod era;
mod fallback;
#[cfg(feature = "http")]
mod http;
mod incoming;
mod inline;
mod inner;
mod limits;
mod listen;
mod memory;
#[cfg(feature = "oauth")]
pub mod oauth;
mod page;
mod peer;
mod plan;
mod prompts;
mod resources;
#[cfg(feature = "rmcp")]
pub(crate) mod rmcp_bridge;
mod serve;
mod session;
mod setup;
mod skills;
mod stdio;
mod tasks;

pub use crate::task::executor::{Executor, Placement};
#[cfg(feature = "http")]
pub use auth::{AuthFuture, Authenticator, BearerTokens, RequestParts, Unauthorized};
pub use builder::ServerBuilder;
pub use config::{Role, ServerConfig};
#[cfg(feature = "http")]
pub use http::HttpConfig;
pub use limits::Limits;
pub use memory::{InMemoryConnection, InMemoryReceiver, InMemorySender};
#[cfg(feature = "http")]
#[doc(hidden)]
// the future of `IntoListener`, whose impls (address types, listeners) are all here
pub use serve::ListenerFuture;
#[cfg(feature = "http")]
pub use serve::{IntoListener, ServeHttp};
#[cfg(feature = "prometheus")]
mod metrics;
#[cfg(feature = "prometheus")]
pub use metrics::{Metrics, MetricsError};
pub use serve::{ServeIo, ServeStdio};
pub use setup::{SetupError, SetupProblem};
pub use stdio::shutdown_signal;

use inner::ServerInner;
use std::sync::Arc;

/// An MCP server: a name, a version, tools, and how to serve them.
///
/// Set one up with [`Server::builder`], which checks everything in
/// [`build`](ServerBuilder::build); a `Server` is then only served, never configured. It is a
/// cheap handle (`Clone` shares it): serve it once, or in several ways at once (several
/// [`serve_io`](Self::serve_io) connections, HTTP, in-memory clients), all over the same tools,
/// state and tasks.
///
/// | serve | how |
/// |---|---|
/// | [`serve_stdio`](Self::serve_stdio) | one client on stdin / stdout |
/// | [`serve_io`](Self::serve_io) | one client on any reader and writer |
/// | [`serve_http`](Self::serve_http) (feature `http`) | Streamable HTTP on an address or a bound listener |
/// | [`http_router`](Self::http_router) (feature `http`) | the HTTP endpoint as an `axum::Router` in an application of yours |
/// | [`connect_in_memory`](Self::connect_in_memory) | one client in the same process, messages as values |
///
/// Each `serve_*` is awaited, and stops on SIGTERM / Ctrl-C unless given a future of the host's
/// with `.with_graceful_shutdown(future)`.
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
///     let server = Server::builder("hello", "1.0.0").tool::<greet>().build()?;
///     server.serve_stdio().await
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

impl Server {
    /// Starts the setup of a server with this name and version (its `serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }
}

impl ServerBuilder {
    /// Checks the whole setup and makes the server. `Err` lists **every** problem found, not
    /// only the first (see [`SetupProblem`]): two tools of one name, a tool's bad
    /// `x-mcp-header`, a `State<T>` a tool takes that nobody registered, a `promote_after` for a
    /// tool that is missing or not `optional`, a tool named like a companion tool of the
    /// [`task_fallback`](Self::task_fallback), and [`ServerConfig`] values out of range.
    ///
    /// It may be called again (each call makes a separate server, with its own in-memory store
    /// unless [`store`](Self::store) was set); it never panics.
    pub fn build(&self) -> Result<Server, SetupError> {
        Ok(Server {
            inner: Arc::new(self.inner()?),
        })
    }
}

impl Server {
    /// The handle that tells clients subscribed to a resource that it changed (see
    /// [`ResourceNotifier`](crate::resource::ResourceNotifier)).
    pub fn resource_notifier(&self) -> crate::resource::ResourceNotifier {
        self.inner.resource_notifier.clone()
    }

    /// Settles the tasks running in this process: each fails with a status message saying the
    /// server stopped, and its tool is cancelled; a durable task (`#[tool(durable)]`) is
    /// released instead, for another instance to claim at once. The serve methods call this when
    /// serving ends; call it yourself when you serve [`http_router`](Self::http_router) in your
    /// own application, before it exits. Returns how many tasks were settled.
    pub async fn stop_tasks(&self) -> usize {
        self.inner.engine().stop_tasks().await
    }

    /// Claims the queued durable task `id` and runs its tool's body in this process: for an
    /// application's job system (see [`Executor`]). `Ok(false)` when the task is not queued
    /// (another instance claimed it, it ended, or it does not exist) or this server has no
    /// durable tool of its name.
    pub async fn run_queued(
        &self,
        id: &crate::protocol::task::TaskId,
    ) -> Result<bool, crate::protocol::RpcError> {
        self.inner.engine().run_queued(id).await
    }

    /// Serves one client over this process's stdin and stdout until stdin closes or the process
    /// gets SIGTERM / Ctrl-C (this installs handlers for both; add
    /// [`.with_graceful_shutdown(future)`](ServeStdio::with_graceful_shutdown) to stop on a
    /// future of your own instead). Logging goes to stderr (install a `tracing`
    /// subscriber that writes there, or call `init_logging`, feature `logging`).
    ///
    /// When stdin and stdout are pipes or sockets (as when a client spawns the server) they are
    /// driven by tokio's reactor, without a blocking thread per read and write.
    pub fn serve_stdio(&self) -> ServeStdio {
        ServeStdio::new(self.inner.clone())
    }

    /// Serves one client over any reader and writer (newline-delimited JSON-RPC) until the reader
    /// ends or the process gets SIGTERM / Ctrl-C (this installs handlers for both; add
    /// [`.with_graceful_shutdown(future)`](ServeIo::with_graceful_shutdown) to stop on a future
    /// of your own instead).
    pub fn serve_io<R, W>(&self, reader: R, writer: W) -> ServeIo<R, W>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        ServeIo::new(self.inner.clone(), reader, writer)
    }

    /// Connects one client to this server in the same process: messages are handed over as
    /// JSON values, with no process, pipe or socket in between (see [`InMemoryConnection`]).
    /// The server side runs on the current tokio runtime.
    ///
    /// # Panics
    /// When called outside a tokio runtime.
    pub fn connect_in_memory(&self) -> InMemoryConnection {
        memory::connect(self.inner.clone(), None)
    }

    /// [`connect_in_memory`](Self::connect_in_memory) for a client that is `principal`: it owns
    /// the tasks the client creates, tools see it, and its scopes are checked as an HTTP
    /// caller's are (as [`ServeIo::principal`] does for `serve_io`).
    ///
    /// # Panics
    /// When called outside a tokio runtime.
    pub fn connect_in_memory_as(&self, principal: crate::tool::Principal) -> InMemoryConnection {
        memory::connect(self.inner.clone(), Some(principal))
    }

    /// Serves over Streamable HTTP (endpoint `/mcp`, [`HttpConfig::default`] unless set with
    /// [`.config(...)`](ServeHttp::config)) on `listener`: an address to bind (`"127.0.0.1:8080"`,
    /// a `String`, a `SocketAddr`) or a bound `tokio::net::TcpListener` (see [`IntoListener`]).
    /// Serves until the process gets SIGTERM / Ctrl-C (this installs handlers for both; add
    /// [`.with_graceful_shutdown(future)`](ServeHttp::with_graceful_shutdown) to stop on a future
    /// of your own instead); then in-flight responses finish (within
    /// [`ServerConfig::shutdown_grace`]) and the future returns. Both protocol eras are served.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_tasks_runtime::Server) -> std::io::Result<()> {
    /// use mcp_tasks_runtime::server::HttpConfig;
    ///
    /// server
    ///     .serve_http("0.0.0.0:8080")
    ///     .config(HttpConfig::default().allowed_hosts(["mcp.example.com"]))
    ///     .await
    /// # }
    /// ```
    #[cfg(feature = "http")]
    pub fn serve_http(&self, listener: impl IntoListener) -> ServeHttp {
        ServeHttp::new(self.inner.clone(), listener.into_listener())
    }

    /// The Streamable HTTP endpoint as an [`axum::Router`], to mount in an application of your
    /// own (`Router::merge`, `nest`, layers). `Host`/`Origin` checks apply only when set with
    /// [`HttpConfig::allowed_hosts`]; shutting down is the application's (call
    /// [`stop_tasks`](Self::stop_tasks) before it exits). `/healthz` and `/readyz` are not in
    /// it: [`serve_http`](Self::serve_http) adds them.
    #[cfg(feature = "http")]
    pub fn http_router(&self, config: HttpConfig) -> axum::Router {
        http::router(self.inner.clone(), config)
    }
}

#[cfg(feature = "rmcp")]
impl rmcp_bridge::TaskTools {
    /// The tools of `server`, for an rmcp server.
    pub fn new(server: &Server) -> Self {
        Self::of(server.inner.clone())
    }
}
