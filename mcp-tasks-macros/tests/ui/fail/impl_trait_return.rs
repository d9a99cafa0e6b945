use mcp_tasks_runtime::tool;

#[tool]
async fn search(query: String) -> impl serde::Serialize {
    query
}

fn main() {}
