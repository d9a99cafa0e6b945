//! An in-memory connection: JSON-RPC messages handed over as values, in the same process, with no
//! process, pipe or socket in between. For tests (the `mcp-tasks-client` harness drives a
//! [`Server`](super::Server) through it) and for embedding a server in an application.

use super::connection::{Connection, Requestor};
use super::inner::ServerInner;
use crate::protocol::jsonrpc::Message;
use crate::tool::Principal;
use crate::transport::{Outbound, Outgoing};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One client's connection to a server in the same process. Messages go in with
/// [`send`](Self::send) and come out with [`recv`](Self::recv), exactly as they would travel as
/// lines over stdio (the server treats it like a stdio connection: one legacy session at most, and
/// the connection owns its modern-era tasks).
///
/// Dropping it (or its sending half, after [`split`](Self::split)) closes the connection: requests
/// in flight may finish within [`ServerConfig::shutdown_grace`](super::ServerConfig), then the
/// server side stops.
#[derive(Debug)]
pub struct InMemoryConnection {
    sender: InMemorySender,
    receiver: InMemoryReceiver,
}

/// The half of an [`InMemoryConnection`] that sends messages to the server.
#[derive(Debug, Clone)]
pub struct InMemorySender {
    // The server side stops when the last sender is gone.
    tx: mpsc::UnboundedSender<Value>,
}

/// The half of an [`InMemoryConnection`] that receives what the server sends: responses,
/// notifications and server-to-client requests, in order.
#[derive(Debug)]
pub struct InMemoryReceiver {
    rx: mpsc::UnboundedReceiver<Outgoing>,
}

impl InMemoryConnection {
    /// Sends one message (a request, notification or response, as JSON) to the server; `false`
    /// when the server side has stopped.
    pub fn send(&self, message: Value) -> bool {
        self.sender.send(message)
    }

    /// The next message from the server; `None` once the server side has stopped.
    pub async fn recv(&mut self) -> Option<Value> {
        self.receiver.recv().await
    }

    /// The two halves, to send and receive from different tasks.
    pub fn split(self) -> (InMemorySender, InMemoryReceiver) {
        (self.sender, self.receiver)
    }
}

impl InMemorySender {
    /// Sends one message to the server; `false` when the server side has stopped.
    pub fn send(&self, message: Value) -> bool {
        self.tx.send(message).is_ok()
    }
}

impl InMemoryReceiver {
    /// The next message from the server; `None` once the server side has stopped.
    pub async fn recv(&mut self) -> Option<Value> {
        self.rx.recv().await.map(Outgoing::into_value)
    }
}

/// Starts the server side of a connection on the current tokio runtime; its client is
/// `principal` (none: anonymous).
pub(crate) fn connect(
    server: Arc<ServerInner>,
    principal: Option<Principal>,
) -> InMemoryConnection {
    let (to_server, mut incoming) = mpsc::unbounded_channel::<Value>();
    let (outbound, from_server) = Outbound::channel();
    let grace = server.config.shutdown_grace;
    let requestor = Requestor::local(principal);
    let engine = server.engine().clone();
    engine.serve_started();
    tokio::spawn(async move {
        // Like stdio: one client, named by the application, not authenticated.
        let conn = Connection::new(
            server,
            Arc::new(outbound),
            requestor,
            CancellationToken::new(),
        );
        while let Some(message) = incoming.recv().await {
            super::driver::on_message(&conn, Message::from_value(message));
        }
        conn.tracker.close();
        if tokio::time::timeout(grace, conn.tracker.wait())
            .await
            .is_err()
        {
            conn.closing.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(2), conn.tracker.wait()).await;
        }
        conn.close();
        engine.serve_ended().await;
    });
    InMemoryConnection {
        sender: InMemorySender { tx: to_server },
        receiver: InMemoryReceiver { rx: from_server },
    }
}
