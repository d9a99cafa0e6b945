use mcp_tasks_runtime::prompt;

/// `nam` is not a key.
#[prompt(nam = "review")]
async fn review(code: String) -> String {
    code
}

fn main() {}
