//! The scenarios, one per file, and what they share: the echo floor measured alongside, rounds on
//! fresh servers, filling a server with tasks and reading them back at random.

mod durable;
mod elicit;
mod inline;
mod lifecycle;
mod scale;
mod store;

pub use durable::durable;
pub use elicit::elicit;
pub use inline::inline;
pub use lifecycle::lifecycle;
pub use scale::scale;
pub use store::store;

use crate::conn::{Conn, echo_op};
use crate::opts::{Opts, Transport};
use crate::report::Report;
use crate::store_counts::StoreCounts;
use mcp_tasks_bench::driver::{self, Client, Error, get_params};
use mcp_tasks_bench::measure::{Rng, Sample, Stop, closed_loop, cpu_and_switches, median};
use mcp_tasks_bench::servers::Kind;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use crate::report::{Figures, RESULT_SIZE, STORED_RESULT_SIZE};

fn figures(rounds: &[Sample]) -> Figures {
    let all = Sample::merge(rounds);
    Figures {
        per_sec: median(rounds.iter().map(Sample::per_sec).collect()),
        p50_us: all.quantile_us(0.5),
        p99_us: all.quantile_us(0.99),
        trips_per_op: all.trips_per_op(),
    }
}

/// Each server's figures over its rounds.
fn figures_of(res: &[(Kind, Vec<Sample>)]) -> Vec<(Kind, Figures)> {
    res.iter().map(|(k, s)| (*k, figures(s))).collect()
}

/// The round trips per operation of each server, for a row's note: `mcp-tasks 3.00, rmcp 4.00`.
fn trips(figs: &[(Kind, Figures)]) -> String {
    figs.iter()
        .map(|(k, f)| format!("{} {:.2}", k.name(), f.trips_per_op))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each server's figures for the JSON document, the round trips under `trips_key`.
fn figures_json(figs: &[(Kind, Figures)], trips_key: &str) -> Value {
    json!(
        figs.iter()
            .map(|(k, f)| (
                k.name().to_owned(),
                json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, trips_key: f.trips_per_op})
            ))
            .collect::<serde_json::Map<_, _>>()
    )
}

/// The echo floor measured in the same window as a scenario's own rounds: one warmed-up echo
/// server on the scenario's transport, run for one round at the scenario's concurrency between
/// the scenario's rounds, so that a row's "× floor" divides by what the machine gave a bare
/// round trip while the row itself was measured (on a shared machine the floor moves 2-3× between
/// runs minutes apart).
pub struct Floor {
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
    spread(ratios)
}

/// Every other server's rate ÷ the memory store's (`mcp-tasks`) round by round (each pair ran in
/// the same round, minutes apart at most, so the machine's slow and fast spells divide out): a
/// row's note (`÷ mcp-tasks, median of 3 same-round ratios: mcp-sqlite 0.55 (0.49-0.60)`) and
/// the same figures for the JSON document, by server. `None` without mcp-tasks or another server.
fn same_round_ratios(rounds: &[(Kind, Vec<Sample>)]) -> Option<(String, Value)> {
    let (_, memory) = rounds.iter().find(|(k, _)| *k == Kind::McpTasks)?;
    let others: Vec<(Kind, (f64, f64, f64))> = rounds
        .iter()
        .filter(|(k, _)| *k != Kind::McpTasks)
        .map(|(k, samples)| (*k, paired_ratio(samples, memory)))
        .collect();
    if others.is_empty() {
        return None;
    }
    let note = others
        .iter()
        .map(|(k, (mid, lo, hi))| format!("{} {mid:.2} ({lo:.2}-{hi:.2})", k.name()))
        .collect::<Vec<_>>()
        .join(", ");
    let figures = others
        .iter()
        .map(|(k, (mid, lo, hi))| {
            let figure = json!({"median": mid, "lowest": lo, "highest": hi});
            (k.name().to_owned(), figure)
        })
        .collect::<serde_json::Map<_, _>>();
    let of = match memory.len() {
        1 => "the one same-round ratio".to_owned(),
        n => format!("median of {n} same-round ratios"),
    };
    Some((format!("÷ mcp-tasks, {of}: {note}"), Value::Object(figures)))
}

/// For rounds whose servers share the bench's process (`inproc`): the CPU time the process
/// spent a task (the bench's callers and the server together), how many of the machine's cores
/// that kept busy on average, and the switches a task, by server: a row's note (`process CPU a
/// task: mcp-tasks 34.2 µs on 1.78 cores, 1.52 switches; ...`) and the same figures for the JSON
/// document. A server whose rate falls with no more CPU a task is waiting, not working (its
/// cores figure says how much). `None` for rounds in child processes.
fn process_cpu(rounds: &[(Kind, Vec<Sample>)]) -> Option<(String, Value)> {
    let by_server: Vec<(Kind, (f64, f64, f64))> = rounds
        .iter()
        .filter_map(|(k, samples)| {
            let all = Sample::merge(samples);
            let (cpu_ns, switches) = all.process?;
            let ops = all.ops.max(1) as f64;
            let cores = cpu_ns as f64 / all.elapsed.as_nanos().max(1) as f64;
            Some((
                *k,
                (cpu_ns as f64 / 1e3 / ops, cores, switches as f64 / ops),
            ))
        })
        .collect();
    if by_server.is_empty() {
        return None;
    }
    let note = by_server
        .iter()
        .map(|(k, (us, cores, switches))| {
            format!(
                "{} {us:.1} µs on {cores:.2} cores, {switches:.2} switches",
                k.name()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let figures = by_server
        .iter()
        .map(|(k, (us, cores, switches))| {
            let figure =
                json!({"cpu_us_per_task": us, "cores": cores, "switches_per_task": switches});
            (k.name().to_owned(), figure)
        })
        .collect::<serde_json::Map<_, _>>();
    Some((
        format!("process CPU a task: {note}"),
        Value::Object(figures),
    ))
}

/// The median, lowest and highest of some ratios.
fn spread(ratios: Vec<f64>) -> (f64, f64, f64) {
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(ratios), lo, hi)
}

type OpFn = Arc<
    dyn Fn(Client, u64) -> Pin<Box<dyn Future<Output = Result<u32, Error>> + Send>> + Send + Sync,
>;

/// The kinds of server a task scenario runs on this transport (`mcp-redis`, `mcp-postgres`:
/// stdio only; `mcp-metrics`, `mcp-otel`: not in process).
fn task_kinds(o: &Opts, scenario: &str, t: Transport) -> Vec<Kind> {
    o.servers
        .iter()
        .copied()
        .filter(|k| k.runs_in(scenario))
        .filter(|k| !StoreCounts::counted(*k) || t == Transport::Stdio)
        .filter(|k| !k.child_process_only() || t != Transport::InProcess)
        .collect()
}

/// Runs `op` on a fresh server of each kind, `rounds` times, alternating the servers, with a round
/// of the echo floor (same transport, same concurrency) among them in every round; with what
/// Redis and Postgres counted for the `mcp-redis` and `mcp-postgres` runs.
async fn fresh_rounds(
    o: &Opts,
    scenario: &str,
    t: Transport,
    c: usize,
    stop: Stop,
    op: OpFn,
) -> Result<(Vec<(Kind, Vec<Sample>)>, Floor, Vec<(Kind, StoreCounts)>), Error> {
    let mut out: Vec<(Kind, Vec<Sample>)> = task_kinds(o, scenario, t)
        .iter()
        .map(|k| (*k, Vec::new()))
        .collect();
    let mut floor = Floor::open(t, c, o).await?;
    let mut counts: Vec<(Kind, StoreCounts)> = Vec::new();
    let in_process = t == Transport::InProcess;
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
            StoreCounts::reset(o, k)?;
            let before = in_process
                .then(|| cpu_and_switches(std::process::id()))
                .flatten();
            let mut s = closed_loop(c, stop, move |i| op2(client.clone(), i)).await?;
            // Sums over the threads alive at each reading, as in the store row: a thread that
            // exited meanwhile takes its share out of the second.
            if let (Some(b), Some(a)) = (before, cpu_and_switches(std::process::id())) {
                s.process = Some((a.0.saturating_sub(b.0), a.1.saturating_sub(b.1)));
            }
            if StoreCounts::counted(k) {
                if !counts.iter().any(|(kind, _)| *kind == k) {
                    counts.push((k, StoreCounts::default()));
                }
                if let Some((_, total)) = counts.iter_mut().find(|(kind, _)| *kind == k) {
                    total.read(o, k, &s);
                }
            }
            conn.close().await;
            out[idx].1.push(s);
        }
    }
    Ok((out, floor, counts))
}

/// The `tools/call` params that create a task whose result is [`STORED_RESULT_SIZE`] bytes.
fn stored_task_params() -> Arc<str> {
    driver::call_params("work", &format!(r#"{{"size":{STORED_RESULT_SIZE}}}"#)).into()
}

/// Creates up to `target` tasks at 64 callers, stopping early when `within` has passed; the
/// sample and the ids created.
async fn fill(
    client: &Client,
    create: &Arc<str>,
    target: u64,
    within: Duration,
) -> Result<(Sample, Arc<Vec<String>>), Error> {
    let ids = Arc::new(std::sync::Mutex::new(Vec::with_capacity(target as usize)));
    let (c2, cr, ids2) = (client.clone(), create.clone(), ids.clone());
    let sample = closed_loop(64, Stop::CountWithin(target, within), move |_| {
        let (c, cr, ids) = (c2.clone(), cr.clone(), ids2.clone());
        async move {
            let id = driver::create_task(&c, &cr).await?;
            ids.lock().expect("ids").push(id);
            Ok(1)
        }
    })
    .await?;
    let ids = std::mem::take(&mut *ids.lock().expect("ids"));
    Ok((sample, Arc::new(ids)))
}

/// `tasks/get` at 64 callers over random ids of completed tasks, for `for_`; fails on any task
/// not completed with its [`STORED_RESULT_SIZE`] bytes.
async fn random_gets(
    client: &Client,
    ids: &Arc<Vec<String>>,
    for_: Duration,
) -> Result<Sample, Error> {
    let (c2, ids) = (client.clone(), ids.clone());
    closed_loop(64, Stop::After(for_), move |i| {
        let (c, ids) = (c2.clone(), ids.clone());
        async move {
            let id = &ids[Rng::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7).below(ids.len())];
            let seen: driver::Seen = c.call("tasks/get", &get_params(id)).await?;
            match (seen.status.as_deref(), seen.task_text().map(str::len)) {
                (Some("completed"), Some(STORED_RESULT_SIZE)) => Ok(1),
                other => Err(format!("tasks/get saw {other:?}").into()),
            }
        }
    })
    .await
}

/// Waits until the last (up to 64) of these tasks have completed: every task completes at once,
/// the last ones created may not have yet.
async fn wait_completed(client: &Client, ids: &[String]) -> Result<(), Error> {
    for id in ids.iter().rev().take(64) {
        driver::poll_until(client, &get_params(id), "completed").await?;
    }
    Ok(())
}

/// How long a `fill` may take: what is left of the run's budget less 40 s for what follows
/// (reading, then the next server), and at least 30 s.
fn fill_window(o: &Opts) -> Duration {
    o.budget
        .saturating_sub(crate::report::started().elapsed())
        .saturating_sub(Duration::from_secs(40))
        .max(Duration::from_secs(30))
}
