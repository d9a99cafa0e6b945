use mcp_tasks_runtime::{State, resource};

struct Notes;

/// `notes` is injected by the server, not a variable of the template.
#[resource(uri = "notes://{title}")]
async fn note(#[complete(values = ["a"])] notes: State<Notes>, title: String) -> String {
    let _ = notes;
    title
}

fn main() {}
