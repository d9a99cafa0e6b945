//! The SQLite store's tests: the contract, then its own rules by concern.

use super::*;
use crate::protocol::Era;
use crate::protocol::InputRequest;
use crate::protocol::task::TaskOutcome;
use crate::protocol::task::{OutcomeView, TaskShape, TaskStatus};
use crate::store::TaskStore;
use crate::store::fast::FastPaths;
use crate::store::{ManualClock, SystemClock};
use rusqlite::params;
use serde_json::{Map, Value};

/// A store in a fresh file that is unlinked at once: the open connection keeps it alive.
fn scratch(clock: Arc<dyn Clock>) -> SqliteTaskStore {
    let path = scratch_path();
    let store = SqliteTaskStore::open_with_clock(&path, clock).expect("open");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    store
}

fn scratch_path() -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-tasks-sqlite-{}.db",
        TaskId::generate().as_str()
    ))
}

fn remove(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

crate::task_store_contract_tests!(scratch);

/// The store says it creates in order, so `fast_paths_agree_with_the_generic_paths` holds it
/// to that.
#[test]
fn the_store_says_it_creates_in_order() {
    let store = scratch(Arc::new(SystemClock));
    assert!((&store as &dyn TaskStore).creates_in_order());
}

#[tokio::test]
async fn fast_paths_agree_with_the_generic_paths() {
    crate::store::fast::checks::all(|| Arc::new(scratch(Arc::new(SystemClock)))).await;
}

mod files;
mod recent;
mod writes;
