//! Wire types for both protocol eras (2025-11-25 and 2026-07-28), and nothing else.

mod era;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod json_eq;
pub(crate) mod json_text;
#[doc(hidden)]
// the envelopes, for the client (through `__internal`); `RequestId` and `RpcError` are re-exported here
pub mod jsonrpc;
mod mcp;
pub(crate) mod meta;
mod params;
mod prompt;
#[doc(hidden)]
// the skills extension's wire types and checks, for mcp-tasks-client (which re-exports the entry
// types); the runtime's own API for skills is `crate::skill::Skills`
pub mod skill;
pub mod task;
pub(crate) mod trace;

pub use era::Era;
pub use jsonrpc::{RequestId, RpcError};
pub use mcp::*;
pub(crate) use params::Params;
pub use prompt::{GetPromptResult, ListedPrompt, PromptArgument, PromptMessage, Role};
pub(crate) use prompt::{ListPromptsResult, PromptDescription};

/// The legacy protocol version (the `initialize` handshake).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// The modern protocol version (stateless, per-request `_meta`).
pub const MODERN_VERSION: &str = "2026-07-28";
/// Versions an `initialize` may negotiate, newest first.
pub(crate) const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];
/// Versions a modern request may name.
pub(crate) const MODERN_VERSIONS: &[&str] = &[MODERN_VERSION];
/// The id of the tasks extension.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
