use mcp_tasks_runtime::{CompletionContext, prompt};

async fn languages(_: String, _: CompletionContext) -> Vec<String> {
    Vec::new()
}

/// Either a fixed list or a function, not both.
#[prompt]
async fn review(
    #[complete(values = ["rust"], with = languages)] language: String,
) -> String {
    language
}

fn main() {}
