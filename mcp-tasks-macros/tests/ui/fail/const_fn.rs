use mcp_tasks_runtime::tool;

#[tool]
const async fn search() {}

fn main() {}
