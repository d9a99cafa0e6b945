//! Many stored tasks (completed, small results): resident memory per task, then `tasks/get`
//! throughput over random stored ids.

use super::{
    Floor, STORED_RESULT_SIZE, figures, fill, fill_window, random_gets, same_round_ratios,
    stored_task_params, wait_completed,
};
use crate::conn::{Conn, echo_op};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, say};
use crate::store_counts::{StoreCounts, redis_used_memory};
use mcp_tasks_bench::driver::{Error, task_lifecycle};
use mcp_tasks_bench::measure::{
    Sample, Stop, closed_loop, cpu_and_switches, memory_kib, written_bytes,
};
use mcp_tasks_bench::servers::Kind;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// One server of the scenario, open for the whole of it.
struct Server {
    k: Kind,
    conn: Conn,
    pid: u32,
    rss0: u64,
    redis_mem0: Option<u64>,
    ids: Vec<String>,
    fills: Vec<Sample>,
    gets: Vec<Sample>,
    /// CPU (ns) and context switches of the server and of the bench, and bytes the server
    /// wrote, summed over its fill rounds.
    server_cpu: (u64, u64),
    bench_cpu: (u64, u64),
    written: u64,
}

/// Many stored tasks (completed, small results): resident memory per task, then `tasks/get`
/// throughput over random stored ids. Always over stdio (the server's memory is its process's).
///
/// Every server is started first, and they create their tasks in alternating rounds (then read
/// them in alternating rounds), each figure the median of its rounds: a fill of 20,000 tasks
/// lasts well under a second, and the machine's speed moves more than that between one server's
/// turn and the next's.
pub async fn store(o: &Opts, r: &mut Report) -> Result<(), Error> {
    let t = Transport::Stdio;
    let rounds = o.task_rounds.max(1);
    let mut mem_row = Row::empty(
        format!("resident memory per stored task (N={})", o.stored),
        "bytes",
        None,
    );
    let mut get_row = Row::empty(
        format!("tasks/get, {} stored, {}, c=64", o.stored, t.name()),
        "gets/s",
        Some(true),
    );
    let mut p99_row = Row::empty("  latency p99".into(), "µs", Some(false));
    let mut fill_row = Row::empty(
        format!("creating those tasks, {}, c=64", t.name()),
        "tasks/s",
        Some(true),
    );
    let mut notes = Vec::new();
    let mut floor = Floor::open(t, 64, o).await?;
    let create = stored_task_params();
    let mut servers = Vec::new();
    for &k in &o.servers {
        let conn = Conn::open(k, t, o).await?;
        let pid = conn.pid().ok_or("no pid")?;
        let client = conn.client.clone();
        // Warm up (allocator pools, lazily built state), then take the baseline.
        closed_loop(8, Stop::Count(2_000), echo_op(&client, k)).await?;
        {
            let cr = create.clone();
            closed_loop(8, Stop::Count(200), move |_| {
                let (c, cr) = (client.clone(), cr.clone());
                async move { task_lifecycle(&c, &cr, STORED_RESULT_SIZE).await }
            })
            .await?;
        }
        servers.push(Server {
            k,
            conn,
            pid,
            rss0: 0,
            redis_mem0: None,
            ids: Vec::with_capacity(o.stored as usize),
            fills: Vec::new(),
            gets: Vec::new(),
            server_cpu: (0, 0),
            bench_cpu: (0, 0),
            written: 0,
        });
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for s in &mut servers {
        s.rss0 = memory_kib(s.pid).ok_or("no /proc status")?.0;
        s.redis_mem0 = redis_used_memory(o, s.k);
        StoreCounts::reset(o, s.k)?;
    }
    let turns = rounds * servers.len();
    let mut turn = 0;
    for (round, at) in rotation(rounds, servers.len()) {
        let Some(s) = servers.get_mut(at) else {
            floor.round(o).await?;
            continue;
        };
        let left = (rounds - round) as u64;
        let want = o.stored.saturating_sub(s.ids.len() as u64).div_ceil(left);
        // What is left of the budget, shared by the turns left.
        let within = fill_window(o) / (turns - turn) as u32;
        turn += 1;
        say(format!(
            "{}: storing {want} tasks (round {} of {rounds})",
            s.k.name(),
            round + 1
        ));
        let (server_before, written_before, bench_before) = (
            cpu_and_switches(s.pid),
            written_bytes(s.pid),
            cpu_and_switches(std::process::id()),
        );
        let (fill, ids) = fill(&s.conn.client, &create, want, within).await?;
        // Sums over the threads alive at each reading: a thread that exited meanwhile (an
        // idle blocking-pool thread) takes its share out of the second, so a difference
        // may come out below zero, read as none.
        if let (Some(s0), Some(s1)) = (server_before, cpu_and_switches(s.pid)) {
            s.server_cpu.0 += s1.0.saturating_sub(s0.0);
            s.server_cpu.1 += s1.1.saturating_sub(s0.1);
        }
        if let (Some(b0), Some(b1)) = (bench_before, cpu_and_switches(std::process::id())) {
            s.bench_cpu.0 += b1.0.saturating_sub(b0.0);
            s.bench_cpu.1 += b1.1.saturating_sub(b0.1);
        }
        if let (Some(w0), Some(w1)) = (written_before, written_bytes(s.pid)) {
            s.written += w1.saturating_sub(w0);
        }
        s.ids.extend(ids.iter().cloned());
        s.fills.push(fill);
    }
    for s in &mut servers {
        let all = Sample::merge(&s.fills);
        let n = all.ops.max(1) as f64;
        say(format!(
            "{}: creating, per task: server {:.1} µs CPU, {:.2} switches, {:.0} bytes written; bench {:.1} µs CPU, {:.2} switches",
            s.k.name(),
            s.server_cpu.0 as f64 / n / 1000.0,
            s.server_cpu.1 as f64 / n,
            s.written as f64 / n,
            s.bench_cpu.0 as f64 / n / 1000.0,
            s.bench_cpu.1 as f64 / n,
        ));
        if StoreCounts::counted(s.k) {
            let mut counts = StoreCounts::default();
            counts.read(o, s.k, &all);
            r.redis.push((
                format!(
                    "creating {} tasks (create + run + finish) ({})",
                    all.ops,
                    s.k.name()
                ),
                counts,
            ));
        }
        let n = s.ids.len();
        if (n as u64) < o.stored {
            notes.push(format!(
                "{} measured with {n} stored: creating more would overrun the run's time budget",
                s.k.name()
            ));
        }
        wait_completed(&s.conn.client, &s.ids).await?;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut stored = Vec::new();
    let mut fill_rounds = Vec::new();
    for s in &mut servers {
        let n = s.ids.len();
        let (rss1, hwm) = memory_kib(s.pid).ok_or("no /proc status")?;
        let mut per_task = (rss1.saturating_sub(s.rss0)) as f64 * 1024.0 / n as f64;
        if let (Some(before), Some(after)) = (s.redis_mem0, redis_used_memory(o, s.k)) {
            // The tasks live in Redis: count its memory too.
            let in_redis = after.saturating_sub(before) as f64 / n as f64;
            notes.push(format!(
                "{}: {in_redis:.0} B/task in Redis (INFO memory used_memory) + {per_task:.0} B/task in the server",
                s.k.name()
            ));
            per_task += in_redis;
        }
        say(format!(
            "{}: {n} tasks; RSS {} → {rss1} KiB (peak {hwm}); {per_task:.0} B/task",
            s.k.name(),
            s.rss0,
        ));
        mem_row.values.push((s.k, per_task));
        stored.push((rss1, hwm, per_task, Arc::new(std::mem::take(&mut s.ids))));
        StoreCounts::reset(o, s.k)?;
    }
    for (_, at) in rotation(rounds, servers.len()) {
        let Some(s) = servers.get_mut(at) else {
            floor.round(o).await?;
            continue;
        };
        let gets = random_gets(&s.conn.client, &stored[at].3, o.get_for / rounds as u32).await?;
        s.gets.push(gets);
    }
    for (s, (rss1, hwm, per_task, ids)) in servers.into_iter().zip(stored) {
        let (k, n) = (s.k, ids.len());
        let gets = figures(&s.gets);
        say(format!("{}: {:.0} gets/s", k.name(), gets.per_sec));
        if StoreCounts::counted(k) {
            let mut counts = StoreCounts::default();
            counts.read(o, k, &Sample::merge(&s.gets));
            r.redis
                .push((format!("tasks/get, {n} stored ({})", k.name()), counts));
        }
        s.conn.close().await;
        let fills = figures(&s.fills);
        get_row.values.push((k, gets.per_sec));
        p99_row.values.push((k, gets.p99_us));
        fill_row.values.push((k, fills.per_sec));
        let merged = Sample::merge(&s.fills);
        r.raw.insert(format!("store/{}", k.name()), json!({"stored": n, "rss_before_kib": s.rss0, "rss_after_kib": rss1, "peak_kib": hwm, "bytes_per_task": per_task, "fill_secs": merged.elapsed.as_secs_f64(), "fill_per_sec": fills.per_sec, "fill_rounds": s.fills.iter().map(Sample::per_sec).collect::<Vec<_>>(), "gets_per_sec": gets.per_sec, "get_rounds": s.gets.iter().map(Sample::per_sec).collect::<Vec<_>>(), "get_p50_us": gets.p50_us, "get_p99_us": gets.p99_us}));
        fill_rounds.push((k, s.fills));
    }
    // Each durable store beside the memory store, round by round.
    if let Some((note, figures)) = same_round_ratios(&fill_rounds) {
        fill_row.note = note;
        r.raw.insert("store/same_round".into(), figures);
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

/// The turns of `rounds` rounds of `servers` servers and the floor (the slot after the last
/// server): each round's order rotates, so that none always runs first.
fn rotation(rounds: usize, servers: usize) -> impl Iterator<Item = (usize, usize)> {
    let slots = servers + 1;
    (0..rounds).flat_map(move |round| (0..slots).map(move |j| (round, (j + round) % slots)))
}
