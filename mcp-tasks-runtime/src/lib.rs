//! # mcp-tasks
//!
//! Write MCP tools as plain `async fn`s; mcp-tasks runs them inline or as **tasks** (long calls a
//! client polls, that can stop to ask the user or the client's model for input, and that can be
//! cancelled), in both protocol eras: 2025-11-25 (`initialize`, sessions) and 2026-07-28
//! (stateless, per-request `_meta`).

#![warn(missing_docs)]

extern crate self as mcp_tasks_runtime;

#[doc(hidden)]
pub mod __private;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod protocol;
pub mod store;
pub mod tool;

pub use mcp_tasks_macros::tool;
pub use protocol::{
    CallToolResult, Content, CreateMessageParams, CreateMessageResult, LogLevel, ResourceContents,
    Root,
};
pub use tool::{Args, ElicitOutcome, InputError, Json, TaskSupport, Tool, ToolContext, ToolError};
pub mod server;
pub mod task;
pub mod transport;

pub use server::{Server, ServerConfig};

/// Sends `tracing` output to stderr (stdout belongs to the protocol on stdio), filtered by
/// `RUST_LOG` (default `info`). Call once at start-up; later calls do nothing.
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
