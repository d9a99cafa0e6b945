//! The Postgres store against a real PostgreSQL (`mcp_tasks_testkit::postgres`, one server per
//! test process; each store gets a schema of its own): the contract, then its own rules by
//! concern.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_tasks_testkit::postgres::PostgresServer;
use serde_json::{Map, json};
use tokio_postgres::NoTls;

use super::*;
use crate::protocol::Era;
use crate::protocol::task::TaskOutcome;
use crate::protocol::task::TaskStatus;
use crate::protocol::{InputRequest, ResourceContents};
use crate::store::ManualClock;
use crate::store::{TaskEvent, TaskStore};
use serde_json::Value;

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

fn instance(url: &str, schema: &str) -> Arc<PostgresTaskStore> {
    Arc::new(
        PostgresTaskStore::builder(url)
            .schema(schema)
            .timeout(Duration::from_secs(2))
            .open()
            .expect("a Postgres store"),
    )
}

fn question(i: usize) -> InputRequest {
    InputRequest::new("elicitation/create", json!({ "message": format!("q{i}") }))
}

/// Takes the store's creators' lock in a transaction of another connection, which holds it
/// until it commits: a writer that takes a creation waits for it.
async fn hold_creators_lock(store: &PostgresTaskStore) -> tokio_postgres::Client {
    let (other, connection) = tokio_postgres::connect(database(), NoTls).await.unwrap();
    tokio::spawn(connection);
    other.batch_execute("BEGIN").await.unwrap();
    other
        .execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&store.shared.turn_key],
        )
        .await
        .unwrap();
    other
}

fn schema_versions(schema: &str) -> String {
    let db = database().rsplit('/').next().unwrap();
    PostgresServer::shared().sql(
        db,
        &format!("SELECT string_agg(version::text, ',' ORDER BY version) FROM \"{schema}\".schema_version"),
    )
}

/// The store's fast paths are its generic ones, and it says it creates in order: held to the
/// same checks as every store's (among them, a task's write asked for right after `create`,
/// before the creation is awaited, is applied after it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_paths_agree_with_the_generic_paths() {
    crate::store::fast::checks::all(|| Arc::new(scratch(Arc::new(SystemClock)))).await;
}

mod ended;
mod feed;
mod list;
mod migrations;
mod writes;
