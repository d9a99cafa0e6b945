use mcp_tasks_runtime::tool;

#[tool]
async fn search(_query: u32, _: ...) {}

fn main() {}
