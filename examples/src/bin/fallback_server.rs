//! A server whose long tools run only as tasks, for clients that know nothing of tasks: with the
//! fallback (`ServerBuilder::task_fallback`, on by default) any MCP client can call `report` or
//! `interview`, get a task id back at once, and follow the task with the companion tools
//! `tasks_status`, `tasks_result` and `tasks_cancel`. `tally` is `optional` and promoted after
//! 300 ms: a quick call answers inline, a long one the same way as `report`.
//!
//! ```sh
//! cargo run -p mcp-tasks-examples --bin fallback_server
//! cargo run -p mcp-tasks-examples --bin fallback_server -- --http 127.0.0.1:8080
//! ```
//!
//! With `--no-task-fallback` it serves the same tools without the fallback: a client that cannot
//! take a task is not offered `report` or `interview`, and calling one anyway is the usual error
//! for a `required` tool.

use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What `report` produced.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Summary {
    /// How many steps ran.
    pub steps: u32,
    /// A line for people.
    pub note: String,
}

/// Build a report in `steps` steps of `step_ms` milliseconds each, reporting progress; runs only
/// as a task. Cancellable.
#[tool(task_support = "required", poll_interval = "100ms")]
pub async fn report(
    ctx: ToolContext,
    /// How many steps.
    steps: u32,
    /// How long each step takes, in milliseconds.
    step_ms: u64,
) -> Result<Summary, ToolError> {
    for step in 1..=steps {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(step_ms)) => {}
            _ = ctx.cancelled() => {
                tracing::info!(step, "report: cancelled");
                return Err(ToolError::new("report cancelled"));
            }
        }
        ctx.progress(
            step as f64,
            Some(steps as f64),
            Some(&format!("step {step}")),
        );
    }
    Ok(Summary {
        steps,
        note: format!("report of {steps} steps"),
    })
}

/// Who the user is.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Name {
    /// The user's name.
    pub name: String,
}

/// Ask the user's name, then greet them; runs only as a task.
#[tool(task_support = "required", poll_interval = "100ms")]
pub async fn interview(ctx: ToolContext) -> Result<String, ToolError> {
    ctx.status("asking for a name");
    match ctx.elicit::<Name>("What is your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Nice to meet you, {name}.")),
        ElicitOutcome::Decline | ElicitOutcome::Cancel => {
            Err(ToolError::new("the user did not say"))
        }
    }
}

/// Count to `to`, one number every 10 ms: inline when quick; past 300 ms it goes on as a task
/// (`promote_after`), and a client without tasks gets the fallback's answer.
#[tool(task_support = "optional", poll_interval = "100ms")]
pub async fn tally(ctx: ToolContext, to: u32) -> Result<String, ToolError> {
    for n in 1..=to {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = ctx.cancelled() => return Err(ToolError::new("tally cancelled")),
        }
        ctx.status(format!("counted to {n}"));
    }
    Ok(format!("counted to {to}"))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("mcp-tasks-fallback", env!("CARGO_PKG_VERSION"))
        .tool::<report>()
        .tool::<interview>()
        .tool::<tally>()
        .promote_after::<tally>(Duration::from_millis(300))
        .tool::<mcp_tasks_examples::greet>();
    mcp_tasks_examples::serve_from_args(server).await
}
