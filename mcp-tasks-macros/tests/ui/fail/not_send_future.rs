use mcp_tasks_runtime::tool;
use std::rc::Rc;

#[tool]
async fn search(query: String) -> String {
    let cache = Rc::new(query);
    tokio::task::yield_now().await;
    cache.to_string()
}

fn main() {}
