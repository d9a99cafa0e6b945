use mcp_tasks_runtime::tool;

#[tool(task_support = "optional", ttl = "10")]
async fn search() {}

fn main() {}
