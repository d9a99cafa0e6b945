//! The checks of a task's life: creation, input, outputs, its end, cancellation.

use super::*;

/// A created task is readable as soon as `create` resolves, by its owner and by the engine, with
/// every field as created.
pub(super) async fn create_then_get_is_visible(make: Factory<'_>) {
    let env = env(make);
    let now = env.clock.now();
    let created = env
        .store
        .create(
            new_task(alice())
                .status_message("starting")
                .deadline(Some(TTL * 3))
                .runner("engine-1"),
        )
        .await
        .unwrap();
    assert_eq!(created.status, TaskStatus::Working);
    assert_eq!(created.version, 1);
    assert_eq!(created.owner, alice());
    assert_eq!(created.origin, Era::Modern);
    assert_eq!(created.status_message.as_deref(), Some("starting"));
    assert_eq!(created.created_at, now);
    assert_eq!(created.last_updated_at, now);
    assert_eq!(created.ttl, Some(TTL));
    assert_eq!(created.deadline, Some(TTL * 3));
    assert_eq!(created.runner.as_deref(), Some("engine-1"));
    assert_eq!(created.poll_interval, Some(Duration::from_secs(1)));
    assert!(created.input_requests.is_empty() && created.outcome.is_none());
    assert_eq!(created.terminal_at, None);

    let got = env.store.get(&created.id, &alice()).await.unwrap();
    assert_eq!(got.as_ref(), Some(&created));
    assert_eq!(env.read(&created.id).await, created);

    let legacy = env
        .store
        .create(NewTask::new(alice(), Era::Legacy))
        .await
        .unwrap();
    assert_eq!(legacy.origin, Era::Legacy);
    assert_eq!((legacy.ttl, legacy.poll_interval), (None, None));
    assert_eq!((legacy.deadline, legacy.runner), (None, None));
    assert_ne!(legacy.id, created.id);

    let unknown = TaskId::new("no-such-task");
    assert_eq!(env.store.get(&unknown, &alice()).await.unwrap(), None);
    assert_eq!(env.store.get_unchecked(&unknown).await.unwrap(), None);
}

/// Creating a task under an id that is taken fails and leaves the first task alone.
pub(super) async fn create_rejects_a_taken_id(make: Factory<'_>) {
    let env = env(make);
    let id = TaskId::new("chosen-by-a-custom-id-source");
    let first = env
        .store
        .create(new_task(alice()).id(id.clone()))
        .await
        .unwrap();
    assert_eq!(first.id, id);
    let second = env.store.create(new_task(bob()).id(id.clone())).await;
    assert!(
        matches!(&second, Err(StoreError::DuplicateId(taken)) if *taken == id),
        "{second:?}"
    );
    assert_eq!(env.read(&id).await, first);
    assert!(
        env.store
            .list(&bob(), None, 10)
            .await
            .unwrap()
            .tasks
            .is_empty()
    );
}

/// Someone else's task answers exactly like an unknown one, for every client operation, and
/// is not changed by the attempt.
pub(super) async fn foreign_tasks_look_unknown(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let task = env.ask(&task.id, "name").await;
    let bobs = env.create(bob()).await;

    assert_eq!(env.store.get(&task.id, &bob()).await.unwrap(), None);
    let listed = env.store.list(&bob(), None, 100).await.unwrap();
    let ids: Vec<_> = listed.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&bobs.id]);
    assert_not_found(
        env.store
            .deliver_responses(&task.id, &bob(), answers(&[("name", answer("mallory"))]))
            .await,
        "deliver_responses by another owner",
    );
    assert_not_found(
        env.store.cancel(&task.id, &bob()).await,
        "cancel by another owner",
    );

    // Untouched: still asking, same version, and its owner still sees it.
    assert_eq!(env.read(&task.id).await, task);
    assert_eq!(env.store.get(&task.id, &alice()).await.unwrap(), Some(task));
}

/// Asking makes a task `input_required` with every outstanding request; a partial answer keeps
/// it there with only the unanswered keys; unknown and already answered keys are ignored; the
/// last answer returns it to `working`.
pub(super) async fn input_request_lifecycle(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let asked = env.ask(&task.id, "a").await;
    assert_eq!(asked.status, TaskStatus::InputRequired);
    assert_eq!(asked.input_requests["a"], ask("a"));
    let asked = env.ask(&task.id, "b").await;
    assert_eq!(asked.status, TaskStatus::InputRequired);
    assert_eq!(keys(&asked), ["a", "b"]);

    let report = env
        .store
        .deliver_responses(
            &task.id,
            &alice(),
            answers(&[("a", answer("1")), ("never-asked", answer("x"))]),
        )
        .await
        .unwrap();
    let record = env.delivered(&task.id, &report).await;
    assert_eq!(report.accepted, ["a"]);
    assert_eq!(report.ignored, ["never-asked"]);
    assert_eq!(record.status, TaskStatus::InputRequired);
    assert_eq!(keys(&record), ["b"]);
    assert_eq!(record.input_responses["a"], answer("1"));
    // Applied before the call resolved: a read right away agrees.
    let read = env.store.get(&task.id, &alice()).await.unwrap().unwrap();
    assert_eq!(read, record);

    let report = env
        .store
        .deliver_responses(
            &task.id,
            &alice(),
            answers(&[("a", answer("again")), ("b", answer("2"))]),
        )
        .await
        .unwrap();
    let record = env.delivered(&task.id, &report).await;
    assert_eq!(report.accepted, ["b"]);
    assert_eq!(report.ignored, ["a"]);
    assert_eq!(record.status, TaskStatus::Working);
    assert!(record.input_requests.is_empty());
    assert_eq!(
        record.input_responses["a"],
        answer("1"),
        "first answer wins"
    );
    assert_eq!(record.input_responses["b"], answer("2"));

    // Nothing outstanding: everything is ignored and nothing changes.
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("c", answer("3"))]))
        .await
        .unwrap();
    assert_eq!((report.accepted.len(), report.ignored.len()), (0, 1));
    assert_eq!(env.delivered(&task.id, &report).await, record);
}

/// A key names one request for the task's whole life: outstanding, answered and withdrawn keys
/// are all refused. Withdrawing the last outstanding request returns the task to `working`.
pub(super) async fn input_keys_are_never_reused(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    let reuse = |key: &'static str| {
        env.store
            .add_input_request(&task.id, key.to_owned(), ask("other"))
    };
    let refused = reuse("a").await;
    assert!(
        matches!(&refused, Err(StoreError::InputKeyReused(key)) if key == "a"),
        "outstanding key: {refused:?}"
    );
    assert_eq!(env.read(&task.id).await.input_requests["a"], ask("a"));

    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let refused = reuse("a").await;
    assert!(
        matches!(refused, Err(StoreError::InputKeyReused(_))),
        "answered key: {refused:?}"
    );

    env.ask(&task.id, "w").await;
    let withdrawn = env
        .store
        .withdraw_input_request(&task.id, "w")
        .await
        .unwrap();
    assert_eq!(withdrawn.status, TaskStatus::Working);
    assert!(withdrawn.input_requests.is_empty());
    let refused = reuse("w").await;
    assert!(
        matches!(refused, Err(StoreError::InputKeyReused(_))),
        "withdrawn key: {refused:?}"
    );
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("w", answer("late"))]))
        .await
        .unwrap();
    assert_eq!(report.ignored, ["w"]);
    let record = env.delivered(&task.id, &report).await;
    assert!(!record.input_responses.contains_key("w"));

    // Withdrawing one of two keeps the task asking.
    env.ask(&task.id, "x").await;
    env.ask(&task.id, "y").await;
    let record = env
        .store
        .withdraw_input_request(&task.id, "x")
        .await
        .unwrap();
    assert_eq!(record.status, TaskStatus::InputRequired);
    assert_eq!(keys(&record), ["y"]);
}

/// A delivered answer is taken into the task's kept answers: the first take bumps the version
/// but is invisible to clients; taking it again gives it again and changes nothing (a tool
/// whose first take's reply was lost still gets its answer).
pub(super) async fn take_response_is_idempotent(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(1));
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    let delivered = env.delivered(&task.id, &report).await;
    assert_eq!(
        env.store.take_response(&task.id, "nope").await.unwrap(),
        None
    );
    env.clock.advance(Duration::from_secs(1));
    assert_eq!(
        env.store.take_response(&task.id, "a").await.unwrap(),
        Some(answer("1"))
    );
    let after = env.read(&task.id).await;
    assert!(after.input_responses.is_empty());
    assert_eq!(after.version, delivered.version + 1);
    assert_eq!(after.last_updated_at, delivered.last_updated_at);
    assert_eq!(after.answers.get("a"), Some(&answer("1")));
    assert_eq!(
        env.store.take_response(&task.id, "a").await.unwrap(),
        Some(answer("1"))
    );
    assert_eq!(env.read(&task.id).await.version, after.version);
    assert_not_found(
        env.store
            .take_response(&TaskId::new("no-such-task"), "a")
            .await,
        "take_response on an unknown task",
    );
}

/// A task's outputs: kept by name (a second one of a name replaces the first), read by the
/// task's owner only, not a change clients see in the task, and final once the task has ended.
pub(super) async fn outputs_are_kept_for_the_owner_only(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let report = ResourceContents::text("task://t/report.md", "text/markdown", "# Report");
    env.clock.advance(Duration::from_secs(1));
    env.store
        .add_output(&task.id, "report.md".into(), report.clone())
        .await
        .expect("add_output");
    let after = env.read(&task.id).await;
    assert_eq!(after.version, task.version + 1);
    assert_eq!(after.last_updated_at, task.last_updated_at);
    let read = |owner: Owner, name: &'static str| {
        let (store, id) = (env.store.clone(), task.id.clone());
        async move { store.read_output(&id, &owner, name).await.unwrap() }
    };
    assert_eq!(read(alice(), "report.md").await, Some(report.clone()));
    assert_eq!(
        read(bob(), "report.md").await,
        None,
        "another owner's output"
    );
    assert_eq!(read(alice(), "other").await, None);
    // The same contents again change nothing; new contents replace the old.
    env.store
        .add_output(&task.id, "report.md".into(), report.clone())
        .await
        .unwrap();
    assert_eq!(env.read(&task.id).await.version, after.version);
    let data = ResourceContents::blob("task://t/data.bin", "application/octet-stream", [0u8, 255]);
    env.store
        .add_output(&task.id, "report.md".into(), data.clone())
        .await
        .unwrap();
    assert_eq!(read(alice(), "report.md").await, Some(data.clone()));
    // Ended: still readable, and nothing more is kept.
    env.store.finish(&task.id, done("ok")).await.unwrap();
    let refused = env
        .store
        .add_output(&task.id, "late".into(), report.clone())
        .await;
    assert!(
        matches!(refused, Err(StoreError::Terminal(TaskStatus::Completed))),
        "add_output on an ended task: {refused:?}"
    );
    assert_eq!(read(alice(), "report.md").await, Some(data));
    assert_eq!(read(alice(), "late").await, None);
    // `tasks/get`'s view of a task with outputs: the record's, for its owner only.
    if let Some(fast) = env.store.fast_paths() {
        let record = env.read(&task.id).await;
        let whole = crate::protocol::task::AsTaskView::task_view(&record).modern_get_result();
        let mut seen = None;
        let found = (fast.get_view(&task.id, &alice(), &mut |v| {
            seen = Some(v.modern_get_result())
        }))
        .await
        .unwrap();
        assert!(found, "the owner's view");
        assert_eq!(seen, Some(whole));
        let found = (fast.get_view(&task.id, &bob(), &mut |_| panic!("another owner's view")))
            .await
            .unwrap();
        assert!(!found);
    }
    assert_not_found(
        env.store
            .add_output(&TaskId::new("no-such-task"), "a".into(), report)
            .await,
        "add_output on an unknown task",
    );
    let unknown = env
        .store
        .read_output(&TaskId::new("no-such-task"), &alice(), "a")
        .await;
    assert_eq!(unknown.unwrap(), None);
}

/// `finish` ends a task once; afterwards the task never changes: a second `finish`, a status
/// message, an answer or a new request leave it as it is.
pub(super) async fn finish_is_final_and_idempotent(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(3));
    let now = env.clock.now();
    let finished = env.store.finish(&task.id, done("hello")).await.unwrap();
    assert_eq!(finished.status, TaskStatus::Completed);
    assert_eq!(finished.outcome, Some(done("hello")));
    assert_eq!(finished.terminal_at, Some(now));
    assert_eq!(finished.last_updated_at, now);
    assert!(
        finished.input_requests.is_empty(),
        "nobody will answer any more"
    );
    assert_eq!(env.read(&task.id).await, finished);

    env.clock.advance(Duration::from_secs(1));
    let again = env
        .store
        .finish(&task.id, TaskOutcome::Error(RpcError::internal("late")))
        .await
        .unwrap();
    assert_eq!(again, finished);
    let message = env
        .store
        .set_status_message(&task.id, Some("x".into()))
        .await
        .unwrap();
    assert_eq!(message, finished);
    let report = env
        .store
        .deliver_responses(&task.id, &alice(), answers(&[("a", answer("1"))]))
        .await
        .unwrap();
    assert_eq!(report.ignored, ["a"]);
    assert_eq!(env.delivered(&task.id, &report).await, finished);
    let refused = env
        .store
        .add_input_request(&task.id, "b".into(), ask("b"))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Terminal(TaskStatus::Completed))),
        "{refused:?}"
    );
    assert_eq!(env.read(&task.id).await, finished);
    assert_not_found(
        env.store
            .finish(&TaskId::new("no-such-task"), done("x"))
            .await,
        "finish on an unknown task",
    );
}

/// An error fails a task (with its message as the status message); a tool error (`isError`)
/// completes a modern task but fails a legacy one, keeping the result.
pub(super) async fn failure_outcomes_by_era(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let error = RpcError::internal("rate limit exceeded");
    let failed = env
        .store
        .finish(&task.id, TaskOutcome::Error(error.clone()))
        .await
        .unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.outcome, Some(TaskOutcome::Error(error)));
    assert_eq!(
        failed.status_message.as_deref(),
        Some("rate limit exceeded")
    );

    let tool_error = TaskOutcome::Result(json!({"content": [], "isError": true}));
    for (origin, status) in [
        (Era::Modern, TaskStatus::Completed),
        (Era::Legacy, TaskStatus::Failed),
    ] {
        let task = env
            .store
            .create(NewTask::new(alice(), origin).status_message("working on it"))
            .await
            .unwrap();
        let ended = env
            .store
            .finish(&task.id, tool_error.clone())
            .await
            .unwrap();
        assert_eq!(ended.status, status, "{origin:?}");
        assert_eq!(ended.outcome.as_ref(), Some(&tool_error));
        assert_eq!(ended.status_message.as_deref(), Some("working on it"));
    }
}

/// `cancel` makes a running task `cancelled` at once; work finishing afterwards does not change
/// that.
pub(super) async fn cancelled_stays_cancelled(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    env.ask(&task.id, "a").await;
    env.clock.advance(Duration::from_secs(2));
    let now = env.clock.now();
    let result = env.store.cancel(&task.id, &alice()).await.unwrap();
    let CancelResult::Cancelled(cancelled) = result else {
        panic!("expected Cancelled, got {result:?}");
    };
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message.as_deref(),
        Some(TaskRecord::CANCELLED_MESSAGE)
    );
    assert_eq!(cancelled.terminal_at, Some(now));
    assert_eq!(cancelled.outcome, None);
    assert!(cancelled.input_requests.is_empty());
    assert_eq!(
        env.store.get(&task.id, &alice()).await.unwrap(),
        Some(cancelled.clone())
    );

    let after = env.store.finish(&task.id, done("too late")).await.unwrap();
    assert_eq!(after, cancelled);
    assert_eq!(env.read(&task.id).await, cancelled);
}

/// Cancelling a task that has ended changes nothing and says how it ended; an unknown task is
/// NotFound.
pub(super) async fn cancel_on_ended_task_reports_already_terminal(make: Factory<'_>) {
    let env = env(make);
    let task = env.create(alice()).await;
    let finished = env.store.finish(&task.id, done("ok")).await.unwrap();
    let result = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(result, CancelResult::AlreadyTerminal(finished.clone()));
    assert_eq!(result.record().status, TaskStatus::Completed);
    assert_eq!(env.read(&task.id).await, finished);

    let task = env.create(alice()).await;
    let first = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert!(matches!(first, CancelResult::Cancelled(_)), "{first:?}");
    let second = env.store.cancel(&task.id, &alice()).await.unwrap();
    assert_eq!(second, CancelResult::AlreadyTerminal(first.into_record()));

    assert_not_found(
        env.store
            .cancel(&TaskId::new("no-such-task"), &alice())
            .await,
        "cancel of an unknown task",
    );
}
