use mcp_tasks_runtime::{Server, resource};

// One mistake, one error: the descriptor still exists, so registering it adds none.
#[resource(uri = "notes://{title}")]
async fn note() -> String {
    String::new()
}

fn main() {
    let _ = Server::builder("s", "1").resource::<note>();
}
