//! The fixture tools the official conformance suite calls (`@modelcontextprotocol/conformance`,
//! tasks scenarios), written with `#[tool]` like any user's tools. Also used by this project's own
//! stdio tests.

use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

/// Greet someone; never a task.
#[tool]
pub async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Compute slowly: sleeps `seconds`, then answers. A task when the client supports tasks.
#[tool(task_support = "optional", poll_interval = "200ms")]
pub async fn slow_compute(
    ctx: ToolContext,
    /// How long to work, in seconds.
    seconds: u64,
    /// A label to echo back.
    label: Option<String>,
) -> Result<String, ToolError> {
    let label = label.unwrap_or_else(|| "result".into());
    ctx.status(format!("computing for {seconds}s"));
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(seconds)) => Ok(format!("{label}: computed after {seconds}s")),
        _ = ctx.cancelled() => {
            tracing::info!("slow_compute: saw cancellation");
            Err(ToolError::new("cancelled"))
        }
    }
}

/// A job that fails with a tool error (`isError: true`) after a second. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed: upstream said no"))
}

/// A job that fails with a JSON-RPC error, so its task ends `failed`. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn protocol_error_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ToolError::internal("the job hit an internal error"))
}

/// A yes/no answer.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Whether to go ahead.
    pub confirm: bool,
}

/// Delete a file, after the user confirms. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn confirm_delete(
    ctx: ToolContext,
    /// The file to delete.
    filename: String,
) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Confirm>(format!("Delete {filename}?")).await;
    match answer {
        Ok(ElicitOutcome::Accept(Confirm { confirm: true })) => Ok(format!("Deleted {filename}")),
        Ok(_) => Ok(format!("Kept {filename}")),
        Err(e) => {
            tracing::info!("confirm_delete: stopped waiting for confirmation: {e}");
            Err(e.into())
        }
    }
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Name {
    /// The name.
    pub name: String,
}

/// A colour.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Colour {
    /// The colour.
    pub colour: String,
}

/// Ask two questions at once. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn multi_input(ctx: ToolContext) -> Result<String, ToolError> {
    let (name, colour) = tokio::join!(
        ctx.elicit::<Name>("Your name?"),
        ctx.elicit::<Colour>("Your favourite colour?")
    );
    let name = name?.accepted().map_or("nobody".into(), |n| n.name);
    let colour = colour?.accepted().map_or("none".into(), |c| c.colour);
    Ok(format!("{name} likes {colour}"))
}

/// Asks for a name through MRTR *before* it becomes a task, then greets as a task: the
/// composition the `tasks-mrtr-composition` scenario checks. `defer_task` starts the call inline;
/// `ctx.start_task()` is where it becomes a task.
#[tool(task_support = "required", defer_task = true, poll_interval = "200ms")]
pub async fn test_tool_with_task(ctx: ToolContext) -> Result<String, ToolError> {
    let name = match ctx.elicit::<Name>("What is your name?").await? {
        ElicitOutcome::Accept(Name { name }) => name,
        _ => return Err(ToolError::new("a name is needed to continue")),
    };
    ctx.start_task().await;
    ctx.status(format!("greeting {name}"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!(
        "Hello, {name}! (from task {})",
        ctx.task_id().unwrap_or("?")
    ))
}

// Fixtures for this project's own tests (not called by the conformance suite).

/// Ask the user's name and greet them. A task when the client supports tasks; inline otherwise,
/// where the question goes out as MRTR (`InputRequiredResult`) or, in a legacy session, as a plain
/// `elicitation/create` request.
#[tool(task_support = "optional", poll_interval = "200ms")]
pub async fn ask_name(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("What is your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        ElicitOutcome::Decline => Ok("Hello, stranger!".into()),
        ElicitOutcome::Cancel => Err(ToolError::new("no name given")),
    }
}

/// Panics inside its task: the task fails, the server lives on.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn panicking_job() -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    panic!("the job exploded")
}

/// Works far longer than its one-second TTL: the task expires.
#[tool(task_support = "required", ttl = "1s", poll_interval = "100ms")]
pub async fn short_lived(ctx: ToolContext) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(60)) => Ok("finished".into()),
        _ = ctx.cancelled() => {
            tracing::info!("short_lived: saw its task end");
            Err(ToolError::new("expired"))
        }
    }
}

/// The conformance fixture server.
pub fn conformance_server() -> Server {
    Server::new("mcp-tasks-conformance", env!("CARGO_PKG_VERSION"))
        .tool::<greet>()
        .tool::<slow_compute>()
        .tool::<failing_job>()
        .tool::<protocol_error_job>()
        .tool::<confirm_delete>()
        .tool::<multi_input>()
        .tool::<test_tool_with_task>()
        .tool::<ask_name>()
        .tool::<panicking_job>()
        .tool::<short_lived>()
}
