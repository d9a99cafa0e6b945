//! Task lifecycle (create → poll → completed) at 64 callers.

use super::{
    OpFn, RESULT_SIZE, figures_json, figures_of, fresh_rounds, process_cpu, same_round_ratios,
    trips,
};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, Stat, say};
use mcp_tasks_bench::driver::{Error, call_params, task_lifecycle};
use mcp_tasks_bench::measure::Stop;
use std::sync::Arc;

/// Task lifecycle (create → poll → completed) at 64 callers.
pub async fn lifecycle(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
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
    for (k, counts) in counts {
        if counts.ops > 0 {
            r.redis.push((
                format!("task lifecycle, {}, c=64 ({})", t.name(), k.name()),
                counts,
            ));
        }
    }
    let figs = figures_of(&res);
    let metric = format!("task lifecycle, {}, c=64", t.name());
    let mut note = format!("round trips per task: {}", trips(&figs));
    // Each other server beside the memory store, round by round: the row's own figures are
    // medians of rounds of 5,000 tasks, a fraction of a second each, which the machine's spells
    // move by half.
    if let Some((ratios, figures)) = same_round_ratios(&res) {
        note = format!("{note}; {ratios}");
        r.raw
            .insert(format!("lifecycle/{}/c64/same_round", t.name()), figures);
    }
    // In process, what the whole process spent a task and how busy it kept the cores: a store
    // slower by its CPU and one slower by waiting (its cores idle) read apart.
    if let Some((cpu, figures)) = process_cpu(&res) {
        note = format!("{note}; {cpu}");
        r.raw
            .insert(format!("lifecycle/{}/c64/process_cpu", t.name()), figures);
    }
    r.rows.extend([
        Row::of(metric, "tasks/s", Stat::PerSec, &floor, &figs).note(note),
        Row::of("  latency p50", "µs", Stat::P50, &floor, &figs),
    ]);
    r.raw.insert(
        format!("lifecycle/{}/c64", t.name()),
        figures_json(&figs, "trips_per_task"),
    );
    Ok(())
}
