use mcp_tasks_runtime::tool;

#[tool(durable)]
async fn ingest() {}

fn main() {}
