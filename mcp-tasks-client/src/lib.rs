//! # mcp-tasks-client
//!
//! A task-aware MCP client: connect to a server (a command over stdio, Streamable HTTP, or a
//! [`Server`](mcp_tasks_runtime::Server) in the same process), list and call its tools, and follow
//! the calls that run as **tasks**: their status as a stream of updates, their final result
//! (typed), cancellation, and an event when one is stuck. Both protocol eras are spoken:
//! 2026-07-28 (stateless, the tasks extension) and 2025-11-25 (`initialize`, experimental tasks);
//! by default the client probes with `server/discover` and falls back to `initialize`.
//!
//! Whatever a server asks on the way (a question for the user, a completion from the client's
//! model, the client's roots) goes to one [`InputHandler`], whichever route the era and the call
//! use: a modern task's stored `inputRequests` (answered with `tasks/update`), a legacy task's
//! requests tagged `related-task` (answered while `tasks/result` waits), a legacy server's plain
//! requests, or a modern inline call's `InputRequiredResult` (retried with the answers and the
//! `requestState`). The caller never sees the difference.
//!
//! ```no_run
//! use mcp_tasks_client::{Client, TaskEvent, ToolCall};
//!
//! # async fn run() -> Result<(), mcp_tasks_client::Error> {
//! let client = Client::builder()
//!     .connect_stdio(tokio::process::Command::new("my-mcp-server"))
//!     .await?;
//! match client.call_tool("research", serde_json::json!({ "topic": "tides" })).await? {
//!     ToolCall::Done(result) => println!("{result:?}"),
//!     ToolCall::Task(task) => {
//!         let mut updates = task.updates();
//!         while let Some(TaskEvent::Updated(state)) = updates.next().await {
//!             println!("{}: {:?}", state.status, state.status_message);
//!         }
//!         println!("{:?}", task.result().await?);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! # Testing your tools
//!
//! [`ClientBuilder::connect_in_process`] connects to a server in the same test, with no process or
//! socket in between; a [`Scripted`] handler answers the tool's questions from a script and
//! records them.
//!
//! ```
//! use mcp_tasks_client::{Asked, Client, Scripted};
//! use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
//! use mcp_tasks_runtime::protocol::task::TaskStatus;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Confirm {
//!     sure: bool,
//! }
//!
//! /// Delete a file, after asking.
//! #[tool(task_support = "optional", poll_interval = "20ms")]
//! async fn delete(ctx: ToolContext, path: String) -> Result<String, ToolError> {
//!     ctx.status("asking");
//!     match ctx.elicit::<Confirm>(format!("Delete {path}?")).await? {
//!         ElicitOutcome::Accept(Confirm { sure: true }) => Ok(format!("deleted {path}")),
//!         _ => Ok("kept".into()),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_tasks_client::Error> {
//! let server = Server::new("files", "1.0.0").tool::<delete>();
//! let script = Scripted::new().accept(serde_json::json!({ "sure": true }));
//! let client = Client::builder()
//!     .handler(script.clone())
//!     .connect_in_process(&server)
//!     .await?;
//!
//! let call = client.call_tool("delete", serde_json::json!({ "path": "a.txt" })).await?;
//! let task = call.task().expect("a task-capable client gets a task").clone();
//! let result = call.result().await?;
//! assert_eq!(mcp_tasks_client::text(&result), "deleted a.txt");
//!
//! // What the tool asked, and the statuses it went through.
//! assert!(matches!(&script.asked()[..], [Asked::Elicit(q)] if q.message == "Delete a.txt?"));
//! let statuses: Vec<TaskStatus> = task.history().iter().map(|s| s.status).collect();
//! assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod client;
mod error;
mod handler;
mod http;
mod peer;
mod task;
mod testing;

pub use client::{
    Client, ClientBuilder, Era, EraChoice, ServerInfo, TaskMode, ToolCall, ToolInfo, structured,
};
pub use error::Error;
pub use handler::{
    Asked, ElicitRequest, ElicitResponse, InputCapabilities, InputContext, InputHandler, NoInput,
    RootsRequest, SamplingRequest, SamplingResponse,
};
pub use mcp_tasks_runtime::protocol::task::TaskStatus;
pub use mcp_tasks_runtime::protocol::{
    CallToolResult, Content, CreateMessageResult, Root, RpcError,
};
pub use task::{Progress, TaskEvent, TaskHandle, TaskSnapshot, TaskUpdates};
pub use testing::Scripted;

/// The text blocks of a result, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
