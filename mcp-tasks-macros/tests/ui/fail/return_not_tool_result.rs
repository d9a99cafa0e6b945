use mcp_tasks_runtime::tool;

struct Hits(Vec<String>);

#[tool]
async fn search(query: String) -> Hits {
    Hits(vec![query])
}

fn main() {}
