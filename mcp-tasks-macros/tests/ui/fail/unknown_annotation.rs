use mcp_tasks_runtime::tool;

#[tool(annotations(readonly = true))]
async fn search() {}

fn main() {}
