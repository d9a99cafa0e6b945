//! The same three tools on rmcp 3.11, wired the way rmcp's own task tests and docs show: tools in a
//! `#[tool_router]`, `call_tool` overridden to spawn the task-capable ones into a `TaskManager`
//! when the request declares the tasks extension, and `tasks/get` / `tasks/update` /
//! `tasks/cancel` forwarded to the manager.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, InputRequest, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// `echo` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text.
    pub text: String,
}

/// `work` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WorkArgs {
    /// How many bytes of text the result carries.
    pub size: usize,
}

/// `ask` arguments (none).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskArgs {}

/// The benchmark server on rmcp.
#[derive(Clone)]
pub struct BenchServer {
    tool_router: ToolRouter<BenchServer>,
    tasks: TaskManager,
}

impl std::fmt::Debug for BenchServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchServer").finish_non_exhaustive()
    }
}

impl Default for BenchServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl BenchServer {
    /// A server with an empty task manager.
    pub fn new() -> Self {
        BenchServer {
            tool_router: Self::tool_router(),
            tasks: TaskManager::new(),
        }
    }

    #[tool(description = "Echo the text back. Always inline.")]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Produce `size` bytes of text at once. Runs only as a task.")]
    async fn work(&self, Parameters(WorkArgs { size }): Parameters<WorkArgs>) -> String {
        super::payload(size)
    }

    #[tool(description = "Ask for a name, then greet. Runs only as a task.")]
    async fn ask(&self, Parameters(AskArgs {}): Parameters<AskArgs>) -> Result<String, McpError> {
        Err(McpError::invalid_request(
            "`ask` runs only as a task: declare the tasks extension",
            None,
        ))
    }
}

/// Both servers keep tasks for an hour (rmcp's default is 5 minutes, mcp-tasks's 10), so no task
/// expires during a run: with 100,000 stored tasks rmcp creates fewer than 5 minutes' worth.
fn options() -> TaskOptions {
    TaskOptions::new().with_ttl_ms(super::TTL_MS)
}

fn decode<T: serde::de::DeserializeOwned>(request: &CallToolRequestParams) -> Result<T, McpError> {
    serde_json::from_value(serde_json::Value::Object(
        request.arguments.clone().unwrap_or_default(),
    ))
    .map_err(|e| McpError::invalid_params(e.to_string(), None))
}

fn text(s: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

/// What `ask` sends: the same `elicitation/create` mcp-tasks derives from its `Name` type.
fn ask_request() -> Result<InputRequest, McpError> {
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": super::ASK_MESSAGE,
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string", "description": "The name." } },
                "required": ["name"]
            }
        }
    }))
    .map_err(|e| McpError::internal_error(e.to_string(), None))
}

impl ServerHandler for BenchServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let supports_tasks = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        match (request.name.as_ref(), supports_tasks) {
            ("work", true) => {
                let WorkArgs { size } = decode(&request)?;
                let task = self.tasks.spawn(options(), move |_ctx| {
                    Box::pin(async move { Ok(text(super::payload(size))) })
                });
                Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
            }
            ("ask", true) => {
                let AskArgs {} = decode(&request)?;
                let task = self.tasks.spawn(options(), move |ctx| {
                    Box::pin(async move {
                        let answer = ctx.request_input("elicit-0", ask_request()?).await?;
                        match (
                            answer.get("action").and_then(|a| a.as_str()),
                            answer.pointer("/content/name").and_then(|n| n.as_str()),
                        ) {
                            (Some("accept"), Some(name)) => Ok(text(format!("Hello, {name}!"))),
                            _ => Err(TaskExit::Error(McpError::invalid_params(
                                "no name given",
                                None,
                            ))),
                        }
                    })
                });
                Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
            }
            _ => {
                let tcc = ToolCallContext::new(self, request, context);
                self.tool_router.call(tcc).await
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }
}

/// Serves one client over a reader and a writer until the reader closes.
pub async fn serve<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = BenchServer::new()
        .serve((reader, writer))
        .await
        .map_err(std::io::Error::other)?;
    service.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
