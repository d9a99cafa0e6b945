use mcp_tasks_runtime::tool;

#[tool(task_support = "required", defer_task = true, durable = true)]
async fn ingest() {}

fn main() {}
