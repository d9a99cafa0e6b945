use mcp_tasks_runtime::prompt;

/// A prompt returns messages, not a number.
#[prompt]
async fn count() -> u32 {
    3
}

fn main() {}
