use mcp_tasks_runtime::tool;

#[tool]
async fn café() {}

fn main() {}
