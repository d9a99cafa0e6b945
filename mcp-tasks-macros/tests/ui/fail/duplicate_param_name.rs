use mcp_tasks_runtime::tool;

#[tool]
async fn search(query: String, r#query: String) -> String {
    query
}

fn main() {}
