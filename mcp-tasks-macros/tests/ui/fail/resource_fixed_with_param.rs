use mcp_tasks_runtime::resource;

#[resource(uri = "config://app")]
async fn config(verbose: bool) -> String {
    verbose.to_string()
}

fn main() {}
