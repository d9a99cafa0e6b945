use mcp_tasks_runtime::{CompletionContext, resource};

async fn count(_: String, _: CompletionContext) -> u32 {
    0
}

/// A completion function returns the values to offer, not a number.
#[resource(uri = "notes://{title}")]
async fn note(#[complete(with = count)] title: String) -> String {
    title
}

fn main() {}
