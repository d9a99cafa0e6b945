//! Transports: bytes in, JSON-RPC messages out, and back. Nothing here knows MCP.

pub mod std_streams;
pub mod stdio;

use serde_json::Value;
use tokio::sync::mpsc;

/// Sends JSON-RPC messages to the peer. Cheap to clone; sending after the peer is gone is a no-op
/// that reports `false`.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: mpsc::UnboundedSender<Value>,
}

impl Outbound {
    /// A sender and the receiving end a transport's writer drains.
    pub fn channel() -> (Outbound, mpsc::UnboundedReceiver<Value>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbound { tx }, rx)
    }

    /// Queues one message; `false` when the transport has shut down.
    pub fn send(&self, message: Value) -> bool {
        self.tx.send(message).is_ok()
    }

    /// Whether the transport has shut down.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}
