use mcp_tasks_runtime::tool;

#[tool]
fn search(query: String) -> String {
    query
}

fn main() {}
