use mcp_tasks_runtime::prompt;

/// `scope = ""` names no scope.
#[prompt(scope = "")]
async fn review(code: String) -> String {
    code
}

fn main() {}
