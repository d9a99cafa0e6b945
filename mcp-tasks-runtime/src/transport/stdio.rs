//! Newline-delimited JSON-RPC over a reader and a writer (stdin/stdout for a real server). Lines
//! are framed by tokio-util's length-limited [`LinesCodec`]: an over-long line is never buffered
//! whole, only skipped up to its newline.

use super::{Outbound, Outgoing};
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, FramedRead, LinesCodec, LinesCodecError};

/// The longest line accepted by default (16 MiB). A longer line is skipped (never buffered whole)
/// and reported as [`Incoming::Unreadable`].
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
        match self.frames.next().await? {
            Ok(item) => Some(item),
            Err(e) => {
                tracing::warn!(error = %e, "reading the input failed; treating it as closed");
                None
            }
        }
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
/// line, flushing after each. Ends when every [`Outbound`] is dropped or the writer fails.
pub fn spawn_writer<W: AsyncWrite + Unpin + Send + 'static>(
    writer: W,
) -> (Outbound, JoinHandle<()>) {
    let (outbound, rx) = Outbound::channel();
    (outbound, tokio::spawn(write_loop(writer, rx)))
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
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
