use mcp_tasks_runtime::prompt;

/// `#[complete]` with nothing to offer.
#[prompt]
async fn review(#[complete] language: String) -> String {
    language
}

fn main() {}
