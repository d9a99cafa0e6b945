//! The checks of what ends a task or its record (ttl, deadline, leases), and of listing.

use super::*;

/// A running task outlives its `ttl`: `ttl` is how long the record is kept, not how long the
/// task may run (a task waiting on a person may take longer). Once it ends, its record is kept a
/// whole `ttl` from then.
pub(super) async fn ttl_never_ends_a_running_task(make: Factory<'_>) {
    let env = env(make);
    let working = env.create(alice()).await;
    let waiting = env.create(alice()).await;
    let waiting = env.ask(&waiting.id, "a").await;

    env.clock.advance(TTL * 100);
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
    assert_eq!(env.read(&working.id).await, working);
    assert_eq!(env.read(&waiting.id).await, waiting);

    let finished = env.store.finish(&working.id, done("ok")).await.unwrap();
    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "{report:?}");
    assert_eq!(env.read(&working.id).await, finished);
    env.clock.advance(Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, std::slice::from_ref(&working.id));
    assert_eq!(env.read(&waiting.id).await, waiting);
}

/// `expire` fails running tasks once `created_at + deadline` is reached — not before — with
/// `-32603` and a status message that says the deadline ended it; tasks without a deadline run
/// on. A task failed this way is kept for a further TTL like any ended task.
pub(super) async fn deadline_fails_overdue_tasks(make: Factory<'_>) {
    let env = env(make);
    let deadline = Duration::from_secs(30);
    let short = env
        .store
        .create(new_task(alice()).deadline(Some(deadline)))
        .await
        .unwrap();
    env.ask(&short.id, "a").await;
    let long = env
        .store
        .create(new_task(alice()).deadline(Some(deadline * 4)))
        .await
        .unwrap();
    let unlimited = env.create(alice()).await;

    env.clock.advance(deadline - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );

    env.clock.advance(Duration::from_secs(1));
    let now = env.clock.now();
    let report = env.store.expire(now).await.unwrap();
    assert_eq!(report.removed, Vec::<TaskId>::new());
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&short.id]);
    let expired = env.read(&short.id).await;
    assert_eq!(report.failed[0], expired);
    assert_eq!(expired.status, TaskStatus::Failed);
    assert_eq!(
        expired.outcome,
        Some(TaskOutcome::Error(RpcError::new(
            RpcError::INTERNAL_ERROR,
            TaskRecord::DEADLINE_MESSAGE
        )))
    );
    assert_eq!(
        expired.status_message.as_deref(),
        Some(TaskRecord::DEADLINE_MESSAGE)
    );
    assert_eq!(expired.terminal_at, Some(now));
    assert!(expired.input_requests.is_empty());
    assert_eq!(env.read(&long.id).await, long);

    // Failed by its deadline, kept for a further TTL like any ended task.
    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "{report:?}");

    env.clock.advance(Duration::from_secs(365 * 24 * 3600));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&long.id]);
    assert_eq!(report.removed, [short.id]);
    assert_eq!(env.read(&unlimited.id).await, unlimited);
}

const LEASE: Duration = Duration::from_secs(10);

/// A running task whose runner's lease has lapsed fails with `-32603` and
/// [`TaskRecord::RUNNER_STOPPED_MESSAGE`]; tasks of an instance whose lease is live or renewed,
/// and tasks without a runner, run on; a runner that never took a lease counts as stopped. Ended
/// tasks are untouched.
pub(super) async fn lapsed_leases_fail_their_tasks(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    env.store.renew_lease("b", LEASE).await.unwrap();
    let on_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let asking_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    env.ask(&asking_a.id, "k").await;
    let done_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let done_a = env.store.finish(&done_a.id, done("ok")).await.unwrap();
    let on_b = env.store.create(new_task(bob()).runner("b")).await.unwrap();
    let nobody = env.create(alice()).await;

    env.clock.advance(LEASE - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.failed.is_empty(), "leases still live: {report:?}");
    env.store.renew_lease("b", LEASE).await.unwrap();

    env.clock.advance(Duration::from_secs(1));
    let now = env.clock.now();
    let report = env.store.expire(now).await.unwrap();
    let mut failed: Vec<_> = report.failed.iter().map(|t| t.id.clone()).collect();
    failed.sort();
    let mut expected = vec![on_a.id.clone(), asking_a.id.clone()];
    expected.sort();
    assert_eq!(failed, expected, "a's lease lapsed: its running tasks fail");
    for id in [&on_a.id, &asking_a.id] {
        let stopped = env.read(id).await;
        assert_eq!(stopped.status, TaskStatus::Failed);
        assert_eq!(
            stopped.outcome,
            Some(TaskOutcome::Error(RpcError::new(
                RpcError::INTERNAL_ERROR,
                TaskRecord::RUNNER_STOPPED_MESSAGE
            )))
        );
        assert_eq!(
            stopped.status_message.as_deref(),
            Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
        );
        assert_eq!(stopped.terminal_at, Some(now));
        assert!(stopped.input_requests.is_empty());
    }
    assert_eq!(env.read(&done_a.id).await, done_a);
    assert_eq!(env.read(&on_b.id).await, on_b, "b renewed its lease");
    assert_eq!(env.read(&nobody.id).await, nobody, "no runner, no lease");

    // Renewing a lapsed lease does not revive failed tasks; new tasks of `a` run again.
    env.store.renew_lease("a", LEASE).await.unwrap();
    let again = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(env.read(&on_a.id).await.status, TaskStatus::Failed);
    assert_eq!(env.read(&again.id).await, again);

    // A runner that never took a lease is not alive.
    let orphan = env
        .store
        .create(new_task(alice()).runner("ghost"))
        .await
        .unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&orphan.id]);
}

/// Releasing a lease (a clean stop) fails the instance's running tasks at the next `expire`,
/// without waiting for the lease to run out; other instances' tasks run on. Releasing an unknown
/// instance's lease is harmless.
pub(super) async fn released_leases_fail_their_tasks(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    env.store.renew_lease("b", LEASE).await.unwrap();
    let on_a = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    let on_b = env
        .store
        .create(new_task(alice()).runner("b"))
        .await
        .unwrap();
    env.store.release_lease("a").await.unwrap();
    env.store.release_lease("never-seen").await.unwrap();
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&on_a.id]);
    let stopped = env.read(&on_a.id).await;
    assert_eq!(
        stopped.status_message.as_deref(),
        Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
    );
    assert_eq!(env.read(&on_b.id).await, on_b);
}

/// An ended task stays readable for its TTL after it ended, even past `created_at + ttl`, and is
/// deleted (gone from get, list and the engine's view) once that has passed.
pub(super) async fn ended_tasks_are_kept_for_their_ttl(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let forever = env.store.create(new_task(alice()).ttl(None)).await.unwrap();
    env.clock.advance(TTL - Duration::from_secs(10));
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    env.store.finish(&forever.id, done("ok")).await.unwrap();

    env.clock.advance(TTL - Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
    assert_eq!(
        env.store.get(&task.id, &alice()).await.unwrap(),
        Some(finished)
    );

    env.clock.advance(Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, std::slice::from_ref(&task.id));
    assert!(report.failed.is_empty());
    assert_eq!(env.store.get(&task.id, &alice()).await.unwrap(), None);
    assert_eq!(env.store.get_unchecked(&task.id).await.unwrap(), None);
    let listed = env.store.list(&alice(), None, 100).await.unwrap();
    let ids: Vec<_> = listed.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&forever.id]);
    assert_not_found(
        env.store.cancel(&task.id, &alice()).await,
        "cancel after deletion",
    );

    env.clock.advance(Duration::from_secs(10 * 365 * 24 * 3600));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert!(report.removed.is_empty(), "unlimited TTL: kept forever");
    assert_eq!(env.read(&forever.id).await.status, TaskStatus::Completed);
}

/// `list` returns only the caller's tasks, oldest first, in pages of at most `limit`, with a
/// cursor exactly when more follow; ended tasks are listed too.
pub(super) async fn list_pages_in_creation_order(make: Factory<'_>) {
    let env = env(make);
    let mut created = Vec::new();
    for i in 0..5 {
        created.push(env.create(alice()).await.id);
        if i % 2 == 0 {
            env.create(bob()).await;
        }
        env.clock.advance(Duration::from_millis(1));
    }
    env.store.finish(&created[1], done("ok")).await.unwrap();

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut sizes = Vec::new();
    loop {
        let page = env
            .store
            .list(&alice(), cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(page.tasks.iter().all(|t| t.owner == alice()));
        sizes.push(page.tasks.len());
        seen.extend(page.tasks.into_iter().map(|t| t.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(sizes.len() < 10, "pagination does not end");
    }
    assert_eq!(sizes, [2, 2, 1]);
    assert_eq!(seen, created);

    let all = env.store.list(&alice(), None, 100).await.unwrap();
    assert_eq!(all.next_cursor, None);
    let ids: Vec<_> = all.tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(ids, created);
    assert_eq!(all.tasks[1].status, TaskStatus::Completed);

    let exact = env.store.list(&alice(), None, 5).await.unwrap();
    assert_eq!((exact.tasks.len(), exact.next_cursor), (5, None));

    let one = env.store.list(&alice(), None, 0).await.unwrap();
    assert_eq!(one.tasks.len(), 1, "a limit of 0 is read as 1");
    assert!(one.next_cursor.is_some());

    assert_eq!(
        env.store.list(&bob(), None, 100).await.unwrap().tasks.len(),
        3
    );
    let nobody = env
        .store
        .list(&Owner::new("carol"), None, 100)
        .await
        .unwrap();
    assert!(nobody.tasks.is_empty() && nobody.next_cursor.is_none());

    // A task created after a page was read shows up on a later page.
    let page = env.store.list(&alice(), None, 4).await.unwrap();
    let newer = env.create(alice()).await;
    let rest = env
        .store
        .list(&alice(), page.next_cursor.as_deref(), 10)
        .await
        .unwrap();
    let ids: Vec<_> = rest.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&created[4], &newer.id]);
}

/// A cursor the store did not make is rejected with its own error (`-32602` on the wire).
pub(super) async fn list_rejects_invalid_cursor(make: Factory<'_>) {
    let env = env(make);
    env.create(alice()).await;
    for bad in ["not-a-cursor", "", "%%%", "\u{1F600}"] {
        let result = env.store.list(&alice(), Some(bad), 10).await;
        assert!(
            matches!(result, Err(StoreError::InvalidCursor)),
            "cursor {bad:?}: {result:?}"
        );
    }
    assert_eq!(
        StoreError::InvalidCursor.to_rpc_error().code,
        RpcError::INVALID_PARAMS
    );
}
