//! # mcp-tasks
//!
//! Write MCP tools as plain `async fn`s; mcp-tasks runs them inline or as **tasks** (long calls a
//! client polls, that can stop to ask the user or the client's model for input, and that can be
//! cancelled), in both protocol eras: 2025-11-25 (`initialize`, sessions) and 2026-07-28
//! (stateless, per-request `_meta`).
//!
//! ```toml
//! [dependencies]
//! mcp-tasks-runtime = "0.1"
//! serde = { version = "1", features = ["derive"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! A tool is an `async fn` marked [`#[tool]`](macro@tool). Its parameters are the arguments (the
//! input schema comes from their types and doc comments), plus what the runtime injects: the
//! [`ToolContext`] (the client, the caller, status, progress, cancellation) and [`State<T>`],
//! values the application registered on the [`Server`].
//!
//! ```no_run
//! use mcp_tasks_runtime::schemars::{self, JsonSchema};
//! use mcp_tasks_runtime::{ElicitOutcome, Server, State, ToolContext, ToolError, tool};
//! use serde::Deserialize;
//! use std::collections::HashMap;
//! use std::sync::Mutex;
//!
//! /// The application's state: shared by every call and every task.
//! #[derive(Default)]
//! struct Notes(Mutex<HashMap<String, String>>);
//!
//! /// Read a note.
//! #[tool(annotations(read_only))]
//! async fn read_note(notes: State<Notes>, title: String) -> Result<String, ToolError> {
//!     let notes = notes.0.lock().unwrap();
//!     notes.get(&title).cloned().ok_or_else(|| ToolError::new(format!("no note `{title}`")))
//! }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Overwrite {
//!     /// Replace the note that is there?
//!     overwrite: bool,
//! }
//!
//! /// Write a note; asks before replacing one. Runs as a task when the client supports tasks.
//! #[tool(task_support = "optional")]
//! async fn write_note(
//!     ctx: ToolContext,
//!     notes: State<Notes>,
//!     /// The note's title.
//!     title: String,
//!     /// What it says.
//!     text: String,
//! ) -> Result<String, ToolError> {
//!     let exists = notes.0.lock().unwrap().contains_key(&title);
//!     if exists {
//!         let answer = ctx.elicit::<Overwrite>(format!("Replace `{title}`?")).await?;
//!         if !matches!(answer, ElicitOutcome::Accept(Overwrite { overwrite: true })) {
//!             return Ok("kept the old note".into());
//!         }
//!     }
//!     // Changes come after the question: inline in the 2026-07-28 era, the tool runs again
//!     // from the top once the answer arrives (see `ToolContext::is_replay`).
//!     notes.0.lock().unwrap().insert(title.clone(), text);
//!     let who = ctx.principal().map_or("someone", |p| p.as_str());
//!     Ok(format!("{who} wrote `{title}`"))
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     let server = Server::builder("notes", "1.0.0")
//!         .state(Notes::default())
//!         .tool::<read_note>()
//!         .tool::<write_note>()
//!         .build()?; // every setup problem at once: a missing state, two tools of one name, ...
//!     server.serve_stdio().await // or .serve_http("127.0.0.1:8080")
//! }
//! ```
//!
//! Where to go next:
//! - [`tool`](macro@tool): every key of the attribute, parameter kinds, return types, and what
//!   runs again when an inline call asks for input;
//! - [`ToolContext`]: asking the user ([`elicit`](ToolContext::elicit)), the client's model
//!   ([`sample`](ToolContext::sample)), status and progress, cancellation, who is calling;
//! - [`ToolError`]: tool errors, JSON-RPC errors, and `?` on any error;
//! - [`prompt`](macro@prompt): prompts beside the tools (string arguments, messages, MRTR), and
//!   `#[complete(...)]` on their arguments for `completion/complete`;
//! - [`Server::builder`] ([`ServerBuilder`]): registering tools and state, settings
//!   ([`ServerConfig`], [`server::Limits`]), one [`SetupError`] for every setup problem;
//! - [`Server`]: serving stdio, any reader and writer, Streamable HTTP, or a client in the same
//!   process; [`server`]:
//!   authentication ([`server::BearerTokens`], [`server::Authenticator`]);
//! - [`store`]: where tasks are kept (the [`store::TaskStore`] trait and its in-memory default).

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate self as mcp_tasks_runtime;

#[doc(hidden)]
pub mod __internal;
#[doc(hidden)]
pub mod __private;
pub mod completion;
mod error_chain;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod prompt;
pub mod protocol;
mod race;
pub mod resource;
pub mod skill;
pub mod store;
pub mod tool;

pub use completion::{Completion, CompletionContext};
#[cfg(feature = "macros")]
pub use mcp_tasks_macros::{prompt, resource, tool};
pub use prompt::Prompt;
pub use protocol::{
    CallToolResult, Content, CreateMessageParams, CreateMessageResult, Era, GetPromptResult,
    LogLevel, PromptMessage, ResourceContents, Role, Root,
};
pub use resource::{Resource, ResourceNotifier};
pub use tool::{
    Args, ElicitOutcome, InputError, Json, Principal, RequestInfo, State, TaskSupport, Tool,
    ToolContext, ToolError,
};

/// The `schemars` this crate builds schemas with: derive `JsonSchema` through it
/// (`use mcp_tasks_runtime::schemars::{self, JsonSchema};`) and your types always match the
/// version the runtime expects, whatever else your dependency tree holds.
#[cfg(feature = "schemars")]
pub use ::schemars;
/// The `serde` this crate decodes arguments with (with its derives). Derive through it with
/// `#[serde(crate = "mcp_tasks_runtime::serde")]`, or depend on `serde` 1.x yourself.
pub use ::serde;
/// `serde_json`, for `Value` and `json!` in tools and tests.
pub use ::serde_json;
pub mod server;
mod task;

/// This crate's tools inside an existing rmcp server (feature `rmcp`, rmcp 3.11): see
/// [`TaskTools`](rmcp::TaskTools) and the guide page "Adding task tools to an rmcp server".
#[cfg(feature = "rmcp")]
pub mod rmcp {
    pub use crate::server::rmcp_bridge::TaskTools;
}
pub mod telemetry;
mod tracker;
mod transport;

pub use server::{Server, ServerBuilder, ServerConfig, SetupError};

/// Sends `tracing` output to stderr (stdout belongs to the protocol on stdio), filtered by
/// `RUST_LOG` (default `info`). Call once at start-up; later calls do nothing.
///
/// Needs the `logging` feature (off by default). Without it, install any `tracing` subscriber
/// of your own; write to stderr when serving over stdio.
#[cfg(feature = "logging")]
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
