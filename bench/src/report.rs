//! What a run tells: progress lines on stderr, then the table on stdout and the JSON document.

use crate::opts::Opts;
use crate::store_counts::StoreCounts;
use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::servers::Kind;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The size of the `work` tool's result in the task scenarios.
pub const RESULT_SIZE: usize = 1024;
/// The text of each stored task's result in the `store` and `scale` scenarios: a small result,
/// so that the memory per task is what the server keeps about a task, not the payload.
pub const STORED_RESULT_SIZE: usize = 16;

/// Figures for one server in one cell of the table.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub trips_per_op: f64,
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Row {
    pub metric: String,
    pub unit: &'static str,
    pub floor: Option<f64>,
    pub values: Vec<(Kind, f64)>,
    /// How to turn a value into "× floor": `Some(true)` = floor/value (rates), `Some(false)` =
    /// value/floor (times), `None` = no floor.
    pub rate: Option<bool>,
    pub note: String,
}

/// Which of a cell's [`Figures`] a row shows.
#[derive(Debug, Clone, Copy)]
pub enum Stat {
    PerSec,
    P50,
    P99,
}

impl Stat {
    fn of(self, f: &Figures) -> f64 {
        match self {
            Stat::PerSec => f.per_sec,
            Stat::P50 => f.p50_us,
            Stat::P99 => f.p99_us,
        }
    }
}

impl Row {
    /// A row with no figures yet (filled server by server).
    pub fn empty(metric: String, unit: &'static str, rate: Option<bool>) -> Row {
        Row {
            metric,
            unit,
            floor: None,
            values: vec![],
            rate,
            note: String::new(),
        }
    }

    /// A row of one statistic of each server's figures, against the floor's same statistic.
    pub fn of(
        metric: impl Into<String>,
        unit: &'static str,
        stat: Stat,
        floor: &Figures,
        figs: &[(Kind, Figures)],
    ) -> Row {
        Row {
            metric: metric.into(),
            unit,
            floor: Some(stat.of(floor)),
            values: figs.iter().map(|(k, f)| (*k, stat.of(f))).collect(),
            rate: Some(matches!(stat, Stat::PerSec)),
            note: String::new(),
        }
    }

    /// The same row with this note under it.
    pub fn note(self, note: String) -> Row {
        Row { note, ..self }
    }

    pub fn value(&self, k: Kind) -> Option<f64> {
        self.values.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v)
    }

    /// This row's figure for `k` ÷ plain mcp-tasks's.
    pub fn over_mcp_tasks(&self, k: Kind) -> Option<f64> {
        Some(self.value(k)? / self.value(Kind::McpTasks)?)
    }

    pub fn x_floor(&self, k: Kind) -> Option<f64> {
        let (f, v) = (self.floor?, self.value(k)?);
        match self.rate? {
            true => Some(f / v),
            false => Some(v / f),
        }
    }
}

/// Everything a run measured.
#[derive(Default)]
pub struct Report {
    pub rows: Vec<Row>,
    /// Redis commands (the `mcp-redis` server) or Postgres statements (`mcp-postgres`) per
    /// operation, by scenario.
    pub redis: Vec<(String, StoreCounts)>,
    pub raw: serde_json::Map<String, Value>,
}

/// A progress line on stderr, with the time since the run started.
pub fn say(msg: impl AsRef<str>) {
    eprintln!(
        "[bench {:>6.1}s] {}",
        started().elapsed().as_secs_f64(),
        msg.as_ref()
    );
}

/// When the run started (the first call).
pub fn started() -> &'static Instant {
    static T: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    T.get_or_init(Instant::now)
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

/// The table, the Redis command counts and the run time, on stdout.
pub fn print(o: &Opts, r: &Report, total: Duration) {
    println!();
    print_table(o, r);
    if !r.redis.is_empty() {
        println!(
            "\nmcp-redis: Redis's own INFO commandstats (commands inside scripts included); mcp-postgres: pg_stat_statements:"
        );
        for (scenario, counts) in &r.redis {
            println!("  {scenario}: {}", counts.describe());
        }
    }
    println!("\ntotal run time: {:.1}s", total.as_secs_f64());
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
    let telemetry = telemetry_kinds(kinds);
    for k in &telemetry {
        head.push_str(&format!(" {:>12}", over_mcp(*k)));
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
        for k in &telemetry {
            line.push_str(&format!(" {:>12}", fmt(row.over_mcp_tasks(*k))));
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
    if !telemetry.is_empty() {
        println!(
            "mcp-metrics/mcp, mcp-otel/mcp: the figure with telemetry on ÷ plain mcp-tasks's, same run (the cost of it: below 1 for /s, above 1 for µs)."
        );
    }
    if kinds.contains(&Kind::McpOtel) {
        println!(
            "mcp-otel's sampler: {}; requests {}.",
            otel_sampler(),
            if o.traceparent {
                "carry a sampled `traceparent`"
            } else {
                "carry no `traceparent`"
            }
        );
    }
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

/// The sampler the `mcp-otel` server runs with, as the environment it inherits from the bench
/// names it (`Traces::otlp` reads `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`).
fn otel_sampler() -> String {
    match std::env::var("OTEL_TRACES_SAMPLER") {
        Ok(sampler) => match std::env::var("OTEL_TRACES_SAMPLER_ARG") {
            Ok(arg) => format!("OTEL_TRACES_SAMPLER={sampler} OTEL_TRACES_SAMPLER_ARG={arg}"),
            Err(_) => format!("OTEL_TRACES_SAMPLER={sampler}"),
        },
        Err(_) => "every span exported (no OTEL_TRACES_SAMPLER)".into(),
    }
}

/// The telemetry kinds of the run that can be divided by plain mcp-tasks's figures.
fn telemetry_kinds(kinds: &[Kind]) -> Vec<Kind> {
    if !kinds.contains(&Kind::McpTasks) {
        return Vec::new();
    }
    kinds.iter().copied().filter(|k| k.is_telemetry()).collect()
}

/// The column of `k`'s figures ÷ plain mcp-tasks's.
fn over_mcp(k: Kind) -> String {
    format!("{}/mcp", k.name())
}

/// Writes the JSON document (`--out`) and says where.
pub fn write_json(o: &Opts, r: &Report, total: Duration) -> Result<(), Error> {
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
            for k in telemetry_kinds(&o.servers) {
                if let Some(ratio) = row.over_mcp_tasks(k) {
                    v[format!("{}_over_mcp_tasks", k.name())] = json!(ratio);
                }
            }
            if !row.note.is_empty() {
                v["note"] = json!(row.note);
            }
            v
        })
        .collect();
    let doc = json!({
        "generated_by": "mcp-tasks-bench",
        "rmcp_version": "3.11.0",
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "total_secs": total.as_secs_f64(),
        "settings": { "rounds": o.rounds, "round_secs": o.round.as_secs_f64(), "lifecycle_tasks": o.lifecycle_tasks, "elicit_tasks": o.elicit_tasks, "stored": o.stored, "stored_large": o.stored_large, "result_bytes": RESULT_SIZE, "stored_result_bytes": STORED_RESULT_SIZE, "traceparent": o.traceparent, "otel_sampler": o.servers.contains(&Kind::McpOtel).then(otel_sampler) },
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
