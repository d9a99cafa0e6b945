use mcp_tasks_runtime::{CompletionContext, prompt};

async fn languages(_: String, _: CompletionContext) -> u32 {
    3
}

/// The completion function returns no candidates.
#[prompt]
async fn review(#[complete(with = languages)] language: String) -> String {
    language
}

fn main() {}
