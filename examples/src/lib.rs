//! The tools of the example server, shared by its binaries.

use mcp_tasks_runtime::{Server, ToolContext, ToolError, tool};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// Say hello to someone.
#[tool]
pub async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// The sum of two numbers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Sum {
    /// `a + b`.
    pub sum: f64,
}

/// Add two numbers; the answer is structured content.
#[tool(annotations(read_only = true, idempotent = true))]
pub async fn add(
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
) -> Sum {
    Sum { sum: a + b }
}

/// Always fails with a tool error (`isError: true`), which the model can read.
#[tool]
pub async fn always_fails() -> Result<String, ToolError> {
    Err(ToolError::new("this tool always fails"))
}

/// Sleep for a while, then say so. Cancellable with `notifications/cancelled`.
#[tool]
pub async fn sleep(
    ctx: ToolContext,
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("slept {ms} ms")),
        _ = ctx.cancelled() => Err(ToolError::new("cancelled")),
    }
}

/// Panics, to show that a panicking tool gets a JSON-RPC error and the server keeps serving.
#[tool]
pub async fn explode() -> String {
    panic!("kaboom")
}

/// The example server with all its tools.
pub fn example_server() -> Server {
    Server::new("mcp-tasks-example", env!("CARGO_PKG_VERSION"))
        .instructions("Example tools for mcp-tasks: greet, add, always_fails, sleep, explode.")
        .tool::<greet>()
        .tool::<add>()
        .tool::<always_fails>()
        .tool::<sleep>()
        .tool::<explode>()
}
