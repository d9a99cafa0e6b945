//! The records kept in memory, and the log copied into the file.

use super::*;
use crate::store::sqlite::recent::RECENT_KEPT;

/// A task written lately is kept while 2,048 to 4,096 others are written after it: never
/// all of them let go of at once, and never more than [`RECENT_KEPT`] kept. What is let go
/// of is handed back whole, the oldest generation.
#[test]
fn recent_records_are_let_go_of_a_generation_at_a_time() {
    let now = SystemTime::now();
    let record = |n: usize| {
        let mut new = NewTask::new(Owner::new("alice"), Era::Modern);
        new.id = TaskId::new(format!("t{n}"));
        Arc::new(Frozen::new(TaskRecord::new(new, now)))
    };
    let id = |n: usize| TaskId::new(format!("t{n}"));
    let half = RECENT_KEPT / 2;
    let mut recent = Recent::default();
    let mut let_go = Vec::new();
    // One short of full, then the task watched, then one short of half of the bound after
    // it: with everything let go of once full, it would have gone at the next write.
    for n in 0..RECENT_KEPT - 1 {
        let_go.extend(recent.insert(record(n)));
    }
    let watched = RECENT_KEPT - 1;
    let_go.extend(recent.insert(record(watched)));
    for n in RECENT_KEPT..RECENT_KEPT + half - 1 {
        let_go.extend(recent.insert(record(n)));
        assert!(recent.len() <= RECENT_KEPT, "{} kept", recent.len());
    }
    assert!(recent.get(&id(watched)).is_some(), "let go of too soon");
    // What was let go of: the oldest, a generation at a time, each once.
    let gone: Vec<usize> = let_go
        .iter()
        .flat_map(|generation| generation.keys())
        .map(|id| id.as_str()[1..].parse().unwrap())
        .collect();
    let mut sorted = gone.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), gone.len(), "let go of twice");
    assert_eq!(
        sorted,
        (0..sorted.len()).collect::<Vec<_>>(),
        "not the oldest"
    );
    for n in 0..watched + half {
        assert_eq!(recent.get(&id(n)).is_some(), n >= sorted.len(), "t{n}");
    }
    // Written again while in the older generation, a task moves to the newer one: the next
    // generation let go of does not take it, and its newest version is the one kept.
    let oldest_kept = sorted.len();
    let again = record(oldest_kept);
    let_go.clear();
    let_go.extend(recent.insert(again.clone()));
    for n in RECENT_KEPT + half..RECENT_KEPT + 2 * half {
        let_go.extend(recent.insert(record(n)));
    }
    assert!(!let_go.is_empty(), "a generation was let go of");
    assert!(let_go.iter().all(|g| !g.contains_key(&id(oldest_kept))));
    assert!(Arc::ptr_eq(recent.get(&id(oldest_kept)).unwrap(), &again));
    recent.remove(&id(oldest_kept));
    assert!(recent.get(&id(oldest_kept)).is_none());
}

/// The records written lately are kept only with results of at most [`RECENT_RESULT`]: a
/// task that ends with a larger one is read from the file, and the version kept while it
/// ran goes (a later change must not start from it).
#[tokio::test]
async fn a_large_result_is_read_from_the_file_not_kept() {
    let store = scratch(Arc::new(SystemClock));
    let text = |len: usize| serde_json::json!({ "content": [{ "type": "text", "text": "x".repeat(len) }] });
    for (len, kept) in [(RECENT_RESULT, false), (1000, true)] {
        let new = NewTask::new(Owner::new("alice"), Era::Modern);
        let task = store.create(new).await.unwrap();
        assert!(
            store.shared.recent(&task.id).is_some(),
            "kept while it runs"
        );
        let done = store
            .finish(&task.id, TaskOutcome::Result(text(len)))
            .await
            .unwrap();
        assert_eq!(store.shared.recent(&task.id).is_some(), kept, "{len}");
        assert_eq!(store.get_unchecked(&task.id).await.unwrap(), Some(done));
    }
}

/// The writes whose commit brings the log to its bound are answered before the log is
/// copied into the file (SQLite would copy it inside that commit, and they would wait for
/// it); the copy follows, and the log starts over at the next commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writes_that_fill_the_log_are_answered_before_it_is_copied() {
    let path = scratch_path();
    let store = SqliteTaskStore::open(&path).expect("open");
    let (open_gate, gate) = std::sync::mpsc::channel();
    *lock(&store.shared.checkpoint_gate) = Some(gate);
    let mut created = 0;
    while !store.shared.checkpoint_due() {
        tokio::time::timeout(
            Duration::from_secs(10),
            store.create(NewTask::new(Owner::new("alice"), Era::Modern)),
        )
        .await
        .expect("answered without waiting for the copy")
        .unwrap();
        created += 1;
        assert!(created < 20_000, "the log never reached its bound");
    }
    // Answered; the copy waits at the gate.
    open_gate.send(()).unwrap();
    let copied = std::time::Instant::now();
    while store.shared.checkpoint_due() {
        assert!(
            copied.elapsed() < Duration::from_secs(10),
            "the log was not copied"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    store
        .create(NewTask::new(Owner::new("alice"), Era::Modern))
        .await
        .unwrap();
    let pages = store.shared.log_pages.load(Ordering::Relaxed);
    assert!(pages < 100, "the log did not start over: {pages} pages");
    drop(store);
    remove(&path);
}

/// The write-ahead log is copied into the file at [`WAL_PAGES`], not at SQLite's 1,000
/// pages: it grows past 1,000 pages, and once it has held more than [`WAL_PAGES`] it starts
/// over, so the file never holds much more.
#[tokio::test]
async fn the_log_is_copied_into_the_file_at_its_bound() {
    let path = scratch_path();
    let store = SqliteTaskStore::open(&path).expect("open");
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let page = 4096 + 24;
    let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    let mut largest = 0;
    // Each task alone in its transaction, a few pages of log each: 8,000 of them write the
    // log's bound twice over.
    for created in 1..=8_000 {
        store
            .create(NewTask::new(Owner::new("alice"), Era::Modern))
            .await
            .unwrap();
        if created % 100 == 0 {
            largest = largest.max(size());
        }
        if created == 1_000 {
            assert!(size() > 1_100 * page, "checkpointed at SQLite's default");
        }
    }
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let bound = u64::from(WAL_PAGES) * page;
    assert!(
        largest >= bound,
        "the log never reached its bound: {largest} bytes"
    );
    assert!(
        largest <= bound + 100 * page,
        "the log grew past its bound: {largest} bytes"
    );
}
