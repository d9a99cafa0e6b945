//! Inline `tools/call` round trips at 1 and 64 callers; the floor runs alongside.

use super::{Figures, figures, paired_ratio};
use crate::conn::{Conn, echo_op};
use crate::opts::{Opts, Transport};
use crate::report::{Report, Row, Stat, say};
use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::measure::{Sample, Stop, closed_loop};
use mcp_tasks_bench::servers::Kind;
use serde_json::json;

/// Inline `tools/call` round trips at 1 and 64 callers; the floor runs alongside.
pub async fn inline(o: &Opts, t: Transport, r: &mut Report) -> Result<(), Error> {
    let mut kinds = vec![Kind::Floor];
    kinds.extend(
        (o.servers.iter().copied())
            .filter(|k| k.runs_in("inline"))
            .filter(|k| !k.child_process_only() || t != Transport::InProcess),
    );
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
        let (floor, servers) = (&figs[0].1, &figs[1..]);
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
        let metric = format!("inline tools/call, {}, c={c}", t.name());
        r.rows.extend([
            Row::of(metric, "calls/s", Stat::PerSec, floor, servers).note(note),
            Row::of("  latency p50", "µs", Stat::P50, floor, servers),
            Row::of("  latency p99", "µs", Stat::P99, floor, servers),
        ]);
        r.raw.insert(
            format!("inline/{}/c{c}", t.name()),
            json!(
                figs.iter()
                    .zip(&samples)
                    .map(|((k, f), rounds)| (
                        k.name().to_owned(),
                        json!({"per_sec": f.per_sec, "p50_us": f.p50_us, "p99_us": f.p99_us, "rounds": rounds.iter().map(Sample::per_sec).collect::<Vec<_>>()})
                    ))
                    .collect::<serde_json::Map<_, _>>()
            ),
        );
    }
    Ok(())
}
