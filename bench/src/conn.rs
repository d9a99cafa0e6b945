//! A connection to a fresh server of any kind, over any transport, and the inline call the floor
//! and the inline rows repeat.

use crate::opts::{Opts, Transport};
use mcp_tasks_bench::driver::{Client, Error, call_params, echo_call};
use mcp_tasks_bench::servers::{self, Kind};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A connection to a fresh server.
pub struct Conn {
    pub client: Client,
    child: Option<tokio::process::Child>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Conn {
    pub async fn open(kind: Kind, transport: Transport, o: &Opts) -> Result<Conn, Error> {
        let conn = match transport {
            Transport::Stdio | Transport::Pipes => {
                let bin = o.bin_dir.join(kind.binary());
                let mut cmd = match (&o.wrap, kind) {
                    (
                        Some(wrap),
                        Kind::McpTasks
                        | Kind::McpSqlite
                        | Kind::McpTasksRedis
                        | Kind::McpMetrics
                        | Kind::McpOtel,
                    ) => {
                        let mut parts = wrap.split_whitespace();
                        let mut cmd =
                            tokio::process::Command::new(parts.next().ok_or("empty --wrap")?);
                        cmd.args(parts).arg(&bin);
                        cmd
                    }
                    _ => tokio::process::Command::new(&bin),
                };
                if transport == Transport::Pipes {
                    cmd.arg("--pipes");
                }
                if kind == Kind::McpSqlite {
                    cmd.arg("--sqlite");
                }
                if kind == Kind::McpMetrics {
                    cmd.arg("--telemetry").arg("metrics");
                }
                if kind == Kind::McpOtel {
                    let sink = o.otlp_sink.as_ref().ok_or("mcp-otel needs the OTLP sink")?;
                    cmd.arg("--telemetry").arg(format!("otel={sink}"));
                }
                if kind == Kind::McpTasksRedis {
                    let redis = o.redis.as_ref().ok_or("mcp-redis needs the Redis server")?;
                    // Every server starts on an empty Redis, as the memory store starts empty.
                    redis.command(&["FLUSHALL"]).ok_or("FLUSHALL failed")?;
                    cmd.arg("--store").arg(&redis.url);
                }
                if kind == Kind::McpTasksPostgres {
                    let pg = o
                        .postgres
                        .as_ref()
                        .ok_or("mcp-postgres needs the Postgres server")?;
                    // Every server starts on an empty database, as the memory store starts empty.
                    cmd.arg("--store").arg(pg.create_database());
                }
                let mut child = cmd
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::inherit())
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| format!("starting {}: {e}", bin.display()))?;
                let stdin = child.stdin.take().ok_or("no stdin")?;
                let stdout = child.stdout.take().ok_or("no stdout")?;
                Conn {
                    client: Client::new(stdout, stdin),
                    child: Some(child),
                    server: None,
                }
            }
            Transport::InProcess => {
                let (client_end, server_end) = tokio::io::duplex(64 * 1024);
                let (sr, sw) = tokio::io::split(server_end);
                let server = tokio::spawn(servers::serve(kind, sr, sw));
                let (cr, cw) = tokio::io::split(client_end);
                Conn {
                    client: Client::new(cr, cw),
                    child: None,
                    server: Some(server),
                }
            }
        };
        if kind != Kind::Floor {
            // The first request also picks rmcp's lifecycle (2026-07-28, inline `_meta`).
            let tools: Value = conn
                .client
                .call(
                    "tools/list",
                    &format!(r#"{{"_meta":{}}}"#, mcp_tasks_bench::driver::META),
                )
                .await?;
            let n = tools["tools"].as_array().map_or(0, Vec::len);
            // mcp-tasks also has `work_durable`; rmcp and the bridge have echo, work and ask.
            let want = match kind {
                Kind::Rmcp | Kind::RmcpBridge => 3,
                _ => 4,
            };
            if n != want {
                return Err(format!("{} lists {n} tools, not {want}: {tools}", kind.name()).into());
            }
        }
        Ok(conn)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    /// Closes the server's input and waits for it to end (a profiler writes its output then).
    pub async fn close(self) {
        let Conn {
            client,
            child,
            server,
        } = self;
        drop(client);
        if let Some(mut child) = child
            && tokio::time::timeout(Duration::from_secs(60), child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
        if let Some(server) = server {
            let _ = tokio::time::timeout(Duration::from_secs(15), server).await;
        }
    }
}

/// One inline `echo` call; the real servers' answers are checked now and then (the floor answers
/// `{}` to everything).
pub fn echo_op(
    client: &Client,
    kind: Kind,
) -> impl Fn(u64) -> Pin<Box<dyn Future<Output = Result<u32, Error>> + Send>> + Send + Sync + 'static
{
    let client = client.clone();
    let params: Arc<str> = call_params("echo", r#"{"text":"hello"}"#).into();
    let check = kind != Kind::Floor;
    move |i| {
        let client = client.clone();
        let params = params.clone();
        Box::pin(async move { echo_call(&client, &params, "hello", check && i % 1000 == 0).await })
    }
}
