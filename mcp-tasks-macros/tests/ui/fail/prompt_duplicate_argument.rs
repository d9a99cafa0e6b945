use mcp_tasks_runtime::prompt;

/// Two arguments named `code`.
#[prompt]
async fn review(code: String, #[arg(rename = "code")] other: String) -> String {
    code + &other
}

fn main() {}
