//! The mcp-tasks benchmark server over stdio (a child process of the benchmark). With `--pipes` it
//! reads and writes its standard streams through non-blocking pipes (rmcp's `stdio_pipes`,
//! which reopens them when they are FIFOs) instead of tokio's `stdin()`/`stdout()`, which hand
//! every read and write to the blocking thread pool. With `--sqlite` it keeps its tasks in a
//! fresh SQLite file (`Kind::McpSqlite`).

use mcp_tasks_bench::servers::{Kind, serve};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let kind = if std::env::args().any(|a| a == "--sqlite") {
        Kind::McpSqlite
    } else {
        Kind::McpTasks
    };
    if std::env::args().any(|a| a == "--pipes") {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        serve(kind, stdin, stdout).await
    } else {
        serve(kind, tokio::io::stdin(), tokio::io::stdout()).await
    }
}
