use mcp_tasks_runtime::resource;

struct Id(u32);

#[resource(uri = "items://{id}")]
async fn item(id: Id) -> String {
    id.0.to_string()
}

fn main() {}
