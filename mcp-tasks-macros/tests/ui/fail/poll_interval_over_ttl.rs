use mcp_tasks_runtime::tool;

#[tool(task_support = "required", ttl = "1m", poll_interval = "2m")]
async fn search() {}

fn main() {}
