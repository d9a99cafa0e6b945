//! Newline-delimited JSON-RPC over a reader and a writer (stdin/stdout for a real server). Lines
//! are framed by tokio-util's length-limited [`LinesCodec`]: an over-long line is never buffered
//! whole, only skipped up to its newline.

use super::{Outbound, Outgoing};
use crate::race::{Either, first};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, FramedRead, LinesCodec, LinesCodecError};

/// The longest line [`LineReader::new`] accepts (16 MiB; the server reads with its
/// `Limits::max_message`). A longer line is skipped (never buffered whole) and reported as
/// [`Incoming::Unreadable`].
#[cfg(test)]
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One item read from the peer.
#[derive(Debug)]
pub enum Incoming {
    /// A line of text (without the newline), not yet parsed.
    Line(String),
    /// A line longer than the reader's limit or not UTF-8; it was skipped.
    Unreadable(String),
}

/// The reading half: yields lines until end of input.
#[derive(Debug)]
pub struct LineReader<R> {
    frames: FramedRead<R, Lines>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Wraps a reader; lines may be up to [`MAX_LINE`] bytes.
    #[cfg(test)]
    pub fn new(reader: R) -> Self {
        Self::with_max(reader, MAX_LINE)
    }

    /// Wraps a reader; lines may be up to `max` bytes (without the newline).
    pub fn with_max(reader: R, max: usize) -> Self {
        let lines = Lines {
            codec: LinesCodec::new_with_max_length(max),
            max,
        };
        LineReader {
            frames: FramedRead::with_capacity(reader, lines, 64 * 1024),
        }
    }

    /// The next non-empty line, or `None` at end of input (or on a read error, which is logged).
    pub async fn next(&mut self) -> Option<Incoming> {
        Self::item(self.frames.next().await?)
    }

    /// [`next`](Self::next), but while the connection read or wrote a message within the last
    /// `spin`, the input is polled in a loop (the task yields to the scheduler between polls)
    /// instead of the thread going to sleep until the input is ready. A message written after
    /// the loop went to sleep starts it again.
    ///
    /// Waking a sleeping thread costs a futex and, on a virtual machine whose idle vCPU halts,
    /// tens of microseconds; a client that sends its next request soon after the last answer
    /// finds the input being polled. `Duration::ZERO` makes this [`next`](Self::next).
    pub async fn next_spinning(&mut self, activity: &Activity, spin: Duration) -> Option<Incoming> {
        if spin.is_zero() {
            return self.next().await;
        }
        // The clock is read only once the input has run dry: a busy connection does not pay
        // for it per message.
        let mut dry = false;
        loop {
            loop {
                let polled =
                    std::future::poll_fn(|cx| Poll::Ready(self.frames.poll_next_unpin(cx))).await;
                if let Poll::Ready(item) = polled {
                    return Self::item(item?);
                }
                if !dry {
                    // The last message was read a moment ago, by this reader.
                    activity.touch();
                    dry = true;
                }
                if !activity.within(spin) {
                    break;
                }
                tokio::task::yield_now().await;
            }
            if let Either::Left(item) = first(self.frames.next(), activity.wrote.notified()).await {
                return Self::item(item?);
            }
        }
    }

    fn item(read: std::io::Result<Incoming>) -> Option<Incoming> {
        match read {
            Ok(item) => Some(item),
            Err(e) => {
                tracing::warn!(error = %e, "reading the input failed; treating it as closed");
                None
            }
        }
    }
}

/// When a connection last read or wrote a message, for [`LineReader::next_spinning`]. The
/// writer started by [`spawn_writer`] marks each write.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Nanoseconds from `start` to the last message.
    last: AtomicU64,
    wrote: Notify,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            wrote: Notify::new(),
        }
    }
}

impl Activity {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// A message was read or written now.
    fn touch(&self) {
        self.last.store(self.now(), Ordering::Relaxed);
    }

    /// A message was written now: also wakes a reader that stopped polling.
    fn touch_written(&self) {
        self.touch();
        self.wrote.notify_one();
    }

    /// Whether the last message was less than `spin` ago.
    fn within(&self, spin: Duration) -> bool {
        let since = self.now().saturating_sub(self.last.load(Ordering::Relaxed));
        u128::from(since) < spin.as_nanos()
    }
}

/// [`LinesCodec`], with what it cannot read turned into an [`Incoming::Unreadable`] item (so the
/// stream goes on past it) and blank lines skipped.
#[derive(Debug)]
struct Lines {
    codec: LinesCodec,
    max: usize,
}

impl Lines {
    fn item(
        &self,
        decoded: Result<Option<String>, LinesCodecError>,
    ) -> std::io::Result<Option<Option<Incoming>>> {
        match decoded {
            // Blank: skipped (`Some(None)`: look for the next line).
            Ok(Some(line)) if line.bytes().all(|b| b.is_ascii_whitespace()) => Ok(Some(None)),
            Ok(Some(line)) => Ok(Some(Some(Incoming::Line(line)))),
            Ok(None) => Ok(None),
            // The codec skips the rest of the line, up to its newline, on the next calls.
            Err(LinesCodecError::MaxLineLengthExceeded) => Ok(Some(Some(Incoming::Unreadable(
                format!("message longer than {} bytes", self.max),
            )))),
            // The codec has consumed the line already.
            Err(LinesCodecError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => Ok(Some(
                Some(Incoming::Unreadable("message is not valid UTF-8".into())),
            )),
            Err(LinesCodecError::Io(e)) => Err(e),
        }
    }
}

impl Decoder for Lines {
    type Item = Incoming;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Incoming>> {
        loop {
            let decoded = self.codec.decode(buf);
            match self.item(decoded)? {
                Some(Some(item)) => return Ok(Some(item)),
                Some(None) => continue,
                None => return Ok(None),
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Incoming>> {
        loop {
            let decoded = self.codec.decode_eof(buf);
            match self.item(decoded)? {
                Some(Some(item)) => return Ok(Some(item)),
                Some(None) => continue,
                None => return Ok(None),
            }
        }
    }
}

/// Starts the writing half: one task that owns the writer and writes each queued message as one
/// line, flushing after each and marking `activity`. Ends when every [`Outbound`] is dropped or
/// the writer fails.
pub fn spawn_writer<W: AsyncWrite + Unpin + Send + 'static>(
    writer: W,
    activity: Arc<Activity>,
) -> (Outbound, JoinHandle<()>) {
    let (outbound, rx) = Outbound::channel();
    (outbound, tokio::spawn(write_loop(writer, rx, activity)))
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    activity: Arc<Activity>,
) {
    let mut line = Vec::with_capacity(1024);
    while let Some(msg) = rx.recv().await {
        line.clear();
        if msg.write_to(&mut line).is_err() {
            continue;
        }
        line.push(b'\n');
        // Write whatever else is queued before flushing: fewer syscalls under load.
        while let Ok(more) = rx.try_recv() {
            if more.write_to(&mut line).is_ok() {
                line.push(b'\n');
            }
            if line.len() > 1 << 20 {
                break;
            }
        }
        if let Err(e) = writer.write_all(&line).await {
            tracing::warn!(error = %e, "writing to the peer failed; closing");
            return;
        }
        if let Err(e) = writer.flush().await {
            tracing::warn!(error = %e, "flushing to the peer failed; closing");
            return;
        }
        activity.touch_written();
    }
    let _ = writer.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `LineReader` yields from `input`, lines as `Ok`, unreadable ones as `Err`.
    async fn read_all(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut reader = LineReader::with_max(input, max);
        let mut out = Vec::new();
        while let Some(item) = reader.next().await {
            out.push(match item {
                Incoming::Line(line) => Ok(line),
                Incoming::Unreadable(why) => Err(why),
            });
        }
        out
    }

    #[tokio::test]
    async fn lines_blank_lines_and_crlf() {
        let got = read_all(b"one\r\n\n  \r\ntwo\nlast without newline", 100).await;
        assert_eq!(
            got,
            [
                Ok("one".to_owned()),
                Ok("two".to_owned()),
                Ok("last without newline".to_owned())
            ]
        );
    }

    #[tokio::test]
    async fn the_limit_is_on_the_line_without_its_newline() {
        let ten = "x".repeat(10);
        let eleven = "y".repeat(11);
        let input = format!("{ten}\n{eleven}\n{ten}\r\nafter\n");
        let got = read_all(input.as_bytes(), 10).await;
        let too_long = Err("message longer than 10 bytes".to_owned());
        assert_eq!(
            got,
            [
                Ok(ten.clone()),
                too_long.clone(),
                // `\r` counts until it is stripped, as it always did.
                too_long,
                Ok("after".to_owned())
            ]
        );
    }

    #[tokio::test]
    async fn bad_utf8_is_named_and_reading_goes_on() {
        let got = read_all(b"ok\n\xff\xfe\nnext\n", 100).await;
        assert_eq!(
            got,
            [
                Ok("ok".to_owned()),
                Err("message is not valid UTF-8".to_owned()),
                Ok("next".to_owned())
            ]
        );
    }

    /// A reader that counts how often it is polled.
    struct Counting<R> {
        inner: R,
        polls: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl<R: AsyncRead + Unpin> AsyncRead for Counting<R> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
        }
    }

    struct Spinning {
        input: tokio::io::DuplexStream,
        polls: Arc<std::sync::atomic::AtomicUsize>,
        lines: mpsc::UnboundedReceiver<Incoming>,
        activity: Arc<Activity>,
    }

    impl Spinning {
        /// A reader task calling `next_spinning(spin)` in a loop over a pipe.
        fn start(spin: Duration) -> Spinning {
            let (input, read_end) = tokio::io::duplex(1024);
            let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let activity = Arc::new(Activity::default());
            let (tx, lines) = mpsc::unbounded_channel();
            let mut reader = LineReader::new(Counting {
                inner: read_end,
                polls: polls.clone(),
            });
            let a = activity.clone();
            tokio::spawn(async move {
                while let Some(item) = reader.next_spinning(&a, spin).await {
                    let _ = tx.send(item);
                }
            });
            Spinning {
                input,
                polls,
                lines,
                activity,
            }
        }

        async fn send_line(&mut self, line: &str) {
            self.input.write_all(line.as_bytes()).await.unwrap();
            self.input.write_all(b"\n").await.unwrap();
            match self.lines.recv().await {
                Some(Incoming::Line(got)) => assert_eq!(got, line),
                other => panic!("read {other:?}"),
            }
        }

        fn polls(&self) -> usize {
            self.polls.load(Ordering::Relaxed)
        }

        /// Polls of the input during `d`.
        async fn polls_during(&self, d: Duration) -> usize {
            let before = self.polls();
            tokio::time::sleep(d).await;
            self.polls() - before
        }
    }

    #[tokio::test]
    async fn after_a_message_the_input_is_polled_for_the_spin_then_the_reader_sleeps() {
        let spin = Duration::from_millis(40);
        let mut s = Spinning::start(spin);
        s.send_line("one").await;
        let polled = s.polls_during(Duration::from_millis(10)).await;
        assert!(polled > 3, "polled {polled} times within the spin");
        // Past the spin: the reader waits for input without polling it again.
        tokio::time::sleep(spin).await;
        assert_eq!(s.polls_during(Duration::from_millis(100)).await, 0);
        // A line that comes while it sleeps is read, and starts the spin again.
        s.send_line("two").await;
        let polled = s.polls_during(Duration::from_millis(10)).await;
        assert!(
            polled > 3,
            "polled {polled} times after a line read while asleep"
        );
        tokio::time::sleep(spin).await;
        assert_eq!(s.polls_during(Duration::from_millis(100)).await, 0);
    }

    #[tokio::test]
    async fn a_message_written_starts_the_spin_again() {
        let spin = Duration::from_millis(40);
        let mut s = Spinning::start(spin);
        s.send_line("one").await;
        tokio::time::sleep(spin * 2).await;
        assert_eq!(s.polls_during(Duration::from_millis(50)).await, 0);
        // A reply written long after the request (a slow tool): the client's next request is
        // likely soon after it.
        let (outbound, writer) = spawn_writer(tokio::io::sink(), s.activity.clone());
        assert!(outbound.send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        let polled = s.polls_during(Duration::from_millis(10)).await;
        assert!(polled > 3, "polled {polled} times after a write");
        tokio::time::sleep(spin).await;
        assert_eq!(s.polls_during(Duration::from_millis(100)).await, 0);
        s.send_line("two").await;
        drop(outbound);
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_zero_spin_sleeps_at_once() {
        let mut s = Spinning::start(Duration::ZERO);
        s.send_line("one").await;
        // The reader's one poll after the line may not have happened yet.
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(s.polls_during(Duration::from_millis(50)).await, 0);
        let (outbound, _writer) = spawn_writer(tokio::io::sink(), s.activity.clone());
        assert!(outbound.send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        assert_eq!(s.polls_during(Duration::from_millis(50)).await, 0);
        s.send_line("two").await;
    }

    #[tokio::test]
    async fn an_over_long_line_is_skipped_without_being_buffered() {
        let mut input = vec![b'z'; 8 * 1024 * 1024];
        input.extend_from_slice(b"\nafter\n");
        let mut reader = LineReader::with_max(&input[..], 1024);
        assert!(matches!(reader.next().await, Some(Incoming::Unreadable(_))));
        assert!(matches!(reader.next().await, Some(Incoming::Line(l)) if l == "after"));
        assert!(reader.next().await.is_none());
        let held = reader.frames.read_buffer().capacity();
        assert!(held <= 256 * 1024, "the reader grew to {held} bytes");
    }
}
