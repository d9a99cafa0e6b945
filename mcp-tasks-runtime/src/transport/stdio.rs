//! Newline-delimited JSON-RPC over a reader and a writer (stdin/stdout for a real server).

use super::Outbound;
use crate::protocol::jsonrpc::Wire;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line accepted by default (16 MiB). A longer line is skipped (never buffered whole)
/// and reported as [`Incoming::Unreadable`].
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The largest line buffer a [`LineReader`] keeps between lines.
const KEPT_CAPACITY: usize = 64 * 1024;

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
    reader: BufReader<R>,
    buf: Vec<u8>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Wraps a reader; lines may be up to [`MAX_LINE`] bytes.
    pub fn new(reader: R) -> Self {
        Self::with_max(reader, MAX_LINE)
    }

    /// Wraps a reader; lines may be up to `max` bytes (without the newline).
    pub fn with_max(reader: R, max: usize) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            buf: Vec::new(),
            max,
        }
    }

    /// The next non-empty line, or `None` at end of input (or on a read error, which is logged).
    pub async fn next(&mut self) -> Option<Incoming> {
        loop {
            self.buf.clear();
            let mut too_long = false;
            loop {
                let available = match self.reader.fill_buf().await {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the input failed; treating it as closed");
                        return None;
                    }
                };
                if available.is_empty() {
                    if self.buf.is_empty() && !too_long {
                        return None;
                    }
                    break;
                }
                let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
                    Some(i) => (&available[..=i], true),
                    None => (available, false),
                };
                let n = chunk.len();
                if !too_long {
                    if self.buf.len() + n > self.max + 1 {
                        too_long = true;
                        self.buf.clear();
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                }
                self.reader.consume(n);
                if found {
                    break;
                }
            }
            if too_long {
                return Some(Incoming::Unreadable(format!(
                    "message longer than {} bytes",
                    self.max
                )));
            }
            while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
                self.buf.pop();
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // Copied out at its exact length: the buffer keeps its capacity for the next line,
            // instead of each line growing a fresh one step by step (unless a huge line grew it).
            let line = match std::str::from_utf8(&self.buf) {
                Ok(s) => Incoming::Line(s.to_owned()),
                Err(_) => Incoming::Unreadable("message is not valid UTF-8".into()),
            };
            if self.buf.capacity() > KEPT_CAPACITY {
                self.buf = Vec::new();
            }
            return Some(line);
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

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::UnboundedReceiver<Value>) {
    let mut line = Vec::with_capacity(1024);
    while let Some(msg) = rx.recv().await {
        line.clear();
        if serde_json::to_writer(&mut line, &Wire(&msg)).is_err() {
            continue;
        }
        line.push(b'\n');
        // Write whatever else is queued before flushing: fewer syscalls under load.
        while let Ok(more) = rx.try_recv() {
            if serde_json::to_writer(&mut line, &Wire(&more)).is_ok() {
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
