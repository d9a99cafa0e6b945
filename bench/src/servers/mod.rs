//! The servers under test, each with its own serve function over any reader and writer:
//! the stdio binaries in `src/bin/` and the in-process runs call the same functions.

pub mod echo;
pub mod mcp_tasks;
pub mod rmcp_bridge;
pub mod rmcp_server;
#[cfg(feature = "telemetry")]
pub mod telemetry;

/// The question `ask` puts to the client.
pub const ASK_MESSAGE: &str = "What is your name?";

/// How long both servers keep a task (one hour; see `rmcp_server::options`).
pub const TTL_MS: u64 = 3_600_000;

/// `size` bytes of text: the result of the `work` tool.
pub fn payload(size: usize) -> String {
    "x".repeat(size)
}

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The bare JSON-RPC echo: the transport's own cost.
    Floor,
    /// mcp-tasks.
    McpTasks,
    /// mcp-tasks keeping its tasks in a SQLite file (`SqliteTaskStore`); task scenarios only.
    McpSqlite,
    /// mcp-tasks with its tasks in Redis (`RedisTaskStore`); stdio only.
    McpTasksRedis,
    /// mcp-tasks with its tasks in PostgreSQL (`PostgresTaskStore`); stdio only.
    McpTasksPostgres,
    /// rmcp 3.11.
    Rmcp,
    /// rmcp 3.11 with mcp-tasks' `work` and `ask` through the bridge (`rmcp::TaskTools`).
    RmcpBridge,
    /// mcp-tasks with a Prometheus recorder installed (the `metrics` feature recording); stdio
    /// child processes only (a recorder is the whole process's). Needs `--features telemetry`.
    McpMetrics,
    /// mcp-tasks with OpenTelemetry traces exported by OTLP/HTTP to a local sink; child
    /// processes only (a subscriber is the whole process's). Needs `--features telemetry`.
    McpOtel,
}

impl Kind {
    /// Short name used in tables, JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Floor => "floor",
            Kind::McpTasks => "mcp-tasks",
            Kind::McpSqlite => "mcp-sqlite",
            Kind::McpTasksRedis => "mcp-redis",
            Kind::McpTasksPostgres => "mcp-postgres",
            Kind::Rmcp => "rmcp",
            Kind::RmcpBridge => "rmcp-bridge",
            Kind::McpMetrics => "mcp-metrics",
            Kind::McpOtel => "mcp-otel",
        }
    }

    /// Whether this kind runs only as a child process: what it installs (a metrics recorder, a
    /// tracing subscriber) is the whole process's, and the Redis and Postgres kinds are counted
    /// from their stores.
    pub fn child_process_only(self) -> bool {
        matches!(
            self,
            Kind::McpTasksRedis | Kind::McpTasksPostgres | Kind::McpMetrics | Kind::McpOtel
        )
    }

    /// The kinds that are plain mcp-tasks with telemetry on: their figures are also shown
    /// divided by plain `mcp-tasks`'s, measured in the same run.
    pub fn is_telemetry(self) -> bool {
        matches!(self, Kind::McpMetrics | Kind::McpOtel)
    }

    /// Whether this kind is measured in a scenario: a store changes nothing an inline call does,
    /// so the SQLite kind runs only where tasks are stored (`lifecycle`, `store`) and the Redis
    /// kind in every task scenario.
    pub fn runs_in(self, scenario: &str) -> bool {
        match self {
            Kind::McpSqlite => matches!(scenario, "lifecycle" | "store"),
            // Telemetry is per request and per task: storing many tasks adds nothing to it.
            Kind::McpMetrics | Kind::McpOtel => !matches!(scenario, "store" | "scale"),
            // The store plays no part in an inline call.
            Kind::McpTasksRedis | Kind::McpTasksPostgres => scenario != "inline",
            _ => true,
        }
    }

    /// The stdio server binary of this kind.
    pub fn binary(self) -> &'static str {
        match self {
            Kind::Floor => "bench-echo-server",
            Kind::McpTasks
            | Kind::McpSqlite
            | Kind::McpTasksRedis
            | Kind::McpTasksPostgres
            | Kind::McpMetrics
            | Kind::McpOtel => "bench-mcp-tasks-server",
            Kind::Rmcp => "bench-rmcp-server",
            Kind::RmcpBridge => "bench-rmcp-bridge-server",
        }
    }

    /// Parses [`Kind::name`].
    pub fn parse(s: &str) -> Option<Kind> {
        [
            Kind::Floor,
            Kind::McpTasks,
            Kind::McpSqlite,
            Kind::McpTasksRedis,
            Kind::McpTasksPostgres,
            Kind::Rmcp,
            Kind::RmcpBridge,
            Kind::McpMetrics,
            Kind::McpOtel,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// Serves one client with this kind of server, in this process.
pub async fn serve<R, W>(kind: Kind, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    match kind {
        Kind::Floor => echo::serve(reader, writer).await,
        Kind::McpTasks => mcp_tasks::serve(reader, writer).await,
        Kind::McpSqlite => mcp_tasks::serve_sqlite(reader, writer).await,
        Kind::McpTasksRedis | Kind::McpTasksPostgres | Kind::McpMetrics | Kind::McpOtel => Err(
            std::io::Error::other(format!("{} runs as a child process only", kind.name())),
        ),
        Kind::Rmcp => rmcp_server::serve(reader, writer).await,
        Kind::RmcpBridge => rmcp_bridge::serve(reader, writer).await,
    }
}
