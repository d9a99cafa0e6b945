use mcp_tasks_runtime::resource;

#[resource(uri = "notes://{title}", size = 100)]
async fn note(title: String) -> String {
    title
}

fn main() {}
