use mcp_tasks_runtime::tool;
use std::cell::RefCell;

thread_local! {
    static SEEN: RefCell<Vec<String>> = RefCell::new(Vec::new());
}

#[tool(task_support = "required")]
async fn crawl(url: String) -> usize {
    let seen = SEEN.with(|s| s.borrow().len());
    let guard = std::sync::Mutex::new(url);
    let held = guard.lock().unwrap();
    tokio::task::yield_now().await;
    seen + held.len()
}

fn main() {}
