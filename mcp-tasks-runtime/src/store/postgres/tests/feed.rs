//! Wake-ups and events across instances.

use super::*;

/// Two stores (as two server instances would have) on one schema: a tool waiting on A is woken
/// by an answer delivered through B, and by a cancel through B; A's subscribers see B's changes
/// (creation included) and B's see A's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_instance_wakes_a_waiter_and_reaches_subscribers_on_the_other() {
    let schema = fresh_schema();
    let (a, b) = (instance(database(), &schema), instance(database(), &schema));
    a.shared.ready().await.unwrap();
    a.shared.listening().await.unwrap();
    b.shared.listening().await.unwrap();
    let mut a_events = a.subscribe();
    let mut b_events = b.subscribe();
    let alice = Owner::new("alice");
    let task = a
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let seen_by_b = tokio::time::timeout(Duration::from_secs(5), b_events.recv())
        .await
        .expect("B hears of A's task")
        .unwrap();
    assert_eq!(seen_by_b, TaskEvent::Updated(Arc::new(task.clone())));
    let asked = a
        .add_input_request(&task.id, "k".into(), question(0))
        .await
        .unwrap();
    let waiter = {
        let (a, id) = (a.clone(), task.id.clone());
        tokio::spawn(async move { a.changed(&id, asked).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiter.is_finished(), "nothing changed yet");
    let mut answers = Map::new();
    answers.insert("k".into(), json!({ "action": "accept" }));
    let report = b
        .deliver_responses(&task.id, &alice, answers)
        .await
        .unwrap();
    assert_eq!(report.accepted, ["k"]);
    let woken = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("A's waiter is woken by B's answer")
        .unwrap()
        .unwrap();
    assert_eq!(
        (woken.version, woken.status),
        (report.version, report.status)
    );
    assert_eq!(
        a.take_response(&task.id, "k").await.unwrap(),
        Some(json!({ "action": "accept" }))
    );
    // A's own events: creation, question (its own changes, told directly), then B's answer.
    let mut kinds = Vec::new();
    while let Ok(Ok(TaskEvent::Updated(record))) =
        tokio::time::timeout(Duration::from_secs(1), a_events.recv()).await
    {
        kinds.push((record.version, record.status));
        if record.version == report.version {
            break;
        }
    }
    assert_eq!(
        kinds,
        [
            (1, TaskStatus::Working),
            (2, TaskStatus::InputRequired),
            (report.version, TaskStatus::Working)
        ]
    );

    let seen = a.get_unchecked(&task.id).await.unwrap().unwrap().version;
    let waiter = {
        let (a, id) = (a.clone(), task.id.clone());
        tokio::spawn(async move { a.changed(&id, seen).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let cancelled = b.cancel(&task.id, &alice).await.unwrap().into_record();
    let woken = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("A's waiter is woken by B's cancel")
        .unwrap()
        .unwrap();
    assert_eq!(woken.status, TaskStatus::Cancelled);
    assert_eq!(woken, cancelled);
}

/// Postgres stops (`-m immediate`) and starts again under two stores. While it is down,
/// operations fail with a backend error that names Postgres, in bounded time. Right after it is
/// back, B delivers an answer before A's listener has reconnected (its notification is lost to
/// A): A's waiter is still woken, by its periodic re-read or by the listener, which wakes every
/// waiter to re-read when it reconnects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_a_change_made_while_its_listener_was_away() {
    let mut server = PostgresServer::start();
    let url = server.create_database();
    let schema = fresh_schema();
    // A's listener pauses up to 8 s between attempts, so it is still away after the restart.
    let a = Arc::new(
        PostgresTaskStore::builder(&url)
            .schema(&schema)
            .timeout(Duration::from_secs(2))
            .reconnect_max(Duration::from_secs(8))
            .open()
            .unwrap(),
    );
    let b = instance(&url, &schema);
    a.shared.listening().await.unwrap();
    let alice = Owner::new("alice");
    let task = a
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let asked = a
        .add_input_request(&task.id, "k".into(), question(0))
        .await
        .unwrap();
    let waiter = {
        let (a, id) = (a.clone(), task.id.clone());
        tokio::spawn(async move { a.changed(&id, asked).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;

    tokio::task::block_in_place(|| server.stop_immediate());
    let started = std::time::Instant::now();
    let error = b.get(&task.id, &alice).await.unwrap_err();
    assert!(matches!(error, StoreError::Backend(_)), "{error}");
    assert!(error.to_string().contains("Postgres"), "{error}");
    let error = b.cancel(&task.id, &alice).await.unwrap_err();
    assert!(error.to_string().contains("Postgres"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Long enough for A's listener to back off to a pause of several seconds.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(!waiter.is_finished());

    tokio::task::block_in_place(|| server.restart());
    let mut answers = Map::new();
    answers.insert("k".into(), json!({ "action": "accept" }));
    let report = b
        .deliver_responses(&task.id, &alice, answers)
        .await
        .expect("B works again once Postgres is back");
    assert!(
        !a.shared.feed.online(),
        "A's listener must still be away for this test to mean anything"
    );
    let woken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("A's waiter is woken once its listener is back")
        .unwrap()
        .unwrap();
    assert_eq!(woken.version, report.version);
    assert_eq!(woken.status, TaskStatus::Working);
}
