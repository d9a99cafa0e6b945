use mcp_tasks_runtime::tool;

#[tool(crate = "crate::runtime")]
async fn search() {}

fn main() {}
