// Every return form: text, structured output, `Result` with `ToolError` or any `std::error::Error`,
// a ready-made `CallToolResult`, content blocks, `Json<T>`, and nothing at all.
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{CallToolResult, Content, Json, ToolError, tool};
use serde::Serialize;

#[derive(Serialize, schemars::JsonSchema)]
struct Report {
    ok: bool,
}

#[tool]
async fn text() -> String {
    "hi".into()
}

#[tool]
async fn structured() -> Report {
    Report { ok: true }
}

#[tool]
async fn fallible() -> Result<Report, ToolError> {
    Err(ToolError::new("no"))
}

#[tool]
async fn io() -> Result<String, std::io::Error> {
    std::fs::read_to_string("/nonexistent")
}

#[tool]
async fn raw() -> CallToolResult {
    CallToolResult::text("raw")
}

#[tool]
async fn blocks() -> Vec<Content> {
    vec![Content::text("a")]
}

#[tool]
async fn json() -> Json<Report> {
    Json(Report { ok: false })
}

#[tool]
async fn unit() {}

#[tool]
async fn explicit_unit() -> () {}

fn main() {
    assert!(RegisteredTool::of::<text>().output_schema.is_none());
    let schema = RegisteredTool::of::<structured>().output_schema.expect("object output");
    assert_eq!(schema["properties"]["ok"]["type"], "boolean");
    assert!(RegisteredTool::of::<fallible>().output_schema.is_some());
    assert!(RegisteredTool::of::<io>().output_schema.is_none());
    assert!(RegisteredTool::of::<raw>().output_schema.is_none());
    assert!(RegisteredTool::of::<blocks>().output_schema.is_none());
    assert!(RegisteredTool::of::<json>().output_schema.is_some());
    assert!(RegisteredTool::of::<unit>().output_schema.is_none());
    assert!(RegisteredTool::of::<explicit_unit>().output_schema.is_none());
}
