//! Reading a response body: whole but within the client's limit, only its start (for an error's
//! text), or as a `text/event-stream` of JSON messages, with a small incremental SSE parser.

use crate::wire::{Tap, WireDirection};
use serde_json::Value;
use std::time::Duration;

/// Where an SSE stream got to: the last event id and the server's retry hint.
#[derive(Debug, Default)]
pub(super) struct SseCursor {
    pub(super) last_id: Option<String>,
    pub(super) retry: Option<Duration>,
}

/// Reads a whole body, but never more than `max` bytes of it: a longer one is an error as soon
/// as its length (announced or read so far) is known to pass `max`.
pub(super) async fn read_body(mut resp: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    if let Some(length) = resp.content_length()
        && length > max as u64
    {
        return Err(too_long(max));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > max {
            return Err(too_long(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first `n` bytes of a body (fewer if it is shorter or breaks off), without reading the rest.
pub(super) async fn read_start(mut resp: reqwest::Response, n: usize) -> Vec<u8> {
    let mut start = Vec::new();
    while start.len() < n {
        match resp.chunk().await {
            Ok(Some(chunk)) => start.extend_from_slice(&chunk[..chunk.len().min(n - start.len())]),
            _ => break,
        }
    }
    start
}

fn too_long(max: usize) -> String {
    format!(
        "the server sent a message longer than the client's limit of {max} bytes (ClientBuilder::max_message)"
    )
}

/// Reads SSE events from `resp`, handing each JSON message to `each` until it returns `Some`
/// (then `Ok(Some(that))`) or the stream ends (`Ok(None)`). An event, or a line, longer than
/// `max` bytes is an error: the stream is left unread.
pub(super) async fn read_events<T>(
    resp: &mut reqwest::Response,
    cursor: &mut SseCursor,
    max: usize,
    tap: Option<&Tap>,
    mut each: impl FnMut(Value) -> Option<T>,
) -> Result<Option<T>, String> {
    let mut parser = SseParser::new(max);
    loop {
        let chunk = match resp.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) | Err(_) => return Ok(None),
        };
        for event in parser.push(&chunk)? {
            if let Some(id) = event.id {
                cursor.last_id = Some(id);
            }
            if let Some(retry) = event.retry {
                cursor.retry = Some(retry);
            }
            if event.data.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&event.data) {
                Ok(message) => {
                    if let Some(tap) = tap {
                        tap(WireDirection::Received, &event.data);
                    }
                    if let Some(done) = each(message) {
                        return Ok(Some(done));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "an SSE event that is not JSON; ignored"),
            }
        }
    }
}

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
struct SseEvent {
    id: Option<String>,
    data: String,
    retry: Option<Duration>,
}

/// A small incremental parser of `text/event-stream` (the WHATWG rules: `data:` lines joined by
/// newlines, `id:`, `retry:`, comments, any of the three line endings), that holds at most
/// `max` bytes of an unfinished line or event.
#[derive(Debug)]
struct SseParser {
    buf: Vec<u8>,
    current: SseEvent,
    has_data: bool,
    max: usize,
}

impl SseParser {
    fn new(max: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            current: SseEvent::default(),
            has_data: false,
            max,
        }
    }

    /// The events `bytes` completes; an error once an unfinished line or event passes `max`.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, String> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            // A lone `\r` at the end may be the first half of `\r\n`: wait for more.
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                break;
            }
            let skip = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            let line: Vec<u8> = self.buf.drain(..end + skip).take(end).collect();
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                let event = std::mem::take(&mut self.current);
                if self.has_data || event.id.is_some() || event.retry.is_some() {
                    events.push(event);
                }
                self.has_data = false;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (&*line, ""),
            };
            match field {
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                    if self.current.data.len() > self.max {
                        return Err(too_long(self.max));
                    }
                }
                "id" if !value.contains('\0') => self.current.id = Some(value.to_owned()),
                "retry" => {
                    if let Ok(ms) = value.parse::<u64>() {
                        self.current.retry = Some(Duration::from_millis(ms));
                    }
                }
                _ => {}
            }
        }
        // Room for the `data: ` before a value of `max` bytes.
        if self.buf.len() > self.max.saturating_add(6) {
            return Err(too_long(self.max));
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_on_blank_lines_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1024);
        assert!(
            p.push(b"id: 1\r\nretry: 250\r\ndata: {\"a\"")
                .unwrap()
                .is_empty()
        );
        let events = p
            .push(b":1}\r\n\r\n: comment\n\ndata: x\ndata: y\r\r\n")
            .unwrap();
        assert_eq!(
            events,
            vec![
                SseEvent {
                    id: Some("1".into()),
                    data: "{\"a\":1}".into(),
                    retry: Some(Duration::from_millis(250)),
                },
                SseEvent {
                    id: None,
                    data: "x\ny".into(),
                    retry: None
                },
            ]
        );
        // A priming event with an id and no data still moves the cursor.
        let events = p.push(b": ignored\n\nid: 7\ndata:\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].id.as_deref(), Some("7"));
    }

    #[tokio::test]
    async fn the_start_of_a_long_error_body_is_kept_and_a_long_answer_refused() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let body = "e".repeat(2000);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).await;
                let reply = format!(
                    "HTTP/1.1 400 Bad Request\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        let http = reqwest::Client::new();
        let start = read_start(http.get(&url).send().await.unwrap(), 500).await;
        assert_eq!(start, vec![b'e'; 500]);
        let refused = read_body(http.get(&url).send().await.unwrap(), 1000).await;
        assert!(refused.unwrap_err().contains("1000 bytes"));
        let whole = read_body(http.get(&url).send().await.unwrap(), 2000).await;
        assert_eq!(whole.unwrap().len(), 2000);
    }

    #[test]
    fn an_sse_line_or_event_over_the_limit_is_an_error_before_it_is_whole() {
        // One unfinished line past the limit: refused without waiting for its end.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 0123456789").unwrap().is_empty());
        assert!(p.push(b"abcdef").unwrap().is_empty());
        assert!(p.push(b"g").unwrap_err().contains("16 bytes"));
        // Short lines that add up to an event past the limit.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 01234567\n").unwrap().is_empty());
        assert!(p.push(b"data: 89abcdef\n").is_err());
        // At the limit is fine, and the buffer does not keep what was read.
        let mut p = SseParser::new(16);
        for _ in 0..100 {
            let events = p.push(b"data: 0123456789abcdef\n\n").unwrap();
            assert_eq!(events[0].data, "0123456789abcdef");
        }
        assert!(p.buf.is_empty());
    }
}
