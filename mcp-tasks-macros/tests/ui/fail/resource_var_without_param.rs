use mcp_tasks_runtime::resource;

#[resource(uri = "notes://{title}")]
async fn note() -> String {
    String::new()
}

fn main() {}
