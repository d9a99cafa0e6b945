//! The small interface between dispatch and the client a request came from: send a message, send
//! a request and wait for the answer, who owns the tasks its requests create, and its legacy
//! session. `dispatch.rs` (and everything it calls: inline backends in `inline.rs`, listening in
//! `listen.rs`, the task engine's way back to a legacy session) sees the client only through
//! [`Peer`], never through the connection that implements it (`connection.rs`) nor the transport
//! that drives that connection. This is what keeps `server/` free of import circles: transports
//! and the driver sit above dispatch, and nothing below names them (the layers are drawn in
//! ARCHITECTURE.md).

use super::era::{ClientView, Era};
use crate::protocol::LogLevel;
use crate::protocol::jsonrpc::{self, RequestId, RpcError};
use crate::protocol::task::{Owner, TaskId};
use crate::task::engine::ClientChannel;
use crate::tool::Principal;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;

/// An answer to a server-to-client request, on its way.
pub(crate) type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + 'a>>;

/// The legacy session opened by `initialize` on a connection.
#[derive(Debug, Clone)]
pub(crate) struct LegacySession {
    pub(crate) version: String,
    /// Shared with every request of the session (copying it per request was measurable).
    pub(crate) client: Arc<ClientView>,
    /// Random id: the owner of this session's tasks.
    pub(crate) id: String,
    /// The least severe level the client wants log messages for (`logging/setLevel`); every
    /// level until it says otherwise.
    pub(crate) log_level: LogLevel,
}

/// The client at the other end of a connection, as the code that serves one request sees it.
pub(crate) trait Peer: Send + Sync + 'static {
    /// Sends one message (a notification) to the client; `false` when it cannot reach it any more.
    fn send(&self, message: Value) -> bool;

    /// Ends the response stream of the request being handled, not the request: over HTTP in a
    /// legacy session, the client resumes it (`Last-Event-ID`). `false` where there is none.
    fn close_stream(&self) -> bool;

    /// Request `id` waits on task `task` (a legacy `tasks/result` dispatch serves, so
    /// authorized): what the task sends the client goes on that request's response stream, where
    /// the transport has one (HTTP in a legacy session). Nothing elsewhere.
    fn follow_task(&self, id: &RequestId, task: &TaskId) {
        let _ = (id, task);
    }

    /// Sends a server-to-client request and waits for the client's answer.
    fn request<'a>(&'a self, method: &'a str, params: Value) -> Answer<'a>;

    /// The owner of tasks a request in this era creates or touches: the legacy session for
    /// 2025-11-25 requests, the connection's principal (or the connection itself) for modern ones.
    fn owner(&self, era: &Era) -> Owner;

    /// The authenticated caller, if any (HTTP with an authenticator), as tools see it.
    fn principal(&self) -> Option<Principal>;

    /// The caller of request `id` (in flight here), as authorization checks it (`authz.rs`):
    /// the request's own principal where each request authenticates (over HTTP, each POST of a
    /// 2025-11-25 session may carry a different token of the session's principal), else
    /// [`principal`](Self::principal).
    fn principal_of(&self, id: &RequestId) -> Option<Principal> {
        let _ = id;
        self.principal()
    }

    /// Whether the server can tell this requestor from others (a principal, or a connection that
    /// is one client): decides whether `tasks.list` is advertised.
    fn identified(&self) -> bool;

    /// The legacy session, once `initialize` opened one.
    fn session(&self) -> Option<LegacySession>;

    /// Opens the legacy session; `false` (and nothing changes) when one is open already.
    fn open_session(&self, session: LegacySession) -> bool;

    /// `logging/setLevel`: `false` when there is no session to set it on.
    fn set_log_level(&self, level: LogLevel) -> bool;

    /// Resolves once the reply to request `id` has been handed to the transport (or the request
    /// ended without one). A legacy task waits on this before its tool runs, so that the client
    /// sees the `CreateTaskResult` before any request that names the task.
    fn after_reply(&self, id: &RequestId) -> oneshot::Receiver<()>;

    /// Whether this way in serves the task fallback's companion tools, so that a call may be
    /// answered with a fallback task: every transport of ours does; the rmcp bridge, whose
    /// tool list is rmcp's, does not.
    fn offers_fallback(&self) -> bool {
        true
    }
}

/// A legacy session as the task engine's way back to its client (requests tagged with the task,
/// `notifications/tasks/status`). Holds the peer weakly: a task outlives its connection.
pub(crate) fn channel(peer: Weak<dyn Peer>) -> Arc<dyn ClientChannel> {
    Arc::new(SessionChannel(peer))
}

struct SessionChannel(Weak<dyn Peer>);

impl ClientChannel for SessionChannel {
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + '_>> {
        let method = method.to_owned();
        Box::pin(async move {
            let peer = self
                .0
                .upgrade()
                .ok_or_else(|| RpcError::internal("the client connection is closed"))?;
            peer.request(&method, params).await
        })
    }

    fn notify(&self, method: &str, params: Value) {
        if let Some(peer) = self.0.upgrade() {
            peer.send(jsonrpc::notification_message(method, params));
        }
    }
}
