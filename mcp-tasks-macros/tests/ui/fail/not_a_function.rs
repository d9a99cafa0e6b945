use mcp_tasks_runtime::tool;

#[tool]
struct Search;

fn main() {}
