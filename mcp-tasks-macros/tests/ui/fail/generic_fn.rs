use mcp_tasks_runtime::tool;

#[tool]
async fn search<Q: serde::de::DeserializeOwned>(query: Q) -> String {
    let _ = query;
    String::new()
}

fn main() {}
