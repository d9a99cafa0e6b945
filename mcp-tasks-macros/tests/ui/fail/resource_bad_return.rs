use mcp_tasks_runtime::resource;

#[resource(uri = "config://app")]
async fn config() -> u32 {
    7
}

fn main() {}
