//! Transports: bytes in, JSON-RPC messages out, and back. Nothing here knows MCP.

pub(crate) mod std_streams;
pub(crate) mod stdio;

use crate::protocol::jsonrpc::{Reply, Wire};
use serde_json::Value;
use tokio::sync::mpsc;

/// One message queued for the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A message built as a JSON tree.
    Message(Value),
    /// A response, written from its parts (no tree for its envelope).
    Reply(Reply),
}

impl Outgoing {
    /// The message as a JSON tree.
    pub fn into_value(self) -> Value {
        match self {
            Outgoing::Message(value) => value,
            Outgoing::Reply(reply) => reply.into_value(),
        }
    }

    /// Appends the message as JSON text to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Outgoing::Message(value) => serde_json::to_writer(out, &Wire(value)),
            Outgoing::Reply(reply) => reply.write_to(out),
        }
    }
}

/// Sends JSON-RPC messages to the peer. Cheap to clone; sending after the peer is gone is a no-op
/// that reports `false`.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: mpsc::UnboundedSender<Outgoing>,
}

impl Outbound {
    /// A sender and the receiving end a transport's writer drains.
    pub fn channel() -> (Outbound, mpsc::UnboundedReceiver<Outgoing>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbound { tx }, rx)
    }

    /// Queues one message; `false` when the transport has shut down.
    pub fn send(&self, message: Value) -> bool {
        self.tx.send(Outgoing::Message(message)).is_ok()
    }

    /// Queues one response; `false` when the transport has shut down.
    pub fn send_reply(&self, reply: Reply) -> bool {
        self.tx.send(Outgoing::Reply(reply)).is_ok()
    }
}
