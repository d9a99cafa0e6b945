use mcp_tasks_runtime::{CompletionContext, resource};

async fn titles(_: String, _: CompletionContext) -> Vec<String> {
    Vec::new()
}

/// Either a fixed list or a function, not both.
#[resource(uri = "notes://{title}")]
async fn note(#[complete(values = ["welcome"], with = titles)] title: String) -> String {
    title
}

fn main() {}
