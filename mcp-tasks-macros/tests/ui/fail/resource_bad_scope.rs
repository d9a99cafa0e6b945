use mcp_tasks_runtime::resource;

/// A scope is one OAuth scope token: no `"` inside.
#[resource(uri = "notes://{title}", scope = "notes \"all\"")]
async fn note(title: String) -> String {
    title
}

fn main() {}
