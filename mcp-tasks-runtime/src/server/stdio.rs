//! The stdio loop: one connection over a reader and a writer, newline-delimited JSON-RPC.

use super::connection::{Connection, Requestor};
use super::inner::ServerInner;
use crate::protocol::jsonrpc::{Message, RpcError, error_message};
use crate::race::{Either, first, unless};
use crate::tool::Principal;
use crate::transport::stdio::{Activity, Incoming, LineReader, spawn_writer};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Serves one connection until its input closes or `shutdown` resolves.
///
/// The loop runs as a task of its own, not in the caller's future: `#[tokio::main]` polls the
/// future it is given on the main thread, outside the scheduler's workers, so a loop running
/// there would hand every request and every reply across threads (a futex wake each way, which
/// a caller waiting on each answer feels). As a task, the reader, the
/// request tasks it spawns and the writer they wake stay on one worker while the load allows.
/// Dropping the returned future stops the loop, as it would if it ran in place.
pub(crate) async fn serve<R, W>(
    server: Arc<ServerInner>,
    principal: Option<Principal>,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let task = crate::tracker::AbortOnDropHandle::new(tokio::spawn(run(
        server, principal, reader, writer, shutdown,
    )));
    match task.await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

async fn run<R, W>(
    server: Arc<ServerInner>,
    principal: Option<Principal>,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let grace = server.config.shutdown_grace;
    let engine = server.engine().clone();
    engine.serve_started();
    let activity = Arc::new(Activity::default());
    let (outbound, writer_task) = spawn_writer(writer, activity.clone());
    // No authentication on stdio: whoever can start the server is its one client.
    let requestor = Requestor::local(principal);
    let conn = Connection::new(
        server,
        Arc::new(outbound),
        requestor,
        CancellationToken::new(),
    );
    let mut reader = LineReader::with_max(reader, conn.server.limits.max_message);
    let spin = conn.server.config.stdio_spin;
    let mut shutdown = std::pin::pin!(shutdown);
    let mut signalled = false;
    loop {
        // The signal first: a client that never stops sending does not hold it off.
        match unless(&mut shutdown, reader.next_spinning(&activity, spin)).await {
            Some(Some(Incoming::Line(line))) => {
                super::driver::on_message(&conn, Message::parse(&line))
            }
            Some(Some(Incoming::Unreadable(why))) => {
                let err = RpcError::new(RpcError::PARSE_ERROR, format!("Parse error: {why}"));
                conn.send(error_message(None, &err));
            }
            Some(None) => {
                tracing::debug!("input closed; finishing in-flight requests");
                break;
            }
            None => {
                tracing::info!("shutdown signal; cancelling in-flight requests");
                signalled = true;
                break;
            }
        }
    }
    conn.tracker.close();
    if !signalled {
        // In-flight requests may finish, within the grace period, unless a signal says stop now
        // (a signal that comes while we wait counts too: input often closes at the same moment).
        let finished = first(conn.tracker.wait(), tokio::time::sleep(grace));
        signalled = match first(finished, &mut shutdown).await {
            Either::Left(Either::Left(())) => false,
            Either::Left(Either::Right(())) => true,
            Either::Right(()) => {
                tracing::info!("shutdown signal; cancelling in-flight requests");
                true
            }
        };
    }
    if signalled {
        conn.closing.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), conn.tracker.wait()).await;
    }
    conn.close();
    drop(conn);
    // No task of this process is left running with nobody to finish it.
    engine.serve_ended().await;
    let _ = tokio::time::timeout(Duration::from_secs(2), writer_task).await;
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C (Ctrl-C only, off Unix). The serve entry points
/// ([`Server::serve_stdio`](super::Server::serve_stdio), [`Server::serve_io`](super::Server::serve_io),
/// [`Server::serve_http`](super::Server::serve_http)) stop on it, unless given a future of the host
/// program's with `.with_graceful_shutdown(future)`; then they install no signal handler.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                first(term.recv(), tokio::signal::ctrl_c()).await;
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
