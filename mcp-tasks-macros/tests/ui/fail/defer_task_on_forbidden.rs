use mcp_tasks_runtime::tool;

#[tool(defer_task = true)]
async fn search() {}

fn main() {}
