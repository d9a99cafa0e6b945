//! The small interface between what runs a request and the client it came from: send a message,
//! send a request and wait for the answer. Backends of inline calls (`inline.rs`) and the task
//! engine's way back to a legacy session see the client only through it, never through the
//! connection that drives the transport; this is what keeps `server/` free of import circles
//! (the layers are drawn in the README's Layout section).

use crate::protocol::jsonrpc::{self, RpcError};
use crate::task::engine::ClientChannel;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

/// An answer to a server-to-client request, on its way.
pub(crate) type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + 'a>>;

/// The client at the other end of a connection, as the code that serves one request sees it.
pub(crate) trait Peer: Send + Sync + 'static {
    /// Sends one message (a notification) to the client; `false` when it cannot reach it any more.
    fn send(&self, message: Value) -> bool;

    /// Sends a server-to-client request and waits for the client's answer.
    fn request<'a>(&'a self, method: &'a str, params: Value) -> Answer<'a>;
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
