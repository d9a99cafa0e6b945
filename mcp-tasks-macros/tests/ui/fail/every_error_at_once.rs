// Every mistake is reported in one compile, and the registration below adds no error of its own.
use mcp_tasks_runtime::tool;

#[tool(task_suport = "optional", name = "two words")]
fn search<T>(query: T) {}

fn main() {
    let _ = mcp_tasks_runtime::__internal::RegisteredTool::of::<search>();
}
