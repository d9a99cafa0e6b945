//! The serve entry points' values: [`ServeStdio`], [`ServeIo`], [`ServeHttp`]. Each is awaited
//! (`IntoFuture`) and takes the same modifier, [`with_graceful_shutdown`](ServeIo::with_graceful_shutdown);
//! without it the server stops on SIGTERM / Ctrl-C ([`shutdown_signal`]). The two that serve one
//! client also take [`principal`](ServeIo::principal): who that client is.

use super::inner::ServerInner;
use super::stdio::shutdown_signal;
use crate::tool::Principal;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

/// The future a host program stops the server with.
type Shutdown = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What awaiting a serve value runs.
type Serving = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'static>>;

fn shutdown_or_signal(shutdown: Option<Shutdown>) -> Shutdown {
    shutdown.unwrap_or_else(|| Box::pin(shutdown_signal()))
}

/// [`shutdown_or_signal`], then the drain period ([`ServerConfig::drain`](super::ServerConfig::drain)):
/// the serve loop goes on serving (polls above all) while the running tasks get the period to
/// finish, and stops once they have or the period is over.
fn shutdown_then_drain(server: &Arc<ServerInner>, shutdown: Option<Shutdown>) -> Shutdown {
    let shutdown = shutdown_or_signal(shutdown);
    let period = server.config.drain;
    if period.is_zero() {
        return shutdown;
    }
    let engine = server.engine().clone();
    Box::pin(async move {
        shutdown.await;
        tracing::info!(
            ?period,
            "draining: running tasks get the drain period to finish"
        );
        engine.drain(period).await;
    })
}

/// Serving one client over this process's stdin and stdout: [`Server::serve_stdio`](super::Server::serve_stdio).
/// Await it; it ends when stdin closes or the server is told to stop.
#[must_use = "a serve value does nothing until it is awaited"]
pub struct ServeStdio {
    server: Arc<ServerInner>,
    shutdown: Option<Shutdown>,
    principal: Option<Principal>,
}

impl ServeStdio {
    pub(super) fn new(server: Arc<ServerInner>) -> Self {
        ServeStdio {
            server,
            shutdown: None,
            principal: None,
        }
    }

    /// Runs the client as this principal; see [`ServeIo::principal`].
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Stops when `shutdown` resolves (or stdin closes) instead of on SIGTERM / Ctrl-C: no
    /// signal handler is installed. When `shutdown` resolves, requests in flight are cancelled
    /// (as on SIGTERM); when stdin closes, they get
    /// [`ServerConfig::shutdown_grace`](super::ServerConfig::shutdown_grace) to finish.
    pub fn with_graceful_shutdown(
        mut self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(shutdown));
        self
    }
}

impl IntoFuture for ServeStdio {
    type Output = std::io::Result<()>;
    type IntoFuture = Serving;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let (reader, writer) = crate::transport::std_streams::std_streams();
            let shutdown = shutdown_then_drain(&self.server, self.shutdown);
            super::stdio::serve(self.server, self.principal, reader, writer, shutdown).await
        })
    }
}

impl std::fmt::Debug for ServeStdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeStdio")
            .field("graceful_shutdown", &self.shutdown.is_some())
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

/// Serving one client over a reader and a writer: [`Server::serve_io`](super::Server::serve_io).
/// Await it; it ends when the reader ends or the server is told to stop.
#[must_use = "a serve value does nothing until it is awaited"]
pub struct ServeIo<R, W> {
    server: Arc<ServerInner>,
    reader: R,
    writer: W,
    shutdown: Option<Shutdown>,
    principal: Option<Principal>,
}

impl<R, W> ServeIo<R, W> {
    pub(super) fn new(server: Arc<ServerInner>, reader: R, writer: W) -> Self {
        ServeIo {
            server,
            reader,
            writer,
            shutdown: None,
            principal: None,
        }
    }

    /// Runs the client as this principal: tools see it
    /// ([`RequestInfo::principal`](crate::RequestInfo::principal)), its tasks belong to it, and
    /// its scopes ([`Principal::with_scopes`]) are checked, exactly as for an HTTP request
    /// authenticated as `principal` (so the two share tasks on a shared store, and a tool with
    /// `scope = "..."` refuses it without that scope, with the same JSON-RPC error).
    ///
    /// Without it the client is anonymous and its tasks, of both protocol eras, belong to the
    /// server's anonymous owner, as over HTTP without an authenticator. Either way a task
    /// belongs to an owner that outlives the connection and the process: a restarted server on
    /// the same durable store serves the tasks it had, and servers sharing a store read each
    /// other's tasks. On stdio this is safe because only the program that started the server
    /// (the host, as its operating-system user) can write to its stdin, and that user can read
    /// the store anyway; the task id, random and unguessable, still keeps each task from other
    /// anonymous clients of a shared store. A program that serves several people over sockets
    /// with `serve_io` names each connection's principal here.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Stops when `shutdown` resolves (or the reader ends) instead of on SIGTERM / Ctrl-C: no
    /// signal handler is installed. When `shutdown` resolves, requests in flight are cancelled
    /// (as on SIGTERM); when the reader ends, they get
    /// [`ServerConfig::shutdown_grace`](super::ServerConfig::shutdown_grace) to finish.
    pub fn with_graceful_shutdown(
        mut self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(shutdown));
        self
    }
}

impl<R, W> IntoFuture for ServeIo<R, W>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    type Output = std::io::Result<()>;
    type IntoFuture = Serving;

    fn into_future(self) -> Self::IntoFuture {
        let shutdown = shutdown_then_drain(&self.server, self.shutdown);
        Box::pin(super::stdio::serve(
            self.server,
            self.principal,
            self.reader,
            self.writer,
            shutdown,
        ))
    }
}

impl<R, W> std::fmt::Debug for ServeIo<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeIo")
            .field("graceful_shutdown", &self.shutdown.is_some())
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "http")]
pub use self::http::*;

#[cfg(feature = "http")]
mod http {
    use super::*;
    use crate::server::http::HttpConfig;
    use tokio::net::TcpListener;

    /// The listener [`IntoListener::into_listener`] makes: bound when awaited.
    pub type ListenerFuture = Pin<Box<dyn Future<Output = std::io::Result<TcpListener>> + Send>>;

    /// Where [`Server::serve_http`](crate::Server::serve_http) listens: an address to bind
    /// (`"127.0.0.1:8080"`, a `String`, a [`SocketAddr`](std::net::SocketAddr), `(host, port)`;
    /// port 0 picks a free port) or a [`TcpListener`] already bound (to learn its port first,
    /// for instance).
    pub trait IntoListener {
        /// The listener, bound when the returned future is awaited.
        fn into_listener(self) -> ListenerFuture;
    }

    impl IntoListener for TcpListener {
        fn into_listener(self) -> ListenerFuture {
            Box::pin(std::future::ready(Ok(self)))
        }
    }

    impl IntoListener for std::net::SocketAddr {
        fn into_listener(self) -> ListenerFuture {
            Box::pin(TcpListener::bind(self))
        }
    }

    impl IntoListener for String {
        fn into_listener(self) -> ListenerFuture {
            Box::pin(async move { TcpListener::bind(self).await })
        }
    }

    impl IntoListener for &str {
        fn into_listener(self) -> ListenerFuture {
            self.to_owned().into_listener()
        }
    }

    impl IntoListener for &String {
        fn into_listener(self) -> ListenerFuture {
            self.clone().into_listener()
        }
    }

    impl IntoListener for (std::net::IpAddr, u16) {
        fn into_listener(self) -> ListenerFuture {
            std::net::SocketAddr::from(self).into_listener()
        }
    }

    impl IntoListener for (&str, u16) {
        fn into_listener(self) -> ListenerFuture {
            let (host, port) = (self.0.to_owned(), self.1);
            Box::pin(async move { TcpListener::bind((host.as_str(), port)).await })
        }
    }

    /// Serving Streamable HTTP: [`Server::serve_http`](crate::Server::serve_http). Await it; it
    /// ends when the server is told to stop, once in-flight responses have finished.
    #[must_use = "a serve value does nothing until it is awaited"]
    pub struct ServeHttp {
        server: Arc<ServerInner>,
        listener: ListenerFuture,
        config: HttpConfig,
        shutdown: Option<Shutdown>,
    }

    impl ServeHttp {
        pub(in crate::server) fn new(server: Arc<ServerInner>, listener: ListenerFuture) -> Self {
            ServeHttp {
                server,
                listener,
                config: HttpConfig::default(),
                shutdown: None,
            }
        }

        /// Serves with these endpoint settings ([`HttpConfig::default`] otherwise).
        pub fn config(mut self, config: HttpConfig) -> Self {
            self.config = config;
            self
        }

        /// Stops when `shutdown` resolves instead of on SIGTERM / Ctrl-C: no signal handler is
        /// installed. In-flight responses then finish (within
        /// [`ServerConfig::shutdown_grace`](crate::ServerConfig::shutdown_grace)) before the
        /// future returns.
        pub fn with_graceful_shutdown(
            mut self,
            shutdown: impl Future<Output = ()> + Send + 'static,
        ) -> Self {
            self.shutdown = Some(Box::pin(shutdown));
            self
        }
    }

    impl IntoFuture for ServeHttp {
        type Output = std::io::Result<()>;
        type IntoFuture = Serving;

        fn into_future(self) -> Self::IntoFuture {
            Box::pin(async move {
                let listener = self.listener.await?;
                let shutdown = shutdown_then_drain(&self.server, self.shutdown);
                crate::server::http::serve(self.server, listener, self.config, shutdown).await
            })
        }
    }

    impl std::fmt::Debug for ServeHttp {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ServeHttp")
                .field("config", &self.config)
                .field("graceful_shutdown", &self.shutdown.is_some())
                .finish_non_exhaustive()
        }
    }
}
