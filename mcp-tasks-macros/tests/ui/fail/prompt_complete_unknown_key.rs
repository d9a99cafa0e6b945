use mcp_tasks_runtime::prompt;

/// `value` is not a key of `#[complete]`.
#[prompt]
async fn review(#[complete(value = ["rust"])] language: String) -> String {
    language
}

fn main() {}
