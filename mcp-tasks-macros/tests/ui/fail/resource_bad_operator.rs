use mcp_tasks_runtime::resource;

#[resource(uri = "notes://{!title}")]
async fn note(title: String) -> String {
    title
}

fn main() {}
