//! Not public API. Wire-level pieces that `mcp-tasks-client`, the test suite, the benches and the
//! fuzz targets share with the runtime: JSON-RPC message types and builders, the `_meta` keys, the version lists, and a way to run one tool directly. It may change in any release; `mcp-tasks-client`
//! is pinned to the exact version of this crate. A server or a tool never needs it.

use std::sync::Arc;

pub use crate::protocol::jsonrpc::build::{
    error_message, notification_message, request_message, result_message,
};
pub use crate::protocol::jsonrpc::message::{Message, Notification, Request, Response};
use crate::tool::ToolContext;
pub use crate::tool::context::{ContextBackend, InputFuture};
pub use crate::tool::registry::RegisteredTool;

/// An error and its causes, `: `-separated, a cause its wrapper's text already ends with left out.
pub use crate::error_chain::with_causes;

/// The protocol versions an `initialize` may negotiate, newest first.
pub const LEGACY_VERSIONS: &[&str] = crate::protocol::LEGACY_VERSIONS;
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
