use mcp_tasks_runtime::tool;

#[tool(task_support = "optinal")]
async fn search() {}

fn main() {}
