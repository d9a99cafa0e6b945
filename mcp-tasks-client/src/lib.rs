//! # mcp-tasks-client
//!
//! A task-aware MCP client: connect to a server (a command over stdio, Streamable HTTP, or a
//! [`Server`](mcp_tasks_runtime::Server) in the same process), list and call its tools, read its
//! resources ([`Client::read_resource`]) and prompts ([`Client::get_prompt`]), complete their
//! arguments ([`Client::complete`]), load its skills, verified ([`Client::load_skill`]), and follow the calls that run as **tasks**: their status as a
//! stream of updates, their final result (typed), cancellation, and an event when one is stuck. Both protocol eras are spoken:
//! 2026-07-28 (stateless, the tasks extension) and 2025-11-25 (`initialize`, experimental tasks);
//! by default the client finds the server's era itself, as the spec says: it asks
//! `server/discover`, which a 2026-07-28 server must answer, and falls back to `initialize`
//! when the server does not answer it as one (see [`EraChoice::Auto`]).
//! Every request has a timeout ([`ClientBuilder::request_timeout`], 60 s unless set, started
//! again by progress); `https://` is spoken with rustls; a task's states are reported in the
//! order they happened (by the task's own `lastUpdatedAt`), never backwards.
//!
//! Whatever a server asks on the way (a question for the user, a completion from the client's
//! model, the client's roots) goes to one [`InputHandler`], whichever route the era and the call
//! use: a modern task's stored `inputRequests` (answered with `tasks/update`), a legacy task's
//! requests tagged `related-task` (answered while `tasks/result` waits), a legacy server's plain
//! requests, or the `InputRequiredResult` of a modern inline call, `prompts/get` or
//! `resources/read` (retried with the answers and the `requestState`). The caller never sees the
//! difference.
//!
//! ```no_run
//! use mcp_tasks_client::{Client, TaskUpdate};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), mcp_tasks_client::Error> {
//!     let client = Client::builder()
//!         .bearer_token("secret")
//!         .stuck_after(std::time::Duration::from_secs(60))
//!         .connect_http("http://127.0.0.1:8080/mcp")
//!         .await?;
//!     let call = client.call_tool("countdown", serde_json::json!({ "seconds": 5 })).await?;
//!     if let Some(task) = call.task() {
//!         let mut updates = task.updates();
//!         while let Some(event) = updates.next().await {
//!             match event {
//!                 TaskUpdate::Updated(state) => eprintln!("{}: {:?}", state.status, state.status_message),
//!                 TaskUpdate::Stuck { .. } => task.cancel().await?,
//!                 TaskUpdate::Unanswered { method, .. } => eprintln!("{method} left unanswered"),
//!             }
//!         }
//!     }
//!     println!("{}", mcp_tasks_client::text(&call.result().await?));
//!     Ok(())
//! }
//! ```
//!
//! # Testing your tools
//!
//! [`ClientBuilder::connect_in_process`] connects to a server in the same test, with no process or
//! socket in between; a [`Scripted`] handler answers the tool's questions from a script and
//! records them; the task handle keeps every state the task went through. (The book's "Testing
//! your tools", `docs/src/testing.md`, shows the same code as a `#[tokio::test]`.)
//!
//! ```
//! use mcp_tasks_client::{Asked, Client, EraChoice, Scripted, TaskStatus};
//! use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Confirm {
//!     /// Really delete it?
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
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), mcp_tasks_client::Error> {
//!     // Each era takes its own route for the question; the same script answers both.
//!     for era in [EraChoice::Modern, EraChoice::Legacy] {
//!         let server = Server::builder("files", "1.0.0").tool::<delete>().build().expect("set up");
//!         let script = Scripted::new().accept(serde_json::json!({ "sure": true }));
//!         let client = Client::builder()
//!             .era(era)
//!             .handler(script.clone())
//!             .connect_in_process(&server)
//!             .await?;
//!
//!         let call = client.call_tool("delete", serde_json::json!({ "path": "a.txt" })).await?;
//!         let task = call.task().expect("a task-capable client gets a task").clone();
//!         let result = call.result().await?;
//!         assert_eq!(mcp_tasks_client::text(&result), "deleted a.txt");
//!
//!         // What the tool asked, and the states the task went through.
//!         assert!(matches!(&script.asked()[..], [Asked::Elicit(q)] if q.message == "Delete a.txt?"));
//!         let statuses: Vec<TaskStatus> = task.history().iter().map(|s| s.status).collect();
//!         assert_eq!(statuses.first(), Some(&TaskStatus::Working));
//!         assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
//!     }
//!     Ok(())
//! }
//! ```

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(test)]
mod readme;

mod client;
mod error;
mod handler;
mod http;
mod peer;
mod result;
mod session;
mod task;
mod testing;
mod wire;

pub use client::{
    Client, ClientBuilder, CompletionRef, EraChoice, ReadResourceResult, ResourceContent,
    ResourceData, ResourceSubscription, ToolCall,
};
pub use error::Error;
pub use handler::{
    Asked, ElicitRequest, ElicitResponse, InputCapabilities, InputContext, InputHandler, NoInput,
    RootsRequest, SamplingRequest, SamplingResponse,
};
pub use mcp_tasks_runtime::Era;
pub use mcp_tasks_runtime::TaskSupport;
pub use mcp_tasks_runtime::protocol::task::TaskStatus;
// The wire types, shared with the runtime (one model for both sides).
pub use mcp_tasks_runtime::Completion;
pub use mcp_tasks_runtime::protocol::skill::{SkillEntry, SkillFile, SkillFiles};
pub use mcp_tasks_runtime::protocol::{
    CallToolResult, Content, CreateMessageResult, GetPromptResult, ListedPrompt,
    ListedResourceTemplate, ListedTool, PromptArgument, PromptMessage, ResourceContents, Role,
    Root, RpcError, ToolExecution,
};
pub use mcp_tasks_runtime::resource::ListedResource;
pub use result::{structured, text};
pub use session::{ServerInfo, TaskMode};
pub use task::{Progress, TaskHandle, TaskSnapshot, TaskUpdate, TaskUpdates};
pub use testing::Scripted;
pub use wire::WireDirection;
