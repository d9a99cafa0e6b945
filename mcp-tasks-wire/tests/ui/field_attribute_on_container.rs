#[derive(mcp_tasks_wire::Serialize)]
#[serde(flatten)]
struct Page {
    items: Vec<u32>,
}

fn main() {}
