// The function stays exactly as written: callable directly (in tests, say), with its own name in
// the value namespace; the descriptor type shares the name in the type namespace only.
use mcp_tasks_runtime::tool;

/// Adds.
#[tool]
pub async fn add(a: i64, b: i64) -> i64 {
    a + b
}

async fn twice(x: i64) -> i64 {
    add(x, x).await
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(runtime.block_on(add(2, 3)), 5);
    assert_eq!(runtime.block_on(twice(4)), 8);
    let as_fn: fn(i64, i64) -> _ = add;
    drop(as_fn(1, 1));
    let _descriptor: add = add {};
}
