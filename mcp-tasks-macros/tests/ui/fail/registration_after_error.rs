// On an error the function and a stub descriptor are still emitted: the one error is the typo,
// not "cannot find type `search`" where the tool is registered or called.
use mcp_tasks_runtime::tool;

#[tool(task_support = "requried")]
async fn search(query: String) -> String {
    query
}

fn main() {
    let _ = mcp_tasks_runtime::__internal::RegisteredTool::of::<search>();
    let _ = search(String::new());
}
