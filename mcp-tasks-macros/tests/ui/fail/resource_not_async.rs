use mcp_tasks_runtime::resource;

#[resource(uri = "config://app")]
fn config() -> String {
    String::new()
}

fn main() {}
