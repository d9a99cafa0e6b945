// `task_support`, `ttl`, `poll_interval` and `promote_after` become typed values in `ToolInfo`.
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{TaskSupport, ToolContext, tool};
use std::time::Duration;

#[tool(task_support = "optional")]
async fn optional() {}

#[tool(task_support = "required", ttl = "1h30m", poll_interval = "500ms")]
async fn required(ctx: ToolContext) {
    let _ = ctx;
}

#[tool(task_support = "forbidden")]
async fn forbidden() {}

#[tool(task_support = "required", ttl = "30d", poll_interval = "1h")]
async fn limits() {}

#[tool(task_support = "optional", promote_after = "1m30s")]
async fn promoted() {}

fn main() {
    let info = RegisteredTool::of::<optional>().info;
    assert_eq!((info.task_support, info.ttl, info.poll_interval), (TaskSupport::Optional, None, None));
    let info = RegisteredTool::of::<required>().info;
    assert_eq!(info.task_support, TaskSupport::Required);
    assert_eq!(info.ttl, Some(Duration::from_secs(5400)));
    assert_eq!(info.poll_interval, Some(Duration::from_millis(500)));
    assert_eq!(RegisteredTool::of::<forbidden>().info.task_support, TaskSupport::Forbidden);
    assert_eq!(RegisteredTool::of::<limits>().info.ttl, Some(Duration::from_secs(30 * 86400)));
    assert_eq!(RegisteredTool::of::<optional>().info.promote_after, None);
    assert_eq!(RegisteredTool::of::<promoted>().info.promote_after, Some(Duration::from_secs(90)));
}
