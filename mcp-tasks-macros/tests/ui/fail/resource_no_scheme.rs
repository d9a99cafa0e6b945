use mcp_tasks_runtime::resource;

#[resource(uri = "/etc/app.toml")]
async fn config() -> String {
    String::new()
}

fn main() {}
