use mcp_tasks_runtime::tool;

#[tool(task_support = "required", ttl = "31d")]
async fn search() {}

fn main() {}
