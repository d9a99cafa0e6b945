use mcp_tasks_runtime::tool;

#[tool]
async unsafe fn search(query: String) -> String {
    query
}

fn main() {}
