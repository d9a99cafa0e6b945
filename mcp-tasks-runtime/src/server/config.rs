//! [`ServerConfig`]: the server-wide settings, set with methods like [`Limits`](super::Limits)
//! and [`HttpConfig`](super::HttpConfig), checked by [`ServerBuilder::build`](super::ServerBuilder::build).

use std::time::Duration;

/// The shortest [`ServerConfig::lease`]: a lease must outlast the time between two renewals.
pub(crate) const MIN_LEASE: Duration = Duration::from_millis(100);

/// The shortest [`ServerConfig::keepalive_interval`]: shorter would flood the client.
pub(crate) const MIN_KEEPALIVE: Duration = Duration::from_millis(100);

/// Settings that apply to every tool unless the tool says otherwise.
///
/// ```
/// use mcp_tasks_runtime::ServerConfig;
/// use std::time::Duration;
///
/// let config = ServerConfig::default()
///     .default_ttl(Duration::from_secs(3600))
///     .task_deadline(Duration::from_secs(600));
/// ```
///
/// A task has two separate lifetimes: how long it may *run* ([`task_deadline`](Self::task_deadline),
/// no limit by default) and how long its record is *kept* (its `ttl`, reported to clients: for
/// [`default_ttl`](Self::default_ttl) after the task ended). A task that runs, or waits for a
/// person's answer, longer than its `ttl` is not ended by it.
///
/// | setting | default |
/// |---|---|
/// | [`default_ttl`](Self::default_ttl) | 10 minutes |
/// | [`task_deadline`](Self::task_deadline) | none |
/// | [`lease`](Self::lease) | 15 s (at least 100 ms) |
/// | [`default_poll_interval`](Self::default_poll_interval) | 1 s |
/// | [`max_ttl`](Self::max_ttl) | 24 hours |
/// | [`shutdown_grace`](Self::shutdown_grace) | 10 s |
/// | [`cancel_grace`](Self::cancel_grace) | 5 s |
/// | [`sweep_every`](Self::sweep_every) | 1 s (more than zero) |
/// | [`promote_after`](Self::promote_after) | none (off) |
/// | [`stdio_spin`](Self::stdio_spin) | zero (off) |
/// | [`keepalive_interval`](Self::keepalive_interval) | 10 s (at least 100 ms; `None`: off) |
/// | [`page_size`](Self::page_size) | 500 (more than zero) |
/// | [`store_patience`](Self::store_patience) | 60 s |
/// | [`durable_attempts`](Self::durable_attempts) | 3 (at least 1) |
/// | [`drain`](Self::drain) | zero (off) |
/// | [`role`](Self::role) | [`Role::Both`] |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub(crate) default_ttl: Duration,
    pub(crate) task_deadline: Option<Duration>,
    pub(crate) lease: Duration,
    pub(crate) default_poll_interval: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) cancel_grace: Duration,
    pub(crate) sweep_every: Duration,
    pub(crate) promote_after: Option<Duration>,
    pub(crate) stdio_spin: Duration,
    pub(crate) keepalive_interval: Option<Duration>,
    pub(crate) page_size: usize,
    pub(crate) store_patience: Duration,
    pub(crate) list_only_permitted_tools: bool,
    pub(crate) durable_attempts: u32,
    pub(crate) drain: Duration,
    pub(crate) role: Role,
}

/// What a server instance does with durable tasks (`#[tool(durable)]`) and clients
/// ([`ServerConfig::role`]): scale execution by adding workers on the same shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Role {
    /// Serves clients and runs tasks, durable ones included (the default).
    #[default]
    Both,
    /// Serves clients; its durable tasks wait in the store for a worker to claim them.
    Front,
    /// Runs the durable tasks it claims from the store; serves no MCP client (over HTTP only
    /// `/healthz`, `/readyz` and `/metrics`).
    Worker,
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
            stdio_spin: Duration::ZERO,
            keepalive_interval: Some(Duration::from_secs(10)),
            page_size: 500,
            store_patience: Duration::from_secs(60),
            list_only_permitted_tools: true,
            durable_attempts: 3,
            drain: Duration::ZERO,
            role: Role::Both,
        }
    }
}

impl ServerConfig {
    /// How long a task's record is kept, its `ttl` on the wire, when the tool declares none:
    /// a finished task stays readable this long after it ended (default 10 minutes). It does not
    /// limit how long a task runs.
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// How long a task may run, from creation, before it fails with a status message that says
    /// its deadline ended it (default `None`: no limit; a tool can also limit itself with
    /// `tokio::time::timeout`). Takes a `Duration` or an `Option<Duration>`.
    pub fn task_deadline(mut self, deadline: impl Into<Option<Duration>>) -> Self {
        self.task_deadline = deadline.into();
        self
    }

    /// How long this server's lease on its running tasks lasts (default 15 s). It is renewed at
    /// least every third of that while the server runs; if the process dies, any server sharing
    /// the store fails the tasks it was running ("the server running this task stopped") within
    /// `lease` plus one [`sweep_every`](Self::sweep_every). At least 100 ms
    /// ([`ServerBuilder::build`](super::ServerBuilder::build) refuses less).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How long a task's tool keeps trying its calls to the store while the store cannot be
    /// reached (default 60 s): saying its status, asking for input and waiting for the answer,
    /// taking the answer, publishing an output. Each call is tried again with a pause that
    /// doubles from 50 ms up to 2 s, so a restart of the store within this time loses nothing a
    /// tool was waiting for; past it, the call fails as before (an `elicit` or `sample` with
    /// [`InputError::Store`](crate::InputError::Store) naming the store's failure). The
    /// task's outcome is recorded with retries for as long as it takes, whatever this says.
    pub fn store_patience(mut self, patience: Duration) -> Self {
        self.store_patience = patience;
        self
    }

    /// Suggested poll interval when a tool declares none (default 1 second).
    pub fn default_poll_interval(mut self, interval: Duration) -> Self {
        self.default_poll_interval = interval;
        self
    }

    /// The longest `ttl` a client may ask for (legacy `task.ttl`; default 24 hours).
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// How long in-flight requests may take to finish after the input closes, or after the
    /// HTTP server was told to shut down (default 10 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How many runs a durable task's body may have in all (default 3, at least 1): each time
    /// the instance running it dies or drains, another runs it again, until this many runs have
    /// died; then the task fails, saying how many.
    pub fn durable_attempts(mut self, runs: u32) -> Self {
        self.durable_attempts = runs.max(1);
        self
    }

    /// The drain period of a graceful shutdown (default zero: none). When the server is told
    /// to stop, `/readyz` answers 503 at once and tools see
    /// [`ToolContext::draining`](crate::ToolContext::draining); running tasks get this long to
    /// finish; then durable tasks still running are released for another instance to claim at
    /// once, and the others fail as stopped.
    pub fn drain(mut self, period: Duration) -> Self {
        self.drain = period;
        self
    }

    /// What this instance does with clients and durable tasks (default [`Role::Both`]).
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// How long a cancelled task's tool may take to wind down before it is dropped (default 5 s).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// How often the lifetime rules (deadline, `ttl`, leases) are applied (default 1 s; more
    /// than zero, [`ServerBuilder::build`](super::ServerBuilder::build) refuses zero).
    pub fn sweep_every(mut self, every: Duration) -> Self {
        self.sweep_every = every;
        self
    }

    /// Promotion of long inline calls, server-wide (default `None`: off). With `Some(after)`, a
    /// call of a `task_support = "optional"` tool from a 2026-07-28 client that declared the tasks
    /// extension starts inline; if it has not finished after `after`, the client gets a
    /// `CreateTaskResult` and the same run goes on as that task (nothing restarts). A call that
    /// finishes sooner answers inline. A tool's own `#[tool(promote_after = "...")]` wins over
    /// this, and [`ServerBuilder::promote_after`](super::ServerBuilder::promote_after) (for one
    /// tool) wins over both. Takes a `Duration` or an `Option<Duration>`.
    pub fn promote_after(mut self, after: impl Into<Option<Duration>>) -> Self {
        self.promote_after = after.into();
        self
    }

    /// How long the stdio loop ([`Server::serve_stdio`](super::Server::serve_stdio),
    /// [`Server::serve_io`](super::Server::serve_io)) keeps polling its input after it last read
    /// or wrote a message, before its thread sleeps until input comes (default
    /// `Duration::ZERO`: off, the thread sleeps at once).
    ///
    /// A client that sends its next request within that time is answered without a thread
    /// being woken. It helps on a virtual machine whose idle vCPU halts: there that wake costs
    /// tens of microseconds, more than an inline call's own work, and about 50 µs of spin
    /// removes it for a client that calls in a loop. The cost is about this much CPU time after
    /// each burst of messages (the window counts from the last message read or written), none
    /// while the connection is idle; on a laptop it buys little, hence off by default.
    pub fn stdio_spin(mut self, spin: Duration) -> Self {
        self.stdio_spin = spin;
        self
    }

    /// How long a call may wait with nothing sent before the server keeps it alive (default
    /// `Some(10 s)`; at least 100 ms, [`ServerBuilder::build`](super::ServerBuilder::build)
    /// refuses less; `None` turns keepalive off). Takes a `Duration` or an `Option<Duration>`.
    ///
    /// Hosts give up on a call that stays silent too long (the TypeScript SDK's request timeout
    /// is 60 s unless the host resets it on progress, `resetTimeoutOnProgress`), and proxies close
    /// idle streams. So while a `tools/call` waits (an inline call, the wait before a promotion,
    /// a companion tool of the fallback) and its request carried `_meta.progressToken`, the
    /// server sends `notifications/progress` for that token whenever this interval passes with
    /// none sent: its `message` is the tool's latest [`ToolContext::status`](crate::ToolContext::status)
    /// (else its latest progress message), its `progress` a hair above the last value sent, so
    /// that values increase with each notification, as the spec requires, across the tool's own
    /// [`ToolContext::progress`](crate::ToolContext::progress) and these (a tool's value that
    /// does not increase is sent as the next one above). A request without a progress token
    /// gets nothing extra and costs no timer.
    ///
    /// Over Streamable HTTP, an SSE stream (the response to a POST, a legacy session's GET
    /// stream) with nothing to send gets a `: keep-alive` comment line at the same interval.
    pub fn keepalive_interval(mut self, every: impl Into<Option<Duration>>) -> Self {
        self.keepalive_interval = every.into();
        self
    }

    /// How many items one page of a list holds (`tools/list`, and the resource and prompt lists;
    /// default 500, more than zero): a longer list is served in pages, each but the last with a
    /// `nextCursor` the client sends back for the next one.
    ///
    /// Not every host follows `nextCursor` (a host that reads only the first page of `tools/list`
    /// never sees the tools after it), so the default keeps an ordinary server's lists whole; a
    /// server with thousands of items pages them.
    pub fn page_size(mut self, items: usize) -> Self {
        self.page_size = items;
        self
    }

    /// Whether `tools/list` shows a caller limited by OAuth scopes only the tools its token may
    /// call (default `true`): a tool declaring `#[tool(scope = "...")]` is left out for a token
    /// without all of its scopes. The same goes for resources (`resources/list`,
    /// `resources/templates/list`; `#[resource(scope)]`) and prompts (`prompts/list`;
    /// `#[prompt(scope)]`). `false` lists everything to everyone (a call, read or get still
    /// needs the scopes: HTTP 403 `insufficient_scope` tells the client which to ask for).
    /// Callers not limited by scopes (static tokens, stdio) always see everything.
    pub fn list_only_permitted_tools(mut self, only: bool) -> Self {
        self.list_only_permitted_tools = only;
        self
    }

    /// Every value this configuration holds that a server cannot run with, each as
    /// `(setting, why)`.
    pub(crate) fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        if self.lease < MIN_LEASE {
            problems.push((
                "lease",
                format!(
                    "is {:?}; it must be at least {MIN_LEASE:?}, to outlast the time between two renewals",
                    self.lease
                ),
            ));
        }
        if self.sweep_every.is_zero() {
            problems.push((
                "sweep_every",
                "is zero; the lifetime rules need a period of more than zero".to_owned(),
            ));
        }
        if self.page_size == 0 {
            problems.push((
                "page_size",
                "is zero; a page must hold at least one item".to_owned(),
            ));
        }
        if let Some(every) = self.keepalive_interval
            && every < MIN_KEEPALIVE
        {
            problems.push((
                "keepalive_interval",
                format!(
                    "is {every:?}; it must be at least {MIN_KEEPALIVE:?} (or `None` for no keepalive), not to flood the client"
                ),
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Server, SetupProblem};

    #[test]
    fn a_keepalive_under_100_ms_is_refused_and_none_turns_it_off() {
        let build = |every: Option<Duration>| {
            Server::builder("t", "0")
                .config(ServerConfig::default().keepalive_interval(every))
                .build()
        };
        let err = build(Some(Duration::ZERO)).expect_err("zero is refused");
        assert_eq!(
            err.problems(),
            [SetupProblem::BadConfig {
                setting: "keepalive_interval",
                why: "is 0ns; it must be at least 100ms (or `None` for no keepalive), not to flood the client".into(),
            }]
        );
        assert!(build(Some(Duration::from_millis(99))).is_err());
        assert!(build(Some(MIN_KEEPALIVE)).is_ok());
        assert!(build(None).is_ok());
        assert_eq!(
            ServerConfig::default().keepalive_interval,
            Some(Duration::from_secs(10))
        );
    }
}
