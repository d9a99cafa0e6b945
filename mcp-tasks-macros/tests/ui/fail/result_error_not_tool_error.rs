use mcp_tasks_runtime::tool;

#[derive(Debug)]
struct NotAnError;

#[tool]
async fn search(query: String) -> Result<String, NotAnError> {
    Ok(query)
}

fn main() {}
