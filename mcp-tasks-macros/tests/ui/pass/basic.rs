// The smallest tool: registered by the function's name, described by its doc comment.
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{TaskSupport, ToolContext, ToolError, tool};

/// Greets someone.
#[tool]
async fn greet(ctx: ToolContext, name: String, times: Option<u32>) -> Result<String, ToolError> {
    let _ = ctx.is_cancelled();
    Ok(format!("Hello, {name}!").repeat(times.unwrap_or(1) as usize))
}

fn main() {
    let tool = RegisteredTool::of::<greet>();
    assert_eq!(tool.info.name, "greet");
    assert_eq!(tool.info.description, Some("Greets someone."));
    assert_eq!(tool.info.task_support, TaskSupport::Forbidden);
    assert!(tool.info.ttl.is_none() && tool.info.annotations.is_empty());
    let schema = &*tool.input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["required"], serde_json::json!(["name"]));
    assert!(schema["properties"].get("ctx").is_none());
    assert!(tool.output_schema.is_none());
}
