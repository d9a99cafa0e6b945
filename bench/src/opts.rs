//! The command line (`--help` prints it) and the settings of a run derived from it.

use clap::{Parser, ValueEnum};
use mcp_tasks_bench::servers::Kind;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How the driver reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// Child processes; tokio's `stdin()`/`stdout()`, which hand every read and write to the
    /// blocking thread pool (what rmcp's `stdio()` uses).
    Stdio,
    /// Child processes; non-blocking pipes (rmcp's `stdio_pipes`) for every server: what
    /// `serve_stdio` does by itself when its client spawns it with pipes or a socket pair.
    Pipes,
    /// Tokio duplex pipes into each server's serve function, in this process.
    #[value(name = "inproc")]
    InProcess,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Pipes => "pipes",
            Transport::InProcess => "inproc",
        }
    }
}

/// The scenarios, in the order they run.
const SCENARIOS: [&str; 6] = ["inline", "lifecycle", "durable", "elicit", "store", "scale"];

/// Measures mcp-tasks, rmcp 3.11 and a bare JSON-RPC echo (the floor) with one load driver, prints
/// a table and writes `target/bench/results.json`.
#[derive(Debug, Parser)]
#[command(name = "mcp-tasks-bench", args_override_self = true)]
struct Args {
    /// Short runs and 10,000 stored tasks (a smoke test, not figures); the options below, when
    /// given, win over its values.
    #[arg(long)]
    quick: bool,
    /// Scenarios, comma-separated [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(SCENARIOS))]
    only: Vec<String>,
    /// Transports, comma-separated [default: all]; tasks skip `pipes`; `store` is stdio.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    transport: Vec<Transport>,
    /// Servers, comma-separated: mcp-tasks,mcp-sqlite,mcp-redis,mcp-postgres,rmcp,rmcp-bridge
    /// [default: all but rmcp-bridge] (the floor always runs where a floor is needed); rmcp-bridge
    /// is rmcp with mcp-tasks' task tools merged in (`rmcp::TaskTools`, what the bridge costs:
    /// `--only lifecycle --servers mcp-tasks,rmcp,rmcp-bridge`); mcp-sqlite keeps tasks in a SQLite file
    /// (lifecycle and store only); mcp-redis is mcp-tasks on a RedisTaskStore (a pinned
    /// redis-server the run starts), mcp-postgres on a PostgresTaskStore (a PostgreSQL 15 the run
    /// starts, a fresh database per server), both in the stdio task rows only. With a build
    /// `--features telemetry`, also mcp-metrics (a Prometheus recorder installed) and mcp-otel
    /// (OpenTelemetry spans exported by OTLP/HTTP to a sink in the bench), child processes only,
    /// not in `store` and `scale`; their figures are also divided by mcp-tasks's.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = server)]
    servers: Vec<Kind>,
    /// Tasks stored for the `store` scenario [default: 100000; 10000 with --quick].
    #[arg(long, value_name = "N")]
    stored: Option<u64>,
    /// Tasks stored for the `scale` scenario [default: 1000000; 100000 with --quick]: mcp-tasks
    /// only (memory store), `tasks/get` on a server holding 10,000 and on one holding N, in
    /// alternating rounds.
    #[arg(long, value_name = "N")]
    stored_large: Option<u64>,
    /// Tasks per round for `lifecycle` and `elicit` at 64 callers [default: 5000 and 2000; 500
    /// and 200 with --quick].
    #[arg(long, value_name = "N")]
    tasks: Option<u64>,
    /// Rounds per figure [default: 5 inline, 3 for tasks; 1 with --quick]; servers alternate.
    #[arg(long, value_name = "N")]
    rounds: Option<usize>,
    /// End the run by then: the `store` scenario creates fewer tasks if it must, and says so.
    #[arg(long, value_name = "SECS", default_value_t = 540)]
    budget: u64,
    /// Run the stdio mcp-tasks servers (any store) under CMD (e.g. valgrind; see bench/profile.sh).
    #[arg(long, value_name = "CMD")]
    wrap: Option<String>,
    /// Put a W3C `traceparent` (one trace, a new parent span id per request) in every request's
    /// `_meta`, as a client in a traced host would (SEP-414); servers that do not trace ignore it.
    #[arg(long)]
    traceparent: bool,
    /// Where the JSON goes [default: target/bench/results.json].
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

/// `full`, or `short` with `--quick`.
fn pick<T>(quick: bool, full: T, short: T) -> T {
    if quick { short } else { full }
}

fn server(s: &str) -> Result<Kind, String> {
    let kind = Kind::parse(s.trim()).ok_or_else(|| format!("unknown server {s}"))?;
    if kind.is_telemetry() && !cfg!(feature = "telemetry") {
        return Err(format!(
            "{s} needs a build with telemetry: cargo run --release -p mcp-tasks-bench --features telemetry"
        ));
    }
    Ok(kind)
}

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Rounds of the inline figures (the servers alternate within a round; the median counts).
    pub rounds: usize,
    /// Rounds of the task figures (a fresh server each round).
    pub task_rounds: usize,
    pub round: Duration,
    pub warmup: Duration,
    pub lifecycle_tasks: u64,
    pub elicit_tasks: u64,
    pub stored: u64,
    /// Tasks stored for the `scale` scenario.
    pub stored_large: u64,
    /// The whole run should end by then: the `store` scenario stops creating tasks early if it
    /// must (rmcp's `TaskManager` gets slower with every stored task).
    pub budget: Duration,
    pub get_for: Duration,
    pub scenarios: Vec<String>,
    pub transports: Vec<Transport>,
    pub servers: Vec<Kind>,
    pub wrap: Option<String>,
    pub out: PathBuf,
    pub bin_dir: PathBuf,
    /// The Redis the `mcp-redis` server keeps its tasks in (started by `main`).
    pub redis: Option<Arc<mcp_tasks_testkit::redis::RedisServer>>,
    /// The PostgreSQL the `mcp-postgres` server keeps its tasks in (started by `main`).
    pub postgres: Option<Arc<mcp_tasks_testkit::postgres::PostgresServer>>,
    /// The base URL of the OTLP/HTTP sink the `mcp-otel` server exports to (started by `main`).
    pub otlp_sink: Option<String>,
    /// Whether every request carries a `traceparent`.
    pub traceparent: bool,
}

impl Opts {
    /// The settings from the command line (exits on `--help` or a bad argument).
    pub fn parse() -> Result<Opts, mcp_tasks_bench::driver::Error> {
        let args = Args::parse();
        let exe = std::env::current_exe()?;
        let bin_dir = exe
            .parent()
            .ok_or("no directory for the executable")?
            .to_path_buf();
        let target = bin_dir
            .parent()
            .map_or_else(|| bin_dir.clone(), |p| p.to_path_buf());
        let quick = args.quick;
        let (rounds, task_rounds) = match args.rounds {
            Some(n) => (n, n),
            None => (pick(quick, 5, 1), pick(quick, 3, 1)),
        };
        let (lifecycle_tasks, elicit_tasks) = match args.tasks {
            Some(n) => (n, n),
            None => (pick(quick, 5_000, 500), pick(quick, 2_000, 200)),
        };
        Ok(Opts {
            rounds,
            task_rounds,
            round: Duration::from_millis(pick(quick, 600, 300)),
            warmup: Duration::from_millis(pick(quick, 300, 100)),
            lifecycle_tasks,
            elicit_tasks,
            stored: args.stored.unwrap_or(pick(quick, 100_000, 10_000)),
            stored_large: args.stored_large.unwrap_or(pick(quick, 1_000_000, 100_000)),
            budget: Duration::from_secs(args.budget),
            get_for: Duration::from_millis(pick(quick, 3_000, 500)),
            scenarios: if args.only.is_empty() {
                SCENARIOS.map(str::to_owned).to_vec()
            } else {
                args.only
            },
            transports: if args.transport.is_empty() {
                vec![Transport::Stdio, Transport::Pipes, Transport::InProcess]
            } else {
                args.transport
            },
            servers: if args.servers.is_empty() {
                vec![
                    Kind::McpTasks,
                    Kind::McpSqlite,
                    Kind::McpTasksRedis,
                    Kind::McpTasksPostgres,
                    Kind::Rmcp,
                ]
            } else {
                args.servers
            },
            wrap: args.wrap,
            out: args
                .out
                .unwrap_or_else(|| target.join("bench").join("results.json")),
            bin_dir,
            redis: None,
            postgres: None,
            otlp_sink: None,
            traceparent: args.traceparent,
        })
    }

    /// Whether the run includes this scenario.
    pub fn has(&self, scenario: &str) -> bool {
        self.scenarios.iter().any(|x| x == scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::Args;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Args::command().debug_assert();
    }
}
