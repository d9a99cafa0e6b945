//! Backends for calls that run inline (not as tasks), and the progress notifications of a call
//! that carried a `progressToken` ([`ProgressLine`]: the tool's own, and the keepalive ones sent
//! while the call has nothing to say, [`keep_alive`]). They reach the client through the [`Peer`]
//! interface only.

use super::peer::Peer;
use crate::protocol::{InputRequest, ResourceContents};
use crate::race::{Either, first};
use crate::tool::{ContextBackend, InputError, InputFuture, PublishFuture};
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::time::Instant;

/// The backend of an inline call in a legacy session. (Inline modern calls use MRTR instead:
/// `task::mrtr`.) `line`: where its progress and status go, when the request carried a
/// `progressToken`.
pub(crate) fn legacy_backend(
    conn: Weak<dyn Peer>,
    line: Option<Arc<ProgressLine>>,
) -> Arc<dyn ContextBackend> {
    Arc::new(LegacyInline { conn, line })
}

/// The `notifications/progress` of one request that carried a `progressToken`, while it runs
/// inline: the tool's own ([`report`](Self::report)) and the keepalive ones
/// ([`keep_alive`]). The spec (both eras, "Progress") says the value MUST increase with each
/// notification; the line keeps it so across both kinds.
pub(crate) struct ProgressLine {
    conn: Weak<dyn Peer>,
    token: Value,
    sent: Mutex<Sent>,
}

/// What a [`ProgressLine`] has sent, and the tool's latest status.
struct Sent {
    /// The last value sent, if any.
    last: Option<f64>,
    /// The last `total` the tool gave.
    total: Option<f64>,
    /// The tool's latest `ctx.status(..)`.
    status: Option<String>,
    /// The message of the tool's latest progress.
    message: Option<String>,
    /// When the last notification went out (or the line began).
    at: Instant,
}

impl ProgressLine {
    /// A line for the request whose `_meta.progressToken` is `token`, on `conn`.
    pub(crate) fn new(conn: Weak<dyn Peer>, token: Value) -> Arc<Self> {
        Arc::new(ProgressLine {
            conn,
            token,
            sent: Mutex::new(Sent {
                last: None,
                total: None,
                status: None,
                message: None,
                at: Instant::now(),
            }),
        })
    }

    fn sent(&self) -> std::sync::MutexGuard<'_, Sent> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tool's own progress. A value that does not increase on the last one sent (or is not a
    /// number JSON can carry) goes out as the next value above it, with the tool's `total` and
    /// `message`.
    pub(crate) fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let mut sent = self.sent();
        let progress = match sent.last {
            _ if !progress.is_finite() => above(sent.last),
            Some(last) if progress <= last => above(Some(last)),
            _ => progress,
        };
        sent.total = total.filter(|t| t.is_finite());
        sent.message.clone_from(&message);
        self.send(&mut sent, progress, message);
    }

    /// The tool's latest status (`ctx.status(..)`): the message of the keepalive notifications
    /// from now on.
    pub(crate) fn status(&self, message: String) {
        self.sent().status = Some(message);
    }

    /// Sends a keepalive notification if `every` has passed since the last one went out (the
    /// tool's latest status as its message, else its latest progress message); when the next is
    /// due.
    fn keepalive(&self, every: Duration) -> Instant {
        let mut sent = self.sent();
        let now = Instant::now();
        if now < sent.at + every {
            return sent.at + every;
        }
        let message = sent.status.clone().or_else(|| sent.message.clone());
        let progress = above(sent.last);
        self.send(&mut sent, progress, message);
        now + every
    }

    /// When the next keepalive is due.
    fn due(&self, every: Duration) -> Instant {
        self.sent().at + every
    }

    /// Sends one notification (under the lock, so values go out in the order they were taken).
    fn send(&self, sent: &mut Sent, progress: f64, message: Option<String>) {
        sent.last = Some(progress);
        sent.at = Instant::now();
        let Some(conn) = self.conn.upgrade() else {
            return;
        };
        let mut params = json!({ "progressToken": self.token, "progress": progress });
        if let Some(total) = sent.total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        conn.send(crate::protocol::jsonrpc::notification_message(
            "notifications/progress",
            params,
        ));
    }
}

/// A progress value above `last`: `0` first, then a step too small to read as progress (a
/// billionth of the value, at least of 1), so that the tool's next real step is still above it.
fn above(last: Option<f64>) -> f64 {
    match last {
        None => 0.0,
        Some(last) => {
            let next = last + last.abs().max(1.0) * 1e-9;
            if next > last { next } else { last.next_up() }
        }
    }
}

/// Runs `fut` while keeping its request alive: whenever `every` passes with nothing sent on
/// `line`, a `notifications/progress` goes out (hosts reset their request timeout on progress).
/// One timer, for calls with a progress token only.
pub(crate) async fn keep_alive<F: Future>(
    line: &ProgressLine,
    every: Duration,
    fut: F,
) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut due = line.due(every);
    loop {
        match first(&mut fut, tokio::time::sleep_until(due)).await {
            Either::Left(out) => return out,
            Either::Right(()) => due = line.keepalive(every),
        }
    }
}

/// `inner`, with the tool's status also kept on `line` (for the keepalive notifications' message).
pub(crate) fn with_status(
    inner: Arc<dyn ContextBackend>,
    line: Arc<ProgressLine>,
) -> Arc<dyn ContextBackend> {
    Arc::new(StatusOnLine { inner, line })
}

/// See [`with_status`].
struct StatusOnLine {
    inner: Arc<dyn ContextBackend>,
    line: Arc<ProgressLine>,
}

impl ContextBackend for StatusOnLine {
    fn input(&self, request: InputRequest) -> InputFuture {
        self.inner.input(request)
    }

    fn status(&self, message: String) {
        self.line.status(message.clone());
        self.inner.status(message);
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.inner.progress(progress, total, message);
    }

    fn log(&self, params: Value) {
        self.inner.log(params);
    }

    fn task_id(&self) -> Option<&str> {
        self.inner.task_id()
    }

    fn publish(&self, name: String, contents: ResourceContents) -> PublishFuture {
        self.inner.publish(name, contents)
    }

    fn start_task(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send>>> {
        self.inner.start_task()
    }

    fn is_replay(&self) -> bool {
        self.inner.is_replay()
    }

    fn close_stream(&self) -> bool {
        self.inner.close_stream()
    }
}

/// Inline in a legacy session: input requests are plain server-to-client requests.
struct LegacyInline {
    conn: Weak<dyn Peer>,
    line: Option<Arc<ProgressLine>>,
}

impl ContextBackend for LegacyInline {
    fn input(&self, request: InputRequest) -> InputFuture {
        let conn = self.conn.clone();
        Box::pin(async move {
            let conn = conn.upgrade().ok_or(InputError::Disconnected)?;
            conn.request(&request.method, request.params)
                .await
                .map_err(InputError::from_rpc)
        })
    }

    fn status(&self, message: String) {
        if let Some(line) = &self.line {
            line.status(message);
        }
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(line) = &self.line {
            line.report(progress, total, message);
        }
    }

    fn log(&self, params: Value) {
        send_log(&self.conn, params);
    }

    fn close_stream(&self) -> bool {
        self.conn.upgrade().is_some_and(|conn| conn.close_stream())
    }
}

/// Sends a `notifications/message` on the connection (on HTTP, on the stream of the request it
/// comes from).
pub(crate) fn send_log(conn: &Weak<dyn Peer>, params: Value) {
    if let Some(conn) = conn.upgrade() {
        conn.send(crate::protocol::jsonrpc::notification_message(
            "notifications/message",
            params,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::LogLevel;
    use crate::protocol::jsonrpc::RequestId;
    use crate::protocol::task::Owner;
    use crate::server::era::Era;
    use crate::server::peer::{Answer, LegacySession};
    use crate::tool::Principal;
    use tokio::sync::oneshot;

    /// A peer that keeps what is sent to it.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Value>>);

    impl Peer for Recorder {
        fn send(&self, message: Value) -> bool {
            self.0.lock().unwrap().push(message);
            true
        }
        fn close_stream(&self) -> bool {
            false
        }
        fn request<'a>(&'a self, _method: &'a str, _params: Value) -> Answer<'a> {
            unreachable!("not asked")
        }
        fn owner(&self, _era: &Era) -> Owner {
            Owner::new("t")
        }
        fn principal(&self) -> Option<Principal> {
            None
        }
        fn identified(&self) -> bool {
            false
        }
        fn session(&self) -> Option<LegacySession> {
            None
        }
        fn open_session(&self, _session: LegacySession) -> bool {
            false
        }
        fn set_log_level(&self, _level: LogLevel) -> bool {
            false
        }
        fn after_reply(&self, _id: &RequestId) -> oneshot::Receiver<()> {
            oneshot::channel().1
        }
    }

    #[test]
    fn values_increase_across_the_tools_progress_and_the_keepalives() {
        let recorder = Arc::new(Recorder::default());
        let peer: Arc<dyn Peer> = recorder.clone();
        let line = ProgressLine::new(Arc::downgrade(&peer), json!("tok"));
        // Nothing is due before the interval has passed.
        let due = line.keepalive(Duration::from_secs(3600));
        assert!(due > Instant::now());
        line.keepalive(Duration::ZERO);
        line.report(1.0, Some(4.0), Some("one".into()));
        line.keepalive(Duration::ZERO);
        line.status("working".into());
        line.keepalive(Duration::ZERO);
        // A value that does not increase, and one JSON cannot carry.
        line.report(1.0, Some(4.0), None);
        line.report(f64::NAN, None, None);
        line.report(2.0, None, None);
        let sent = recorder.0.lock().unwrap().clone();
        let params: Vec<&Value> = sent.iter().map(|m| &m["params"]).collect();
        assert!(sent.iter().all(|m| m["method"] == "notifications/progress"));
        assert!(params.iter().all(|p| p["progressToken"] == "tok"));
        let values: Vec<f64> = params
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert_eq!(values.len(), 7, "{sent:?}");
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        assert_eq!([values[0], values[1], values[6]], [0.0, 1.0, 2.0]);
        let messages: Vec<Option<&str>> = params.iter().map(|p| p["message"].as_str()).collect();
        assert_eq!(
            messages,
            [
                None,
                Some("one"),
                Some("one"),
                Some("working"),
                None,
                None,
                None
            ]
        );
        // A keepalive carries the tool's last total.
        assert_eq!(params[2]["total"], 4.0);
        assert!(params[0].get("total").is_none());
    }

    #[test]
    fn above_is_a_small_step_up() {
        assert_eq!(above(None), 0.0);
        assert!(above(Some(0.0)) > 0.0 && above(Some(0.0)) < 1e-6);
        assert!(above(Some(3.0)) > 3.0 && above(Some(3.0)) < 3.000001);
        assert!(above(Some(-2.0)) > -2.0);
        assert!(above(Some(1e300)) > 1e300);
    }
}
