//! The built-in stores' fast paths, kept out of the public [`TaskStore`] trait.
//!
//! The server writes `tasks/get` straight from a store's record to text, and the engine and a
//! blocking `tasks/result` wait on a task's version and status only. A store that keeps its
//! records in memory can serve those without copying a record out (with its result and its input
//! requests' schemas); every other store serves them from its ordinary operations. So a store
//! author implements only [`TaskStore`], and the shortcuts live here:
//!
//! - [`FastPaths`], which only this crate can implement (it is public in a private module, so no
//!   other crate can name it), is reached through the hidden hook
//!   [`TaskStore::fast_paths`](super::TaskStore::fast_paths), `None` by default;
//! - the crate calls the operations on `dyn TaskStore` (`store.get_view(..)`,
//!   `store.finish_status(..)`, `store.changed_status(..)`), which take the fast path when the
//!   store has one and fall back to [`TaskStore::get`], [`TaskStore::finish`] and
//!   [`TaskStore::changed`] otherwise. A test below holds each fast path to its fallback.
//!
//! This is how `std` adds methods to `dyn Any` and `dyn Error`: inherent methods on the trait
//! object, so a caller needs no import and a store author never sees them.

use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus, TaskView};

use super::{StoreFuture, TaskStore};

/// Operations a store may serve faster than [`TaskStore`]'s generic fallbacks can, and what
/// the engine may rely on. Implemented by the built-in stores that gain from it (memory, SQLite,
/// Postgres); not nameable outside this crate. Each operation defaults to its generic fallback,
/// so a store overrides only what it serves faster.
pub trait FastPaths: TaskStore {
    /// Calls `read` on the task's [`TaskView`] if it exists and belongs to `owner`; `false` if
    /// it does not. What [`TaskStore::get`] then [`task_view`](crate::protocol::task::AsTaskView::task_view) give, but
    /// shown in place: the memory store calls `read` under its stripe lock, with a completed
    /// task's result as the text it keeps
    /// ([`OutcomeView::ResultText`](crate::protocol::task::OutcomeView::ResultText)), so a
    /// `tasks/get` written straight to text copies neither the record, nor its input requests'
    /// schemas, nor its result. `read` should be quick (it may hold a lock) and must not call
    /// the store.
    fn get_view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        generic::get_view(self, id, owner, read)
    }

    /// [`TaskStore::finish`] for a caller that only needs to know where the task stands
    /// afterwards: its version and status, without a copy of the record (which now carries the
    /// result).
    fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        generic::finish_status(self, id, outcome)
    }

    /// [`TaskStore::changed`] for a waiter that only needs to know where the task stands: its
    /// version and status once the version is past `seen_version`, without a copy of the record
    /// (a record waiting for input carries its requests' schemas).
    fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        generic::changed_status(self, id, seen_version)
    }

    /// Whether [`TaskStore::create`] queues the creation when it is called, before its future
    /// is polled, and the store applies every write on that task it is called for afterwards
    /// after it (one writer taking writes in order, as the SQLite store's; or writers that hold
    /// a task's writes back while its creation commits, as the Postgres store's). A write on the new
    /// task then succeeds once the creation has been applied, and fails with
    /// [`StoreError::NotFound`](super::StoreError::NotFound) if the creation failed; so the
    /// engine may start the tool while its task's creation commits.
    fn creates_in_order(&self) -> bool {
        false
    }

    /// For a store that may lose writes it acknowledged (Redis restarted from its last
    /// snapshot forgets the writes made after it): a count that changes whenever it may have
    /// (each time it reconnects). `None` for a store that keeps what it acknowledged. The engine
    /// writes again the outcomes such a store forgot (`task/recorded.rs`).
    fn forgetful_epoch(&self) -> Option<u64> {
        None
    }
}

impl<'s> dyn TaskStore + 's {
    /// [`FastPaths::get_view`] if the store has it, else [`TaskStore::get`] and the record's view.
    pub(crate) fn get_view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        match self.fast_paths() {
            Some(fast) => fast.get_view(id, owner, read),
            None => generic::get_view(self, id, owner, read),
        }
    }

    /// [`FastPaths::finish_status`] if the store has it, else [`TaskStore::finish`].
    pub(crate) fn finish_status<'a>(
        &'a self,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        match self.fast_paths() {
            Some(fast) => fast.finish_status(id, outcome),
            None => generic::finish_status(self, id, outcome),
        }
    }

    /// [`FastPaths::creates_in_order`], `false` for a store without fast paths.
    pub(crate) fn creates_in_order(&self) -> bool {
        self.fast_paths().is_some_and(FastPaths::creates_in_order)
    }

    /// [`FastPaths::forgetful_epoch`], `None` for a store without fast paths.
    pub(crate) fn forgetful_epoch(&self) -> Option<u64> {
        self.fast_paths().and_then(FastPaths::forgetful_epoch)
    }

    /// [`FastPaths::changed_status`] if the store has it, else [`TaskStore::changed`].
    pub(crate) fn changed_status<'a>(
        &'a self,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        match self.fast_paths() {
            Some(fast) => fast.changed_status(id, seen_version),
            None => generic::changed_status(self, id, seen_version),
        }
    }
}

/// The generic paths: [`TaskStore`]'s own operations, and what the caller needs of their record.
mod generic {
    use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
    use crate::store::{StoreFuture, TaskStore};

    pub(super) fn get_view<'a, S: TaskStore + ?Sized>(
        store: &'a S,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let record = store.get(id, owner).await?;
            Ok(record.map(|r| read(r.task_view())).is_some())
        })
    }

    pub(super) fn finish_status<'a, S: TaskStore + ?Sized>(
        store: &'a S,
        id: &'a TaskId,
        outcome: TaskOutcome,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(async move {
            let record = store.finish(id, outcome).await?;
            Ok((record.version, record.status))
        })
    }

    pub(super) fn changed_status<'a, S: TaskStore + ?Sized>(
        store: &'a S,
        id: &'a TaskId,
        seen_version: u64,
    ) -> StoreFuture<'a, (u64, TaskStatus)> {
        Box::pin(async move {
            let record = store.changed(id, seen_version).await?;
            Ok((record.version, record.status))
        })
    }
}

/// What each built-in store's tests run (`fast_paths_agree_with_the_generic_paths`): the fast
/// path, if the store has one, gives what the generic path gives. A store without fast paths
/// passes through its fallbacks, so they are held to the same rules.
#[cfg(test)]
pub(super) mod checks {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use crate::protocol::Era;
    use crate::protocol::task::{
        AsTaskView, Owner, TaskId, TaskOutcome, TaskShape, TaskStatus, TaskView,
    };
    use crate::protocol::{InputRequest, RpcError};
    use crate::store::{NewTask, StoreError, TaskStore};

    fn alice() -> Owner {
        Owner::new("alice")
    }

    fn bob() -> Owner {
        Owner::new("bob")
    }

    fn done(text: &str) -> TaskOutcome {
        TaskOutcome::Result(json!({"content": [{"type": "text", "text": text}], "isError": false}))
    }

    async fn create(store: &dyn TaskStore) -> TaskId {
        let new = NewTask::new(alice(), Era::Modern)
            .ttl(Some(Duration::from_secs(60)))
            .poll_interval(Some(Duration::from_secs(1)));
        store.create(new).await.expect("create").id
    }

    async fn ask(store: &dyn TaskStore, id: &TaskId, key: &str) {
        let request = InputRequest::new(
            "elicitation/create",
            json!({"mode": "form", "message": key, "requestedSchema": {"type": "object"}}),
        );
        store
            .add_input_request(id, key.into(), request)
            .await
            .expect("add_input_request");
    }

    /// Every check, on stores from `make` (a fresh, empty store each time).
    pub(in crate::store) async fn all(make: impl Fn() -> Arc<dyn TaskStore>) {
        get_view_shows_what_get_shows(&*make()).await;
        finish_status_finishes_like_finish(&*make()).await;
        changed_status_follows_changed(make()).await;
        creations_come_first(&*make()).await;
    }

    /// A store that says it creates in order
    /// ([`FastPaths::creates_in_order`](super::FastPaths::creates_in_order), asked after its
    /// first operation) keeps its word: a change called after `create`, and
    /// awaited before it, is applied after the creation (what lets the engine start a tool while
    /// its task's creation commits). Each store's tests say whether it makes that claim.
    async fn creations_come_first(store: &dyn TaskStore) {
        create(store).await;
        if !store.creates_in_order() {
            return;
        }
        for _ in 0..50 {
            let new = NewTask::new(alice(), Era::Modern);
            let id = new.id.clone();
            let creating = store.create(new);
            let finished = store
                .finish(&id, done("at once"))
                .await
                .expect("the task exists by then");
            assert_eq!(finished.status, TaskStatus::Completed);
            let created = creating.await.expect("created");
            assert_eq!((created.status, created.version), (TaskStatus::Working, 1));
            assert!(finished.version > created.version);
        }
    }

    /// `get_view` shows what `get` shows, in every state: each wire shape written from it is,
    /// byte for byte, the one written from the record `get` returns (and, as JSON, the one its
    /// tree writes, so a stored result kept as text reads back the same). Another owner sees nothing.
    async fn get_view_shows_what_get_shows(store: &dyn TaskStore) {
        let info = json!({"name": "server", "version": "1"});
        let shapes = [
            TaskShape::ModernCreate,
            TaskShape::ModernGet,
            TaskShape::ModernNotification,
            TaskShape::LegacyTask,
            TaskShape::LegacyCreate,
        ];
        let check = async |id: &TaskId| {
            let record = store.get(id, &alice()).await.unwrap().unwrap();
            for shape in shapes {
                let from_record = record.task_view().render(shape);
                let tree = serde_json::to_string(&from_record.to_value()).unwrap();
                let mut shown = None;
                let mut write = |view: TaskView<'_>| {
                    shown = Some(view.render(shape).to_text().get().to_owned());
                };
                assert!(store.get_view(id, &alice(), &mut write).await.unwrap());
                assert_eq!(
                    shown.as_deref(),
                    Some(from_record.to_text().get()),
                    "{shape:?}"
                );
                let parsed = shown
                    .as_deref()
                    .map(serde_json::from_str::<serde_json::Value>);
                assert_eq!(
                    parsed.and_then(Result::ok),
                    serde_json::from_str(&tree).ok(),
                    "{shape:?}"
                );
                let mut informed = None;
                let mut write = |view: TaskView<'_>| {
                    let text = view.render(shape).with_server_info(&info).to_text();
                    informed = Some(text.get().to_owned());
                };
                assert!(store.get_view(id, &alice(), &mut write).await.unwrap());
                let expected = from_record.with_server_info(&info).to_text();
                assert_eq!(informed.as_deref(), Some(expected.get()), "{shape:?}");
                let mut seen = false;
                let mut write = |_: TaskView<'_>| seen = true;
                let found = store.get_view(id, &bob(), &mut write).await.unwrap();
                assert!(!found && !seen, "another owner's task is shown");
            }
        };
        let asked = create(store).await;
        check(&asked).await;
        ask(store, &asked, "b").await;
        ask(store, &asked, "a").await;
        check(&asked).await;
        let results = [
            json!({"content": [{"type": "text", "text": "hi \"you\" \u{e9} \u{7f}"}], "isError": false}),
            json!({"content": [], "resultType": "complete", "structuredContent": {"x": [1.5, null, -2]}}),
            json!({"A": 1, "_meta": {"k": "v"}, "resultTypd": 0, "resultTypf": 1, "z\n": true}),
            json!({}),
            json!([1, "two"]),
            json!("text"),
        ];
        for result in results {
            let done = create(store).await;
            store
                .finish(&done, TaskOutcome::Result(result))
                .await
                .unwrap();
            check(&done).await;
        }
        let failed = create(store).await;
        let error = RpcError::internal("boom").with_data(json!({"why": ["x"]}));
        store
            .finish(&failed, TaskOutcome::Error(error))
            .await
            .unwrap();
        check(&failed).await;
        let cancelled = create(store).await;
        store.cancel(&cancelled, &alice()).await.unwrap();
        check(&cancelled).await;
        let mut seen = false;
        let mut write = |_: TaskView<'_>| seen = true;
        let missing = TaskId::new("missing");
        let found = store
            .get_view(&missing, &alice(), &mut write)
            .await
            .unwrap();
        assert!(!found && !seen);
    }

    /// `finish_status` ends a task the way `finish` does (and is as final), and tells where it
    /// stands.
    async fn finish_status_finishes_like_finish(store: &dyn TaskStore) {
        let id = create(store).await;
        let (version, status) = store.finish_status(&id, done("hi")).await.unwrap();
        let stored = store.get_unchecked(&id).await.unwrap().unwrap();
        assert_eq!((version, status), (stored.version, TaskStatus::Completed));
        assert_eq!(stored.outcome, Some(done("hi")));
        let again = store
            .finish_status(&id, TaskOutcome::Error(RpcError::internal("late")))
            .await
            .unwrap();
        assert_eq!(again, (version, status));
        assert_eq!(store.get_unchecked(&id).await.unwrap().unwrap(), stored);
        let missing = store
            .finish_status(&TaskId::new("no-such-task"), done("x"))
            .await;
        assert!(
            matches!(missing, Err(StoreError::NotFound)),
            "finish_status on an unknown task: {missing:?}"
        );
    }

    /// `changed_status` reads what `changed` reads, without the record: at once when the task is
    /// already past the version, else at its next change.
    async fn changed_status_follows_changed(store: Arc<dyn TaskStore>) {
        let id = create(&*store).await;
        let task = store.get_unchecked(&id).await.unwrap().unwrap();
        let now = store.changed_status(&id, 0).await.unwrap();
        assert_eq!(now, (task.version, TaskStatus::Working));
        let waiter = {
            let (store, id) = (store.clone(), id.clone());
            tokio::spawn(async move { store.changed_status(&id, task.version).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        let cancelled = store.cancel(&id, &alice()).await.unwrap();
        let seen = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the waiter is woken")
            .unwrap()
            .unwrap();
        assert_eq!(seen, (cancelled.record().version, TaskStatus::Cancelled));
        let missing = store.changed_status(&TaskId::new("missing"), 0).await;
        assert!(matches!(missing, Err(StoreError::NotFound)));
    }
}
