//! The SQLite store's writer thread frees none of the record texts and tool results its callers
//! made: they are lent to it and freed by the callers once answered (see the store's
//! `batch.rs`). With glibc's allocator, a free of memory another thread allocated takes that
//! thread's arena lock, and the writer would wait for it with a whole batch of writes waiting on
//! it.
//!
//! This test binary's global allocator (`tracking-allocator`) tags each block with the
//! allocation group of the thread that made it: the callers run on the test's thread, in a group
//! of their own, and the test counts the large blocks of theirs (a stored record text, a node of
//! a result's JSON map) that the `sqlite-writer` thread frees.

use std::alloc::System;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tasks_runtime::Era;
use mcp_tasks_runtime::protocol::task::{Owner, TaskOutcome, TaskStatus};
use mcp_tasks_runtime::store::{NewTask, SqliteTaskStore, TaskStore};
use serde_json::{Map, Value, json};
use tracking_allocator::{
    AllocationGroupId, AllocationGroupToken, AllocationRegistry, AllocationTracker, Allocator,
};

#[global_allocator]
static ALLOCATOR: Allocator<System> = Allocator::system();

/// A block this large or larger is a record's text or a node of a JSON map, not one of the
/// small boxes and channels a write hands to the writer.
const LARGE: usize = 400;

/// The callers' allocation group.
static CALLERS: AtomicUsize = AtomicUsize::new(0);
/// Large blocks of the callers the writer freed.
static FREED_BY_WRITER: AtomicUsize = AtomicUsize::new(0);
/// Large blocks of the callers freed anywhere (so that the count above can be read).
static FREED: AtomicUsize = AtomicUsize::new(0);

struct Frees;

impl AllocationTracker for Frees {
    fn allocated(&self, _: usize, _: usize, _: usize, _: AllocationGroupId) {}

    fn deallocated(
        &self,
        _: usize,
        size: usize,
        _: usize,
        source: AllocationGroupId,
        _: AllocationGroupId,
    ) {
        if size < LARGE || source.as_usize().get() != CALLERS.load(Ordering::Relaxed) {
            return;
        }
        FREED.fetch_add(1, Ordering::Relaxed);
        if std::thread::current().name() == Some("sqlite-writer") {
            FREED_BY_WRITER.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A tool's result with a structured part: a JSON map, whose nodes are large blocks.
fn result(i: usize) -> Value {
    let fields: Map<String, Value> = (0..8)
        .map(|k| (format!("field{k}"), json!(format!("value {k} of task {i}"))))
        .collect();
    json!({
        "content": [{"type": "text", "text": format!("task {i} done")}],
        "structuredContent": fields,
    })
}

/// Tasks created and ended at 64 callers, so that writes share batches: half are ended beside
/// their creation (an end computed while the creation is queued joins it: one insert of the
/// ended task; the `JoinedChange` path), half after it committed (an update computed beside the
/// caller). Fewer tasks than the store keeps in memory, so that no kept record is let go of
/// (those the writer drops after it has answered).
#[test]
fn the_writer_frees_no_record_text_or_result_its_callers_made() {
    AllocationRegistry::set_global_tracker(Frees).expect("the only tracker");
    let mut callers = AllocationGroupToken::register().expect("a group");
    CALLERS.store(callers.id().as_usize().get(), Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-tasks-sqlite-frees-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    AllocationRegistry::enable_tracking();
    let in_group = callers.enter();
    let callers = runtime.block_on(async {
        let store = Arc::new(SqliteTaskStore::open(dir.join("tasks.db")).unwrap());
        let owner = Owner::new("alice");
        let mut tasks = Vec::new();
        for caller in 0..64 {
            let (store, owner) = (store.clone(), owner.clone());
            tasks.push(tokio::spawn(async move {
                for n in 0..24 {
                    let i = caller * 24 + n;
                    let new = NewTask::new(owner.clone(), Era::Modern);
                    let id = new.id.clone();
                    let created = store.create(new);
                    let outcome = TaskOutcome::Result(result(i));
                    let ended = if i % 2 == 0 {
                        // Computed while the creation is queued: it joins the creation
                        // unless the writer's thread has taken it already.
                        let (created, ended) = tokio::join!(created, store.finish(&id, outcome));
                        created.unwrap();
                        ended.unwrap()
                    } else {
                        created.await.unwrap();
                        store.finish(&id, outcome).await.unwrap()
                    };
                    assert_eq!(ended.status, TaskStatus::Completed);
                    let stored = store.get(&id, &owner).await.unwrap().unwrap();
                    assert_eq!(stored.status, TaskStatus::Completed, "task {i}");
                }
            }));
        }
        for caller in &mut tasks {
            caller.await.unwrap();
        }
        tasks
    });
    drop(in_group);
    AllocationRegistry::disable_tracking();
    // A caller's tokio task is freed by whoever drops the last reference to it, and a oneshot
    // channel holds its receiver's waker (a reference) until its sender is done sending: the
    // writer answering a caller's last write could free the task of a caller that ended at once
    // (a block of the callers' of about 1 KiB). Their handles are kept until nothing is counted,
    // so that what is counted is the store's: record texts and results.
    drop(callers);
    let _ = std::fs::remove_dir_all(&dir);
    let (by_writer, all) = (
        FREED_BY_WRITER.load(Ordering::Relaxed),
        FREED.load(Ordering::Relaxed),
    );
    assert!(
        all > 1_000,
        "the callers' large blocks were counted ({all})"
    );
    assert_eq!(
        by_writer, 0,
        "the writer freed {by_writer} of the {all} large blocks the callers made and freed"
    );
}
