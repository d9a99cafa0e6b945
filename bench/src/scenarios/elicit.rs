//! In-task elicitation: one caller (latency) and 64 callers (throughput).

use super::{OpFn, figures_json, figures_of, fresh_rounds, process_cpu, trips};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, Stat, say};
use mcp_tasks_bench::driver::{Error, call_params, elicitation};
use mcp_tasks_bench::measure::Stop;
use std::sync::Arc;

/// In-task elicitation: one caller (latency) and 64 callers (throughput).
pub async fn elicit(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
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
    for (k, counts) in counts {
        if counts.ops > 0 {
            r.redis.push((
                format!("elicitation in a task, {}, c=1 ({})", t.name(), k.name()),
                counts,
            ));
        }
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
    let (f1, f64_) = (figures_of(&one), figures_of(&many));
    let (c1, c64) = (
        format!("elicitation in a task, {}, c=1", t.name()),
        format!("elicitation in a task, {}, c=64", t.name()),
    );
    let mut throughput = Row::of(c64, "tasks/s", Stat::PerSec, &floor64, &f64_);
    // In process, what the whole process spent an elicitation and how busy it kept the cores.
    if let Some((cpu, figures)) = process_cpu(&many) {
        throughput = throughput.note(cpu);
        r.raw
            .insert(format!("elicit/{}/c64/process_cpu", t.name()), figures);
    }
    r.rows.extend([
        Row::of(c1, "µs p50", Stat::P50, &floor1, &f1)
            .note(format!("round trips per elicitation: {}", trips(&f1))),
        Row::of("  latency p99", "µs", Stat::P99, &floor1, &f1),
        throughput,
    ]);
    r.raw.insert(
        format!("elicit/{}/c1", t.name()),
        figures_json(&f1, "trips"),
    );
    r.raw.insert(
        format!("elicit/{}/c64", t.name()),
        figures_json(&f64_, "trips"),
    );
    Ok(())
}
