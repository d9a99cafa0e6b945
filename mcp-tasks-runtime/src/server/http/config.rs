//! The endpoint's settings: [`HttpConfig`] and which hosts are let in.

use super::*;

/// Which `Host` / `Origin` values are let in (DNS-rebinding protection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum HostPolicy {
    /// Loopback names only when serving on a loopback address; anything otherwise.
    Auto,
    Any,
    Only(Vec<String>),
}

/// Settings of the Streamable HTTP endpoint.
#[derive(Clone)]
pub struct HttpConfig {
    pub(super) path: String,
    pub(super) max_body: usize,
    pub(super) header_timeout: Duration,
    pub(super) body_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) session_idle: Duration,
    pub(super) max_sessions: usize,
    pub(super) session_backlog: usize,
    pub(super) sse_buffer: usize,
    pub(super) sse_retry: Duration,
    pub(super) sse_replay: usize,
    pub(super) sse_resume_window: Duration,
    pub(super) hosts: HostPolicy,
    pub(super) authenticator: Option<Arc<dyn Authenticator>>,
    pub(super) ops_address: Option<std::net::SocketAddr>,
    #[cfg(feature = "prometheus")]
    pub(super) metrics: Option<crate::server::metrics::Metrics>,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("max_body", &self.max_body)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .field("session_idle", &self.session_idle)
            .field("max_sessions", &self.max_sessions)
            .field("session_backlog", &self.session_backlog)
            .field("sse_buffer", &self.sse_buffer)
            .field("sse_retry", &self.sse_retry)
            .field("sse_replay", &self.sse_replay)
            .field("sse_resume_window", &self.sse_resume_window)
            .field("hosts", &self.hosts)
            .field("authenticator", &self.authenticator.is_some())
            .field("ops_address", &self.ops_address)
            .finish()
    }
}

/// The shortest connection deadline: below it a client on a slow link could not send anything.
const MIN_TIMEOUT: Duration = Duration::from_millis(100);

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            max_body: 4 * 1024 * 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 10_000,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            session_backlog: 256,
            sse_buffer: 1024,
            sse_retry: Duration::from_secs(1),
            sse_replay: 128,
            sse_resume_window: Duration::from_secs(60),
            hosts: HostPolicy::Auto,
            authenticator: None,
            ops_address: None,
            #[cfg(feature = "prometheus")]
            metrics: None,
        }
    }
}

impl HttpConfig {
    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The largest request body accepted (default 4 MiB); larger ones get HTTP 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a connection may take to send a request's headers, counted from when it opened
    /// or from the end of the response to its last request (default 10 s). A connection that
    /// has not sent them by then is closed: it bounds both a client that stalls half-way
    /// through its headers and an idle keep-alive connection. A connection busy with a response
    /// (an SSE stream, however long) is never idle. At least 100 ms.
    ///
    /// Applies to [`Server::serve_http`](crate::Server::serve_http); a router you serve yourself
    /// ([`Server::http_router`](crate::Server::http_router)) has your server's connection rules.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout.max(MIN_TIMEOUT);
        self
    }

    /// How long a request's body may take to arrive once its headers have (default 30 s). A
    /// body not complete by then is answered HTTP 408 and the connection closed. At least
    /// 100 ms.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout.max(MIN_TIMEOUT);
        self
    }

    /// How many connections [`Server::serve_http`](crate::Server::serve_http) keeps open at
    /// once (default 10,000, at least 1). A connection beyond it is answered HTTP 503 at once
    /// and closed, so the server never stops accepting and the connections it has go on. Keep
    /// it below the process's open-file limit (`ulimit -n`), which also counts the store's files
    /// and sockets.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long a legacy session may sit idle (no request, no open GET stream) before it ends
    /// (default 30 minutes). Its id then answers 404, and the client starts a new session.
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// How many legacy sessions may be open at once (default 10,000). Over it, `initialize`
    /// answers `-32010` `Limit reached: …` with `data: {"limit": "sessions", "max": N}` (HTTP 200)
    /// and opens nothing; the sessions already open go on.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// How many server-to-client requests a legacy session keeps for a stream to come when the
    /// client has none open that can take them (default 256). Over it, the request is refused:
    /// the tool that asked gets [`InputError::LimitReached`](crate::InputError::LimitReached)
    /// (`-32010`, `"limit": "session_backlog"`) at once; nothing waiting is dropped.
    pub fn session_backlog(mut self, n: usize) -> Self {
        self.session_backlog = n;
        self
    }

    /// How many messages an SSE response (or a session's GET stream) buffers for a client that
    /// reads slowly (default 1,024, at least 1). A request that finds the buffer full goes to
    /// another of the session's streams or its backlog (see [`session_backlog`](Self::session_backlog));
    /// a notification (progress, log) is dropped. The reply to the request itself never is.
    pub fn sse_buffer(mut self, messages: usize) -> Self {
        self.sse_buffer = messages.max(1);
        self
    }

    /// The reconnection delay a legacy session's SSE stream asks of its client (the `retry` of
    /// its first event, default 1 s): after a stream breaks or the server ends it (see
    /// [`ToolContext::close_stream`](crate::ToolContext::close_stream)), the client waits this
    /// long before it resumes the stream with `GET` and `Last-Event-ID`.
    pub fn sse_retry(mut self, retry: Duration) -> Self {
        self.sse_retry = retry;
        self
    }

    /// How many of the events sent on each SSE stream of a legacy session are kept for a client
    /// that resumes it (default 128, at least 1), and at most 1 MiB of them (the newest event is
    /// always kept). A client resuming from an older event gets HTTP 400 with `-32600` saying
    /// what is lost (the events after its `Last-Event-ID` are no longer kept), rather than a
    /// stream with a hole in it. Besides the streams in use, a session keeps the 32 streams that
    /// finished last, and at most 4 MiB of their events (the newest finished one always).
    pub fn sse_replay(mut self, events: usize) -> Self {
        self.sse_replay = events.max(1);
        self
    }

    /// How long the request of a legacy session's POST whose SSE stream broke before the reply
    /// waits for its client to resume the stream (default 60 s). The 2025-11-25 protocol says a
    /// disconnection is not a cancellation, so the request goes on meanwhile and what it sends
    /// waits for the client; if no client resumes the stream by then, the request is cancelled,
    /// as a `notifications/cancelled` would. (A 2026-07-28 request is cancelled as soon as its
    /// stream closes: that protocol has no resumption.)
    pub fn sse_resume_window(mut self, window: Duration) -> Self {
        self.sse_resume_window = window;
        self
    }

    /// Lets in only requests whose `Host` and `Origin` (when sent) name one of these hosts (no
    /// port; `[::1]` in brackets); others get HTTP 403. By default a server bound to a loopback
    /// address allows `localhost`, `127.0.0.1` and `[::1]`, and one bound elsewhere allows any.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = HostPolicy::Only(
            hosts
                .into_iter()
                .map(|h| h.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Lets in any `Host` and `Origin` (behind a proxy that checks them, for instance).
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = HostPolicy::Any;
        self
    }

    /// Authenticates every request; tasks are bound to the principal it names.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// Serves the operations endpoints, `GET /healthz` (alive) and `GET /readyz` (the task store
    /// answers within a second and the server is not shutting down: `200`, else `503` with a
    /// JSON `reason`), on a listener of their own at `address` (port 0 picks a free one)
    /// instead of beside the MCP endpoint (the default), so that they can be kept off the
    /// address clients reach. Not authenticated, not subject to the host check.
    pub fn ops_address(mut self, address: std::net::SocketAddr) -> Self {
        self.ops_address = Some(address);
        self
    }

    /// Serves `GET /metrics` (Prometheus's text format) beside `/healthz` and `/readyz` (on the
    /// MCP listener, or on [`ops_address`](Self::ops_address)), from this recorder (feature
    /// `prometheus`).
    #[cfg(feature = "prometheus")]
    pub fn metrics(mut self, metrics: crate::server::metrics::Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    pub(super) fn resolved(mut self, loopback: bool) -> Self {
        if self.hosts == HostPolicy::Auto {
            self.hosts = if loopback {
                HostPolicy::Only(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()])
            } else {
                HostPolicy::Any
            };
        }
        self
    }
}
