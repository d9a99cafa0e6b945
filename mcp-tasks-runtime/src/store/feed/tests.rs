use std::time::{Duration, SystemTime};

use super::Feed;
use crate::protocol::Era;
use crate::protocol::task::Owner;
use crate::store::{NewTask, TaskRecord};

fn at_version(version: u64) -> TaskRecord {
    let new = NewTask::new(Owner::new("alice"), Era::Modern);
    let mut record = TaskRecord::new(new, SystemTime::now());
    record.version = version;
    record
}

/// A store restored from an older copy (Redis from its last snapshot) has the task at a
/// version below the one its waiter saw: the waiter gets the task at once, as changed, instead
/// of waiting for a version the store already lost.
#[tokio::test]
async fn a_waiter_whose_task_went_back_to_an_older_version_gets_it_at_once() {
    let feed = Feed::new(None);
    let record = at_version(3);
    let id = record.id.clone();
    let read = || {
        let record = record.clone();
        async move { Ok(Some(record)) }
    };
    let waited = tokio::time::timeout(Duration::from_secs(5), feed.wait(&id, 5, read)).await;
    let got = waited.expect("no wait for version 6").expect("the task");
    assert_eq!(got.version, 3);
}
