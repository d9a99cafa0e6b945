// `crate = "..."` points the expansion at the runtime wherever it is: here through a re-export, as
// a facade crate would do. (Cargo refuses the same package twice under two names in one package,
// so a renamed dependency cannot sit next to `mcp-tasks-runtime` here; ui/fail/bad_crate_path.rs
// shows the override is what the expansion uses.)
use mcp_tasks_runtime::__internal::RegisteredTool;

/// Where this crate keeps the runtime.
pub mod facade {
    pub use ::mcp_tasks_runtime as rt;
}

use facade::rt;

/// Through a re-export in this crate.
#[rt::tool(crate = "crate::facade::rt", task_support = "required")]
async fn reexported(ctx: rt::ToolContext) -> rt::CallToolResult {
    let _ = ctx;
    rt::CallToolResult::text("ok")
}

/// Spelled out.
#[rt::tool(crate = "::mcp_tasks_runtime")]
async fn explicit(name: String) -> String {
    name
}

fn main() {
    let tool = RegisteredTool::of::<reexported>();
    assert_eq!(tool.info.task_support, rt::TaskSupport::Required);
    assert_eq!(RegisteredTool::of::<explicit>().info.name, "explicit");
}
