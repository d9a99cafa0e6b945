use mcp_tasks_runtime::prompt;

/// Prompt arguments are strings on the wire.
#[prompt]
async fn repeat(text: String, times: u32) -> String {
    text.repeat(times as usize)
}

fn main() {}
