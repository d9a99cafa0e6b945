use mcp_tasks_runtime::tool;

#[tool]
async fn search(query: impl Into<String>) -> String {
    query.into()
}

fn main() {}
