//! Does `tasks/get` stay as fast with many more tasks stored?

use super::{Floor, fill, fill_window, random_gets, spread, stored_task_params, wait_completed};
use crate::conn::Conn;
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, say};
use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::measure::median;
use mcp_tasks_bench::servers::Kind;
use serde_json::json;

/// Tasks stored when the `scale` scenario takes its first `tasks/get` figure.
const SCALE_BASE: u64 = 10_000;

/// Does `tasks/get` stay as fast with many more tasks stored? mcp-tasks (memory store) only, over
/// stdio: one server holds 10,000 completed tasks (small results), another `--stored-large` (as
/// many as the run's time budget allows), and `tasks/get` over random ids is measured on each in
/// alternating rounds (the median counts), so that the ratio survives a noisy machine.
pub async fn scale(o: &Opts, r: &mut Report) -> Result<(), Error> {
    let (k, t) = (Kind::McpTasks, Transport::Stdio);
    let create = stored_task_params();
    let mut servers = Vec::new();
    let mut note = String::new();
    for target in [SCALE_BASE.min(o.stored_large), o.stored_large] {
        let conn = Conn::open(k, t, o).await?;
        let client = conn.client.clone();
        say(format!("{}: storing {target} tasks (scale)", k.name()));
        let (_, ids) = fill(&client, &create, target, fill_window(o)).await?;
        if (ids.len() as u64) < target {
            note = format!(
                "measured with {} stored: creating more would overrun the run's time budget",
                ids.len()
            );
        }
        wait_completed(&client, &ids).await?;
        servers.push((conn, client, ids, Vec::new()));
    }
    let mut floor = Floor::open(t, 64, o).await?;
    for _ in 0..o.task_rounds {
        floor.round(o).await?;
        for (_, client, ids, samples) in servers.iter_mut() {
            let gets = random_gets(client, ids, o.get_for).await?;
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
        let (paired, lo, hi) = spread(ratios.clone());
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
