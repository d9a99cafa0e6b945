//! Support shared by the test suite (`tests/`) and the benchmark (`bench/`), so that neither
//! depends on the other: a pinned `redis-server`, installed by `testkit/redis/install.sh`, and
//! PostgreSQL 15, found or installed by `testkit/postgres/install.sh`, each started on a free
//! loopback port.

pub mod postgres;
pub mod redis;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ has a parent")
        .to_path_buf()
}
