//! A small service as it would look in an application: an in-memory inventory shared by its tools
//! (application state), staff who sign in with bearer tokens (per-principal authorization), an
//! inline tool, and a long task that reports progress and asks the requester to confirm.
//!
//! `cargo run -p mcp-tasks-examples --bin inventory_server -- --http 127.0.0.1:8080 --token
//! alice-token=alice --token bob-token=bob` serves it; alice is a manager, bob a clerk.

use mcp_tasks_runtime::schemars::{self, JsonSchema};
use mcp_tasks_runtime::serde::{Deserialize, Serialize};
use mcp_tasks_runtime::{
    ElicitOutcome, Json, Server, ServerBuilder, State, ToolContext, ToolError, tool,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

/// The stock, shared by every tool and every caller.
#[derive(Debug)]
pub struct Inventory {
    items: Mutex<BTreeMap<String, u32>>,
    /// How long picking one unit takes (a real warehouse is slower than a test).
    pick_time: Duration,
}

impl Inventory {
    /// An inventory holding these items.
    pub fn new<'a>(items: impl IntoIterator<Item = (&'a str, u32)>, pick_time: Duration) -> Self {
        Inventory {
            items: Mutex::new(items.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
            pick_time,
        }
    }

    fn items(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u32>> {
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Units of `item` in stock.
    pub fn count(&self, item: &str) -> u32 {
        self.items().get(item).copied().unwrap_or(0)
    }
}

/// Who may do what: managers restock, everyone signed in may look and order.
#[derive(Debug, Default)]
pub struct Staff {
    managers: BTreeSet<String>,
}

impl Staff {
    /// Staff where these principals are managers.
    pub fn with_managers<'a>(managers: impl IntoIterator<Item = &'a str>) -> Self {
        Staff {
            managers: managers.into_iter().map(str::to_owned).collect(),
        }
    }
}

/// The principal's name, or a refusal for an anonymous caller.
fn signed_in(ctx: &ToolContext) -> Result<String, ToolError> {
    ctx.principal()
        .map(|p| p.as_str().to_owned())
        .ok_or_else(|| ToolError::forbidden("sign in with a bearer token first"))
}

/// What is in stock.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StockReport {
    /// Units per item.
    pub items: BTreeMap<String, u32>,
    /// Who asked.
    pub seen_by: String,
}

/// List what is in stock.
#[tool(annotations(read_only = true))]
pub async fn stock(
    ctx: ToolContext,
    inventory: State<Inventory>,
) -> Result<StockReport, ToolError> {
    let seen_by = signed_in(&ctx)?;
    Ok(StockReport {
        items: inventory.items().clone(),
        seen_by,
    })
}

/// Add units of an item to the stock (managers only).
#[tool]
pub async fn restock(
    ctx: ToolContext,
    inventory: State<Inventory>,
    staff: State<Staff>,
    /// The item.
    item: String,
    /// How many units arrived.
    units: u32,
) -> Result<String, ToolError> {
    let who = signed_in(&ctx)?;
    if !staff.managers.contains(&who) {
        return Err(ToolError::forbidden(format!(
            "`{who}` may not restock; only managers may"
        )));
    }
    let mut items = inventory.items();
    let count = items.entry(item.clone()).or_default();
    *count += units;
    Ok(format!("{item}: {count} in stock (restocked by {who})"))
}

/// The requester's answer before anything leaves the warehouse.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Ship it?
    pub ship: bool,
}

/// A shipped order.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Shipment {
    /// The item.
    pub item: String,
    /// How many units left the warehouse.
    pub units: u32,
    /// Who ordered it (the principal that created the task).
    pub requested_by: String,
    /// Units of the item left in stock.
    pub left: u32,
}

/// Ship an order: picks each unit (with progress), asks the requester to confirm, then takes the
/// units out of stock. Runs as a task.
#[tool(task_support = "required")]
pub async fn ship_order(
    ctx: ToolContext,
    inventory: State<Inventory>,
    /// The item.
    item: String,
    /// How many units.
    units: u32,
) -> Result<Json<Shipment>, ToolError> {
    let who = signed_in(&ctx)?;
    if inventory.count(&item) < units {
        return Err(ToolError::new(format!(
            "only {} of {item} in stock",
            inventory.count(&item)
        )));
    }
    ctx.status(format!("picking {units} x {item} for {who}"));
    for picked in 1..=units {
        tokio::select! {
            _ = tokio::time::sleep(inventory.pick_time) => {}
            _ = ctx.cancelled() => return Err(ToolError::new("cancelled while picking")),
        }
        ctx.progress(f64::from(picked), Some(f64::from(units)), None);
    }
    let question = format!("Ship {units} x {item} for {who}?");
    let ElicitOutcome::Accept(Confirm { ship: true }) = ctx.elicit::<Confirm>(question).await?
    else {
        return Err(ToolError::new("the requester called the order off"));
    };
    // Side effects come after the question (see "MRTR replay" in the README).
    let mut items = inventory.items();
    let count = items.entry(item.clone()).or_default();
    if *count < units {
        return Err(ToolError::new(format!(
            "only {count} of {item} left by now"
        )));
    }
    *count -= units;
    Ok(Json(Shipment {
        item,
        units,
        requested_by: who,
        left: *count,
    }))
}

/// The inventory service with this stock and staff.
pub fn server(inventory: Inventory, staff: Staff) -> ServerBuilder {
    Server::builder("inventory", "1.0.0")
        .instructions(
            "An inventory: `stock` lists it, `restock` (managers) adds to it, `ship_order` ships.",
        )
        .state(inventory)
        .state(staff)
        .tool::<stock>()
        .tool::<restock>()
        .tool::<ship_order>()
}
