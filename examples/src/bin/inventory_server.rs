//! The inventory service (`mcp_tasks_examples::inventory`): shared state, per-principal
//! authorization, an inline tool and a task with progress and a question.
//!
//! `cargo run -p mcp-tasks-examples --bin inventory_server -- --http 127.0.0.1:8080 --token
//! alice-token=alice --token bob-token=bob`: alice is a manager (may restock), bob a clerk.

use mcp_tasks_examples::inventory::{Inventory, Staff, server};
use std::time::Duration;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let inventory = Inventory::new([("widget", 12), ("gadget", 3)], Duration::from_millis(500));
    let staff = Staff::with_managers(["alice"]);
    mcp_tasks_examples::serve_from_args(server(inventory, staff)).await
}
