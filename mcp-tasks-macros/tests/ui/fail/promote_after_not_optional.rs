use mcp_tasks_runtime::tool;

/// A required tool is a task from the start: there is nothing to promote.
#[tool(task_support = "required", promote_after = "30s")]
async fn export() {}

/// A forbidden tool (the default) never becomes a task.
#[tool(promote_after = "30s")]
async fn lookup() {}

fn main() {}
