use mcp_tasks_runtime::resource;

#[resource(uri = "config://app", mime = "text/plain")]
async fn config() -> String {
    String::new()
}

fn main() {}
