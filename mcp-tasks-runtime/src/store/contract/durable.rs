//! The checks of durable tasks: queued when their runner stops, claimed by exactly one
//! instance, released at once, limited in runs, and what they keep (checkpoints, answers).

use super::*;
use crate::store::DurableRun;

const LEASE: Duration = Duration::from_secs(10);

fn durable_task(runner: &str, max_attempts: u32) -> NewTask {
    new_task(alice()).runner(runner).durable(DurableRun {
        arguments: Some(json!({"items": 3})),
        caller: None,
        capabilities: json!({"elicitation": {}}),
        protocol_version: "2026-07-28".into(),
        attempt: 1,
        max_attempts,
        checkpoint: None,
    })
}

/// A durable task whose runner's lease lapses is not failed: it is queued
/// ([`TaskRecord::QUEUED`], [`TaskRecord::RELEASED_MESSAGE`]) and reported as released; later
/// sweeps report it as queued, changing nothing, until an instance claims it. A task that is
/// not durable fails as before.
pub(super) async fn durable_tasks_are_queued_when_their_runner_stops(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    let durable = env.store.create(durable_task("a", 3)).await.unwrap();
    let plain = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    env.clock.advance(LEASE + Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&plain.id], "the plain task fails: {report:?}");
    let released: Vec<_> = report.released.iter().map(|t| &t.id).collect();
    assert_eq!(released, [&durable.id], "the durable one is released");
    let queued = env.read(&durable.id).await;
    assert_eq!(
        queued, report.released[0],
        "the report shows the stored record"
    );
    assert_eq!(queued.status, TaskStatus::Working);
    assert!(queued.is_queued());
    assert_eq!(
        queued.status_message.as_deref(),
        Some(TaskRecord::RELEASED_MESSAGE)
    );
    assert_eq!(queued.version, durable.version + 1);

    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(
        report.queued,
        std::slice::from_ref(&durable.id),
        "{report:?}"
    );
    assert!(report.released.is_empty() && report.failed.is_empty());
    assert_eq!(
        env.read(&durable.id).await,
        queued,
        "a sweep leaves it queued"
    );
}

/// Of any number of instances claiming a queued task at once, exactly one wins: it becomes the
/// runner, the run number goes up, and the record keeps the call. A task that is not queued
/// (running on a live instance, or ended, or unknown) is claimed by nobody.
pub(super) async fn one_claim_of_a_queued_task_wins(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    let task = env.store.create(durable_task("a", 3)).await.unwrap();
    assert_eq!(env.store.claim(&task.id, "b").await.unwrap(), None);
    assert!(env.store.release(&task.id, "a").await.unwrap());
    assert!(env.read(&task.id).await.is_queued());

    let claims: Vec<_> = (0..8)
        .map(|n| {
            let (store, id) = (env.store.clone(), task.id.clone());
            tokio::spawn(async move { store.claim(&id, &format!("i{n}")).await })
        })
        .collect();
    let mut winners = Vec::new();
    for (n, claim) in claims.into_iter().enumerate() {
        if let Some(record) = resolved(claim).await.unwrap() {
            winners.push((n, record));
        }
    }
    assert_eq!(winners.len(), 1, "exactly one claim wins: {winners:?}");
    let (n, won) = &winners[0];
    assert_eq!(won.runner, Some(format!("i{n}")));
    let run = won.durable.as_deref().expect("the call is kept");
    assert_eq!(run.attempt, 2);
    assert_eq!(run.arguments, Some(json!({"items": 3})));
    assert_eq!(env.read(&task.id).await, *won);
    assert!(!won.is_queued());

    env.store.finish(&task.id, done("ok")).await.unwrap();
    assert_eq!(env.store.claim(&task.id, "z").await.unwrap(), None);
    assert!(!env.store.release(&task.id, &format!("i{n}")).await.unwrap());
    assert_eq!(
        env.store
            .claim(&TaskId::new("no-such-task"), "z")
            .await
            .unwrap(),
        None
    );
}

/// Only a task's runner can release it, and only a durable one; a released task is queued at
/// once, without waiting for a lease to lapse.
pub(super) async fn only_the_runner_releases_a_durable_task(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    let task = env.store.create(durable_task("a", 3)).await.unwrap();
    let plain = env
        .store
        .create(new_task(alice()).runner("a"))
        .await
        .unwrap();
    assert!(!env.store.release(&task.id, "b").await.unwrap());
    assert!(!env.store.release(&plain.id, "a").await.unwrap());
    assert_eq!(env.read(&plain.id).await, plain);
    assert!(env.store.release(&task.id, "a").await.unwrap());
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.queued, std::slice::from_ref(&task.id), "{report:?}");
}

/// A durable task has at most `max_attempts` runs: once that many have died, it fails with
/// [`TaskRecord::exhausted_message`].
pub(super) async fn a_durable_task_fails_once_its_runs_are_spent(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    let task = env.store.create(durable_task("a", 2)).await.unwrap();
    env.clock.advance(LEASE + Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    assert_eq!(report.released.len(), 1, "{report:?}");
    env.store.renew_lease("b", LEASE).await.unwrap();
    let claimed = env.store.claim(&task.id, "b").await.unwrap().unwrap();
    assert_eq!(claimed.durable.as_deref().unwrap().attempt, 2);
    env.clock.advance(LEASE + Duration::from_secs(1));
    let report = env.store.expire(env.clock.now()).await.unwrap();
    let failed: Vec<_> = report.failed.iter().map(|t| &t.id).collect();
    assert_eq!(failed, [&task.id], "{report:?}");
    let ended = env.read(&task.id).await;
    assert_eq!(ended.status, TaskStatus::Failed);
    assert_eq!(
        ended.status_message,
        Some(TaskRecord::exhausted_message(2)),
        "the message says how many runs died"
    );
}

/// A durable task keeps its last checkpoint (not a change clients see), and every task keeps
/// the answers its tool took: taking one again gives it again.
pub(super) async fn checkpoints_and_taken_answers_are_kept(make: Factory<'_>) {
    let env = env(make);
    env.store.renew_lease("a", LEASE).await.unwrap();
    let task = env.store.create(durable_task("a", 3)).await.unwrap();
    env.store
        .checkpoint(&task.id, json!({"done": 1}))
        .await
        .unwrap();
    env.store
        .checkpoint(&task.id, json!({"done": 2}))
        .await
        .unwrap();
    let kept = env.read(&task.id).await;
    assert_eq!(
        kept.durable.as_deref().unwrap().checkpoint,
        Some(json!({"done": 2}))
    );
    assert_eq!(kept.last_updated_at, task.last_updated_at, "not visible");

    env.ask(&task.id, "elicit-0").await;
    env.store
        .deliver_responses(&task.id, &alice(), answers(&[("elicit-0", answer("yes"))]))
        .await
        .unwrap();
    let first = env.store.take_response(&task.id, "elicit-0").await.unwrap();
    assert_eq!(first, Some(answer("yes")));
    let after = env.read(&task.id).await;
    let again = env.store.take_response(&task.id, "elicit-0").await.unwrap();
    assert_eq!(again, first, "taking again gives the answer again");
    assert_eq!(env.read(&task.id).await.version, after.version);
    assert_eq!(after.answers.get("elicit-0"), Some(&answer("yes")));

    env.store.finish(&task.id, done("ok")).await.unwrap();
    assert!(matches!(
        env.store.checkpoint(&task.id, json!(3)).await,
        Err(StoreError::Terminal(TaskStatus::Completed))
    ));
}
