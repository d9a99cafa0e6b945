//! The README's quick start, compiled as part of the workspace so it cannot rot.

use mcp_tasks_runtime::schemars::{self, JsonSchema};
use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
use serde::Deserialize;

/// Say hello to someone.
#[tool]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// How many sources to read.
#[derive(Deserialize, JsonSchema)]
struct Plan {
    /// How many sources.
    sources: u32,
}

/// Research a topic; may take minutes, so it runs as a task.
#[tool(task_support = "required", ttl = "10m")]
async fn research(ctx: ToolContext, topic: String) -> Result<String, ToolError> {
    ctx.status("planning");
    let ElicitOutcome::Accept(plan) = ctx.elicit::<Plan>("How many sources?").await? else {
        return Err(ToolError::new("called off"));
    };
    Ok(format!("read {} sources about {topic}", plan.sources))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("hello", "1.0.0")
        .tool::<greet>()
        .tool::<research>()
        .build()?;
    server.serve_stdio().await
}
