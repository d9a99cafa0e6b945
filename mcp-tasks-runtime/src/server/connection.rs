//! One client connection, whatever carries it: the per-peer *state* (its legacy session, its
//! in-flight requests, the requests this server sends to the client and their answers, who owns
//! the tasks it creates). It drives nothing: the transports (the stdio loop in `stdio.rs`, the
//! in-memory one in `memory.rs`, Streamable HTTP in `http/`) own their loops and hand each
//! message to `driver.rs`, which keeps the in-flight table here and calls `dispatch.rs` with the
//! connection as a [`Peer`]: dispatch sees nothing else of it. A transport gives the connection a
//! [`Sink`] for what the server sends on its own (notifications, server-to-client requests).

use super::era::Era;
use super::inner::ServerInner;
use super::peer::{Answer, LegacySession, Peer};
use crate::protocol::LogLevel;
use crate::protocol::jsonrpc::{self, Reply, RequestId, RpcError};
use crate::protocol::task::{Owner, TaskId};
use crate::race::{Either, first};
use crate::tool::Principal;
use crate::tracker::TaskTracker;
use crate::transport::Outbound;
use foldhash::HashMap;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Where a connection sends what the server says on its own: notifications and server-to-client
/// requests (responses to the client's requests are handed back to the transport instead).
pub(crate) trait Sink: Send + Sync + std::fmt::Debug + 'static {
    /// Queues one message; `false` when it cannot reach the client any more.
    fn send(&self, message: Value) -> bool;

    /// Queues the response to one of the client's requests; `false` when it cannot reach the
    /// client any more.
    fn send_reply(&self, reply: Reply) -> bool {
        self.send(reply.into_value())
    }

    /// Queues one server-to-client request; `Err` says why it cannot go out (so the request
    /// fails at once rather than waiting for an answer).
    fn send_request(&self, message: Value) -> Result<(), RpcError> {
        if self.send(message) {
            Ok(())
        } else {
            Err(RpcError::internal("the client connection is closed"))
        }
    }

    /// Ends the response stream of the request being handled without ending the request (a
    /// legacy session over HTTP, whose client resumes it); `false` where there is no such stream.
    fn close_stream(&self) -> bool {
        false
    }

    /// The client's request `request` waits on task `task` (a legacy `tasks/result`): what the
    /// task sends the client belongs on that request's response stream, where there is one (a
    /// legacy session over HTTP). Nothing elsewhere.
    fn follow_task(&self, request: &RequestId, task: &str) {
        let _ = (request, task);
    }
}

impl Sink for Outbound {
    fn send(&self, message: Value) -> bool {
        Outbound::send(self, message)
    }

    fn send_reply(&self, reply: Reply) -> bool {
        Outbound::send_reply(self, reply)
    }
}

/// A client connection. Requests on it are handled concurrently.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) server: Arc<ServerInner>,
    sink: Arc<dyn Sink>,
    session: Mutex<Option<LegacySession>>,
    inflight: Mutex<HashMap<RequestId, Inflight>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
    /// Work waiting until the reply to a request has gone out (see [`Peer::after_reply`]).
    reply_gates: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
    next_id: AtomicU64,
    pub(crate) tracker: TaskTracker,
    pub(crate) closing: CancellationToken,
    /// Who sends this connection's requests, and so who owns the tasks they create.
    requestor: Requestor,
}

/// A request in flight: what cancels it, and its own principal when it has one apart from the
/// connection's ([`Peer::principal_of`]).
#[derive(Debug)]
struct Inflight {
    cancel: CancellationToken,
    principal: Option<Principal>,
}

/// Who sends a connection's requests: the principal tools see, the owner of the tasks the
/// requests create, and whether the server can tell this requestor from others.
#[derive(Debug, Clone)]
pub(crate) struct Requestor {
    principal: Option<Principal>,
    owner: Owner,
    /// A principal, or a connection that is one client: decides whether `tasks.list` is
    /// advertised.
    identified: bool,
    /// Whether the legacy session owns the legacy-era tasks (HTTP, where a session is what tells
    /// anonymous clients apart), rather than `owner`.
    session_owns_legacy_tasks: bool,
}

impl Requestor {
    /// An HTTP request: the authenticated principal, or an anonymous caller (who owns nothing a
    /// session does not).
    #[cfg(feature = "http")]
    pub(crate) fn http(principal: Option<Principal>) -> Self {
        Requestor {
            owner: owner_of(principal.as_ref()),
            identified: principal.is_some(),
            principal,
            session_owns_legacy_tasks: true,
        }
    }

    /// The one client of a stdio (or in-memory) connection: the principal the application
    /// names ([`ServeIo::principal`](super::ServeIo::principal)), or anonymous.
    /// Its tasks, of both eras, belong to that owner, not to the connection, so a restarted
    /// server on a durable store, or another server on a shared one, serves them.
    pub(crate) fn local(principal: Option<Principal>) -> Self {
        Requestor {
            owner: owner_of(principal.as_ref()),
            identified: true,
            principal,
            session_owns_legacy_tasks: false,
        }
    }
}

/// The owner of modern-era tasks of unauthenticated callers: the same on every instance sharing a
/// store, so a `tasks/get` that lands on another instance, or on the same server after a restart,
/// finds the task (the task id, random and unguessable, is what protects it, as the spec requires
/// without an authorization context).
const ANONYMOUS_OWNER: &str = "anonymous";

/// The owner of the legacy-era tasks created in the HTTP session `id` (see
/// [`Requestor::session_owns_legacy_tasks`]).
pub(crate) fn session_owner(id: &str) -> Owner {
    Owner::new(format!("session:{id}"))
}

/// The owner of the tasks of `principal`'s requests (`None`: an anonymous caller).
pub(crate) fn owner_of(principal: Option<&Principal>) -> Owner {
    match principal {
        Some(p) => Owner::new(format!("principal:{}", p.as_str())),
        None => Owner::new(ANONYMOUS_OWNER),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Connection {
    /// A connection whose requests come from `requestor`. Cancelling `closing` ends every
    /// request in flight on it (and is done by [`Connection::close`]).
    pub(crate) fn new(
        server: Arc<ServerInner>,
        sink: Arc<dyn Sink>,
        requestor: Requestor,
        closing: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Connection {
            server,
            sink,
            session: Mutex::new(None),
            inflight: Mutex::default(),
            pending: Mutex::default(),
            reply_gates: Mutex::default(),
            next_id: AtomicU64::new(1),
            tracker: TaskTracker::new(),
            closing,
            requestor,
        })
    }

    /// The transport has sent the reply to `id` (or there is none): releases what waits on it.
    pub(crate) fn replied(&self, id: &RequestId) {
        if let Some(gate) = lock(&self.reply_gates).remove(id) {
            let _ = gate.send(());
        }
    }

    /// Ends the connection: requests in flight and server-to-client requests waiting for an
    /// answer are cancelled.
    pub(crate) fn close(&self) {
        self.tracker.close();
        self.closing.cancel();
    }

    /// Sends a message to the client.
    pub(crate) fn send(&self, message: Value) -> bool {
        self.sink.send(message)
    }

    /// Sends the response to one of the client's requests.
    pub(crate) fn send_reply(&self, reply: Reply) -> bool {
        self.sink.send_reply(reply)
    }

    /// Sends a server-to-client request and waits for the client's answer.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = RequestId::String(format!(
            "mcp-tasks-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        ));
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            let max = self.server.limits.inputs_per_session;
            if pending.len() >= max {
                return Err(RpcError::limit_reached(
                    "inputs_per_session",
                    max,
                    "this session already has as many requests to the client waiting for answers as it may",
                ));
            }
            pending.insert(id.clone(), tx);
        }
        if let Err(e) = self
            .sink
            .send_request(jsonrpc::request_message(&id, method, params))
        {
            lock(&self.pending).remove(&id);
            return Err(e);
        }
        let guard = PendingGuard {
            conn: self,
            id: id.clone(),
        };
        let closed = || Err(RpcError::internal("the client connection is closed"));
        let out = match first(rx, self.closing.cancelled()).await {
            Either::Left(r) => r.unwrap_or_else(|_| closed()),
            Either::Right(()) => closed(),
        };
        drop(guard);
        out
    }

    /// Registers request `id` as in flight and returns the token that cancels it (a child of
    /// the connection's `closing`); `None` when a request with this id is already in flight.
    /// `principal`: the request's own, when it authenticated apart from the connection (an HTTP
    /// session's POST). [`Connection::finished`] takes it off again.
    pub(crate) fn begin(
        &self,
        id: &RequestId,
        principal: Option<Principal>,
    ) -> Option<CancellationToken> {
        let mut inflight = lock(&self.inflight);
        if inflight.contains_key(id) {
            return None;
        }
        let cancel = self.closing.child_token();
        let token = cancel.clone();
        inflight.insert(id.clone(), Inflight { cancel, principal });
        Some(token)
    }

    /// Request `id` is no longer in flight.
    pub(crate) fn finished(&self, id: &RequestId) {
        lock(&self.inflight).remove(id);
    }

    /// How many requests are in flight (an idle HTTP session has none).
    #[cfg(feature = "http")]
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.inflight).len()
    }

    /// The client's answer to one of our server-to-client requests.
    pub(crate) fn on_response(&self, resp: jsonrpc::Response) {
        let waiter = lock(&self.pending).remove(&resp.id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(resp.outcome);
            }
            None => {
                tracing::debug!(id = %resp.id, "a response to no request of ours; ignored")
            }
        }
    }

    /// A message with the id of one of our server-to-client requests could not be read as a
    /// response (no `result` or `error`, a malformed `error`): the request fails with that
    /// reason rather than waiting forever. `false` when no request of ours has this id.
    pub(crate) fn fail_pending(&self, id: &RequestId, why: &RpcError) -> bool {
        let Some(tx) = lock(&self.pending).remove(id) else {
            return false;
        };
        let _ = tx.send(Err(RpcError::new(
            why.code,
            format!(
                "the client's response to request {id} is malformed: {}",
                why.message
            ),
        )));
        true
    }

    /// Cancels one in-flight request (`notifications/cancelled`).
    pub(crate) fn cancel_request(&self, id: &RequestId) -> bool {
        match lock(&self.inflight).get(id) {
            Some(inflight) => {
                inflight.cancel.cancel();
                true
            }
            None => false,
        }
    }
}

impl Peer for Connection {
    fn send(&self, message: Value) -> bool {
        Connection::send(self, message)
    }

    fn close_stream(&self) -> bool {
        self.sink.close_stream()
    }

    fn follow_task(&self, request: &RequestId, task: &TaskId) {
        self.sink.follow_task(request, task.as_str());
    }

    fn request<'a>(&'a self, method: &'a str, params: Value) -> Answer<'a> {
        Box::pin(Connection::request(self, method, params))
    }

    fn owner(&self, era: &Era) -> Owner {
        match (era, lock(&self.session).as_ref()) {
            (Era::Legacy, Some(session)) if self.requestor.session_owns_legacy_tasks => {
                session_owner(&session.id)
            }
            _ => self.requestor.owner.clone(),
        }
    }

    fn principal(&self) -> Option<Principal> {
        self.requestor.principal.clone()
    }

    fn principal_of(&self, id: &RequestId) -> Option<Principal> {
        // A connection without a principal has none on any request (HTTP serves a session's
        // requests only to its principal): no lock on the path of stdio and anonymous callers.
        self.requestor.principal.as_ref()?;
        let own = lock(&self.inflight)
            .get(id)
            .and_then(|i| i.principal.clone());
        own.or_else(|| self.requestor.principal.clone())
    }

    fn identified(&self) -> bool {
        self.requestor.identified
    }

    fn session(&self) -> Option<LegacySession> {
        lock(&self.session).clone()
    }

    fn open_session(&self, session: LegacySession) -> bool {
        let mut slot = lock(&self.session);
        if slot.is_some() {
            return false;
        }
        *slot = Some(session);
        true
    }

    fn set_log_level(&self, level: LogLevel) -> bool {
        match lock(&self.session).as_mut() {
            Some(session) => {
                session.log_level = level;
                true
            }
            None => false,
        }
    }

    fn after_reply(&self, id: &RequestId) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        lock(&self.reply_gates).insert(id.clone(), tx);
        rx
    }
}

struct PendingGuard<'a> {
    conn: &'a Connection,
    id: RequestId,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.conn.pending).remove(&self.id);
    }
}
