//! Task lifecycle (create → poll → completed) at 64 callers with the tool durable
//! (`#[tool(durable)]`: the task keeps its arguments and caller to run again elsewhere) against
//! the same tool not durable, on each mcp-tasks store, in one run.

use super::{OpFn, RESULT_SIZE, figures_json, figures_of, fresh_rounds, paired_ratio, trips};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, Stat, say};
use mcp_tasks_bench::driver::{Error, call_params, task_lifecycle};
use mcp_tasks_bench::measure::{Sample, Stop};
use mcp_tasks_bench::servers::Kind;
use std::sync::Arc;

/// The lifecycle of `work_durable` beside `work`'s, on the mcp-tasks servers of the run; the
/// note gives durable ÷ not durable, round by round, per server.
pub async fn durable(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
    let ours = |k: &Kind| !matches!(k, Kind::Floor | Kind::Rmcp | Kind::RmcpBridge);
    let mut o = o.clone();
    o.servers.retain(ours);
    if o.servers.is_empty() {
        return Ok(());
    }
    say(format!(
        "task lifecycle, durable against not, {}, 64 callers, {} tasks per round",
        t.name(),
        o.lifecycle_tasks
    ));
    let (plain, plain_floor, _) = rounds(&o, t, "work").await?;
    plain_floor
        .finish(r, format!("durable/{}/c64/not_durable_floor", t.name()))
        .await;
    let (durable, floor, _) = rounds(&o, t, "work_durable").await?;
    let floor = floor
        .finish(r, format!("durable/{}/c64/floor", t.name()))
        .await;
    let figs = figures_of(&durable);
    let ratios: Vec<String> = durable
        .iter()
        .filter_map(|(k, d)| {
            let (_, p) = plain.iter().find(|(kind, _)| kind == k)?;
            let (mid, lo, hi) = paired_ratio(d, p);
            Some(format!("{} {mid:.2} ({lo:.2}-{hi:.2})", k.name()))
        })
        .collect();
    let note = format!(
        "durable ÷ not durable, same round: {}; round trips per task: {}",
        ratios.join(", "),
        trips(&figs)
    );
    r.rows.extend([
        Row::of(
            format!("task lifecycle durable, {}, c=64", t.name()),
            "tasks/s",
            Stat::PerSec,
            &floor,
            &figs,
        )
        .note(note),
        Row::of("  latency p50", "µs", Stat::P50, &floor, &figs),
    ]);
    r.raw.insert(
        format!("durable/{}/c64", t.name()),
        figures_json(&figs, "trips_per_task"),
    );
    r.raw.insert(
        format!("durable/{}/c64/not_durable", t.name()),
        figures_json(&figures_of(&plain), "trips_per_task"),
    );
    Ok(())
}

/// Rounds of the lifecycle of `tool` on fresh servers.
async fn rounds(
    o: &Opts,
    t: Transport,
    tool: &str,
) -> Result<
    (
        Vec<(Kind, Vec<Sample>)>,
        super::Floor,
        Vec<(Kind, crate::store_counts::StoreCounts)>,
    ),
    Error,
> {
    let create: Arc<str> = call_params(tool, &format!(r#"{{"size":{RESULT_SIZE}}}"#)).into();
    let op: OpFn = Arc::new(move |c, _| {
        let create = create.clone();
        Box::pin(async move { task_lifecycle(&c, &create, RESULT_SIZE).await })
    });
    fresh_rounds(o, "lifecycle", t, 64, Stop::Count(o.lifecycle_tasks), op).await
}
