//! The Postgres store against a real PostgreSQL (`mcp_tasks_testkit::postgres`, one server per
//! test process; each store gets a schema of its own).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_tasks_testkit::postgres::PostgresServer;
use serde_json::{Map, json};

use super::*;
use crate::protocol::Era;
use crate::protocol::task::TaskStatus;

/// The shared server's database for these tests (made once).
fn database() -> &'static str {
    static URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    URL.get_or_init(|| PostgresServer::shared().create_database())
}

/// A schema no other store of this process uses.
fn fresh_schema() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "s_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn scratch(clock: Arc<dyn Clock>) -> PostgresTaskStore {
    PostgresTaskStore::builder(database())
        .schema(fresh_schema())
        .clock(clock)
        .open()
        .expect("a Postgres store")
}

crate::task_store_contract_tests!(scratch);
