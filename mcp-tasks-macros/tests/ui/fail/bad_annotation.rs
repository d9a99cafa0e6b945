use mcp_tasks_runtime::tool;

#[tool(annotations(read_only = "yes"))]
async fn search() {}

fn main() {}
