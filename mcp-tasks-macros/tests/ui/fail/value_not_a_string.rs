use mcp_tasks_runtime::tool;

#[tool(name = 42)]
async fn search() {}

fn main() {}
