//! `cargo run --release -p mcp-tasks-bench [-- OPTIONS]`: measures mcp-tasks, rmcp 3.9 and a bare
//! JSON-RPC echo (the floor) with one load driver, prints a table and writes
//! `target/bench/results.json`.
//!
//! Options:
//!   --quick                 short runs and 10,000 stored tasks (a smoke test, not figures)
//!   --only LIST             scenarios, comma-separated: inline,lifecycle,elicit,store,scale
//!   --transport LIST        stdio,pipes,inproc (default all; tasks skip `pipes`; `store` is stdio)
//!   --servers LIST          mcp-tasks,mcp-sqlite,mcp-redis,rmcp (the floor always runs where a
//!                           floor is needed); mcp-sqlite keeps tasks in a SQLite file (lifecycle
//!                           and store only); mcp-redis is mcp-tasks on a RedisTaskStore (a pinned
//!                           redis-server the run starts), in the stdio task rows only
//!   --stored N              tasks stored for the `store` scenario (default 100000)
//!   --stored-large N        tasks stored for the `scale` scenario (default 1000000): mcp-tasks
//!                           only (memory store), `tasks/get` on a server holding 10,000 and on
//!                           one holding N, in alternating rounds
//!   --tasks N               tasks per round for `lifecycle` and `elicit` at 64 callers
//!   --rounds N              rounds per figure (default 5 inline, 3 for tasks; servers alternate)
//!   --budget SECS           end the run by then (default 540): the `store` scenario creates
//!                           fewer tasks if it must, and says so
//!   --wrap CMD              run the stdio mcp-tasks server under CMD (e.g. valgrind; see bench/profile.sh)
//!   --out PATH              where the JSON goes (default target/bench/results.json)

use mcp_tasks_bench::driver::{
    Client, Error, call_params, echo_call, elicitation, get_params, poll_until, task_lifecycle,
};
use mcp_tasks_bench::measure::{Rng, Sample, Stop, closed_loop, median, memory_kib};
use mcp_tasks_bench::servers::{self, Kind};
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RESULT_SIZE: usize = 1024;
/// The text of each stored task's result in the `store` and `scale` scenarios: a small result,
/// so that the memory per task is what the server keeps about a task, not the payload.
const STORED_RESULT_SIZE: usize = 16;
/// Tasks stored when the `scale` scenario takes its first `tasks/get` figure.
const SCALE_BASE: u64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// Child processes; tokio's `stdin()`/`stdout()` (what `serve_stdio` and rmcp's `stdio()` use).
    Stdio,
    /// Child processes; non-blocking pipes (rmcp's `stdio_pipes`) for every server.
    Pipes,
    /// Tokio duplex pipes into each server's serve function, in this process.
    InProcess,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Pipes => "pipes",
            Transport::InProcess => "inproc",
        }
    }
}

#[derive(Debug, Clone)]
struct Opts {
    /// Rounds of the inline figures (the servers alternate within a round; the median counts).
    rounds: usize,
    /// Rounds of the task figures (a fresh server each round).
    task_rounds: usize,
    round: Duration,
    warmup: Duration,
    lifecycle_tasks: u64,
    elicit_tasks: u64,
    stored: u64,
    /// Tasks stored for the `scale` scenario.
    stored_large: u64,
    /// The whole run should end by then: the `store` scenario stops creating tasks early if it
    /// must (rmcp's `TaskManager` gets slower with every stored task).
    budget: Duration,
    get_for: Duration,
    scenarios: Vec<String>,
    transports: Vec<Transport>,
    servers: Vec<Kind>,
    wrap: Option<String>,
    out: PathBuf,
    bin_dir: PathBuf,
    /// The Redis the `mcp-redis` server keeps its tasks in (started by `main`).
    redis: Option<Arc<mcp_tasks_testkit::redis::RedisServer>>,
}

/// Does `tasks/get` stay as fast with many more tasks stored? mcp-tasks (memory store) only, over
/// stdio: one server holds 10,000 completed tasks (small results), another `--stored-large` (as
/// many as the run's time budget allows), and `tasks/get` over random ids is measured on each in
/// alternating rounds (the median counts), so that the ratio survives a noisy machine.
async fn scale(o: &Opts, r: &mut Report) -> Result<(), Error> {
    let (k, t) = (Kind::McpTasks, Transport::Stdio);
    let create: Arc<str> =
        call_params("work", &format!(r#"{{"size":{STORED_RESULT_SIZE}}}"#)).into();
    let mut servers = Vec::new();
    let mut note = String::new();
    for target in [SCALE_BASE.min(o.stored_large), o.stored_large] {
        let conn = Conn::open(k, t, o).await?;
        let client = conn.client.clone();
        let ids = Arc::new(std::sync::Mutex::new(Vec::with_capacity(target as usize)));
        let left = o
            .budget
            .saturating_sub(started().elapsed())
            .saturating_sub(Duration::from_secs(40));
        say(format!("{}: storing {target} tasks (scale)", k.name()));
        let (c2, cr, ids2) = (client.clone(), create.clone(), ids.clone());
        closed_loop(
            64,
            Stop::CountWithin(target, left.max(Duration::from_secs(30))),
            move |_| {
                let (c, cr, ids) = (c2.clone(), cr.clone(), ids2.clone());
                async move {
                    let id = mcp_tasks_bench::driver::create_task(&c, &cr).await?;
                    ids.lock().expect("ids").push(id);
                    Ok(1)
                }
            },
        )
        .await?;
        let ids: Arc<Vec<String>> = Arc::new(std::mem::take(&mut *ids.lock().expect("ids")));
        if (ids.len() as u64) < target {
            note = format!(
                "measured with {} stored: creating more would overrun the run's time budget",
                ids.len()
            );
        }
        for id in ids.iter().rev().take(64) {
            poll_until(&client, &get_params(id), "completed").await?;
        }
        servers.push((conn, client, ids, Vec::new()));
    }
    let mut floor = Floor::open(t, 64, o).await?;
    for _ in 0..o.task_rounds {
        floor.round(o).await?;
        for (_, client, ids, samples) in servers.iter_mut() {
            let (c2, ids2) = (client.clone(), ids.clone());
            let gets = closed_loop(64, Stop::After(o.get_for), move |i| {
                let (c, ids) = (c2.clone(), ids2.clone());
                async move {
                    let id =
                        &ids[Rng::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7).below(ids.len())];
                    let seen: mcp_tasks_bench::driver::Seen =
                        c.call("tasks/get", &get_params(id)).await?;
                    match (seen.status.as_deref(), seen.task_text().map(str::len)) {
                        (Some("completed"), Some(STORED_RESULT_SIZE)) => Ok(1),
                        other => Err(format!("tasks/get saw {other:?}").into()),
                    }
                }
            })
            .await?;
            say(format!(
                "{}: {:.0} gets/s with {} stored",
                k.name(),
                gets.per_sec(),
                ids.len()
            ));
            samples.push(gets.per_sec());
        }
    }
    let floor = Some(floor.finish(r, "scale/floor".into()).await.per_sec);
    let mut figures = Vec::new();
    let mut rounds = Vec::new();
    for (conn, client, ids, samples) in servers {
        drop(client);
        conn.close().await;
        let n = ids.len();
        r.raw.insert(
            format!("scale/{}/{n}", k.name()),
            json!({"stored": n, "gets_per_sec_rounds": samples}),
        );
        rounds.push(samples.clone());
        let per_sec = median(samples);
        r.rows.push(Row {
            metric: format!("tasks/get, {n} stored, memory store, {}, c=64", t.name()),
            unit: "gets/s",
            floor,
            values: vec![(k, per_sec)],
            rate: Some(true),
            note: note.clone(),
        });
        figures.push((n, per_sec));
    }
    if let ([(small, base), (large, big)], [few, many]) = (&figures[..], &rounds[..]) {
        // The two servers take turns within a round, so each round's ratio is taken in one
        // stretch of the machine's speed (as the inline rows' same-round ratios are).
        let ratios: Vec<f64> = few.iter().zip(many).map(|(a, b)| b / a).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let paired = median(ratios.clone());
        r.raw.insert(
            "scale/paired_ratio".into(),
            json!({"median": paired, "min": lo, "max": hi, "rounds": ratios}),
        );
        let mut note = note;
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&format!(
            "median of {} same-round ratios: {paired:.2} (range {lo:.2}-{hi:.2})",
            ratios.len()
        ));
        r.rows.push(Row {
            metric: format!("  tasks/get with {large} stored / with {small} stored"),
            unit: "ratio",
            floor: None,
            values: vec![(k, big / base)],
            rate: None,
            note,
        });
    }
    Ok(())
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_owned())
        .filter(|x| !x.is_empty())
        .collect()
}

fn parse_opts() -> Result<Opts, Error> {
    let exe = std::env::current_exe()?;
    let bin_dir = exe
        .parent()
        .ok_or("no directory for the executable")?
        .to_path_buf();
    let target = bin_dir
        .parent()
        .map_or_else(|| bin_dir.clone(), |p| p.to_path_buf());
    let mut o = Opts {
        rounds: 5,
        task_rounds: 3,
        round: Duration::from_millis(600),
        warmup: Duration::from_millis(300),
        lifecycle_tasks: 5_000,
        elicit_tasks: 2_000,
        stored: 100_000,
        stored_large: 1_000_000,
        budget: Duration::from_secs(540),
        get_for: Duration::from_secs(3),
        scenarios: list("inline,lifecycle,elicit,store,scale"),
        transports: vec![Transport::Stdio, Transport::Pipes, Transport::InProcess],
        servers: vec![
            Kind::McpTasks,
            Kind::McpSqlite,
            Kind::McpTasksRedis,
            Kind::Rmcp,
        ],
        wrap: None,
        out: target.join("bench").join("results.json"),
        bin_dir,
        redis: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--quick" => {
                o.rounds = 1;
                o.task_rounds = 1;
                o.round = Duration::from_millis(300);
                o.warmup = Duration::from_millis(100);
                o.lifecycle_tasks = 500;
                o.elicit_tasks = 200;
                o.stored = 10_000;
                o.stored_large = 100_000;
                o.get_for = Duration::from_millis(500);
            }
            "--only" => o.scenarios = list(&value()?),
            "--transport" => {
                o.transports = list(&value()?)
                    .iter()
                    .map(|t| match t.as_str() {
                        "stdio" => Ok(Transport::Stdio),
                        "pipes" => Ok(Transport::Pipes),
                        "inproc" => Ok(Transport::InProcess),
                        other => Err(format!("unknown transport {other}")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--servers" => {
                o.servers = list(&value()?)
                    .iter()
                    .map(|s| Kind::parse(s).ok_or_else(|| format!("unknown server {s}")))
                    .collect::<Result<_, _>>()?
            }
            "--stored" => o.stored = value()?.parse()?,
            "--stored-large" => o.stored_large = value()?.parse()?,
            "--tasks" => {
                o.lifecycle_tasks = value()?.parse()?;
                o.elicit_tasks = o.lifecycle_tasks;
            }
            "--rounds" => {
                o.rounds = value()?.parse()?;
                o.task_rounds = o.rounds;
            }
            "--wrap" => o.wrap = Some(value()?),
            "--budget" => o.budget = Duration::from_secs(value()?.parse()?),
            "--out" => o.out = PathBuf::from(value()?),
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("main.rs")
                        .lines()
                        .take(19)
                        .map(|l| l.trim_start_matches("//!").trim_start_matches(' '))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other} (try --help)").into()),
        }
    }
    Ok(o)
}

/// A connection to a fresh server.
struct Conn {
    client: Client,
    child: Option<tokio::process::Child>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Conn {
    async fn open(kind: Kind, transport: Transport, o: &Opts) -> Result<Conn, Error> {
        let conn = match transport {
            Transport::Stdio | Transport::Pipes => {
                let bin = o.bin_dir.join(kind.binary());
                let mut cmd = match (&o.wrap, kind) {
                    (Some(wrap), Kind::McpTasks) => {
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
                if kind == Kind::McpTasksRedis {
                    let redis = o.redis.as_ref().ok_or("mcp-redis needs the Redis server")?;
                    // Every server starts on an empty Redis, as the memory store starts empty.
                    redis.command(&["FLUSHALL"]).ok_or("FLUSHALL failed")?;
                    cmd.arg("--store").arg(&redis.url);
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
            if n != 3 {
                return Err(format!("{} lists {n} tools, not 3: {tools}", kind.name()).into());
            }
        }
        Ok(conn)
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    /// Closes the server's input and waits for it to end (a profiler writes its output then).
    async fn close(self) {
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
fn echo_op(
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

/// Figures for one server in one cell of the table.
#[derive(Debug, Clone, Default)]
struct Figures {
    per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    trips_per_op: f64,
}

fn figures(rounds: &[Sample]) -> Figures {
    let all = Sample::merge(rounds);
    Figures {
        per_sec: median(rounds.iter().map(Sample::per_sec).collect()),
        p50_us: all.quantile_us(0.5),
        p99_us: all.quantile_us(0.99),
        trips_per_op: all.trips_per_op(),
    }
}

/// One row of the table.
#[derive(Debug, Clone)]
struct Row {
    metric: String,
    unit: &'static str,
    floor: Option<f64>,
    values: Vec<(Kind, f64)>,
    /// How to turn a value into "× floor": `Some(true)` = floor/value (rates), `Some(false)` =
    /// value/floor (times), `None` = no floor.
    rate: Option<bool>,
    note: String,
}

impl Row {
    fn value(&self, k: Kind) -> Option<f64> {
        self.values.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v)
    }

    fn x_floor(&self, k: Kind) -> Option<f64> {
        let (f, v) = (self.floor?, self.value(k)?);
        match self.rate? {
            true => Some(f / v),
            false => Some(v / f),
        }
    }
}

#[derive(Default)]
struct Report {
    rows: Vec<Row>,
    /// Redis commands per operation, by scenario (the `mcp-redis` server).
    redis: Vec<(String, RedisCounts)>,
    raw: serde_json::Map<String, Value>,
}

/// The echo floor measured in the same window as a scenario's own rounds: one warmed-up echo
/// server on the scenario's transport, run for one round at the scenario's concurrency between
/// the scenario's rounds, so that a row's "× floor" divides by what the machine gave a bare
/// round trip while the row itself was measured (on a shared machine the floor moves 2-3× between
/// runs minutes apart).
struct Floor {
    conn: Conn,
    c: usize,
    rounds: Vec<Sample>,
}

impl Floor {
    async fn open(t: Transport, c: usize, o: &Opts) -> Result<Floor, Error> {
        let conn = Conn::open(Kind::Floor, t, o).await?;
        closed_loop(c, Stop::After(o.warmup), echo_op(&conn.client, Kind::Floor)).await?;
        Ok(Floor {
            conn,
            c,
            rounds: Vec::new(),
        })
    }

    /// One round of bare round trips, as long as an inline round.
    async fn round(&mut self, o: &Opts) -> Result<(), Error> {
        let s = closed_loop(
            self.c,
            Stop::After(o.round),
            echo_op(&self.conn.client, Kind::Floor),
        )
        .await?;
        self.rounds.push(s);
        Ok(())
    }

    /// Stops the echo server; its figures (the median round's rate, pooled latencies), also kept
    /// in the JSON under `key`.
    async fn finish(self, r: &mut Report, key: String) -> Figures {
        self.conn.close().await;
        let f = figures(&self.rounds);
        r.raw.insert(
            key,
            json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "rounds": self.rounds.iter().map(Sample::per_sec).collect::<Vec<_>>()}),
        );
        f
    }
}

/// The median over rounds of `a`'s rate ÷ `b`'s rate in the same round (the servers alternate
/// within a round), with the lowest and highest of those ratios: steadier than the ratio of two
/// medians when the machine's speed drifts during a run.
fn paired_ratio(a: &[Sample], b: &[Sample]) -> (f64, f64, f64) {
    let ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.per_sec() / b.per_sec())
        .collect();
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(ratios), lo, hi)
}

fn say(msg: impl AsRef<str>) {
    eprintln!(
        "[bench {:>6.1}s] {}",
        started().elapsed().as_secs_f64(),
        msg.as_ref()
    );
}

fn started() -> &'static Instant {
    static T: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    T.get_or_init(Instant::now)
}

/// Inline `tools/call` round trips at 1 and 64 callers; the floor runs alongside.
async fn inline(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
    let mut kinds = vec![Kind::Floor];
    kinds.extend(o.servers.iter().copied().filter(|k| k.runs_in("inline")));
    for c in [1usize, 64] {
        say(format!("inline tools/call, {}, {c} caller(s)", t.name()));
        let mut conns = Vec::new();
        for &k in &kinds {
            let conn = Conn::open(k, t, o).await?;
            closed_loop(c, Stop::After(o.warmup), echo_op(&conn.client, k)).await?;
            conns.push((k, conn));
        }
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); kinds.len()];
        for round in 0..o.rounds {
            // Rotate the order so no server always runs first (or right after another).
            for j in 0..kinds.len() {
                let idx = (j + round) % kinds.len();
                let s = closed_loop(
                    c,
                    Stop::After(o.round),
                    echo_op(&conns[idx].1.client, kinds[idx]),
                )
                .await?;
                samples[idx].push(s);
            }
        }
        for (_, conn) in conns {
            conn.close().await;
        }
        let figs: Vec<(Kind, Figures)> = kinds
            .iter()
            .copied()
            .zip(samples.iter().map(|s| figures(s)))
            .collect();
        let floor = figs[0].1.clone();
        let rounds_of = |k: Kind| kinds.iter().position(|x| *x == k).map(|i| &samples[i][..]);
        let mut note = String::new();
        if let (Some(a), Some(b)) = (rounds_of(Kind::McpTasks), rounds_of(Kind::Rmcp)) {
            let (ratio, lo, hi) = paired_ratio(a, b);
            note = format!(
                "mcp-tasks ÷ rmcp, median of {} same-round ratios: {ratio:.2} (range {lo:.2}-{hi:.2})",
                a.len()
            );
            r.raw.insert(
                format!("inline/{}/c{c}/mcp_tasks_over_rmcp_paired", t.name()),
                json!({"median": ratio, "min": lo, "max": hi}),
            );
        }
        let pick = |f: fn(&Figures) -> f64| {
            figs[1..]
                .iter()
                .map(|(k, fi)| (*k, f(fi)))
                .collect::<Vec<_>>()
        };
        r.rows.push(Row {
            metric: format!("inline tools/call, {}, c={c}", t.name()),
            unit: "calls/s",
            floor: Some(floor.per_sec),
            values: pick(|f| f.per_sec),
            rate: Some(true),
            note,
        });
        r.rows.push(Row {
            metric: "  latency p50".into(),
            unit: "µs",
            floor: Some(floor.p50_us),
            values: pick(|f| f.p50_us),
            rate: Some(false),
            note: String::new(),
        });
        r.rows.push(Row {
            metric: "  latency p99".into(),
            unit: "µs",
            floor: Some(floor.p99_us),
            values: pick(|f| f.p99_us),
            rate: Some(false),
            note: String::new(),
        });
        r.raw.insert(
            format!("inline/{}/c{c}", t.name()),
            json!(figs.iter().map(|(k, f)| (k.name().to_owned(), json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "rounds": samples[kinds.iter().position(|x| x == k).unwrap()].iter().map(Sample::per_sec).collect::<Vec<_>>()}))).collect::<serde_json::Map<_, _>>()),
        );
    }
    Ok(())
}

type OpFn = Arc<
    dyn Fn(Client, u64) -> Pin<Box<dyn Future<Output = Result<u32, Error>> + Send>> + Send + Sync,
>;

/// The kinds of server a task scenario runs on this transport (`mcp-redis`: stdio only).
fn task_kinds(o: &Opts, scenario: &str, t: Transport) -> Vec<Kind> {
    o.servers
        .iter()
        .copied()
        .filter(|k| k.runs_in(scenario))
        .filter(|k| *k != Kind::McpTasksRedis || t == Transport::Stdio)
        .collect()
}

/// Redis's own count of the commands it ran (`INFO commandstats`, scripts' inner commands
/// included) over some MCP operations.
#[derive(Debug, Clone, Default)]
struct RedisCounts {
    /// Calls by command name.
    commands: std::collections::BTreeMap<String, u64>,
    /// MCP operations (tasks, gets) they served.
    ops: u64,
    /// JSON-RPC requests they served.
    trips: u64,
}

impl RedisCounts {
    /// Starts counting afresh (`CONFIG RESETSTAT`).
    fn reset(o: &Opts) -> Result<(), Error> {
        if let Some(redis) = &o.redis {
            redis
                .command(&["CONFIG", "RESETSTAT"])
                .ok_or("CONFIG RESETSTAT failed")?;
        }
        Ok(())
    }

    /// Adds what Redis counted since the last reset (less the bench's own INFO and CONFIG).
    fn read(&mut self, o: &Opts, sample: &Sample) {
        let Some(redis) = &o.redis else { return };
        for line in redis.info("commandstats").lines() {
            let Some((name, rest)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            if name == "info" || name.starts_with("config") {
                continue;
            }
            let calls = rest
                .split(',')
                .find_map(|f| f.strip_prefix("calls="))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            *self.commands.entry(name.to_owned()).or_default() += calls;
        }
        self.ops += sample.ops;
        self.trips += sample.trips;
    }

    fn total(&self) -> u64 {
        self.commands.values().sum()
    }

    fn describe(&self) -> String {
        let per = |n: u64| n as f64 / self.ops.max(1) as f64;
        let parts: Vec<String> = self
            .commands
            .iter()
            .map(|(name, n)| format!("{name} {:.2}", per(*n)))
            .collect();
        format!(
            "{:.2} Redis commands per operation ({:.2} per JSON-RPC request): {}",
            per(self.total()),
            self.total() as f64 / self.trips.max(1) as f64,
            parts.join(", ")
        )
    }

    fn json(&self) -> Value {
        let per = |n: u64| n as f64 / self.ops.max(1) as f64;
        json!({
            "ops": self.ops,
            "requests": self.trips,
            "commands_per_op": per(self.total()),
            "commands_per_request": self.total() as f64 / self.trips.max(1) as f64,
            "by_command_per_op": self.commands.iter().map(|(k, n)| (k.clone(), json!(per(*n)))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// Runs `op` on a fresh server of each kind, `rounds` times, alternating the servers, with a round
/// of the echo floor (same transport, same concurrency) among them in every round; with what
/// Redis counted for the `mcp-redis` runs.
async fn fresh_rounds(
    o: &Opts,
    scenario: &str,
    t: Transport,
    c: usize,
    stop: Stop,
    op: OpFn,
) -> Result<(Vec<(Kind, Vec<Sample>)>, Floor, RedisCounts), Error> {
    let mut out: Vec<(Kind, Vec<Sample>)> = task_kinds(o, scenario, t)
        .iter()
        .map(|k| (*k, Vec::new()))
        .collect();
    let mut floor = Floor::open(t, c, o).await?;
    let mut counts = RedisCounts::default();
    for round in 0..o.task_rounds {
        // Slot `out.len()` is the floor's; the order rotates so that none always runs first.
        for j in 0..=out.len() {
            let idx = (j + round) % (out.len() + 1);
            if idx == out.len() {
                floor.round(o).await?;
                continue;
            }
            let k = out[idx].0;
            let conn = Conn::open(k, t, o).await?;
            let client = conn.client.clone();
            let op2 = op.clone();
            if k == Kind::McpTasksRedis {
                RedisCounts::reset(o)?;
            }
            let s = closed_loop(c, stop, move |i| op2(client.clone(), i)).await?;
            if k == Kind::McpTasksRedis {
                counts.read(o, &s);
            }
            conn.close().await;
            out[idx].1.push(s);
        }
    }
    Ok((out, floor, counts))
}

/// Task lifecycle (create → poll → completed) at 64 callers.
async fn lifecycle(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
    say(format!(
        "task lifecycle, {}, 64 callers, {} tasks per round",
        t.name(),
        o.lifecycle_tasks
    ));
    let create: Arc<str> = call_params("work", &format!(r#"{{"size":{RESULT_SIZE}}}"#)).into();
    let op: OpFn = Arc::new(move |c, _| {
        let create = create.clone();
        Box::pin(async move { task_lifecycle(&c, &create, RESULT_SIZE).await })
    });
    let (res, floor, counts) =
        fresh_rounds(o, "lifecycle", t, 64, Stop::Count(o.lifecycle_tasks), op).await?;
    let floor = floor
        .finish(r, format!("lifecycle/{}/c64/floor", t.name()))
        .await;
    if counts.ops > 0 {
        r.redis
            .push((format!("task lifecycle, {}, c=64", t.name()), counts));
    }
    let figs: Vec<(Kind, Figures)> = res.iter().map(|(k, s)| (*k, figures(s))).collect();
    let trips = figs
        .iter()
        .map(|(k, f)| format!("{} {:.2}", k.name(), f.trips_per_op))
        .collect::<Vec<_>>()
        .join(", ");
    r.rows.push(Row {
        metric: format!("task lifecycle, {}, c=64", t.name()),
        unit: "tasks/s",
        floor: Some(floor.per_sec),
        values: figs.iter().map(|(k, f)| (*k, f.per_sec)).collect(),
        rate: Some(true),
        note: format!("round trips per task: {trips}"),
    });
    r.rows.push(Row {
        metric: "  latency p50".into(),
        unit: "µs",
        floor: Some(floor.p50_us),
        values: figs.iter().map(|(k, f)| (*k, f.p50_us)).collect(),
        rate: Some(false),
        note: String::new(),
    });
    r.raw.insert(format!("lifecycle/{}/c64", t.name()), json!(figs.iter().map(|(k, f)| (k.name().to_owned(), json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "trips_per_task": f.trips_per_op}))).collect::<serde_json::Map<_, _>>()));
    Ok(())
}

/// In-task elicitation: one caller (latency) and 64 callers (throughput).
async fn elicit(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
    let create: Arc<str> = call_params("ask", "{}").into();
    let op: OpFn = Arc::new(move |c, i| {
        let create = create.clone();
        Box::pin(async move { elicitation(&c, &create, &format!("user-{i}")).await })
    });
    say(format!("elicitation round trip, {}, 1 caller", t.name()));
    let (one, floor1, counts) =
        fresh_rounds(o, "elicit", t, 1, Stop::After(o.round), op.clone()).await?;
    let floor1 = floor1
        .finish(r, format!("elicit/{}/c1/floor", t.name()))
        .await;
    if counts.ops > 0 {
        r.redis
            .push((format!("elicitation in a task, {}, c=1", t.name()), counts));
    }
    say(format!(
        "elicitation round trip, {}, 64 callers, {} per round",
        t.name(),
        o.elicit_tasks
    ));
    let (many, floor64, _) =
        fresh_rounds(o, "elicit", t, 64, Stop::Count(o.elicit_tasks), op).await?;
    let floor64 = floor64
        .finish(r, format!("elicit/{}/c64/floor", t.name()))
        .await;
    let f1: Vec<(Kind, Figures)> = one.iter().map(|(k, s)| (*k, figures(s))).collect();
    let f64_: Vec<(Kind, Figures)> = many.iter().map(|(k, s)| (*k, figures(s))).collect();
    let trips = f1
        .iter()
        .map(|(k, f)| format!("{} {:.2}", k.name(), f.trips_per_op))
        .collect::<Vec<_>>()
        .join(", ");
    r.rows.push(Row {
        metric: format!("elicitation in a task, {}, c=1", t.name()),
        unit: "µs p50",
        floor: Some(floor1.p50_us),
        values: f1.iter().map(|(k, f)| (*k, f.p50_us)).collect(),
        rate: Some(false),
        note: format!("round trips per elicitation: {trips}"),
    });
    r.rows.push(Row {
        metric: "  latency p99".into(),
        unit: "µs",
        floor: Some(floor1.p99_us),
        values: f1.iter().map(|(k, f)| (*k, f.p99_us)).collect(),
        rate: Some(false),
        note: String::new(),
    });
    r.rows.push(Row {
        metric: format!("elicitation in a task, {}, c=64", t.name()),
        unit: "tasks/s",
        floor: Some(floor64.per_sec),
        values: f64_.iter().map(|(k, f)| (*k, f.per_sec)).collect(),
        rate: Some(true),
        note: String::new(),
    });
    r.raw.insert(format!("elicit/{}/c1", t.name()), json!(f1.iter().map(|(k, f)| (k.name().to_owned(), json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "trips": f.trips_per_op}))).collect::<serde_json::Map<_, _>>()));
    r.raw.insert(format!("elicit/{}/c64", t.name()), json!(f64_.iter().map(|(k, f)| (k.name().to_owned(), json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "trips": f.trips_per_op}))).collect::<serde_json::Map<_, _>>()));
    Ok(())
}

/// Many stored tasks (completed, small results): resident memory per task, then `tasks/get`
/// throughput over random stored ids. Always over stdio (the server's memory is its process's).
async fn store(o: &Opts, r: &mut Report) -> Result<(), Error> {
    let t = Transport::Stdio;
    let mut mem_row = Row {
        metric: format!("resident memory per stored task (N={})", o.stored),
        unit: "bytes",
        floor: None,
        values: vec![],
        rate: None,
        note: String::new(),
    };
    let mut get_row = Row {
        metric: format!("tasks/get, {} stored, {}, c=64", o.stored, t.name()),
        unit: "gets/s",
        floor: None,
        values: vec![],
        rate: Some(true),
        note: String::new(),
    };
    let mut p99_row = Row {
        metric: "  latency p99".into(),
        unit: "µs",
        floor: None,
        values: vec![],
        rate: Some(false),
        note: String::new(),
    };
    let mut fill_row = Row {
        metric: format!("creating those tasks, {}, c=64", t.name()),
        unit: "tasks/s",
        floor: None,
        values: vec![],
        rate: Some(true),
        note: String::new(),
    };
    let mut notes = Vec::new();
    // The floor runs a round before each server fills and after its gets.
    let mut floor = Floor::open(t, 64, o).await?;
    for &k in &o.servers {
        floor.round(o).await?;
        say(format!("{}: storing {} tasks", k.name(), o.stored));
        let conn = Conn::open(k, t, o).await?;
        let pid = conn.pid().ok_or("no pid")?;
        let client = conn.client.clone();
        // Warm up (allocator pools, lazily built state), then take the baseline.
        closed_loop(8, Stop::Count(2_000), echo_op(&client, k)).await?;
        let create: Arc<str> =
            call_params("work", &format!(r#"{{"size":{STORED_RESULT_SIZE}}}"#)).into();
        {
            let (c2, cr) = (client.clone(), create.clone());
            closed_loop(8, Stop::Count(200), move |_| {
                let (c, cr) = (c2.clone(), cr.clone());
                async move { task_lifecycle(&c, &cr, STORED_RESULT_SIZE).await }
            })
            .await?;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (rss0, _) = memory_kib(pid).ok_or("no /proc status")?;
        let ids = Arc::new(std::sync::Mutex::new(Vec::with_capacity(o.stored as usize)));
        let redis_mem0 = redis_used_memory(o, k);
        if k == Kind::McpTasksRedis {
            RedisCounts::reset(o)?;
        }
        let fill = {
            let (c2, cr, ids) = (client.clone(), create.clone(), ids.clone());
            // Leave 40 s of the budget for what follows (reading, then the next server).
            let left = o
                .budget
                .saturating_sub(started().elapsed())
                .saturating_sub(Duration::from_secs(40));
            closed_loop(
                64,
                Stop::CountWithin(o.stored, left.max(Duration::from_secs(30))),
                move |_| {
                    let (c, cr, ids) = (c2.clone(), cr.clone(), ids.clone());
                    async move {
                        let id = mcp_tasks_bench::driver::create_task(&c, &cr).await?;
                        ids.lock().expect("ids").push(id);
                        Ok(1)
                    }
                },
            )
            .await?
        };
        if k == Kind::McpTasksRedis {
            let mut counts = RedisCounts::default();
            counts.read(o, &fill);
            r.redis.push((
                format!("creating {} tasks (create + run + finish)", fill.ops),
                counts,
            ));
        }
        let ids: Arc<Vec<String>> = Arc::new(std::mem::take(&mut *ids.lock().expect("ids")));
        let n = ids.len();
        if (n as u64) < o.stored {
            notes.push(format!(
                "{} measured with {n} stored: creating more would overrun the run's time budget",
                k.name()
            ));
        }
        // Every task completes at once; make sure the last ones have.
        for id in ids.iter().rev().take(64) {
            poll_until(&client, &get_params(id), "completed").await?;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (rss1, hwm) = memory_kib(pid).ok_or("no /proc status")?;
        let mut per_task = (rss1.saturating_sub(rss0)) as f64 * 1024.0 / n as f64;
        if let (Some(before), Some(after)) = (redis_mem0, redis_used_memory(o, k)) {
            // The tasks live in Redis: count its memory too.
            let in_redis = after.saturating_sub(before) as f64 / n as f64;
            notes.push(format!(
                "{}: {in_redis:.0} B/task in Redis (INFO memory used_memory) + {per_task:.0} B/task in the server",
                k.name()
            ));
            per_task += in_redis;
        }
        say(format!(
            "{}: {n} tasks in {:.1}s; RSS {rss0} → {rss1} KiB (peak {hwm}); {per_task:.0} B/task",
            k.name(),
            fill.elapsed.as_secs_f64()
        ));
        if k == Kind::McpTasksRedis {
            RedisCounts::reset(o)?;
        }
        let gets = {
            let (c2, ids) = (client.clone(), ids.clone());
            closed_loop(64, Stop::After(o.get_for), move |i| {
                let (c, ids) = (c2.clone(), ids.clone());
                async move {
                    let id =
                        &ids[Rng::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7).below(ids.len())];
                    let seen: mcp_tasks_bench::driver::Seen =
                        c.call("tasks/get", &get_params(id)).await?;
                    match (seen.status.as_deref(), seen.task_text().map(str::len)) {
                        (Some("completed"), Some(STORED_RESULT_SIZE)) => Ok(1),
                        other => Err(format!("tasks/get saw {other:?}").into()),
                    }
                }
            })
            .await?
        };
        say(format!("{}: {:.0} gets/s", k.name(), gets.per_sec()));
        if k == Kind::McpTasksRedis {
            let mut counts = RedisCounts::default();
            counts.read(o, &gets);
            r.redis.push((format!("tasks/get, {n} stored"), counts));
        }
        drop(client);
        conn.close().await;
        floor.round(o).await?;
        mem_row.values.push((k, per_task));
        get_row.values.push((k, gets.per_sec()));
        p99_row.values.push((k, gets.quantile_us(0.99)));
        fill_row.values.push((k, fill.per_sec()));
        r.raw.insert(format!("store/{}", k.name()), json!({"stored": n, "rss_before_kib": rss0, "rss_after_kib": rss1, "peak_kib": hwm, "bytes_per_task": per_task, "fill_secs": fill.elapsed.as_secs_f64(), "fill_per_sec": fill.per_sec(), "gets_per_sec": gets.per_sec(), "get_p50_us": gets.quantile_us(0.5), "get_p99_us": gets.quantile_us(0.99)}));
    }
    let floor = floor.finish(r, "store/floor".into()).await;
    get_row.floor = Some(floor.per_sec);
    p99_row.floor = Some(floor.p99_us);
    fill_row.floor = Some(floor.per_sec);
    get_row.note = notes.join("; ");
    mem_row.note = get_row.note.clone();
    r.rows.extend([get_row, p99_row, fill_row, mem_row]);
    Ok(())
}

/// Redis's `used_memory` in bytes, for the `mcp-redis` server.
fn redis_used_memory(o: &Opts, k: Kind) -> Option<u64> {
    if k != Kind::McpTasksRedis {
        return None;
    }
    let info = o.redis.as_ref()?.info("memory");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

fn fmt(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(v) if v.is_nan() => "—".into(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn print_table(o: &Opts, r: &Report) {
    let kinds = &o.servers;
    let mut head = format!("{:<44} {:>8} {:>10}", "metric", "unit", "floor");
    for k in kinds {
        head.push_str(&format!(" {:>10}", k.name()));
    }
    let two = kinds.contains(&Kind::McpTasks) && kinds.contains(&Kind::Rmcp);
    if two {
        head.push_str(&format!(" {:>9}", "mcp/rmcp"));
    }
    for k in kinds {
        head.push_str(&format!(
            " {:>12}",
            format!(
                "{}×floor",
                if *k == Kind::McpTasks {
                    "mcp"
                } else {
                    k.name()
                }
            )
        ));
    }
    println!("{head}");
    println!("{}", "-".repeat(head.chars().count()));
    for row in &r.rows {
        let mut line = format!("{:<44} {:>8} {:>10}", row.metric, row.unit, fmt(row.floor));
        for k in kinds {
            line.push_str(&format!(" {:>10}", fmt(row.value(*k))));
        }
        if two {
            let ratio = match (row.value(Kind::McpTasks), row.value(Kind::Rmcp)) {
                (Some(a), Some(b)) => Some(a / b),
                _ => None,
            };
            line.push_str(&format!(" {:>9}", fmt(ratio)));
        }
        for k in kinds {
            line.push_str(&format!(" {:>12}", fmt(row.x_floor(*k))));
        }
        println!("{line}");
        if !row.note.is_empty() {
            println!("    ({})", row.note);
        }
    }
    println!();
    println!(
        "mcp/rmcp: the two figures divided (for /s higher is better; for µs and bytes lower is better)."
    );
    println!(
        "×floor: time per operation ÷ time per bare JSON-RPC round trip of the echo server on the same"
    );
    println!(
        "transport at the same concurrency (latency rows: the same percentile). 1.0 = the transport's own cost."
    );
    println!(
        "Each row's floor is measured in rounds interleaved with that row's own rounds (the median round counts)."
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    started();
    let o = parse_opts()?;
    // The stdio servers are sibling binaries; `cargo run` builds only this one.
    if let Ok(cargo) = std::env::var("CARGO") {
        let release = o.bin_dir.ends_with("release");
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "mcp-tasks-bench", "--bins"]);
        if release {
            cmd.arg("--release");
        }
        if !cmd.status()?.success() {
            return Err("building the server binaries failed".into());
        }
    }
    if !o.bin_dir.ends_with("release") {
        eprintln!("warning: not a release build; figures mean little (use --release)");
    }
    let mut o = o;
    if o.servers.contains(&Kind::McpTasksRedis) {
        say("starting redis-server (testkit/redis/install.sh installs it, pinned)");
        o.redis = Some(Arc::new(mcp_tasks_testkit::redis::RedisServer::start()));
    }
    let o = o;
    let mut r = Report::default();
    let has = |s: &str| o.scenarios.iter().any(|x| x == s);
    for &t in &o.transports {
        if has("inline") {
            inline(&o, t, &mut r).await?;
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
        if has("lifecycle") {
            lifecycle(&o, t, &mut r).await?;
        }
    }
    for &t in &task_transports {
        if has("elicit") {
            elicit(&o, t, &mut r).await?;
        }
    }
    if has("store") {
        store(&o, &mut r).await?;
    }
    if has("scale") && o.servers.contains(&Kind::McpTasks) {
        scale(&o, &mut r).await?;
    }
    let total = started().elapsed();
    println!();
    print_table(&o, &r);
    if !r.redis.is_empty() {
        println!("\nmcp-redis: Redis's own INFO commandstats (commands inside scripts included):");
        for (scenario, counts) in &r.redis {
            println!("  {scenario}: {}", counts.describe());
        }
    }
    println!("\ntotal run time: {:.1}s", total.as_secs_f64());
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let mut v =
                json!({ "metric": row.metric.trim(), "unit": row.unit, "floor": row.floor });
            for (k, x) in &row.values {
                v[k.name()] = json!(x);
                v[format!("{}_x_floor", k.name())] = json!(row.x_floor(*k));
            }
            if let (Some(a), Some(b)) = (row.value(Kind::McpTasks), row.value(Kind::Rmcp)) {
                v["mcp_tasks_over_rmcp"] = json!(a / b);
            }
            if !row.note.is_empty() {
                v["note"] = json!(row.note);
            }
            v
        })
        .collect();
    let doc = json!({
        "generated_by": "mcp-tasks-bench",
        "rmcp_version": "3.9.0",
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "total_secs": total.as_secs_f64(),
        "settings": { "rounds": o.rounds, "round_secs": o.round.as_secs_f64(), "lifecycle_tasks": o.lifecycle_tasks, "elicit_tasks": o.elicit_tasks, "stored": o.stored, "stored_large": o.stored_large, "result_bytes": RESULT_SIZE, "stored_result_bytes": STORED_RESULT_SIZE },
        "rows": rows,
        "raw": r.raw,
        "redis_commands": r.redis.iter().map(|(s, c)| (s.clone(), c.json())).collect::<serde_json::Map<_, _>>(),
    });
    if let Some(dir) = o.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&o.out, serde_json::to_string_pretty(&doc)?)?;
    println!("results: {}", o.out.display());
    Ok(())
}
