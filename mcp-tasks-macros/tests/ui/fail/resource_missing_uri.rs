use mcp_tasks_runtime::resource;

#[resource(mime_type = "text/plain")]
async fn config() -> String {
    String::new()
}

fn main() {}
