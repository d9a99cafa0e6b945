//! The checks of wake-ups, versions and the change feed.

use super::*;

/// `changed` resolves at once when the task is already newer than what the caller saw.
pub(super) async fn changed_resolves_at_once_when_newer(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let record = timeout(PATIENCE, env.store.changed(&task.id, 0))
        .await
        .expect("changed(0) on a version-1 task must not wait")
        .unwrap();
    assert_eq!(record, task);
    let asked = env.ask(&task.id, "a").await;
    let record = timeout(PATIENCE, env.store.changed(&task.id, task.version))
        .await
        .expect("changed must not wait for a change it has missed")
        .unwrap();
    assert_eq!(record, asked);
}

/// `changed` waits while nothing changes, and wakes on the next change, whoever makes it: the
/// engine, a client's answer, a client's cancel.
pub(super) async fn changed_waits_for_a_later_change(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let waiter = env.wait(&task.id, task.version);
    still_waiting(&waiter).await;
    let updated = env
        .store
        .set_status_message(&task.id, Some("halfway".into()))
        .await
        .unwrap();
    let woken = resolved(waiter).await.unwrap();
    assert_eq!(woken, updated);

    let asked = env.ask(&task.id, "a").await;
    let waiter = env.wait(&task.id, asked.version);
    still_waiting(&waiter).await;
    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let woken = resolved(waiter).await.unwrap();
    assert_eq!(woken.status, TaskStatus::Working);
    assert!(woken.input_responses.contains_key("a"));

    let waiter = env.wait(&task.id, woken.version);
    still_waiting(&waiter).await;
    env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(
        resolved(waiter).await.unwrap().status,
        TaskStatus::Cancelled
    );
}

/// `changed` is NotFound for an unknown task, and wakes its waiters with NotFound when the task
/// is deleted.
pub(super) async fn changed_fails_for_missing_or_deleted_task(make: Factory<'_>) {
    let env = env(make);
    assert_not_found(
        timeout(PATIENCE, env.store.changed(&TaskId::new("no-such-task"), 0))
            .await
            .expect("changed on an unknown task must not wait"),
        "changed on an unknown task",
    );
    let task = env.create(alice()).await;
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    let waiter = env.wait(&task.id, finished.version);
    still_waiting(&waiter).await;
    env.clock.advance(TTL);
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.removed, [task.id]);
    assert_not_found(resolved(waiter).await, "waiter on a deleted task");
}

/// Many tasks with a waiter each: changing one task wakes its waiter, with its record, and no
/// other.
pub(super) async fn concurrent_waiters_are_woken_by_their_own_task_only(make: Factory<'_>) {
    const TASKS: usize = 100;
    let env = env(make);
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        tasks.push(env.create(alice()).await);
    }
    let mut waiters: Vec<_> = tasks
        .iter()
        .map(|task| Some(env.wait(&task.id, task.version)))
        .collect();
    still_waiting(waiters[0].as_ref().unwrap()).await;
    for (i, task) in tasks.iter().enumerate() {
        let changed = env
            .store
            .set_status_message(&task.id, Some(format!("task {i}")))
            .await
            .unwrap();
        let woken = resolved(waiters[i].take().unwrap()).await.unwrap();
        assert_eq!(woken, changed);
        // Give a wrongly woken waiter a moment to finish, then check that none did.
        if i % 25 == 0 {
            tokio::time::sleep(QUIET).await;
        } else {
            tokio::task::yield_now().await;
        }
        let early = waiters
            .iter()
            .enumerate()
            .find(|(_, waiter)| waiter.as_ref().is_some_and(|w| w.is_finished()));
        assert!(
            early.is_none(),
            "a change to task {i} woke the waiter of task {:?}",
            early.map(|e| e.0)
        );
    }
}

/// Every change bumps the version and every operation that changes nothing leaves it alone;
/// visible changes also move `last_updated_at` to the store's clock.
pub(super) async fn versions_increase_with_every_change_only(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let id = task.id.clone();
    let mut last = task.version;
    let mut step = |record: &TaskRecord, changes: bool, what: &str| {
        if changes {
            assert!(
                record.version > last,
                "{what}: version {} after {last}",
                record.version
            );
        } else {
            assert_eq!(
                record.version, last,
                "{what} changed nothing but bumped the version"
            );
        }
        last = record.version;
    };
    let tick = || {
        env.clock.advance(Duration::from_secs(1));
        env.clock.now()
    };

    let now = tick();
    let r = env
        .store
        .set_status_message(&id, Some("a".into()))
        .await
        .unwrap();
    step(&r, true, "set_status_message");
    assert_eq!(r.last_updated_at, now);
    let r = env
        .store
        .set_status_message(&id, Some("a".into()))
        .await
        .unwrap();
    step(&r, false, "the same status message");
    let r = env
        .store
        .withdraw_input_request(&id, "nothing")
        .await
        .unwrap();
    step(&r, false, "withdrawing a key that is not outstanding");
    let now = tick();
    let r = env.ask(&id, "k").await;
    step(&r, true, "add_input_request");
    assert_eq!(r.last_updated_at, now);
    let report = env
        .store
        .deliver_responses(&id, &alice(), answers(&[("zzz", answer("x"))]))
        .await
        .unwrap();
    let r = env.delivered(&id, &report).await;
    step(&r, false, "delivering only unknown keys");
    let now = tick();
    let report = env
        .store
        .deliver_responses(&id, &alice(), answers(&[("k", answer("x"))]))
        .await
        .unwrap();
    let r = env.delivered(&id, &report).await;
    step(&r, true, "deliver_responses");
    assert_eq!(r.last_updated_at, now);
    env.store.take_response(&id, "k").await.unwrap();
    step(&env.read(&id).await, true, "take_response");
    env.store.take_response(&id, "k").await.unwrap();
    step(&env.read(&id).await, false, "taking nothing");
    let now = tick();
    let r = env.store.finish(&id, done("ok")).await.unwrap();
    step(&r, true, "finish");
    assert_eq!(r.last_updated_at, now);
    tick();
    let r = env.store.finish(&id, done("again")).await.unwrap();
    step(&r, false, "finishing an ended task");
    let r = env.store.cancel(&id, &alice()).await.unwrap().into_record();
    step(&r, false, "cancelling an ended task");
    assert_eq!(r.last_updated_at, now);
}

/// `subscribe` reports creation and every visible change of every task, in version order, and
/// deletions; taking a response is not reported.
pub(super) async fn subscribe_reports_visible_changes(make: Factory<'_>) {
    let env = env(make);
    let mut events = env.store.subscribe();
    let task = env.create(alice()).await;
    env.ask(&task.id, "k").await;
    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("k", answer("x"))]))
        .await
        .unwrap();
    env.store.take_response(&task.id, "k").await.unwrap();
    let other = env
        .store
        .create(new_task(bob()).deadline(Some(TTL)))
        .await
        .unwrap();
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    env.clock.advance(TTL);
    env.store.expire(env.clock.now()).await.unwrap();

    let mut updates: BTreeMap<TaskId, Vec<u64>> = BTreeMap::new();
    let mut last = None;
    while updates.get(&task.id).map_or(0, Vec::len) < 4
        || updates.get(&other.id).map_or(0, Vec::len) < 2
        || last.is_none()
    {
        let event = timeout(PATIENCE, events.recv())
            .await
            .expect("an event was not reported")
            .expect("the receiver lagged or the store closed the feed");
        match event {
            TaskEvent::Updated(record) => updates
                .entry(record.id.clone())
                .or_default()
                .push(record.version),
            TaskEvent::Removed { id, owner } => {
                assert_eq!((&id, &owner), (&task.id, &alice()));
                last = Some(id);
            }
        }
    }
    // created, asked, answered, (taken: not reported), finished.
    assert_eq!(updates[&task.id], [1, 2, 3, finished.version]);
    assert_eq!(finished.version, 5);
    // created, then failed by the sweep (its deadline).
    assert_eq!(updates[&other.id], [1, 2]);
    match events.try_recv() {
        Err(broadcast::error::TryRecvError::Empty) => {}
        other => panic!("unexpected event: {other:?}"),
    }
}
