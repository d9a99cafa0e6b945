//! The server: era detection, dispatch by method, legacy sessions, and JSON-RPC errors. The only
//! layer that knows both protocol eras.

#[cfg(feature = "http")]
mod auth;
mod connection;
mod dispatch;
mod era;
#[cfg(feature = "http")]
mod http;
mod inline;
mod memory;
mod stdio;

#[cfg(feature = "http")]
pub use auth::{
    AuthFuture, Authenticator, BearerTokens, Principal, RequestParts, Unauthorized, auth_future,
};
pub use connection::Connection;
pub use era::Era;
#[cfg(feature = "http")]
pub use http::HttpConfig;
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
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Task time-to-live when a tool declares none (default 10 minutes).
    pub default_ttl: Duration,
    /// Suggested poll interval when a tool declares none (default 1 second).
    pub default_poll_interval: Duration,
    /// The longest TTL a client may ask for (legacy `task.ttl`; default 24 hours).
    pub max_ttl: Duration,
    /// How long in-flight requests may take to finish after the input closes (default 10 s).
    pub shutdown_grace: Duration,
    /// How long a cancelled task's tool may take to wind down before it is dropped (default 5 s).
    pub cancel_grace: Duration,
    /// How often expired tasks are swept (default 1 s).
    pub sweep_every: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            default_ttl: Duration::from_secs(600),
            default_poll_interval: Duration::from_secs(1),
            max_ttl: Duration::from_secs(24 * 3600),
            shutdown_grace: Duration::from_secs(10),
            cancel_grace: Duration::from_secs(5),
            sweep_every: Duration::from_secs(1),
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
    engine: OnceLock<Arc<TaskEngine>>,
}

impl ServerInner {
    /// The task engine, built on first use from the configuration and the store.
    pub(crate) fn engine(&self) -> &Arc<TaskEngine> {
        self.engine.get_or_init(|| {
            let c = &self.config;
            TaskEngine::new(
                self.store.clone(),
                EngineConfig {
                    default_ttl: c.default_ttl,
                    default_poll_interval: c.default_poll_interval,
                    max_ttl: c.max_ttl,
                    cancel_grace: c.cancel_grace,
                    sweep_every: c.sweep_every,
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
                engine: OnceLock::new(),
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

    /// Replaces the server-wide defaults.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.inner_mut().config = config;
        self
    }

    /// The secret that seals `requestState` (inline input, MRTR). The default is random per process,
    /// so a retry must come back to the same process; servers behind a load balancer, or that
    /// restart, set a shared secret here.
    pub fn request_state_key(mut self, secret: &[u8]) -> Self {
        self.inner_mut().state_key = crate::task::state::StateKey::from_secret(secret);
        self
    }

    /// Keeps tasks in this store instead of the in-memory default (a durable or shared store).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.inner_mut().store = store;
        self
    }

    /// The registered tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// Serves one client over this process's stdin and stdout until stdin closes or the process
    /// gets SIGTERM / Ctrl-C. Logging goes to stderr (see [`crate::init_logging`]).
    ///
    /// When stdin and stdout are pipes or sockets (as when a client spawns the server) they are
    /// driven by tokio's reactor, without a blocking thread per read and write.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let (reader, writer) = crate::transport::std_streams::std_streams();
        self.serve_io(reader, writer).await
    }

    /// Serves one client over any reader and writer (newline-delimited JSON-RPC).
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        stdio::serve(self.inner.clone(), reader, writer).await
    }

    /// Connects one client to this server in the same process: messages are handed over as
    /// JSON values, with no process, pipe or socket in between (see [`InMemoryConnection`]).
    /// The server side runs on the current tokio runtime.
    ///
    /// # Panics
    /// When called outside a tokio runtime.
    pub fn connect_in_memory(&self) -> InMemoryConnection {
        memory::connect(self.inner.clone())
    }

    /// Serves over Streamable HTTP at `addr` (endpoint `/mcp`, default [`HttpConfig`]) until the
    /// process gets SIGTERM / Ctrl-C; then in-flight responses finish (within
    /// [`ServerConfig::shutdown_grace`]) and this returns. Both protocol eras are served.
    #[cfg(feature = "http")]
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_with(listener, HttpConfig::default(), shutdown_signal())
            .await
    }

    /// Serves over Streamable HTTP on a bound listener with these settings until `shutdown`
    /// resolves, then finishes in-flight responses and returns.
    #[cfg(feature = "http")]
    pub async fn serve_http_with(
        self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        http::serve(self.inner.clone(), listener, config, shutdown).await
    }

    /// The Streamable HTTP endpoint as an [`axum::Router`], to mount in an application of your
    /// own (`Router::merge`, `nest`, layers). `Host`/`Origin` checks apply only when set with
    /// [`HttpConfig::allowed_hosts`]; shutting down is the application's.
    #[cfg(feature = "http")]
    pub fn http_router(&self, config: HttpConfig) -> axum::Router {
        http::router(self.inner.clone(), config)
    }
}
