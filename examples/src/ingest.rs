//! `ingest`: a durable task tool. Its body may run more than once (its process killed, or drained,
//! and another instance sharing the store taking the task over), so it is written to be run again:
//! its one question is asked once (a re-run gets the kept answer), and it goes on from its last
//! checkpoint instead of starting over.

use mcp_tasks_runtime::{ElicitOutcome, ToolContext, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Whether to go ahead.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// `true` to ingest the items, `false` to call it off.
    pub confirm: bool,
}

/// What a finished `ingest` did.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ingested {
    /// How many items were ingested (all of them).
    pub items: u32,
    /// Which run of the task finished it: 1 unless an earlier run's process stopped.
    pub attempt: u32,
    /// How many items an earlier run had done before this run began (its last checkpoint).
    pub resumed_from: u32,
}

/// Ingest `items` items, `item_ms` milliseconds each, after the user confirms. Durable: when the
/// server running it stops, another instance on the same store goes on from the last item done,
/// without asking again.
#[tool(task_support = "required", durable, poll_interval = "250ms")]
pub async fn ingest(
    ctx: ToolContext,
    /// How many items to ingest.
    items: u32,
    /// How long each item takes, in milliseconds.
    item_ms: u64,
) -> Result<Ingested, ToolError> {
    let attempt = ctx.attempt();
    let resumed_from = ctx.resumed::<u32>().unwrap_or(0).min(items);
    tracing::info!(
        task = ctx.task_id().unwrap_or_default(),
        attempt,
        resumed_from,
        "ingest runs"
    );
    // On a re-run the kept answer comes back at once: the user is not asked twice.
    let go = ctx
        .elicit::<Confirm>(format!("Ingest {items} items?"))
        .await?;
    if !matches!(go, ElicitOutcome::Accept(Confirm { confirm: true })) {
        return Err(ToolError::new("not confirmed: nothing was ingested"));
    }
    for done in resumed_from..items {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(item_ms)) => {}
            _ = ctx.cancelled() => return Err(ToolError::new("ingest cancelled")),
        }
        // Ingesting an item again is harmless here; a real tool makes each item's write
        // idempotent (keyed by the item), since a run may stop between the item and this line.
        ctx.checkpoint(&(done + 1)).await?;
        ctx.status(format!("{} of {items} items", done + 1));
    }
    Ok(Ingested {
        items,
        attempt,
        resumed_from,
    })
}
