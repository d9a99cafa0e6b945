// Every parameter form: named arguments (required and `Option`), the whole argument object
// `Args<T>`, the injected `ToolContext`, patterns, `mut` and raw identifiers. Which kind a
// parameter is comes from its type's trait impls, never from its name.
use mcp_tasks_runtime::protocol::InputRequest;
use mcp_tasks_runtime::__internal::{ContextBackend, InputFuture, RegisteredTool, tool_context};
use mcp_tasks_runtime::{Args, InputError, ToolContext, tool};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize, schemars::JsonSchema)]
struct Query {
    /// Search text.
    text: String,
    page: Option<u32>,
}

type Context = ToolContext;

#[tool]
async fn named(
    /// Required.
    a: u32,
    mut b: Option<String>,
    r#type: bool,
    (x, y): (i32, i32),
    ctx: Context,
) -> String {
    b.get_or_insert_with(String::new).push('!');
    let _ = ctx.task_id();
    format!("{a} {b:?} {type} {x} {y}", type = r#type)
}

#[tool]
async fn whole(_: ToolContext, Args(query): Args<Query>, extra: Option<u8>) -> String {
    format!("{} {:?} {extra:?}", query.text, query.page)
}

struct NoClient;

impl ContextBackend for NoClient {
    fn input(&self, _: InputRequest) -> InputFuture {
        Box::pin(async { Err(InputError::Disconnected) })
    }
}

fn call(tool: &RegisteredTool, args: serde_json::Value) -> serde_json::Value {
    let ctx = tool_context(Arc::new(NoClient));
    let future = tool.call(ctx, Some(args)).expect("arguments decode");
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    serde_json::to_value(runtime.block_on(future).expect("tool succeeds")).unwrap()
}

fn main() {
    let tool = RegisteredTool::of::<named>();
    let schema = &tool.input_schema;
    assert_eq!(schema["required"], serde_json::json!(["a", "type", "arg3"]));
    assert_eq!(schema["properties"]["a"]["description"], "Required.");
    assert!(schema["properties"].get("ctx").is_none());
    let out = call(&tool, serde_json::json!({"a": 1, "type": true, "arg3": [2, 3]}));
    assert_eq!(out["content"][0]["text"], "1 Some(\"!\") true 2 3");
    let missing = tool.call(
        tool_context(Arc::new(NoClient)),
        Some(serde_json::json!({})),
    );
    assert_eq!(missing.err().unwrap().argument.as_deref(), Some("a"));

    let tool = RegisteredTool::of::<whole>();
    assert_eq!(tool.input_schema["properties"]["text"]["description"], "Search text.");
    assert_eq!(tool.input_schema["properties"]["extra"]["type"], serde_json::json!(["integer", "null"]));
    let out = call(&tool, serde_json::json!({"text": "hi", "page": 2}));
    assert_eq!(out["content"][0]["text"], "hi Some(2) None");
}
