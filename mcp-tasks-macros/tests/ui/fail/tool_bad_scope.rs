use mcp_tasks_runtime::tool;

/// A scope is one OAuth scope token: no `\` inside.
#[tool(scope = "research\\all")]
async fn research(topic: String) -> String {
    topic
}

fn main() {}
