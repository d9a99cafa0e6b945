//! The tools of the example server, shared by its binaries.

pub mod conformance;

use mcp_tasks_runtime::{CreateMessageParams, ElicitOutcome, Server, ToolContext, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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

/// How the user wants the research done.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Plan {
    /// How many sources to read.
    pub sources: u32,
}

/// What the research found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// The topic.
    pub topic: String,
    /// How many sources were read.
    pub sources: u32,
    /// The client's model's summary.
    pub summary: String,
}

/// Research a topic in depth: asks the user how many sources to read, then asks the client's model
/// for a summary. Runs only as a task (it may take minutes).
#[tool(task_support = "required", ttl = "10m", poll_interval = "500ms")]
pub async fn research(
    ctx: ToolContext,
    /// What to research.
    topic: String,
) -> Result<Report, ToolError> {
    ctx.status("planning");
    let plan = match ctx
        .elicit::<Plan>(format!("How many sources should I read about \"{topic}\"?"))
        .await?
    {
        ElicitOutcome::Accept(plan) => plan,
        ElicitOutcome::Decline | ElicitOutcome::Cancel => {
            return Err(ToolError::new("the user called the research off"));
        }
    };
    ctx.status(format!("reading {} sources", plan.sources));
    let prompt = format!("Summarise what is known about {topic} in one sentence.");
    let summary = ctx
        .sample(CreateMessageParams::user_text(prompt, 200))
        .await?;
    Ok(Report {
        topic,
        sources: plan.sources,
        summary: summary.text().unwrap_or_default().to_owned(),
    })
}

/// Count down for `seconds`, reporting each second in the status. A task when the client supports
/// tasks, inline otherwise.
#[tool(task_support = "optional", poll_interval = "250ms")]
pub async fn countdown(
    ctx: ToolContext,
    /// How many seconds.
    seconds: u32,
) -> Result<String, ToolError> {
    for left in (1..=seconds).rev() {
        ctx.status(format!("{left}s left"));
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = ctx.cancelled() => return Err(ToolError::new("countdown cancelled")),
        }
    }
    Ok("liftoff".into())
}

/// The example server with all its tools.
pub fn example_server() -> Server {
    Server::new("mcp-tasks-example", env!("CARGO_PKG_VERSION"))
        .instructions("Example tools for mcp-tasks: greet, add, always_fails, sleep, explode, research (a task), countdown.")
        .tool::<greet>()
        .tool::<add>()
        .tool::<always_fails>()
        .tool::<sleep>()
        .tool::<explode>()
        .tool::<research>()
        .tool::<countdown>()
}
