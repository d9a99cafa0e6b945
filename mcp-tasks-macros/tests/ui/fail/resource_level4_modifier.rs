use mcp_tasks_runtime::resource;

#[resource(uri = "files://{path*}")]
async fn file(path: String) -> String {
    path
}

fn main() {}
