//! Resumable SSE streams of legacy sessions (2025-11-25 Streamable HTTP, SEP-1699).
//!
//! Every SSE stream of a legacy session (the response of a POST that turned into SSE, and the
//! session's GET stream) is a [`Stream`] with a number; each event on it has the id
//! `{stream}-{seq}` (unique in the session, as the protocol requires), and the stream keeps its
//! last [`sse_replay`](super::HttpConfig::sse_replay) events. A client whose connection broke
//! sends `GET` with `Last-Event-ID`: it gets the events of that stream after the id, then the
//! stream goes on where it was (a POST's stream up to the reply to its request). Events of other
//! streams are never replayed on it.
//!
//! A POST's stream whose connection breaks before the reply does not cancel its request (the
//! protocol says a disconnection is not a cancellation): the stream is *parked*, what is sent
//! on it waits, and the client has [`sse_resume_window`](super::HttpConfig::sse_resume_window)
//! to come back; then the request is cancelled as a closed stream's always was. A tool may also
//! end its stream on purpose ([`ToolContext::close_stream`](crate::ToolContext::close_stream)):
//! the client then polls with `GET` + `Last-Event-ID` after the `retry` the stream's first event
//! named.

use super::routes::{CancelOnDrop, RouteGuard};
use crate::protocol::jsonrpc;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The number of a session's GET stream (POST streams count from 1).
pub(super) const GET_STREAM: u64 = 0;

/// How many finished POST streams a session keeps for replay (the newest ones).
const KEPT_FINISHED: usize = 32;

/// How many bytes of events one stream keeps at most (its newest event is always kept).
const STREAM_BYTES: usize = 1 << 20;

/// How many bytes of events a session's finished streams keep in all (the newest finished stream
/// is always kept).
const FINISHED_BYTES: usize = 4 << 20;

/// How long a resume waits for the response still serving the stream to let go of it.
const TAKEOVER: Duration = Duration::from_secs(5);

/// An event id: the stream's number and the event's place on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EventId {
    pub(super) stream: u64,
    pub(super) seq: u64,
}

impl EventId {
    /// Reads a `Last-Event-ID` this server wrote (`{stream}-{seq}`).
    pub(super) fn parse(text: &str) -> Option<EventId> {
        let (stream, seq) = text.trim().split_once('-')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(stream) || !digits(seq) {
            return None;
        }
        Some(EventId {
            stream: stream.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.stream, self.seq)
    }
}

/// What a stream reads from. The response serving the stream holds it (locked); a parked
/// stream's waits here for the client to come back.
#[derive(Default)]
pub(super) struct Source {
    /// A message taken before the stream started (it decided that the response is SSE).
    pub(super) first: Option<Value>,
    /// Messages sent on the stream.
    pub(super) rx: Option<mpsc::Receiver<Value>>,
    /// The reply to the POST's request (a GET stream has none).
    pub(super) reply: Option<oneshot::Receiver<Option<jsonrpc::Reply>>>,
    /// Cancels the POST's request if the stream is dropped before its reply.
    pub(super) cancel: Option<CancelOnDrop>,
    /// Keeps the POST's route open until its reply.
    pub(super) route: Option<RouteGuard>,
    /// The GET stream's sender, registered as the session's GET route while it is served.
    pub(super) get_tx: Option<mpsc::Sender<Value>>,
}

/// The events sent on a stream that it still keeps.
#[derive(Debug)]
struct Log {
    /// The seq of the next event (the first is 1; a stream's priming event has the id of the
    /// last event before it, `0` at first).
    next: u64,
    kept: VecDeque<(u64, Arc<str>)>,
    /// The bytes of the events kept.
    bytes: usize,
    /// How many it keeps.
    cap: usize,
    /// The reply has been sent: nothing comes after what is kept.
    finished: bool,
}

/// Why a `Last-Event-ID` cannot be resumed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ResumeError {
    /// This session has no such stream (never had, or it finished long enough ago to be dropped).
    UnknownStream,
    /// The stream no longer keeps the events after this id.
    Gone { oldest: u64, cap: usize },
    /// The id names an event the stream has not sent yet.
    Ahead,
    /// Another response still serves the stream and did not let go of it in time.
    Busy,
}

impl std::fmt::Display for ResumeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResumeError::UnknownStream => {
                f.write_str("this session has no stream with that number (it never had one, or it finished and was dropped)")
            }
            ResumeError::Gone { oldest, cap } => write!(
                f,
                "the stream keeps only its last {cap} events, and 1 MiB of them (the oldest kept is number {oldest}): \
                 what came after that id is lost; read the state again (tasks/get) or repeat the request"
            ),
            ResumeError::Ahead => f.write_str("the stream has sent no event with that id yet"),
            ResumeError::Busy => f.write_str(
                "another response still serves this stream and did not let go of it in time; try again",
            ),
        }
    }
}

/// One resumable SSE stream.
pub(super) struct Stream {
    pub(super) number: u64,
    log: Mutex<Log>,
    source: Arc<tokio::sync::Mutex<Source>>,
    /// Ends the response now serving the stream (a tool asked, or a resume takes over).
    detach: Arc<Mutex<CancellationToken>>,
    /// Counts the responses that served the stream: a parked stream's expiry checks that no
    /// other took it meanwhile.
    attaches: AtomicU64,
}

impl Stream {
    fn new(number: u64, cap: usize, source: Source) -> Stream {
        Stream {
            number,
            log: Mutex::new(Log {
                next: 1,
                kept: VecDeque::new(),
                bytes: 0,
                cap: cap.max(1),
                finished: false,
            }),
            source: Arc::new(tokio::sync::Mutex::new(source)),
            detach: Arc::default(),
            attaches: AtomicU64::new(0),
        }
    }

    /// Ends the response serving the stream, if any (the stream stays, for a resume).
    pub(super) fn close(&self) {
        lock(&self.detach).cancel();
    }

    /// Ends the response serving the stream when it is still there (what a route keeps, so that
    /// the tool can end its stream).
    pub(super) fn closer(&self) -> std::sync::Weak<Mutex<CancellationToken>> {
        Arc::downgrade(&self.detach)
    }

    /// The token the response now serving the stream ends on.
    pub(super) fn detach_token(&self) -> CancellationToken {
        lock(&self.detach).clone()
    }

    /// Records one event sent on the stream; returns its id. `last`: it is the reply, nothing
    /// comes after it.
    pub(super) fn record(&self, text: Arc<str>, last: bool) -> EventId {
        let mut log = lock(&self.log);
        let seq = log.next;
        log.next += 1;
        log.bytes += text.len();
        log.kept.push_back((seq, text));
        while log.kept.len() > log.cap || (log.bytes > STREAM_BYTES && log.kept.len() > 1) {
            if let Some((_, old)) = log.kept.pop_front() {
                log.bytes -= old.len();
            }
        }
        log.finished |= last;
        EventId {
            stream: self.number,
            seq,
        }
    }

    /// The id of the last event sent (`seq` 0 before any): where a priming event points.
    pub(super) fn last_id(&self) -> EventId {
        EventId {
            stream: self.number,
            seq: lock(&self.log).next - 1,
        }
    }

    pub(super) fn finished(&self) -> bool {
        lock(&self.log).finished
    }

    /// The bytes of the events it keeps.
    fn bytes(&self) -> usize {
        lock(&self.log).bytes
    }

    /// Nothing more will be sent on the stream.
    pub(super) fn finish(&self) {
        lock(&self.log).finished = true;
    }

    /// A new stream, taken by the response that made it (nothing can hold it yet).
    pub(super) fn attach_new(self: &Arc<Self>) -> Attached {
        let source =
            (self.source.clone().try_lock_owned()).expect("a new stream is held by nothing");
        self.attaches.fetch_add(1, Ordering::Relaxed);
        Attached {
            source,
            replay: VecDeque::new(),
            detach: self.detach_token(),
        }
    }

    /// The stream, taken to be served by a new response. `after`: replay the events after this
    /// seq, taking the stream from the response serving it now, if any (its client has most
    /// likely gone); `None`: a stream already served is [`ResumeError::Busy`].
    pub(super) async fn attach(
        self: &Arc<Self>,
        after: Option<u64>,
    ) -> Result<Attached, ResumeError> {
        let source = match self.source.clone().try_lock_owned() {
            Ok(source) => source,
            Err(_) if after.is_none() => return Err(ResumeError::Busy),
            Err(_) => {
                self.close();
                tokio::time::timeout(TAKEOVER, self.source.clone().lock_owned())
                    .await
                    .map_err(|_| ResumeError::Busy)?
            }
        };
        let replay = match after {
            None => VecDeque::new(),
            Some(after) => {
                let log = lock(&self.log);
                if after >= log.next {
                    return Err(ResumeError::Ahead);
                }
                let oldest = log.kept.front().map_or(log.next, |(seq, _)| *seq);
                if oldest > after + 1 {
                    return Err(ResumeError::Gone {
                        oldest,
                        cap: log.cap,
                    });
                }
                log.kept
                    .iter()
                    .filter(|(seq, _)| *seq > after)
                    .cloned()
                    .collect()
            }
        };
        *lock(&self.detach) = CancellationToken::new();
        self.attaches.fetch_add(1, Ordering::Relaxed);
        Ok(Attached {
            source,
            replay,
            detach: self.detach_token(),
        })
    }

    /// Called when a response stops serving a POST stream before its reply: after `window`,
    /// if no response took the stream meanwhile, its request is cancelled and the stream
    /// forgotten.
    pub(super) fn park(self: &Arc<Self>, streams: &Arc<Streams>, window: Duration) {
        let seen = self.attaches.load(Ordering::Relaxed);
        let (stream, streams) = (Arc::downgrade(self), Arc::downgrade(streams));
        tokio::spawn(async move {
            tokio::time::sleep(window).await;
            let Some(stream) = stream.upgrade() else {
                return;
            };
            if stream.attaches.load(Ordering::Relaxed) != seen || stream.finished() {
                return;
            }
            let Ok(mut source) = stream.source.clone().try_lock_owned() else {
                return;
            };
            tracing::debug!(
                stream = stream.number,
                "no client came back for a dropped SSE stream; its request is cancelled"
            );
            // Dropping the guard cancels the request; the route closes with it.
            source.cancel.take();
            source.route.take();
            source.rx.take();
            if let Some(streams) = streams.upgrade() {
                lock(&streams.map).remove(&stream.number);
            }
        });
    }
}

/// A stream taken by a response: its source, and what to replay first.
pub(super) struct Attached {
    pub(super) source: OwnedMutexGuard<Source>,
    pub(super) replay: VecDeque<(u64, Arc<str>)>,
    pub(super) detach: CancellationToken,
}

/// The resumable streams of one legacy session.
#[derive(Default)]
pub(super) struct Streams {
    next: AtomicU64,
    map: Mutex<HashMap<u64, Arc<Stream>>>,
    /// Finished POST streams and the bytes they keep, oldest first (only the newest
    /// [`KEPT_FINISHED`], and [`FINISHED_BYTES`] of them, stay).
    finished: Mutex<Finished>,
}

#[derive(Default)]
struct Finished {
    streams: VecDeque<(u64, usize)>,
    bytes: usize,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streams")
            .field("streams", &lock(&self.map).len())
            .finish()
    }
}

impl Streams {
    /// A new POST stream keeping its last `cap` events; a resume finds it once it is
    /// [`insert`](Self::insert)ed (when its response turns out to be SSE).
    pub(super) fn new_post(&self, cap: usize) -> Arc<Stream> {
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        Arc::new(Stream::new(number, cap, Source::default()))
    }

    pub(super) fn insert(&self, stream: &Arc<Stream>) {
        lock(&self.map).insert(stream.number, stream.clone());
    }

    /// The session's GET stream, made (reading from what `make` returns) the first time.
    pub(super) fn get_stream(&self, cap: usize, make: impl FnOnce() -> Source) -> Arc<Stream> {
        lock(&self.map)
            .entry(GET_STREAM)
            .or_insert_with(|| Arc::new(Stream::new(GET_STREAM, cap, make())))
            .clone()
    }

    pub(super) fn find(&self, number: u64) -> Option<Arc<Stream>> {
        lock(&self.map).get(&number).cloned()
    }

    /// A POST stream sent its reply: it stays for a replay until newer ones push it out.
    pub(super) fn finished(&self, number: u64) {
        let bytes = self.find(number).map_or(0, |s| s.bytes());
        let mut finished = lock(&self.finished);
        finished.streams.push_back((number, bytes));
        finished.bytes += bytes;
        while finished.streams.len() > KEPT_FINISHED
            || (finished.bytes > FINISHED_BYTES && finished.streams.len() > 1)
        {
            let Some((old, bytes)) = finished.streams.pop_front() else {
                break;
            };
            finished.bytes -= bytes;
            lock(&self.map).remove(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn event_ids_read_back_only_in_the_form_written() {
        let id = EventId { stream: 3, seq: 12 };
        assert_eq!(EventId::parse(&id.to_string()), Some(id));
        for bad in [
            "",
            "3",
            "3-",
            "-1",
            "a-1",
            "1-b",
            "1-2-3",
            "+1-2",
            "99999999999999999999-1",
        ] {
            assert_eq!(EventId::parse(bad), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_resume_replays_what_came_after_the_id_and_no_more_than_is_kept() {
        let streams = Streams::default();
        let stream = streams.new_post(3);
        streams.insert(&stream);
        assert_eq!(stream.last_id().seq, 0);
        for n in 1..=4 {
            assert_eq!(stream.record(text(&n.to_string()), false).seq, n);
        }
        // Kept: 2, 3, 4.
        let seqs = |a: &Attached| a.replay.iter().map(|(s, _)| *s).collect::<Vec<_>>();
        let attached = stream.attach(Some(1)).await.unwrap();
        assert_eq!(seqs(&attached), [2, 3, 4]);
        drop(attached);
        assert_eq!(seqs(&stream.attach(Some(3)).await.unwrap()), [4]);
        assert!(stream.attach(Some(4)).await.unwrap().replay.is_empty());
        assert_eq!(
            stream.attach(Some(0)).await.err(),
            Some(ResumeError::Gone { oldest: 2, cap: 3 })
        );
        assert_eq!(stream.attach(Some(5)).await.err(), Some(ResumeError::Ahead));
    }

    #[tokio::test]
    async fn a_resume_takes_the_stream_from_the_response_serving_it() {
        let streams = Streams::default();
        let stream = streams.new_post(8);
        let first = stream.attach_new();
        assert_eq!(stream.attach(None).await.err(), Some(ResumeError::Busy));
        let detach = first.detach.clone();
        let taker = tokio::spawn({
            let stream = stream.clone();
            async move { stream.attach(Some(0)).await.map(|_| ()) }
        });
        // The first response is told to let go, and the resume gets the stream once it does.
        detach.cancelled().await;
        drop(first);
        assert_eq!(taker.await.unwrap(), Ok(()));
    }

    #[test]
    fn a_stream_keeps_a_bounded_number_of_bytes_but_always_its_newest_event() {
        let streams = Streams::default();
        let stream = streams.new_post(1000);
        let big: Arc<str> = Arc::from("x".repeat(STREAM_BYTES / 2 + 1));
        stream.record(big.clone(), false);
        stream.record(big.clone(), false);
        assert_eq!(stream.bytes(), big.len(), "the older half-MiB event went");
        let huge: Arc<str> = Arc::from("y".repeat(STREAM_BYTES * 2));
        stream.record(huge.clone(), true);
        assert_eq!(
            stream.bytes(),
            huge.len(),
            "the newest is kept, however large"
        );
    }

    #[test]
    fn finished_streams_stay_within_a_byte_budget_the_newest_always() {
        let streams = Streams::default();
        let numbers: Vec<u64> = (0..3)
            .map(|_| {
                let s = streams.new_post(4);
                streams.insert(&s);
                s.record(Arc::from("z".repeat(STREAM_BYTES)), true);
                streams.finished(s.number);
                s.number
            })
            .collect();
        // 3 MiB: all stay. A 4th and 5th push the oldest out.
        assert!(numbers.iter().all(|n| streams.find(*n).is_some()));
        for _ in 0..2 {
            let s = streams.new_post(4);
            streams.insert(&s);
            s.record(Arc::from("z".repeat(STREAM_BYTES)), true);
            streams.finished(s.number);
        }
        assert!(streams.find(numbers[0]).is_none());
        assert!(streams.find(numbers[1]).is_some());
    }

    #[test]
    fn only_the_newest_finished_streams_stay() {
        let streams = Streams::default();
        let numbers: Vec<u64> = (0..KEPT_FINISHED + 2)
            .map(|_| {
                let s = streams.new_post(4);
                streams.insert(&s);
                streams.finished(s.number);
                s.number
            })
            .collect();
        assert!(streams.find(numbers[0]).is_none());
        assert!(streams.find(numbers[1]).is_none());
        assert!(streams.find(numbers[2]).is_some());
        assert!(streams.find(*numbers.last().unwrap()).is_some());
    }
}
