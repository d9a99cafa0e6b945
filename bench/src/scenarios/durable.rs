//! Durable tasks against plain ones, per store: the same task lifecycle (create, poll, result) of
//! `work` and of `work_durable` (the same body, `#[tool(durable)]`), in alternating rounds on
//! fresh servers over stdio, and each round's ratio (durable ÷ plain): the machine's slow and
//! fast spells divide out of a pair measured seconds apart.

use super::{RESULT_SIZE, spread};
use crate::conn::Conn;
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, say};
use mcp_tasks_bench::driver::{Error, call_params, task_lifecycle};
use mcp_tasks_bench::measure::{Sample, Stop, closed_loop, median};
use mcp_tasks_bench::servers::Kind;
use serde_json::json;
use std::sync::Arc;

/// The stores a durable task can be kept in.
const STORES: [Kind; 4] = [
    Kind::McpTasks,
    Kind::McpSqlite,
    Kind::McpTasksRedis,
    Kind::McpTasksPostgres,
];

pub async fn durable(o: &Opts, r: &mut Report) -> Result<(), Error> {
    say(format!(
        "durable against plain task lifecycle, stdio, 64 callers, {} tasks per round",
        o.lifecycle_tasks
    ));
    let size = format!(r#"{{"size":{RESULT_SIZE}}}"#);
    let plain: Arc<str> = call_params("work", &size).into();
    let durable: Arc<str> = call_params("work_durable", &size).into();
    let mut row = Row::empty(
        "durable ÷ plain task lifecycle, stdio, c=64".into(),
        "×",
        None,
    );
    let mut notes = Vec::new();
    let mut raw = serde_json::Map::new();
    for kind in STORES.into_iter().filter(|k| o.servers.contains(k)) {
        let (mut plains, mut durables) = (Vec::new(), Vec::new());
        for _ in 0..o.task_rounds {
            plains.push(round(o, kind, &plain).await?);
            durables.push(round(o, kind, &durable).await?);
        }
        let ratios: Vec<f64> = durables
            .iter()
            .zip(&plains)
            .map(|(d, p)| d.per_sec() / p.per_sec())
            .collect();
        let (mid, lo, hi) = spread(ratios.clone());
        let (p, d) = (
            median(plains.iter().map(Sample::per_sec).collect()),
            median(durables.iter().map(Sample::per_sec).collect()),
        );
        say(format!(
            "  {}: plain {p:.0}/s, durable {d:.0}/s, durable ÷ plain {mid:.2} ({lo:.2}-{hi:.2})",
            kind.name()
        ));
        row.values.push((kind, mid));
        notes.push(format!("{} {mid:.2} ({lo:.2}-{hi:.2})", kind.name()));
        raw.insert(
            kind.name().to_owned(),
            json!({"plain_per_sec": p, "durable_per_sec": d, "ratios": ratios}),
        );
    }
    if row.values.is_empty() {
        return Ok(());
    }
    r.rows.push(row.note(format!(
        "median of same-round ratios (range): {}",
        notes.join(", ")
    )));
    r.raw.insert("durable/stdio/c64".into(), raw.into());
    Ok(())
}

/// One round of `create` lifecycles on a fresh server of `kind`.
async fn round(o: &Opts, kind: Kind, create: &Arc<str>) -> Result<Sample, Error> {
    let conn = Conn::open(kind, Transport::Stdio, o).await?;
    let (client, create) = (conn.client.clone(), create.clone());
    let sample = closed_loop(64, Stop::Count(o.lifecycle_tasks), move |_| {
        let (c, create) = (client.clone(), create.clone());
        async move { task_lifecycle(&c, &create, RESULT_SIZE).await }
    })
    .await?;
    conn.close().await;
    Ok(sample)
}
