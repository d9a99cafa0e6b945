use mcp_tasks_runtime::tool;

#[tool(task_suport = "optional")]
async fn search() {}

fn main() {}
