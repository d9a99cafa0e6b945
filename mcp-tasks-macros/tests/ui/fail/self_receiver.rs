use mcp_tasks_runtime::tool;

struct Index;

impl Index {
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
