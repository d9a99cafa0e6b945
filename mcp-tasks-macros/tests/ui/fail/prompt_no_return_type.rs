use mcp_tasks_runtime::prompt;

/// Returns nothing.
#[prompt]
async fn review(code: String) {
    let _ = code;
}

fn main() {}
