use mcp_tasks_runtime::tool;

#[tool(name = "search docs")]
async fn search() {}

fn main() {}
