//! The tools of the example server, shared by its binaries.

pub mod apps;
pub mod conformance;
pub mod everything;
pub mod ingest;
pub mod inventory;
pub mod oauth;
pub mod resources;
pub mod skills;

use mcp_tasks_runtime::store::{MemoryTaskStore, TaskStore};
use mcp_tasks_runtime::telemetry::Traces;
use mcp_tasks_runtime::{
    CompletionContext, CreateMessageParams, ElicitOutcome, InputError, PromptMessage, Server,
    ServerBuilder, ServerConfig, ToolContext, ToolError, prompt, tool,
};
use oauth::OAuthArgs;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// Say hello to someone.
#[tool]
pub async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// The sum of two numbers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Sum {
    /// `a + b`.
    pub sum: f64,
}

/// Add two numbers; the answer is structured content.
#[tool(annotations(read_only = true, idempotent = true))]
pub async fn add(
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
) -> Sum {
    Sum { sum: a + b }
}

/// Always fails with a tool error (`isError: true`), which the model can read.
#[tool]
pub async fn always_fails() -> Result<String, ToolError> {
    Err(ToolError::new("this tool always fails"))
}

/// Sleep for a while, then say so. Cancellable with `notifications/cancelled`.
#[tool]
pub async fn sleep(
    ctx: ToolContext,
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("slept {ms} ms")),
        _ = ctx.cancelled() => Err(ToolError::new("cancelled")),
    }
}

/// Panics, to show that a panicking tool gets a JSON-RPC error and the server keeps serving.
#[tool]
pub async fn explode() -> String {
    panic!("kaboom")
}

/// How the user wants the research done.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Plan {
    /// How many sources to read.
    pub sources: u32,
}

/// What the research found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// The topic.
    pub topic: String,
    /// How many sources were read.
    pub sources: u32,
    /// The client's model's summary.
    pub summary: String,
}

/// Research a topic in depth: asks the user how many sources to read, then asks the client's model
/// for a summary. Runs only as a task (it may take minutes). A client that cannot answer one of
/// the two (it did not declare `elicitation` or `sampling`; most hosts declare no `sampling`) does
/// not stop it: it reads the default number of sources, and reports without a model's summary.
#[tool(
    task_support = "required",
    ttl = "10m",
    poll_interval = "500ms",
    scope = "research"
)]
pub async fn research(
    ctx: ToolContext,
    /// What to research.
    topic: String,
) -> Result<Report, ToolError> {
    ctx.status("planning");
    let question = format!("How many sources should I read about \"{topic}\"?");
    let plan = match ctx.elicit::<Plan>(question).await {
        Ok(ElicitOutcome::Accept(plan)) => plan,
        Ok(ElicitOutcome::Decline | ElicitOutcome::Cancel) => {
            return Err(ToolError::new("the user called the research off"));
        }
        // No way to ask the user: go on with the default.
        Err(InputError::NotSupported { .. }) => Plan {
            sources: DEFAULT_SOURCES,
        },
        Err(other) => return Err(other.into()),
    };
    ctx.status(format!("reading {} sources", plan.sources));
    let prompt = format!("Summarise what is known about {topic} in one sentence.");
    let summary = match ctx
        .sample(CreateMessageParams::user_text(prompt, 200))
        .await
    {
        Ok(answer) => answer.text().unwrap_or_default().to_owned(),
        // No model to ask: report what was done, without a summary.
        Err(InputError::NotSupported { .. }) => format!(
            "Read {} sources about {topic}; no summary: the client offers no model to write one.",
            plan.sources
        ),
        Err(other) => return Err(other.into()),
    };
    Ok(Report {
        topic,
        sources: plan.sources,
        summary,
    })
}

/// How many sources `research` reads when it cannot ask the user.
pub const DEFAULT_SOURCES: u32 = 3;

/// Count down for `seconds`, reporting each second in the status. A task when the client supports
/// tasks, inline otherwise.
#[tool(task_support = "optional", poll_interval = "250ms")]
pub async fn countdown(
    ctx: ToolContext,
    /// How many seconds.
    seconds: u32,
) -> Result<String, ToolError> {
    for left in (1..=seconds).rev() {
        ctx.status(format!("{left}s left"));
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = ctx.cancelled() => return Err(ToolError::new("countdown cancelled")),
        }
    }
    Ok("liftoff".into())
}

/// Ask the model to review some code.
#[prompt(title = "Review code")]
pub async fn review_code(
    /// The code to review.
    code: String,
    /// The language it is written in.
    #[complete(values = ["go", "javascript", "python", "rust", "typescript"])]
    language: String,
    /// What to look at most (depends on the language).
    #[complete(with = review_focus)]
    focus: Option<String>,
) -> Vec<PromptMessage> {
    let focus = focus.map_or_else(String::new, |f| format!(", looking mostly at {f}"));
    vec![
        PromptMessage::user(format!(
            "Please review this {language} code{focus}:\n\n{code}"
        )),
        PromptMessage::assistant(
            "I will read it and list what I would change, most important first.",
        ),
    ]
}

/// Completes `review_code`'s `focus`: the concerns of the language already chosen.
pub async fn review_focus(value: String, context: CompletionContext) -> Vec<&'static str> {
    let concerns: &[&'static str] = match context.get("language") {
        Some("rust") => &["ownership", "unsafe", "error handling", "performance"],
        Some("python") => &["typing", "error handling", "performance"],
        _ => &[
            "correctness",
            "error handling",
            "performance",
            "readability",
        ],
    };
    concerns
        .iter()
        .copied()
        .filter(|c| c.starts_with(value.as_str()))
        .collect()
}

/// The example server with all its tools and its prompt (built by the caller, who may add
/// settings).
pub fn example_server() -> ServerBuilder {
    Server::builder("mcp-tasks-example", env!("CARGO_PKG_VERSION"))
        .instructions("Example tools for mcp-tasks: greet, add, always_fails, sleep, explode, research (a task), countdown; notes as resources (notes://index, notes://{title}, whose title completes), changed with write_note and revise_note (a task), exported by export_notes (a task whose outputs are resources); ingest (a durable task: it survives its server); the prompt review_code; and an MCP App, show_forecast (its view is ui://forecast/view.html).")
        .tool::<greet>()
        .tool::<add>()
        .tool::<always_fails>()
        .tool::<sleep>()
        .tool::<explode>()
        .tool::<research>()
        .tool::<countdown>()
        .tool::<ingest::ingest>()
        .state(resources::Notes::seeded())
        .tool::<resources::write_note>()
        .tool::<resources::revise_note>()
        .tool::<resources::export_notes>()
        .resource::<resources::note_index>()
        .resource::<resources::note>()
        .prompt::<review_code>()
        .tool::<apps::show_forecast>()
        .tool::<apps::refresh_forecast>()
        .resource::<apps::forecast_view>()
        .skills(skills::example_skills())
}

/// Opens the task store `spec` names: `memory` (the default: tasks live in this process),
/// `sqlite:PATH` (one file, kept across restarts), `redis://HOST:PORT[/DB]` (shared by every
/// instance using the same Redis), or `postgres://USER@HOST:PORT/DB` (kept, and shared by every
/// instance using the same database).
pub async fn open_store(spec: &str) -> Result<Arc<dyn TaskStore>, String> {
    if spec == "memory" {
        return Ok(Arc::new(MemoryTaskStore::new()));
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        return open_sqlite(path);
    }
    if spec.starts_with("redis://") {
        return open_redis(spec).await;
    }
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        return open_postgres(spec).await;
    }
    Err(format!(
        "unknown task store `{spec}`: use `memory`, `sqlite:PATH`, `redis://HOST:PORT[/DB]` or `postgres://USER@HOST:PORT/DB`"
    ))
}

fn open_sqlite(path: &str) -> Result<Arc<dyn TaskStore>, String> {
    if path.is_empty() {
        return Err("`sqlite:` needs a file: `sqlite:PATH`".into());
    }
    let store = mcp_tasks_runtime::store::SqliteTaskStore::open(path).map_err(|e| e.to_string())?;
    Ok(Arc::new(store))
}

/// Tasks in the Redis at `url`, shared with every server on it; fails unless Redis answers now.
async fn open_redis(url: &str) -> Result<Arc<dyn TaskStore>, String> {
    let store = mcp_tasks_runtime::store::RedisTaskStore::connect(url)
        .await
        .map_err(|e| format!("--store {url}: {e}"))?;
    Ok(Arc::new(store))
}

/// Tasks in the PostgreSQL database at `url` (schema `mcp_tasks`, created on first use), shared
/// with every server on it; fails unless Postgres answers now.
async fn open_postgres(url: &str) -> Result<Arc<dyn TaskStore>, String> {
    let store = mcp_tasks_runtime::store::PostgresTaskStore::connect(url)
        .await
        .map_err(|e| format!("--store {url}: {e}"))?;
    Ok(Arc::new(store))
}

/// Serves `server` the way the command line asks: over stdio by default, or over Streamable HTTP
/// with `--http HOST:PORT` (port 0 picks a free one). `--store SPEC` keeps tasks in another store
/// ([`open_store`]); `--state-secret SECRET` seals MRTR `requestState` with a secret shared by
/// every instance (the one setting several instances on one store need); `--lease-ms N` sets how
/// long this instance's lease on its running tasks lasts; `--drain-ms N` how long a graceful
/// shutdown (SIGTERM) lets running tasks finish before durable ones are handed to another instance
/// ([`ServerConfig::drain`]); `--durable-attempts N` how many runs a durable task gets
/// ([`ServerConfig::durable_attempts`]); `--role worker|front|both` whether this instance serves
/// clients, runs durable tasks, or both ([`ServerConfig::role`]); `--stdio-spin-us N` how long the stdio
/// loop polls its input after a message ([`ServerConfig::stdio_spin`]); `--keepalive-ms N|off` how
/// often a waiting call with a progress token gets a keepalive progress notification
/// ([`ServerConfig::keepalive_interval`]). With HTTP, `--token TOKEN=PRINCIPAL`
/// (repeatable) requires `Authorization: Bearer TOKEN` and binds tasks to PRINCIPAL,
/// `--oauth-issuer ISSUER --oauth-audience RESOURCE_URL` makes the endpoint an OAuth 2.1 resource
/// server for ISSUER's tokens (`research` needs the scope `research`; every other tool a valid
/// token; `--oauth-ca-cert FILE`, repeatable, trusts the PEM CA certificates in FILE for an
/// issuer behind a private CA), and
/// `--session-idle-ms N` sets how long an idle legacy session lives, `--max-body BYTES` the largest
/// request body, `--header-timeout-ms N` and `--body-timeout-ms N` how long a connection may take
/// to send a request's headers and body, `--max-connections N` how many may be open at once,
/// `--sse-retry-ms N`, `--sse-replay N` and `--sse-resume-window-ms N` how a legacy session's
/// broken SSE streams are resumed ([`HttpConfig::sse_retry`](mcp_tasks_runtime::server::HttpConfig::sse_retry), [`sse_replay`](mcp_tasks_runtime::server::HttpConfig::sse_replay),
/// [`sse_resume_window`](mcp_tasks_runtime::server::HttpConfig::sse_resume_window)), and `--ops-address HOST:PORT` moves `/healthz`, `/readyz` and `/metrics` (Prometheus) off the MCP
/// address to a listener of their own. The HTTP endpoint's URL is printed on stdout as `listening on http://HOST:PORT/mcp`
/// once it accepts connections.
///
/// It also sets up logging to stderr (`RUST_LOG`, default `info`); with `--otlp-endpoint URL`
/// the process's spans are exported as OpenTelemetry traces by OTLP/HTTP to the collector at
/// `URL` (`http://127.0.0.1:4318`; see `telemetry::Traces`), and sent when the server stops.
pub async fn serve_from_args(server: ServerBuilder) -> std::io::Result<()> {
    let traces = init_logging()?;
    let served = serve_args(server).await;
    if let Some(traces) = traces {
        tokio::task::spawn_blocking(move || traces.shutdown())
            .await?
            .map_err(std::io::Error::other)?;
    }
    served
}

/// Logging to stderr, and the OpenTelemetry layer when `--otlp-endpoint URL` is among the
/// arguments (the traces, to shut down at exit).
fn init_logging() -> std::io::Result<Option<Traces>> {
    use tracing_subscriber::filter::{EnvFilter, LevelFilter};
    use tracing_subscriber::layer::{Layer, SubscriberExt};
    use tracing_subscriber::util::SubscriberInitExt;
    let args: Vec<String> = std::env::args().collect();
    let traces = match args.iter().position(|a| a == "--otlp-endpoint") {
        Some(at) => {
            let url = (args.get(at + 1)).ok_or_else(|| usage("--otlp-endpoint needs a URL"))?;
            let name = std::path::Path::new(&args[0])
                .file_name()
                .map_or("mcp-tasks-example".into(), |n| n.to_string_lossy());
            let traces = Traces::otlp(url, name.into_owned())
                .map_err(|e| usage(&format!("--otlp-endpoint {url}: {e}")))?;
            Some(traces)
        }
        None => None,
    };
    // `RUST_LOG` filters the log; the traces take the server's spans (`info`) whatever it says.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    let otel = (traces.as_ref()).map(|t| t.layer().with_filter(LevelFilter::INFO));
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    Ok(traces)
}

/// [`serve_from_args`] once logging is set up.
async fn serve_args(server: ServerBuilder) -> std::io::Result<()> {
    use mcp_tasks_runtime::server::{BearerTokens, HttpConfig};
    let mut args = std::env::args().skip(1);
    let mut http = None;
    let mut tokens = Vec::new();
    let mut oauth = OAuthArgs::default();
    let mut http_config = HttpConfig::default();
    let mut store = None;
    let mut config = ServerConfig::default();
    let mut server = server;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--store" => {
                let spec = args.next().ok_or_else(|| usage("--store needs a store"))?;
                store = Some(open_store(&spec).await.map_err(|e| usage(&e))?);
            }
            "--state-secret" => {
                let secret = args
                    .next()
                    .ok_or_else(|| usage("--state-secret needs a secret"))?;
                server = server.request_state_key(secret.as_bytes());
            }
            "--lease-ms" => {
                let ms = args
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|ms| *ms > 0)
                    .ok_or_else(|| usage("--lease-ms needs a number of milliseconds"))?;
                config = config.lease(Duration::from_millis(ms));
            }
            "--drain-ms" => config = config.drain(millis(&mut args, &arg)?),
            "--durable-attempts" => {
                config = config.durable_attempts(number(&mut args, &arg)?);
            }
            "--role" => config = config.role(role(args.next())?),
            "--stdio-spin-us" => {
                let us = args
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| usage("--stdio-spin-us needs a number of microseconds"))?;
                config = config.stdio_spin(Duration::from_micros(us));
            }
            "--keepalive-ms" => {
                let every = match args.next().as_deref() {
                    Some("off") => None,
                    Some(ms) => match ms.parse::<u64>() {
                        Ok(ms) => Some(Duration::from_millis(ms)),
                        Err(_) => {
                            return Err(usage(
                                "--keepalive-ms needs a number of milliseconds or `off`",
                            ));
                        }
                    },
                    None => {
                        return Err(usage(
                            "--keepalive-ms needs a number of milliseconds or `off`",
                        ));
                    }
                };
                config = config.keepalive_interval(every);
            }
            // The fallback is on by default; the flag stays for the scripts that pass it.
            "--task-fallback" => server = server.task_fallback(true),
            "--no-task-fallback" => server = server.task_fallback(false),
            "--http" => http = Some(args.next().ok_or_else(|| usage("--http needs HOST:PORT"))?),
            "--token" => {
                let spec = args
                    .next()
                    .ok_or_else(|| usage("--token needs TOKEN=PRINCIPAL"))?;
                let (token, principal) = spec
                    .split_once('=')
                    .ok_or_else(|| usage("--token needs TOKEN=PRINCIPAL"))?;
                tokens.push((token.to_owned(), principal.to_owned()));
            }
            flag if OAuthArgs::FLAGS.contains(&flag) => {
                oauth.read(flag, &mut args).map_err(|e| usage(&e))?;
            }
            "--max-body" => http_config = http_config.max_body(number(&mut args, &arg)?),
            "--session-idle-ms" => {
                http_config = http_config.session_idle(millis(&mut args, &arg)?);
            }
            "--header-timeout-ms" => {
                http_config = http_config.header_timeout(millis(&mut args, &arg)?);
            }
            "--body-timeout-ms" => {
                http_config = http_config.body_timeout(millis(&mut args, &arg)?);
            }
            "--max-connections" => {
                http_config = http_config.max_connections(number(&mut args, &arg)?);
            }
            "--sse-retry-ms" => http_config = http_config.sse_retry(millis(&mut args, &arg)?),
            "--sse-replay" => http_config = http_config.sse_replay(number(&mut args, &arg)?),
            "--sse-resume-window-ms" => {
                http_config = http_config.sse_resume_window(millis(&mut args, &arg)?);
            }
            "--ops-address" => {
                let address = args
                    .next()
                    .ok_or_else(|| usage("--ops-address needs HOST:PORT"))?;
                let address = address
                    .parse()
                    .map_err(|e| usage(&format!("--ops-address {address}: {e}")))?;
                http_config = http_config.ops_address(address);
            }
            // Read by `init_logging`.
            "--otlp-endpoint" => {
                args.next();
            }
            other => return Err(usage(&format!("unknown argument `{other}`"))),
        }
    }
    if let Some(store) = store {
        server = server.store(store);
    }
    let server = server.config(config).build()?;
    let Some(addr) = http else {
        if !tokens.is_empty() || oauth.given() {
            return Err(usage(
                "--token and --oauth-* apply to --http only (stdio is not authenticated)",
            ));
        }
        return server.serve_stdio().await;
    };
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let mut config = http_config;
    let resource = (oauth.resource_server("mcp-tasks example server")).map_err(|e| usage(&e))?;
    if let Some(resource) = resource {
        if !tokens.is_empty() {
            return Err(usage("--token and --oauth-issuer exclude each other"));
        }
        config = config.authenticator(resource);
    } else if !tokens.is_empty() {
        let auth = tokens
            .into_iter()
            .fold(BearerTokens::new(), |auth, (t, p)| auth.token(t, p));
        config = config.authenticator(auth);
    }
    // `/metrics` beside `/healthz` and `/readyz`, from this process's Prometheus recorder.
    let metrics = mcp_tasks_runtime::server::Metrics::install().map_err(std::io::Error::other)?;
    config = config.metrics(metrics);
    println!("listening on http://{}/mcp", listener.local_addr()?);
    server.serve_http(listener).config(config).await
}

/// The role `--role` names.
fn role(name: Option<String>) -> std::io::Result<mcp_tasks_runtime::server::Role> {
    use mcp_tasks_runtime::server::Role;
    match name.as_deref() {
        Some("worker") => Ok(Role::Worker),
        Some("front") => Ok(Role::Front),
        Some("both") => Ok(Role::Both),
        _ => Err(usage("--role needs `worker`, `front` or `both`")),
    }
}

/// The number after `flag`.
fn number<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> std::io::Result<T> {
    args.next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| usage(&format!("{flag} needs a number")))
}

/// The number of milliseconds after `flag`.
fn millis(args: &mut impl Iterator<Item = String>, flag: &str) -> std::io::Result<Duration> {
    number(args, flag).map(Duration::from_millis)
}

fn usage(why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{why}\nusage: [--store memory|sqlite:PATH|redis://HOST:PORT[/DB]|postgres://USER@HOST:PORT/DB] [--state-secret SECRET] [--lease-ms N] [--drain-ms N] [--durable-attempts N] [--role worker|front|both] [--stdio-spin-us N] [--keepalive-ms N|off] [--no-task-fallback] [--http HOST:PORT [--token TOKEN=PRINCIPAL]... [--oauth-issuer URL --oauth-audience RESOURCE_URL [--oauth-introspection URL --oauth-client ID:SECRET] [--oauth-ca-cert FILE]...] [--session-idle-ms N] [--max-body BYTES] [--header-timeout-ms N] [--body-timeout-ms N] [--max-connections N] [--sse-retry-ms N] [--sse-replay N] [--sse-resume-window-ms N] [--ops-address HOST:PORT]] [--otlp-endpoint URL]"
        ),
    )
}
