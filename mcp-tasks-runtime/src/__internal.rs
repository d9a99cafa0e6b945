//! Not public API. Wire-level pieces that `mcp-tasks-client`, the test suite and the fuzz
//! targets share with the runtime: reading a JSON-RPC message and building one, the `_meta` keys,
//! the modern versions, and a way to run one tool directly. The wire types themselves are public,
//! in [`protocol`](crate::protocol). It may change in any release; `mcp-tasks-client` requires
//! the exact version of this crate (`tests/workspace.rs` checks it). A server or a tool never
//! needs it.

use std::sync::Arc;

pub use crate::protocol::jsonrpc::build::{
    error_message, notification_message, request_message, result_message,
};
pub use crate::protocol::jsonrpc::message::Message;
use crate::tool::ToolContext;
pub use crate::tool::context::{ContextBackend, InputFuture};
pub use crate::tool::registry::RegisteredTool;

/// An error and its causes, `: `-separated, a cause its wrapper's text already ends with left out.
pub use crate::error_chain::with_causes;

/// The first of two futures, without `tokio::select!` (its proc macro would bring syn into the
/// client's build).
pub mod race {
    pub use crate::race::{Either, first, or_never, unless};
}

/// The protocol versions a modern request may name.
pub const MODERN_VERSIONS: &[&str] = crate::protocol::MODERN_VERSIONS;

/// The `_meta` keys of both eras.
pub mod meta {
    pub use crate::protocol::meta::{
        CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROGRESS_TOKEN, PROTOCOL_VERSION,
        RELATED_TASK, SERVER_INFO, SUBSCRIPTION_ID,
    };
}

/// A context for calling a tool directly (outside a server), with `backend` answering its input
/// requests, no client capabilities, and a cancellation token of its own.
pub fn tool_context(backend: Arc<dyn ContextBackend>) -> ToolContext {
    ToolContext::new(backend, Arc::default(), Default::default())
}
