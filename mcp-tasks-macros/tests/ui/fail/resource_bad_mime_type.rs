use mcp_tasks_runtime::resource;

#[resource(uri = "config://app", mime_type = "markdown")]
async fn config() -> String {
    String::new()
}

fn main() {}
