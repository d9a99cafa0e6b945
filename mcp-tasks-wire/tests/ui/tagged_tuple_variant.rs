#[derive(mcp_tasks_wire::Serialize)]
#[serde(tag = "type")]
enum Shape {
    Point(u32, u32),
}

fn main() {}
