//! Many stored tasks (completed, small results): resident memory per task, then `tasks/get`
//! throughput over random stored ids.

use super::{
    Floor, STORED_RESULT_SIZE, fill, fill_window, random_gets, stored_task_params, wait_completed,
};
use crate::conn::{Conn, echo_op};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, say};
use crate::store_counts::{StoreCounts, redis_used_memory};
use mcp_tasks_bench::driver::{Error, task_lifecycle};
use mcp_tasks_bench::measure::{Stop, closed_loop, cpu_and_switches, memory_kib, written_bytes};
use serde_json::json;
use std::time::Duration;

/// Many stored tasks (completed, small results): resident memory per task, then `tasks/get`
/// throughput over random stored ids. Always over stdio (the server's memory is its process's).
pub async fn store(o: &Opts, r: &mut Report) -> Result<(), Error> {
    let t = Transport::Stdio;
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
        let create = stored_task_params();
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
        let redis_mem0 = redis_used_memory(o, k);
        StoreCounts::reset(o, k)?;
        let server_before = cpu_and_switches(pid);
        let written_before = written_bytes(pid);
        let bench_before = cpu_and_switches(std::process::id());
        let (fill, ids) = fill(&client, &create, o.stored, fill_window(o)).await?;
        if let (Some(s0), Some(s1), Some(b0), Some(b1), Some(w0), Some(w1)) = (
            server_before,
            cpu_and_switches(pid),
            bench_before,
            cpu_and_switches(std::process::id()),
            written_before,
            written_bytes(pid),
        ) {
            let n = fill.ops.max(1) as f64;
            // Per task. The sums are over the threads alive at each reading: a thread that
            // exited meanwhile (an idle blocking-pool thread) takes its share out of the
            // second, so a difference may come out below zero, read as none.
            let per_task = |before: u64, after: u64| after.saturating_sub(before) as f64 / n;
            say(format!(
                "{}: creating, per task: server {:.1} µs CPU, {:.2} switches, {:.0} bytes written; bench {:.1} µs CPU, {:.2} switches",
                k.name(),
                per_task(s0.0, s1.0) / 1000.0,
                per_task(s0.1, s1.1),
                per_task(w0, w1),
                per_task(b0.0, b1.0) / 1000.0,
                per_task(b0.1, b1.1),
            ));
        }
        if StoreCounts::counted(k) {
            let mut counts = StoreCounts::default();
            counts.read(o, k, &fill);
            r.redis.push((
                format!(
                    "creating {} tasks (create + run + finish) ({})",
                    fill.ops,
                    k.name()
                ),
                counts,
            ));
        }
        let n = ids.len();
        if (n as u64) < o.stored {
            notes.push(format!(
                "{} measured with {n} stored: creating more would overrun the run's time budget",
                k.name()
            ));
        }
        wait_completed(&client, &ids).await?;
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
        StoreCounts::reset(o, k)?;
        let gets = random_gets(&client, &ids, o.get_for).await?;
        say(format!("{}: {:.0} gets/s", k.name(), gets.per_sec()));
        if StoreCounts::counted(k) {
            let mut counts = StoreCounts::default();
            counts.read(o, k, &gets);
            r.redis
                .push((format!("tasks/get, {n} stored ({})", k.name()), counts));
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
