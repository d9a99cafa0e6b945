//! Waiting for the first of two futures, in plain code: what this crate and `mcp-tasks-client`
//! write instead of `tokio::select!`, whose proc macro (tokio's `macros` feature) would bring syn
//! into every build of the client. (`futures_util::select!` has one too.)
//!
//! The futures are polled in the order given, each time the task wakes: the first one wins when
//! both are ready, as in a `select!` that says `biased;`. The other is dropped when the race
//! ends, as `select!` drops its other branches. So put a cancellation or a deadline before a
//! stream that may always have something ready, or the stream starves it.

use futures_util::FutureExt;
use std::future::{Future, Pending, pending};
use std::pin::Pin;
use std::task::{Context, Poll};

pub use futures_util::future::Either;

// Futures of their own, not `async fn`s: an `async fn` keeps its arguments and the future it
// awaits in separate fields, which would double a request's future (`server/driver.rs` tests
// its size).

/// `a`'s output, or `b`'s if `b` is ready first; `a`'s when both are.
pub fn first<A: Future, B: Future>(a: A, b: B) -> First<A, B> {
    First { a, b }
}

pin_project_lite::pin_project! {
    /// The future of [`first`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct First<A, B> {
        #[pin]
        a: A,
        #[pin]
        b: B,
    }
}

impl<A: Future, B: Future> Future for First<A, B> {
    type Output = Either<A::Output, B::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.a.poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        this.b.poll(cx).map(Either::Right)
    }
}

/// `fut`'s output, or `None` if `stop` is ready first (or both are).
pub fn unless<S: Future, F: Future>(stop: S, fut: F) -> impl Future<Output = Option<F::Output>> {
    first(stop, fut).map(|out| match out {
        Either::Left(_) => None,
        Either::Right(out) => Some(out),
    })
}

/// `fut` if there is one, else a future that is never ready: a branch that is switched off.
pub fn or_never<F: Future>(fut: Option<F>) -> Either<F, Pending<F::Output>> {
    match fut {
        Some(fut) => Either::Left(fut),
        None => Either::Right(pending()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Either, first, or_never, unless};
    use std::future::{pending, ready};

    #[tokio::test]
    async fn the_first_ready_wins_and_the_first_given_when_both_are() {
        assert!(matches!(first(ready(1), ready("b")).await, Either::Left(1)));
        assert!(matches!(
            first(pending::<()>(), ready(2)).await,
            Either::Right(2)
        ));
        assert_eq!(unless(ready(()), ready(3)).await, None);
        assert_eq!(unless(pending::<()>(), ready(3)).await, Some(3));
        let off: Option<std::future::Ready<u8>> = None;
        assert!(matches!(
            first(or_never(off), ready(4)).await,
            Either::Right(4)
        ));
    }
}
