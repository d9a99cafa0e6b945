use mcp_tasks_runtime::tool;

#[tool(task_support = "sometimes")]
async fn search() {}

fn main() {}
