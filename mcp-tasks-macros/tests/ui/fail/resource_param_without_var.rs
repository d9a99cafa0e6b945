use mcp_tasks_runtime::resource;

#[resource(uri = "notes://{title}")]
async fn note(title: String, id: u32) -> String {
    format!("{title}{id}")
}

fn main() {}
