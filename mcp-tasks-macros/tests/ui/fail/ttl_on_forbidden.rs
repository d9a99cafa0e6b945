use mcp_tasks_runtime::tool;

#[tool(ttl = "10m")]
async fn search() {}

fn main() {}
