//! The connections of [`Server::serve_http`](crate::Server::serve_http): the accept loop, each
//! connection served by hyper with the deadlines of [`HttpConfig`], and at most
//! `max_connections` open at once.
//!
//! - **Headers in time.** hyper's header-read deadline ([`HttpConfig::header_timeout`]) runs
//!   whenever a connection waits for a request's headers: from when it opens, and again from
//!   the end of each response. So it closes both a client that stalls half-way through its
//!   headers and a keep-alive connection left idle; a connection streaming a response (SSE) is
//!   not waiting and is never cut.
//! - **Room for a new client.** At the cap, or when `accept` fails for want of file descriptors,
//!   the oldest connection that has not sent a whole request yet is closed to make room: a crowd
//!   of stalled clients cannot keep a real one out. A connection that has had a request is never
//!   closed that way (its idle time is bounded by the header deadline). When no connection can
//!   make room, the new one is answered `503` at once and closed; those already open go on.
//! - **Graceful shutdown.** When `shutdown` resolves, accepting stops and every connection is
//!   told to finish its response in flight and close.

use super::HttpConfig;
use crate::race::{Either, first, unless};
use axum::Router;
use hyper::server::conn::http1;
use hyper::service::{Service as _, service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// What a connection over the cap is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
content-type: text/plain\r\ncontent-length: 41\r\nretry-after: 1\r\n\r\n\
the server has too many connections open\n";

/// How long the accept loop waits for the room a closed connection frees.
const ROOM_WAIT: Duration = Duration::from_millis(100);

/// One open connection, as the accept loop sees it.
#[derive(Default)]
struct Slot {
    /// Set by its first request: from then on it is never closed to make room.
    started: AtomicBool,
    /// Closes it to make room.
    evict: CancellationToken,
}

/// The open connections that have not had a request yet, oldest first (entries of connections
/// that have since closed or had one are dropped as they are met).
#[derive(Default)]
struct Waiting(VecDeque<Weak<Slot>>);

impl Waiting {
    fn push(&mut self, slot: &Arc<Slot>, cap: usize) {
        if self.0.len() >= cap.saturating_mul(2) {
            self.0
                .retain(|w| w.upgrade().is_some_and(|s| !s.started.load(Relaxed)));
        }
        self.0.push_back(Arc::downgrade(slot));
    }

    /// Closes the oldest connection still waiting for its first request; whether there was one.
    fn evict_oldest(&mut self) -> bool {
        while let Some(weak) = self.0.pop_front() {
            if let Some(slot) = weak.upgrade()
                && !slot.started.load(Relaxed)
            {
                slot.evict.cancel();
                return true;
            }
        }
        false
    }
}

/// Accepts connections on `listener` and serves `app` on each until `shutdown` resolves, then
/// waits for the open ones to finish their responses.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    config: &HttpConfig,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .keep_alive(true);
    let cap = config.max_connections;
    let open = Arc::new(Semaphore::new(cap));
    let mut waiting = Waiting::default();
    let graceful = GracefulShutdown::new();
    let service = TowerToHyperService::new(app);
    let mut last_warned: Option<Instant> = None;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = match unless(&mut shutdown, listener.accept()).await {
            None => break,
            Some(Ok((stream, _))) => stream,
            Some(Err(e)) => {
                // Out of file descriptors: make room (and let the closed connection's task
                // free its descriptor), else pause so the loop does not spin.
                if is_connection_error(&e) {
                    continue;
                }
                if waiting.evict_oldest() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                } else {
                    tracing::warn!(error = %e, "accept failed; retrying shortly");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                continue;
            }
        };
        let permit = match open.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) if waiting.evict_oldest() => {
                tokio::time::timeout(ROOM_WAIT, open.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(permit) = permit else {
            refuse(stream, &mut last_warned);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let slot = Arc::new(Slot::default());
        waiting.push(&slot, cap);
        let service = {
            let (service, slot) = (service.clone(), slot.clone());
            service_fn(move |request| {
                slot.started.store(true, Relaxed);
                service.call(request)
            })
        };
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        let open = crate::telemetry::Held::new(crate::telemetry::Gauge::Connections);
        tokio::spawn(async move {
            let _open = open;
            match first(connection, slot.evict.cancelled()).await {
                Either::Left(Ok(())) => {}
                Either::Left(Err(e)) => {
                    tracing::debug!(error = %e, "connection closed with an error");
                }
                Either::Right(()) => {
                    tracing::debug!("closed a connection with no request yet to make room");
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Answers a connection over the cap with [`BUSY`] as far as the socket takes it without
/// waiting, then closes it. Says so in the log at most once a second.
fn refuse(stream: TcpStream, last_warned: &mut Option<Instant>) {
    let _ = stream.try_write(BUSY);
    if last_warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
        *last_warned = Some(Instant::now());
        tracing::warn!("too many connections open: refusing new ones with 503");
    }
}

/// Whether a failed `accept` is about that one connection only.
fn is_connection_error(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    )
}
