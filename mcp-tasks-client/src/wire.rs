//! What [`ClientBuilder::on_wire`](crate::ClientBuilder::on_wire) sees: every message's text and
//! which way it went. Below both the peer and the HTTP wire, which tap it.

use std::sync::Arc;

/// Which way a message went, for [`ClientBuilder::on_wire`](crate::ClientBuilder::on_wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireDirection {
    /// From the client to the server.
    Sent,
    /// From the server to the client.
    Received,
}

/// Sees every message's text, both ways ([`ClientBuilder::on_wire`](crate::ClientBuilder::on_wire)).
pub(crate) type Tap = Arc<dyn Fn(WireDirection, &str) + Send + Sync>;
