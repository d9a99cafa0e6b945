//! The Redis task store against a real `redis-server` (installed pinned by
//! `tests/redis/install.sh`, started on a free loopback port, stopped afterwards): the whole
//! store contract, and example-server processes that share their tasks through one Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tasks_runtime::store::{Clock, RedisTaskStore};
use mcp_tasks_tests::redis::RedisServer;

/// A key prefix no other test of this process uses, so every store starts empty.
fn fresh_prefix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn contract_store(clock: Arc<dyn Clock>) -> RedisTaskStore {
    RedisTaskStore::builder(&RedisServer::shared().url)
        .prefix(fresh_prefix())
        .clock(clock)
        .open()
        .expect("a Redis store")
}

mod contract {
    mcp_tasks_runtime::task_store_contract_tests!(super::contract_store);
}
