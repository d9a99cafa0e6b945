//! The bridge: an rmcp 3.11 server whose own `#[tool_router]` has `echo`, with mcp-tasks' `work`
//! and `ask` merged in through `mcp_tasks_runtime::rmcp::TaskTools`, as the guide page "Adding
//! task tools to an rmcp server" writes it. Its rows show what the bridge costs a task beside
//! plain mcp-tasks and plain rmcp.

use super::mcp_tasks::{ask, work};
use mcp_tasks_runtime::Server;
use mcp_tasks_runtime::rmcp::TaskTools;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// The benchmark server on rmcp, with the task tools of mcp-tasks.
#[derive(Clone)]
pub struct BridgeServer {
    tool_router: ToolRouter<BridgeServer>,
    tasks: TaskTools,
}

impl std::fmt::Debug for BridgeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeServer").finish_non_exhaustive()
    }
}

#[tool_router]
impl BridgeServer {
    /// A server with an empty store.
    pub fn new() -> std::io::Result<Self> {
        let server = Server::builder("bench-rmcp-bridge", env!("CARGO_PKG_VERSION"))
            .tool::<work>()
            .tool::<ask>()
            .build()?;
        let tasks = TaskTools::new(&server);
        let mut tool_router = Self::tool_router();
        tool_router.merge(tasks.router());
        Ok(BridgeServer { tool_router, tasks })
    }

    #[tool(description = "Echo the text back. Always inline.")]
    async fn echo(
        &self,
        Parameters(super::rmcp_server::EchoArgs { text }): Parameters<super::rmcp_server::EchoArgs>,
    ) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BridgeServer {
    mcp_tasks_runtime::rmcp_task_methods!(tasks);

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(self.tasks.capabilities(capabilities))
    }
}

/// Serves one client over a reader and a writer until the reader closes.
pub async fn serve<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = BridgeServer::new()?
        .serve((reader, writer))
        .await
        .map_err(std::io::Error::other)?;
    service.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
