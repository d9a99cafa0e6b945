use mcp_tasks_runtime::tool;

#[tool(task_support = "optional", ttl = "0s")]
async fn search() {}

fn main() {}
