use mcp_tasks_runtime::{ToolContext, resource};

/// A fixed resource has no variables to complete.
#[resource(uri = "config://app")]
async fn config(#[complete(values = ["a"])] ctx: ToolContext) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
