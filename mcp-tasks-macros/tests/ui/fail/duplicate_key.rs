use mcp_tasks_runtime::tool;

#[tool(name = "search", name = "find")]
async fn search() {}

fn main() {}
