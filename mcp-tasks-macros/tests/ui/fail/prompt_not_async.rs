use mcp_tasks_runtime::prompt;

/// Not async.
#[prompt]
fn review(code: String) -> String {
    code
}

fn main() {}
