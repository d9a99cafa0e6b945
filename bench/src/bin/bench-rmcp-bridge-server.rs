//! The rmcp bridge benchmark server over stdio (a child process of the benchmark): rmcp with
//! mcp-tasks' task tools merged in. `--pipes` as for `bench-rmcp-server`.

use mcp_tasks_bench::servers::{Kind, serve};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    if std::env::args().any(|a| a == "--pipes") {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        serve(Kind::RmcpBridge, stdin, stdout).await
    } else {
        serve(Kind::RmcpBridge, tokio::io::stdin(), tokio::io::stdout()).await
    }
}
