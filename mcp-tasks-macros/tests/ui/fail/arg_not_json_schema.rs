use mcp_tasks_runtime::tool;

#[derive(serde::Deserialize)]
struct Query {
    text: String,
}

#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
