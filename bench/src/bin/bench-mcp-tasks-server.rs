//! The mcp-tasks benchmark server over stdio (a child process of the benchmark). With `--pipes` it
//! reads and writes its standard streams through non-blocking pipes (rmcp's `stdio_pipes`,
//! which reopens them when they are FIFOs) instead of tokio's `stdin()`/`stdout()`, which hand
//! every read and write to the blocking thread pool. With `--sqlite` it keeps its tasks in a
//! fresh SQLite file (`Kind::McpSqlite`); with `--store redis://...` its tasks live in that Redis,
//! with `--store postgres://...` in that PostgreSQL database. With `--telemetry metrics` or
//! `--telemetry otel=URL` (a build with `--features telemetry`) it serves with metrics recorded or
//! spans exported (`servers::telemetry`).

use mcp_tasks_bench::servers::{Kind, mcp_tasks, serve};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--telemetry") {
        let spec = args
            .get(at + 1)
            .ok_or_else(|| std::io::Error::other("--telemetry needs `metrics` or `otel=URL`"))?;
        return telemetry(spec).await;
    }
    if let Some(at) = args.iter().position(|a| a == "--store") {
        let url = args
            .get(at + 1)
            .ok_or_else(|| std::io::Error::other("--store needs a URL"))?;
        if url.starts_with("postgres://") {
            return mcp_tasks::serve_on_postgres(url, tokio::io::stdin(), tokio::io::stdout())
                .await;
        }
        return mcp_tasks::serve_on_redis(url, tokio::io::stdin(), tokio::io::stdout()).await;
    }
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

/// Serves plain mcp-tasks (memory store) with telemetry on, over stdio or `--pipes`.
#[cfg(feature = "telemetry")]
async fn telemetry(spec: &str) -> std::io::Result<()> {
    use mcp_tasks_bench::servers::telemetry;
    telemetry::install(spec)?;
    let served = if std::env::args().any(|a| a == "--pipes") {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        serve(Kind::McpTasks, stdin, stdout).await
    } else {
        serve(Kind::McpTasks, tokio::io::stdin(), tokio::io::stdout()).await
    };
    tokio::task::spawn_blocking(telemetry::flush).await?;
    served
}

#[cfg(not(feature = "telemetry"))]
async fn telemetry(_spec: &str) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "--telemetry needs a build with `--features telemetry`",
    ))
}
