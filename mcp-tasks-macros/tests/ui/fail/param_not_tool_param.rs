use mcp_tasks_runtime::tool;

struct Query {
    text: String,
}

#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
