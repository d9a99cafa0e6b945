//! `cargo run --release -p mcp-tasks-bench [-- OPTIONS]`: measures mcp-tasks, rmcp 3.11 and a bare
//! JSON-RPC echo (the floor) with one load driver, prints a table and writes
//! `target/bench/results.json`. `--help` lists the options (`opts.rs`).

mod conn;
mod opts;
mod report;
mod scenarios;
mod store_counts;

use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::servers::Kind;
use opts::{Opts, Transport};
use report::{Report, say, started};
use std::sync::Arc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    started();
    let mut o = Opts::parse()?;
    build_servers(&o)?;
    if o.servers.contains(&Kind::McpTasksRedis) {
        say("starting redis-server (testkit/redis/install.sh installs it, pinned)");
        o.redis = Some(Arc::new(mcp_tasks_testkit::redis::RedisServer::start()));
    }
    if o.servers.contains(&Kind::McpTasksPostgres) {
        say("starting PostgreSQL 15 (testkit/postgres/install.sh finds or installs it)");
        let pg = mcp_tasks_testkit::postgres::PostgresServer::start();
        pg.sql(
            "postgres",
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
        );
        o.postgres = Some(Arc::new(pg));
    }
    #[cfg(feature = "telemetry")]
    if o.servers.contains(&Kind::McpOtel) {
        let sink = mcp_tasks_bench::servers::telemetry::start_sink().await?;
        say(format!("OTLP/HTTP sink for mcp-otel at {sink}"));
        o.otlp_sink = Some(sink);
    }
    mcp_tasks_bench::driver::send_traceparent(o.traceparent);
    let o = o;
    let mut r = Report::default();
    for &t in &o.transports {
        if o.has("inline") {
            scenarios::inline(&o, t, &mut r).await?;
        }
    }
    // The task scenarios run over stdio and in-process; `pipes` only changes the transport, which
    // the inline rows already show.
    let task_transports: Vec<Transport> = o
        .transports
        .iter()
        .copied()
        .filter(|t| *t != Transport::Pipes || o.transports.len() == 1)
        .collect();
    for &t in &task_transports {
        if o.has("lifecycle") {
            scenarios::lifecycle(&o, t, &mut r).await?;
        }
    }
    if o.has("durable") {
        scenarios::durable(&o, &mut r).await?;
    }
    for &t in &task_transports {
        if o.has("elicit") {
            scenarios::elicit(&o, t, &mut r).await?;
        }
    }
    if o.has("store") {
        scenarios::store(&o, &mut r).await?;
    }
    if o.has("scale") && o.servers.contains(&Kind::McpTasks) {
        scenarios::scale(&o, &mut r).await?;
    }
    let total = started().elapsed();
    report::print(&o, &r, total);
    report::write_json(&o, &r, total)
}

/// Builds the stdio servers, sibling binaries that `cargo run` does not build, with this
/// binary's profile, when cargo ran it (`CARGO` is set; the smoke test unsets it, as cargo has
/// built them for the test).
fn build_servers(o: &Opts) -> Result<(), Error> {
    let release = o.bin_dir.ends_with("release");
    if let Ok(cargo) = std::env::var("CARGO") {
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "mcp-tasks-bench", "--bins"]);
        // The same features as this binary, or the build would replace the servers with others.
        if cfg!(feature = "telemetry") {
            cmd.args(["--features", "telemetry"]);
        }
        if release {
            cmd.arg("--release");
        }
        if !cmd.status()?.success() {
            return Err("building the server binaries failed".into());
        }
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: not a release build; figures mean little (use --release)");
    }
    Ok(())
}
