//! tokio-util's `TaskTracker` and `AbortOnDropHandle`, in small. Theirs come with tokio-util's
//! `rt` feature, which turns on futures-util's default features and so its proc macro
//! (futures-macro, syn) in every build, `mcp-tasks-client`'s included.

use futures_util::FutureExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use tokio::sync::Notify;
use tokio::task::{JoinError, JoinHandle};

/// Tasks spawned through it are counted; [`wait`](Self::wait) resolves once it is closed and
/// every one of them has ended (returned, panicked or been aborted). Closing does not stop
/// [`spawn`](Self::spawn): a task spawned after it is waited for too. Clones share the count.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskTracker(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    /// Twice the number of tasks running, plus one while closed: one atomic operation per task
    /// started and ended, and "closed and empty" is `1`.
    state: AtomicUsize,
    /// Woken when the state becomes `1`.
    idle: Notify,
}

impl TaskTracker {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Spawns `fut` on the runtime, counted until it ends. A combinator, not an async block,
    /// around `fut`: the spawned task is no larger than `fut` and the count's handle.
    pub(crate) fn spawn<F>(&self, fut: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.state.fetch_add(2, Ordering::Relaxed);
        let running = Running(self.0.clone());
        tokio::spawn(fut.map(move |out| {
            drop(running);
            out
        }))
    }

    /// From now on [`wait`](Self::wait) resolves once no task is running.
    pub(crate) fn close(&self) {
        if self.0.state.fetch_or(1, Ordering::AcqRel) == 0 {
            self.0.idle.notify_waiters();
        }
    }

    /// Undoes [`close`](Self::close).
    pub(crate) fn reopen(&self) {
        self.0.state.fetch_and(!1, Ordering::AcqRel);
    }

    /// Resolves once the tracker is closed and no task spawned through it is running.
    pub(crate) async fn wait(&self) {
        loop {
            // Made before the check: a `notify_waiters` after it wakes it, even unpolled.
            let idle = self.0.idle.notified();
            if self.0.state.load(Ordering::Acquire) == 1 {
                return;
            }
            idle.await;
        }
    }
}

/// One running task of a [`TaskTracker`]; dropped with the task's future, however it ends.
struct Running(Arc<Inner>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.state.fetch_sub(2, Ordering::AcqRel) == 3 {
            self.0.idle.notify_waiters();
        }
    }
}

/// A task's `JoinHandle` that aborts the task when dropped.
#[derive(Debug)]
pub(crate) struct AbortOnDropHandle<T>(JoinHandle<T>);

impl<T> AbortOnDropHandle<T> {
    pub(crate) fn new(handle: JoinHandle<T>) -> Self {
        AbortOnDropHandle(handle)
    }
}

impl<T> Drop for AbortOnDropHandle<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> Future for AbortOnDropHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::TaskTracker;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn wait_resolves_once_closed_and_every_task_ended() {
        let tracker = TaskTracker::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tracker.spawn(async move {
            let _ = rx.await;
        });
        let panics = tracker.spawn(async { panic!("a task that panics still counts as ended") });
        let aborted = tracker.spawn(std::future::pending::<()>());
        aborted.abort();
        let waited = tokio::time::timeout(Duration::from_secs(1), tracker.wait()).await;
        assert!(waited.is_err(), "not closed yet");
        tracker.close();
        let waited = tokio::time::timeout(Duration::from_secs(1), tracker.wait()).await;
        assert!(waited.is_err(), "a task still runs");
        let waiting = tokio::spawn({
            let tracker = tracker.clone();
            async move { tracker.wait().await }
        });
        tx.send(()).unwrap();
        waiting.await.unwrap();
        assert!(panics.await.unwrap_err().is_panic());
        tracker.reopen();
        let waited = tokio::time::timeout(Duration::from_secs(1), tracker.wait()).await;
        assert!(waited.is_err(), "reopened");
    }

    #[tokio::test]
    async fn an_empty_tracker_is_done_when_closed() {
        let tracker = TaskTracker::new();
        tracker.close();
        tracker.wait().await;
    }
}
