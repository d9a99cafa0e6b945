use mcp_tasks_runtime::tool;

#[tool(task_support = "required", poll_interval = "5ms")]
async fn search() {}

fn main() {}
