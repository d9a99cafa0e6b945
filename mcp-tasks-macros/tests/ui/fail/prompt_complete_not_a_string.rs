use mcp_tasks_runtime::{ToolContext, prompt};

/// Completion goes on an argument, and the context is not one.
#[prompt]
async fn review(
    #[complete(values = ["a", "b"])] ctx: ToolContext,
    code: String,
) -> String {
    let _ = ctx;
    code
}

fn main() {}
