//! The benchmark tools written for mcp-tasks, the way a user writes them: `#[tool]` functions.

use mcp_tasks_runtime::store::SqliteTaskStore;
use mcp_tasks_runtime::{
    ElicitOutcome, Server, ServerBuilder, ServerConfig, ToolContext, ToolError, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// Echo the text back. Always inline.
#[tool]
pub async fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

/// Produce `size` bytes of text at once. Runs only as a task.
#[tool(task_support = "required", ttl = "1h")]
pub async fn work(
    /// How many bytes of text the result carries.
    size: usize,
) -> String {
    super::payload(size)
}

/// `work`, durable (`#[tool(durable)]`): what keeping a task re-runnable costs.
#[tool(task_support = "required", ttl = "1h", durable)]
pub async fn work_durable(
    /// How many bytes of text the result carries.
    size: usize,
) -> String {
    super::payload(size)
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Name {
    /// The name.
    pub name: String,
}

/// Ask for a name, then greet. Runs only as a task.
#[tool(task_support = "required", ttl = "1h")]
pub async fn ask(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>(super::ASK_MESSAGE).await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Err(ToolError::new("no name given")),
    }
}

/// The stdio spin the benchmark serves with ([`ServerConfig::stdio_spin`], off by default in the
/// runtime): 50 µs, the value every published figure was measured with, so figures stay comparable.
const BENCH_SPIN_US: u64 = 50;

/// The benchmark server: default settings, except [`ServerConfig::stdio_spin`], which is
/// `BENCH_SPIN_US` unless `MCP_TASKS_BENCH_SPIN_US` says otherwise (microseconds; `0` turns it
/// off), to measure what it buys.
pub fn server() -> ServerBuilder {
    let us = std::env::var("MCP_TASKS_BENCH_SPIN_US")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(BENCH_SPIN_US);
    let config = ServerConfig::default().stdio_spin(std::time::Duration::from_micros(us));
    // Its client asks for tasks: the fallback (on by default) would only add the companion
    // tools to the listing, which the figures of earlier runs did not have.
    Server::builder("bench-mcp-tasks", env!("CARGO_PKG_VERSION"))
        .task_fallback(false)
        .config(config)
        .tool::<echo>()
        .tool::<work>()
        .tool::<work_durable>()
        .tool::<ask>()
}

/// Serves one client with tasks kept in a fresh SQLite file under `target/bench/sqlite/`,
/// deleted afterwards.
pub async fn serve_sqlite<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let exe = std::env::current_exe()?;
    // target/<profile>/<binary> -> target/bench/sqlite
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .ok_or_else(|| std::io::Error::other("no target directory"))?
        .join("bench")
        .join("sqlite");
    std::fs::create_dir_all(&dir)?;
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("server-{}-{n}.db", std::process::id()));
    let remove = || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    };
    remove();
    let store = SqliteTaskStore::open(&path).map_err(std::io::Error::other)?;
    let served = match server().store(std::sync::Arc::new(store)).build() {
        Ok(server) => server.serve_io(reader, writer).await,
        Err(e) => Err(e.into()),
    };
    remove();
    served
}

/// Serves one client over a reader and a writer until the reader closes.
pub async fn serve<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    server().build()?.serve_io(reader, writer).await
}

/// [`serve`] with the tasks in the PostgreSQL database at `url`. For comparisons,
/// `MCP_BENCH_PG_BATCH=N` and `MCP_BENCH_PG_WRITERS=N` set the store's group-commit batch size
/// and writer count (`MCP_BENCH_PG_BATCH=1`: one transaction per change).
pub async fn serve_on_postgres<R, W>(url: &str, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let setting = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    let mut builder = mcp_tasks_runtime::store::PostgresTaskStore::builder(url);
    if let Some(batch) = setting("MCP_BENCH_PG_BATCH") {
        builder = builder.batch_size(batch);
    }
    if let Some(writers) = setting("MCP_BENCH_PG_WRITERS") {
        builder = builder.writers(writers).pool_size(writers + 8);
    }
    let store = builder
        .connect()
        .await
        .map_err(|e| std::io::Error::other(format!("{url}: {e}")))?;
    server()
        .store(std::sync::Arc::new(store))
        .build()?
        .serve_io(reader, writer)
        .await
}

/// [`serve`] with the tasks in the Redis at `url`.
pub async fn serve_on_redis<R, W>(url: &str, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let store = mcp_tasks_runtime::store::RedisTaskStore::connect(url)
        .await
        .map_err(|e| std::io::Error::other(format!("{url}: {e}")))?;
    server()
        .store(std::sync::Arc::new(store))
        .build()?
        .serve_io(reader, writer)
        .await
}
