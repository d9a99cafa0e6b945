#[derive(mcp_tasks_wire::Deserialize)]
struct Hints {
    title: Option<&'static str>,
}

fn main() {}
