use mcp_tasks_runtime::tool;

#[tool]
async extern "C" fn search() {}

fn main() {}
