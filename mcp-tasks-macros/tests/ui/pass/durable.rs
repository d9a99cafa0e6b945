use mcp_tasks_runtime::{Tool, ToolContext, ToolError, tool};

#[derive(serde::Serialize, serde::Deserialize)]
struct Progress {
    done: u32,
}

/// Works through items, going on from its last checkpoint when it runs again.
#[tool(task_support = "required", durable)]
async fn ingest(ctx: ToolContext, items: u32) -> Result<String, ToolError> {
    let mut done = ctx.resumed::<Progress>().map_or(0, |p| p.done);
    while done < items {
        done += 1;
        ctx.checkpoint(&Progress { done }).await?;
    }
    Ok(format!("{done} items on run {}", ctx.attempt()))
}

fn main() {
    assert!(<ingest as Tool>::INFO.durable);
}
