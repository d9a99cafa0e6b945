// `?` on every kind of error a tool meets: `anyhow::Error`, `Box<dyn Error + Send + Sync>`,
// `io::Error` (any `std::error::Error`), an `RpcError` (stays a JSON-RPC error), and a tool error
// with structured content. Returning those error types directly works as well.
use mcp_tasks_runtime::protocol::RpcError;
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{ToolError, tool};

fn anyhow_op() -> anyhow::Result<u32> {
    anyhow::bail!("no luck")
}

fn boxed_op() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Err("no luck".into())
}

#[tool]
async fn question_mark_on_anyhow() -> Result<String, ToolError> {
    Ok(anyhow_op()?.to_string())
}

#[tool]
async fn question_mark_on_a_boxed_error() -> Result<String, ToolError> {
    Ok(boxed_op()?.to_string())
}

#[tool]
async fn question_mark_on_io() -> Result<String, ToolError> {
    Ok(std::fs::read_to_string("/nonexistent")?)
}

#[tool]
async fn question_mark_on_rpc_error() -> Result<String, ToolError> {
    Err(RpcError::invalid_params("bad"))?
}

#[tool]
async fn structured_tool_error() -> Result<String, ToolError> {
    Err(ToolError::new("quota exceeded").with_structured(serde_json::json!({ "limit": 10 })))
}

#[tool]
async fn returns_anyhow() -> anyhow::Result<String> {
    Ok(anyhow_op()?.to_string())
}

#[tool]
async fn returns_a_boxed_error() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Ok(boxed_op()?.to_string())
}

#[tokio::main]
async fn main() {
    for tool in [
        RegisteredTool::of::<question_mark_on_anyhow>(),
        RegisteredTool::of::<question_mark_on_a_boxed_error>(),
        RegisteredTool::of::<question_mark_on_io>(),
        RegisteredTool::of::<question_mark_on_rpc_error>(),
        RegisteredTool::of::<structured_tool_error>(),
        RegisteredTool::of::<returns_anyhow>(),
        RegisteredTool::of::<returns_a_boxed_error>(),
    ] {
        let ctx = mcp_tasks_runtime::__internal::tool_context(std::sync::Arc::new(NoClient));
        let outcome = tool.call(ctx, None).unwrap().await;
        match tool.info.name {
            "question_mark_on_rpc_error" => assert_eq!(outcome.unwrap_err().code, -32602),
            name => {
                let result = outcome.unwrap();
                assert!(result.is_error, "{name}");
                if name == "structured_tool_error" {
                    assert_eq!(result.structured_content.unwrap()["limit"], 10);
                }
            }
        }
    }
}

struct NoClient;

impl mcp_tasks_runtime::__internal::ContextBackend for NoClient {
    fn input(
        &self,
        _: mcp_tasks_runtime::protocol::InputRequest,
    ) -> mcp_tasks_runtime::__internal::InputFuture {
        Box::pin(async { Err(mcp_tasks_runtime::InputError::Disconnected) })
    }
}
