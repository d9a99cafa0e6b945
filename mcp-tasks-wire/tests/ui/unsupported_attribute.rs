#[derive(mcp_tasks_wire::Deserialize)]
#[serde(deny_unknown_fields)]
struct Strict {
    name: String,
}

fn main() {}
