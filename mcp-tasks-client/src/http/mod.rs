//! Streamable HTTP, the client side: every message is a POST; the answer is JSON or an SSE stream
//! that may carry the server's own requests and notifications before the response. Modern requests
//! carry `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`; legacy ones the session id, and the
//! session's GET stream brings what the server sends on its own.

mod oauth;
mod sse;
pub(crate) mod tls;

pub(crate) use oauth::Auth;

use crate::error::Error;
use crate::wire::{Tap, WireDirection};
use base64::Engine as _;
use mcp_tasks_runtime::__internal::{Message, with_causes};
use mcp_tasks_runtime::protocol::{RequestId, RpcError};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use sse::{SseCursor, read_body, read_events, read_start};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How many times a broken SSE response stream is resumed (`Last-Event-ID`) before giving up.
const MAX_RESUMES: u32 = 5;
/// How long opening a legacy session's GET stream may hold up `connect`.
const GET_STREAM_WAIT: Duration = Duration::from_secs(2);
/// The wait before resuming when the server named none (`retry:`).
const DEFAULT_RETRY: Duration = Duration::from_millis(500);

/// What a request to the server came to: its result, or the JSON-RPC error it got.
pub(crate) type Outcome = Result<Value, RpcError>;

/// Where the messages an HTTP stream carries besides the awaited response go (the server's own
/// requests and notifications).
pub(crate) trait Inbox: Send + Sync + 'static {
    /// One message from the server.
    fn deliver(self: Arc<Self>, message: Value);
}

#[derive(Debug, Default)]
struct HttpState {
    /// Modern: send `Mcp-Method` / `Mcp-Name`.
    modern: bool,
    /// `MCP-Protocol-Version` to send, once known.
    protocol_version: Option<String>,
    /// The legacy session.
    session_id: Option<String>,
    /// The session is another client's, joined ([`Core::join_legacy_session`]): not ours to end.
    joined: bool,
}

pub(crate) struct HttpWire {
    core: Arc<Core>,
    get_stream: Mutex<Option<JoinHandle<()>>>,
}

/// What requests need, shared with the background GET stream.
pub(crate) struct Core {
    http: reqwest::Client,
    url: String,
    headers: HeaderMap,
    /// Where the access token comes from, if the server needs one.
    auth: Option<Auth>,
    state: Mutex<HttpState>,
    /// Per tool, the arguments mirrored into `Mcp-Param-{name}` headers on `tools/call`.
    param_headers: Mutex<HashMap<String, Vec<(String, String)>>>,
    /// The longest JSON body or SSE event read from the server ([`crate::ClientBuilder::max_message`]).
    max_message: usize,
    /// Sees each message read ([`crate::ClientBuilder::on_wire`]).
    tap: Option<Tap>,
}

impl std::ops::Deref for HttpWire {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl std::fmt::Debug for HttpWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpWire")
            .field("url", &self.core.url)
            .finish_non_exhaustive()
    }
}

impl Drop for HttpWire {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.get_stream).take() {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A header value as the 2026-07-28 rules want it: as is when it is visible ASCII without edge
/// spaces, else `=?base64?…?=`.
fn header_text(value: &str) -> HeaderValue {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ');
    let text = if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    };
    HeaderValue::from_str(&text).expect("visible ASCII is a valid header value")
}

impl HttpWire {
    pub(crate) fn new(
        url: String,
        auth: Option<Auth>,
        extra: HeaderMap,
        max_message: usize,
        tls: Option<rustls::ClientConfig>,
        tap: Option<Tap>,
    ) -> Result<Self, Error> {
        // rustls, trusting the Mozilla roots built in, and any certificate the caller added
        // (see `tls::client_config`).
        let builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(Duration::from_secs(10));
        let builder = match tls {
            Some(config) => builder.use_preconfigured_tls(config),
            None => builder,
        };
        let http = builder.build().map_err(Error::transport)?;
        if let Some(Auth::Static(token)) = &auth
            && HeaderValue::from_str(&format!("Bearer {token}")).is_err()
        {
            return Err(Error::transport(
                "the bearer token is not a valid header value",
            ));
        }
        Ok(HttpWire {
            core: Arc::new(Core {
                http,
                url,
                headers: extra,
                auth,
                state: Mutex::new(HttpState::default()),
                param_headers: Mutex::new(HashMap::new()),
                max_message,
                tap,
            }),
            get_stream: Mutex::new(None),
        })
    }

    /// Opens the legacy session's GET stream, for what the server sends outside any response
    /// (some servers send a task's or a call's requests there). Returns once the server has
    /// answered the GET (or after [`GET_STREAM_WAIT`]), so that no request sent afterwards can
    /// outrun the stream; reading, and re-opening when it breaks, go on in the background. A
    /// server without one (405) is fine.
    pub(crate) async fn open_session_stream(&self, inbox: Weak<dyn Inbox>) {
        if lock(&self.state).session_id.is_none() {
            return;
        }
        let core = self.core.clone();
        let (opened, is_open) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut opened = Some(opened);
            let mut cursor = SseCursor::default();
            loop {
                let got = core.get(cursor.last_id.as_deref()).await;
                if let Some(opened) = opened.take() {
                    let _ = opened.send(());
                }
                let mut resp = match got {
                    Ok(r) if r.status().is_success() => r,
                    Ok(r) => {
                        tracing::debug!(status = %r.status(), "no GET stream for this session");
                        return;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "the session's GET stream failed");
                        return;
                    }
                };
                let read = read_events(
                    &mut resp,
                    &mut cursor,
                    core.max_message,
                    core.tap.as_ref(),
                    |m| {
                        if let Some(inbox) = inbox.upgrade() {
                            inbox.deliver(m);
                        }
                        None::<()>
                    },
                )
                .await;
                if let Err(e) = read {
                    // Opening it again would bring the same event again.
                    tracing::error!(error = %e, "the session's GET stream is closed");
                    return;
                }
                if inbox.strong_count() == 0 {
                    return;
                }
                tokio::time::sleep(cursor.retry.unwrap_or(DEFAULT_RETRY)).await;
            }
        });
        if let Some(old) = lock(&self.get_stream).replace(task) {
            old.abort();
        }
        let _ = tokio::time::timeout(GET_STREAM_WAIT, is_open).await;
    }

    /// Ends the legacy session (DELETE), if there is one.
    pub(crate) async fn close(&self) {
        if let Some(task) = lock(&self.get_stream).take() {
            task.abort();
        }
        let has_session = {
            let s = lock(&self.state);
            s.session_id.is_some() && !s.joined
        };
        if has_session {
            let mut headers = self.headers_for(&Value::Null);
            headers.remove(reqwest::header::CONTENT_TYPE);
            self.authorize(&mut headers).await;
            let _ = self.http.delete(&self.url).headers(headers).send().await;
            lock(&self.state).session_id = None;
        }
    }
}

impl Core {
    /// From now on, requests are modern (2026-07-28) with this version.
    pub(crate) fn set_modern(&self, version: &str) {
        let mut s = lock(&self.state);
        s.modern = true;
        s.protocol_version = Some(version.to_owned());
        s.session_id = None;
    }

    /// The `x-mcp-header` annotations of the tools, from `tools/list`.
    pub(crate) fn set_param_headers(&self, headers: HashMap<String, Vec<(String, String)>>) {
        *lock(&self.param_headers) = headers;
    }

    /// Before `initialize`: no version header, no session.
    pub(crate) fn start_initialize(&self) {
        *lock(&self.state) = HttpState::default();
    }

    /// From now on, requests go in the legacy session `id` that another client opened (with
    /// `initialize`, in `version`); [`HttpWire::close`] leaves it open.
    pub(crate) fn join_legacy_session(&self, id: &str, version: &str) {
        let mut s = lock(&self.state);
        s.modern = false;
        s.protocol_version = Some(version.to_owned());
        s.session_id = Some(id.to_owned());
        s.joined = true;
    }

    /// The legacy session's id, once the server gave one.
    pub(crate) fn session_id(&self) -> Option<String> {
        lock(&self.state).session_id.clone()
    }

    /// From now on, requests are legacy, in the negotiated version (and session, if any).
    pub(crate) fn set_legacy(&self, version: &str) {
        let mut s = lock(&self.state);
        s.modern = false;
        s.protocol_version = Some(version.to_owned());
    }

    fn headers_for(&self, message: &Value) -> HeaderMap {
        let mut headers = self.headers.clone();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if message.get("method").and_then(Value::as_str) == Some("tools/call") {
            self.add_param_headers(message, &mut headers);
        }
        let s = lock(&self.state);
        if let Some(v) = &s.protocol_version
            && let Ok(v) = HeaderValue::from_str(v)
        {
            headers.insert(HeaderName::from_static("mcp-protocol-version"), v);
        }
        if let Some(id) = &s.session_id
            && let Ok(v) = HeaderValue::from_str(id)
        {
            headers.insert(HeaderName::from_static("mcp-session-id"), v);
        }
        if s.modern
            && let Some(method) = message.get("method").and_then(Value::as_str)
        {
            headers.insert(HeaderName::from_static("mcp-method"), header_text(method));
            let params = message.get("params");
            let name_key = match method {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
                _ => None,
            };
            if let Some(name) = name_key
                .and_then(|k| params?.get(k))
                .and_then(Value::as_str)
            {
                headers.insert(HeaderName::from_static("mcp-name"), header_text(name));
            }
        }
        headers
    }

    /// `Mcp-Param-{name}` for each annotated argument of a `tools/call` that has a value.
    fn add_param_headers(&self, message: &Value, headers: &mut HeaderMap) {
        let params = message.get("params");
        let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return;
        };
        let known = lock(&self.param_headers);
        let Some(mirrored) = known.get(tool) else {
            return;
        };
        let args = params.and_then(|p| p.get("arguments"));
        for (arg, header) in mirrored {
            let text = match args.and_then(|a| a.get(arg)) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => continue,
            };
            if let Ok(name) = HeaderName::from_bytes(format!("mcp-param-{header}").as_bytes()) {
                headers.insert(name, header_text(&text));
            }
        }
    }

    /// Adds `Authorization: Bearer` with the current token, if there is one.
    async fn authorize(&self, headers: &mut HeaderMap) {
        let token = match &self.auth {
            Some(auth) => auth.token().await,
            None => None,
        };
        if let Some(value) = token.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok())
        {
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
    }

    /// POSTs `message`. With client credentials, a `401` (no token yet, or it expired) or a
    /// `403` `insufficient_scope` gets a new token (discovered from the challenge, with the
    /// scopes it names) and the message is sent again, once.
    async fn post(&self, message: &Value) -> Result<reqwest::Response, Error> {
        let body = serde_json::to_vec(message).expect("JSON values serialise");
        let mut renewed = false;
        loop {
            let mut headers = self.headers_for(message);
            self.authorize(&mut headers).await;
            let response = self
                .http
                .post(&self.url)
                .headers(headers)
                .body(body.clone())
                .send()
                .await
                .map_err(|e| Error::transport(format!("POST {}: {}", self.url, with_causes(&e))))?;
            let status = response.status();
            let Some(auth) = self.auth.as_ref().filter(|a| a.can_renew() && !renewed) else {
                return Ok(response);
            };
            if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                return Ok(response);
            }
            let challenge = (response.headers().get(reqwest::header::WWW_AUTHENTICATE))
                .and_then(|v| v.to_str().ok())
                .and_then(oauth::Challenge::parse);
            let step_up = challenge
                .as_ref()
                .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"));
            if status == StatusCode::FORBIDDEN && !step_up {
                return Ok(response);
            }
            auth.renew(&self.http, &self.url, challenge.as_ref())
                .await?;
            renewed = true;
        }
    }

    /// POSTs a request and reads its answer (JSON, or an SSE stream that may carry other messages
    /// first; those go to the peer).
    pub(crate) async fn request(
        &self,
        inbox: &Arc<dyn Inbox>,
        id: &RequestId,
        method: &str,
        message: Value,
    ) -> Result<Outcome, Error> {
        let resp = self.post(&message).await?;
        if method == "initialize"
            && let Some(session) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            lock(&self.state).session_id = Some(session.to_owned());
        }
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") && status.is_success() {
            return self.read_response_stream(inbox, id, method, resp).await;
        }
        let bytes = read_body(resp, self.max_message)
            .await
            .map_err(|e| Error::transport(format!("reading the answer to {method}: {e}")))?;
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            // Not a protocol matter, whatever the body says.
            return Err(Error::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(500)]).into_owned(),
            });
        }
        let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
        if parsed.is_some()
            && let Some(tap) = &self.tap
        {
            tap(WireDirection::Received, &String::from_utf8_lossy(&bytes));
        }
        if let Some(value) = parsed {
            let mut found = None;
            let messages = match value {
                Value::Array(items) => items,
                one => vec![one],
            };
            for m in messages {
                match take_response(m, id) {
                    Ok(outcome) => found = Some(outcome),
                    // A refusal before the body was read (HTTP 4xx) may not name the request.
                    Err(other) if !status.is_success() && other.get("id") == Some(&Value::Null) => {
                        if let Some(error) = other
                            .get("error")
                            .and_then(|e| serde_json::from_value(e.clone()).ok())
                        {
                            found = Some(Err(error));
                        }
                    }
                    Err(other) => inbox.clone().deliver(other),
                }
            }
            if let Some(outcome) = found {
                return Ok(outcome);
            }
        }
        if status == StatusCode::ACCEPTED || status.is_success() {
            return Err(Error::invalid(
                method,
                "the HTTP answer carried no response",
            ));
        }
        Err(Error::Http {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&bytes[..bytes.len().min(500)]).into_owned(),
        })
    }

    /// Reads an SSE response until the response to `id`, resuming with `Last-Event-ID` when the
    /// stream breaks after naming an event id.
    async fn read_response_stream(
        &self,
        inbox: &Arc<dyn Inbox>,
        id: &RequestId,
        method: &str,
        resp: reqwest::Response,
    ) -> Result<Outcome, Error> {
        let mut resp = resp;
        let mut cursor = SseCursor::default();
        let mut resumes = 0;
        loop {
            let read = read_events(
                &mut resp,
                &mut cursor,
                self.max_message,
                self.tap.as_ref(),
                |m| match take_response(m, id) {
                    Ok(outcome) => Some(outcome),
                    Err(other) => {
                        inbox.clone().deliver(other);
                        None
                    }
                },
            )
            .await
            .map_err(|e| {
                Error::transport(format!("reading the response stream of {method}: {e}"))
            })?;
            if let Some(outcome) = read {
                return Ok(outcome);
            }
            let Some(last) = cursor.last_id.clone() else {
                return Err(Error::transport(format!(
                    "the server ended the response stream of {method} without answering"
                )));
            };
            resumes += 1;
            if resumes > MAX_RESUMES {
                return Err(Error::transport(format!(
                    "the response stream of {method} broke {MAX_RESUMES} times"
                )));
            }
            tokio::time::sleep(cursor.retry.unwrap_or(DEFAULT_RETRY)).await;
            resp = self.get(Some(&last)).await?;
            if !resp.status().is_success() {
                return Err(Error::Http {
                    status: resp.status().as_u16(),
                    body: format!("resuming the response stream of {method}"),
                });
            }
        }
    }

    async fn get(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, Error> {
        let mut headers = self.headers_for(&Value::Null);
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.remove(reqwest::header::CONTENT_TYPE);
        if let Some(last) = last_event_id
            && let Ok(v) = HeaderValue::from_str(last)
        {
            headers.insert(HeaderName::from_static("last-event-id"), v);
        }
        self.authorize(&mut headers).await;
        self.http
            .get(&self.url)
            .headers(headers)
            .send()
            .await
            .map_err(|e| Error::transport(format!("GET {}: {}", self.url, with_causes(&e))))
    }

    /// POSTs a notification or a response (the server answers 202, nothing to read).
    pub(crate) async fn post_unanswered(&self, message: Value) -> Result<(), Error> {
        let resp = self.post(&message).await?;
        let status = resp.status();
        if status.is_success() {
            Ok(())
        } else {
            let body = read_start(resp, 500).await;
            Err(Error::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).into_owned(),
            })
        }
    }
}

/// `Ok(outcome)` when `message` is the response to `id`; the message back otherwise.
fn take_response(message: Value, id: &RequestId) -> Result<Outcome, Value> {
    let is_ours = message.get("method").is_none()
        && message.get("id").is_some_and(|v| match (v, id) {
            (Value::Number(n), RequestId::Number(i)) => n.as_i64() == Some(*i),
            (Value::String(s), RequestId::String(i)) => s == i,
            _ => false,
        });
    if !is_ours {
        return Err(message);
    }
    match Message::from_value(message.clone()) {
        Ok(Message::Response(r)) => Ok(r.outcome),
        _ => Err(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn modern_requests_carry_method_name_and_mirrored_argument_headers() {
        let wire = HttpWire::new(
            "http://127.0.0.1:1/mcp".into(),
            Some(Auth::Static("t0k".into())),
            HeaderMap::new(),
            1024,
            None,
            None,
        )
        .unwrap();
        wire.set_modern("2026-07-28");
        wire.set_param_headers(HashMap::from([(
            "weather".to_owned(),
            vec![
                ("region".to_owned(), "Region".to_owned()),
                ("days".to_owned(), "Days".to_owned()),
                ("metric".to_owned(), "Metric".to_owned()),
                ("note".to_owned(), "Note".to_owned()),
            ],
        )]));
        let message = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "weather", "arguments": {
                "region": "Zürich", "days": 3, "metric": false, "note": null
            } }
        });
        let mut h = wire.headers_for(&message);
        wire.authorize(&mut h).await;
        assert_eq!(h["mcp-protocol-version"], "2026-07-28");
        assert_eq!(h["mcp-method"], "tools/call");
        assert_eq!(h["mcp-name"], "weather");
        assert_eq!(h["authorization"], "Bearer t0k");
        assert_eq!(h["mcp-param-region"], "=?base64?WsO8cmljaA==?=");
        assert_eq!(h["mcp-param-days"], "3");
        assert_eq!(h["mcp-param-metric"], "false");
        assert!(
            h.get("mcp-param-note").is_none(),
            "null arguments are not mirrored"
        );

        let get = serde_json::json!({
            "jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": { "taskId": "abc" }
        });
        assert_eq!(wire.headers_for(&get)["mcp-name"], "abc");
        wire.set_legacy("2025-11-25");
        let h = wire.headers_for(&get);
        assert!(h.get("mcp-method").is_none() && h.get("mcp-name").is_none());
    }

    #[test]
    fn header_values_outside_visible_ascii_are_base64_sentinels() {
        assert_eq!(header_text("tools/call"), "tools/call");
        assert_eq!(header_text("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_text(" padded"), "=?base64?IHBhZGRlZA==?=");
    }
}
