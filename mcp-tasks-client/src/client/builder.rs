//! `ClientBuilder`: the settings of a connection, and the three ways to connect (a spawned
//! process over stdio, Streamable HTTP, a `Server` in the same process).

use super::{Client, EraChoice};
use crate::error::Error;
use crate::handler::{DynHandler, InputHandler, NoInput};
use crate::http::{Auth, HttpWire, Inbox};
use crate::peer::{DuplexSend, Peer, Wire};
use crate::session::{ServerInfo, Session, TaskConfig, TaskMode, ToolCache};
use crate::wire::{Tap, WireDirection};
use futures_util::StreamExt;
use mcp_tasks_runtime::Era;
use mcp_tasks_runtime::Server;
use mcp_tasks_runtime::protocol::LEGACY_VERSION;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// The default of [`ClientBuilder::max_message`]: 16 MiB, as the server's.
const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The default of [`ClientBuilder::request_timeout`], as the TypeScript SDK's.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings of a connection; see [`Client::builder`].
pub struct ClientBuilder {
    handler: Arc<dyn DynHandler>,
    era: EraChoice,
    name: String,
    version: String,
    pub(crate) config: TaskConfig,
    discover_timeout: Duration,
    task_mode: TaskMode,
    task_ttl: Option<Duration>,
    bearer: Option<String>,
    /// Client credentials: (client id, secret).
    credentials: Option<(String, String)>,
    oauth_scopes: Option<String>,
    headers: HeaderMap,
    max_message: usize,
    request_timeout: Option<Duration>,
    /// Extra TLS roots, as PEM.
    root_certificates: Vec<Vec<u8>>,
    /// Sees every message's text ([`on_wire`](Self::on_wire)).
    tap: Option<Tap>,
    log_level: Option<String>,
    /// A legacy HTTP session to join ([`legacy_session`](Self::legacy_session)).
    legacy_session: Option<String>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("era", &self.era)
            .field("name", &self.name)
            .field("config", &self.config)
            .field("task_mode", &self.task_mode)
            .field("request_timeout", &self.request_timeout)
            .field("root_certificates", &self.root_certificates.len())
            .field("on_wire", &self.tap.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The longest message read from a server: 16 MiB unless set. Over stdio that is one line
    /// (without its newline); a server that sends a longer one is cut off: the line is not
    /// buffered, the connection counts as closed, and every request still waiting fails with
    /// [`Error::Transport`]. Over HTTP it bounds a JSON answer's body and each SSE event (and
    /// line) of a stream: a longer one fails the request it answers with [`Error::Transport`]
    /// (on the session's GET stream, the stream is closed), without reading the rest.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// How long any one request may wait for its answer: 60 s unless set; `None` waits for
    /// ever. A request that runs out fails with [`Error::Timeout`] (naming the method and the
    /// timeout) and is cancelled on the server. The clock starts again whenever the server
    /// shows the request is alive: progress for it (every `tools/call` carries a
    /// `progressToken`), or a question of its own (nothing times out while the input handler is
    /// answering one). It bounds each request, not a task: a task runs as long as the server
    /// lets it (each of its polls is one request); legacy `tasks/result`, which waits for the
    /// task's end by design, is exempt.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Answers what servers ask with `handler` (default: [`NoInput`], which declares nothing).
    pub fn handler(mut self, handler: impl InputHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Which era to speak (default [`EraChoice::Auto`]).
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }

    /// The client's name and version (`clientInfo`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Raises [`TaskUpdate::Stuck`](crate::TaskUpdate::Stuck) when a task's status, message and
    /// progress have not changed for this long (default: never).
    pub fn stuck_after(mut self, after: Duration) -> Self {
        self.config.stuck_after = Some(after);
        self
    }

    /// The poll interval when the server suggests none (default 1 s). When it does, its
    /// suggestion is honoured.
    pub fn default_poll_interval(mut self, interval: Duration) -> Self {
        self.config.default_poll_interval = interval;
        self
    }

    /// How long [`EraChoice::Auto`] waits for an answer to its probe (`server/discover`) before
    /// trying `initialize` (default 5 s; servers that answer with an error are not waited for).
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// Whether to ask for tasks (default [`TaskMode::Auto`]).
    pub fn tasks(mut self, mode: TaskMode) -> Self {
        self.task_mode = mode;
        self
    }

    /// Legacy era: the `ttl` asked for in `task` (default: the server's choice).
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = Some(ttl);
        self
    }

    /// HTTP: sends `Authorization: Bearer TOKEN` on every request (a token got elsewhere; it is
    /// never renewed).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self.credentials = None;
        self
    }

    /// HTTP, a server protected by OAuth 2.1: gets access tokens with the client credentials
    /// grant (for machines), as this client. On the server's first `401`, the client reads the
    /// server's protected resource metadata (RFC 9728, found through the challenge's
    /// `resource_metadata`), finds its authorization server's token endpoint (RFC 8414, else
    /// OpenID Connect Discovery), asks it for a token for this server (`resource`, RFC 8707)
    /// with [`oauth_scopes`](Self::oauth_scopes), the challenge's `scope`, or else the scopes the
    /// server supports, and sends the request again. A token that expires is renewed the same
    /// way; a `403` `insufficient_scope` gets a token with the scopes it names added (step-up),
    /// once per request. The browser (authorization code) flow is not supported.
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.credentials = Some((client_id.into(), client_secret.into()));
        self.bearer = None;
        self
    }

    /// The scopes to ask for with [`client_credentials`](Self::client_credentials),
    /// space-separated (e.g. `"research"`).
    pub fn oauth_scopes(mut self, scopes: impl Into<String>) -> Self {
        self.oauth_scopes = Some(scopes.into());
        self
    }

    /// HTTPS: also trusts the certificate(s) in `pem` (PEM text, one or more
    /// `-----BEGIN CERTIFICATE-----` blocks) as roots, besides the Mozilla roots built in: for a
    /// server with a self-signed certificate or a private CA. A certificate given here that the
    /// server presents as its own is accepted as it is, its name checked against the URL's host
    /// (an ordinary self-signed certificate says it is a CA, which the WebPKI alone refuses as a
    /// server's). A `pem` that holds no certificate makes [`connect_http`](Self::connect_http)
    /// fail with [`Error::Transport`].
    pub fn root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// HTTP: sends this header on every request.
    ///
    /// # Panics
    /// When the name or value is not a valid HTTP header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("a valid header name");
        let value = HeaderValue::from_str(value).expect("a valid header value");
        self.headers.insert(name, value);
        self
    }

    /// Asks the server for its log messages (`notifications/message`) of `level` and worse
    /// (`debug`, `info`, `notice`, `warning`, `error`, ...): on every request's `_meta` in the
    /// 2026-07-28 era, with `logging/setLevel` after `initialize` in 2025-11-25 (when the server
    /// declares `logging`). Unset, the server's default holds. They are seen with
    /// [`on_wire`](Self::on_wire).
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }

    /// HTTP, 2025-11-25: joins the legacy session `id` (the `Mcp-Session-Id` another client got
    /// from `initialize`, see [`Client::session_id`]) instead of opening one. A 2025-11-25 server
    /// may know a task only in the session that created it; joining it is how another process
    /// follows that task ([`Client::task`]) or gets its result, and answers its questions when the
    /// client that started it is gone (`mcp-tasks task watch ID --session SESSION`). There is no
    /// probe and no `initialize` (the era is 2025-11-25, whatever [`era`](Self::era) says): the
    /// session is checked with `ping`, and an unknown or expired one (or one that belongs to
    /// another bearer token) fails the connection with the server's refusal ([`Error::Rpc`] for
    /// `ping`, e.g. "Session not found", or [`Error::Http`]). The server's info and capabilities
    /// are not sent again: [`Client::server`] is empty. The client numbers its requests from a
    /// random point, so that its ids do not collide with those of the session's own client still
    /// in flight. [`Client::close`] leaves the session open. Over stdio, connecting fails with
    /// [`Error::Transport`].
    pub fn legacy_session(mut self, id: impl Into<String>) -> Self {
        self.legacy_session = Some(id.into());
        self
    }

    /// Calls `f` with the text of every JSON-RPC message, both ways, as it goes on the wire (a
    /// received message before it is acted on, exactly as the server sent it: key order kept;
    /// an HTTP body holding a batch is one call). For traces (`mcp-tasks --wire`) and for what
    /// a parsed `Value` loses. `f` runs on the connection's tasks: keep it short.
    pub fn on_wire(mut self, f: impl Fn(WireDirection, &str) + Send + Sync + 'static) -> Self {
        self.tap = Some(Arc::new(f));
        self
    }

    /// Starts `command` and speaks to it over its stdin and stdout (its stderr is left as the
    /// command says, inherited by default). The process is killed when the client is dropped;
    /// [`Client::close`] ends it gracefully.
    pub async fn connect_stdio(
        self,
        mut command: tokio::process::Command,
    ) -> Result<Client, Error> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command
            .spawn()
            .map_err(|e| Error::Transport(format!("could not start `{program}`: {e}")))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                let mut line = serde_json::to_vec(&message).expect("JSON values serialise");
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let send: DuplexSend = Box::new(move |m| tx.send(m).is_ok());
        let peer = Peer::new(
            Wire::Duplex(Mutex::new(Some(send))),
            self.handler.clone(),
            self.request_timeout,
            self.tap.clone(),
        );
        let weak = Arc::downgrade(&peer);
        let max = self.max_message;
        let tap = self.tap.clone();
        tokio::spawn(async move {
            let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(max));
            while let Some(line) = lines.next().await {
                let line = match line {
                    Ok(line) => line,
                    Err(LinesCodecError::MaxLineLengthExceeded) => {
                        tracing::error!(
                            max_bytes = max,
                            "the server sent a message longer than the client's limit; closing the connection"
                        );
                        break;
                    }
                    Err(LinesCodecError::Io(e)) => {
                        tracing::warn!(error = %e, "reading the server's output failed; closing the connection");
                        break;
                    }
                };
                if line.trim().is_empty() {
                    continue;
                }
                let Some(peer) = weak.upgrade() else { return };
                if let Some(tap) = &tap {
                    tap(WireDirection::Received, &line);
                }
                match serde_json::from_str::<Value>(&line) {
                    Ok(message) => peer.on_incoming(message),
                    Err(e) => {
                        tracing::warn!(error = %e, "a line from the server that is not JSON; ignored")
                    }
                }
            }
            if let Some(peer) = weak.upgrade() {
                peer.on_closed();
            }
        });
        self.finish(peer, Some(child)).await
    }

    /// Speaks Streamable HTTP to the endpoint at `url` (e.g. `http://127.0.0.1:8080/mcp`, or
    /// `https://...`). TLS is rustls (no OpenSSL), trusting the Mozilla roots built in and those
    /// added with [`root_certificate_pem`](Self::root_certificate_pem); a certificate that does
    /// not verify fails the connection with [`Error::Transport`].
    pub async fn connect_http(self, url: impl Into<String>) -> Result<Client, Error> {
        let url = url.into();
        match url
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase())
        {
            Some(scheme) if scheme == "http" || scheme == "https" => {}
            _ => {
                return Err(Error::Transport(format!(
                    "{url}: not an http:// or https:// URL"
                )));
            }
        }
        let tls = crate::http::tls::client_config(&self.root_certificates)?;
        let wire = HttpWire::new(
            url,
            match (&self.bearer, &self.credentials) {
                (Some(token), _) => Some(Auth::Static(token.clone())),
                (None, Some((id, secret))) => Some(Auth::client_credentials(
                    id.clone(),
                    secret.clone(),
                    self.oauth_scopes.clone(),
                )),
                _ => None,
            },
            self.headers.clone(),
            self.max_message,
            tls,
            self.tap.clone(),
        )?;
        let peer = Peer::new(
            Wire::Http(Box::new(wire)),
            self.handler.clone(),
            self.request_timeout,
            self.tap.clone(),
        );
        self.finish(peer, None).await
    }

    /// Connects to `server` in this process: messages are handed over in memory, with no process
    /// or socket (see [`Server::connect_in_memory`]). For tests of tools; see the crate docs.
    pub async fn connect_in_process(self, server: &Server) -> Result<Client, Error> {
        self.in_process(server.connect_in_memory()).await
    }

    /// [`connect_in_process`](Self::connect_in_process) as `principal`: the server sees this
    /// client as that caller (who owns its tasks, whose OAuth scopes its tools check; see
    /// [`Server::connect_in_memory_as`]). For tests of tools that need a scope.
    pub async fn connect_in_process_as(
        self,
        server: &Server,
        principal: mcp_tasks_runtime::Principal,
    ) -> Result<Client, Error> {
        self.in_process(server.connect_in_memory_as(principal))
            .await
    }

    async fn in_process(
        self,
        connection: mcp_tasks_runtime::server::InMemoryConnection,
    ) -> Result<Client, Error> {
        let (sender, mut receiver) = connection.split();
        let send: DuplexSend = Box::new(move |m| sender.send(m));
        let peer = Peer::new(
            Wire::Duplex(Mutex::new(Some(send))),
            self.handler.clone(),
            self.request_timeout,
            self.tap.clone(),
        );
        let weak = Arc::downgrade(&peer);
        let tap = self.tap.clone();
        tokio::spawn(async move {
            while let Some(message) = receiver.recv().await {
                let Some(peer) = weak.upgrade() else { return };
                if let Some(tap) = &tap {
                    tap(WireDirection::Received, &message.to_string());
                }
                peer.on_incoming(message);
            }
            if let Some(peer) = weak.upgrade() {
                peer.on_closed();
            }
        });
        self.finish(peer, None).await
    }

    async fn finish(
        self,
        peer: Arc<Peer>,
        child: Option<tokio::process::Child>,
    ) -> Result<Client, Error> {
        let mut inner = Session {
            peer,
            era: Era::Legacy,
            version: LEGACY_VERSION.into(),
            server: ServerInfo::from(&json!({}), None, false),
            client_info: json!({ "name": self.name, "version": self.version }),
            config: self.config.clone(),
            task_mode: self.task_mode,
            task_ttl: self.task_ttl,
            log_level: self.log_level.clone(),
            tools: Mutex::new(ToolCache::default()),
            child: tokio::sync::Mutex::new(child),
        };
        if let Some(id) = &self.legacy_session {
            let Some(http) = inner.peer.http() else {
                return Err(Error::Transport(
                    "a legacy session can be joined over HTTP only".into(),
                ));
            };
            http.join_legacy_session(id, LEGACY_VERSION);
            // The session's own client numbered its requests from 1, and some may still be in
            // flight (a `tasks/result` waits for the task's end): ids of ours must not collide.
            inner.peer.number_ids_apart();
            inner
                .peer
                .request("ping", json!({}))
                .await?
                .map_err(|error| Error::Rpc {
                    method: "ping".into(),
                    error,
                })?;
            let inbox: Arc<dyn Inbox> = inner.peer.clone();
            http.open_session_stream(Arc::downgrade(&inbox)).await;
            return Ok(Client {
                inner: Arc::new(inner),
            });
        }
        let modern = match self.era {
            EraChoice::Legacy => None,
            EraChoice::Modern => match inner.discover(None).await? {
                Ok(found) => Some(found),
                Err(why) => return Err(Error::Negotiation(why)),
            },
            // The spec's probe (2026-07-28 `versioning.mdx`): `server/discover`, which every
            // 2026-07-28 server must answer with a `DiscoverResult` and a 2025-11-25 server
            // cannot (over HTTP it refuses the POST at its transport). `ping` tells nothing: a
            // server of both eras (rmcp) answers it before anything else as a 2025-11-25 one.
            EraChoice::Auto => auto_discover(&inner, self.discover_timeout).await?,
        };
        match modern {
            Some((version, server)) => {
                inner.era = Era::Modern;
                inner.version = version;
                inner.server = server;
            }
            None => inner.initialize().await?,
        }
        Ok(Client {
            inner: Arc::new(inner),
        })
    }
}

/// `server/discover` while probing: the server's version and info when it speaks 2026-07-28,
/// `None` (try `initialize`) when it does not or does not answer within `timeout`.
async fn auto_discover(
    inner: &Session,
    timeout: Duration,
) -> Result<Option<(String, ServerInfo)>, Error> {
    Ok(match inner.discover(Some(timeout)).await? {
        Ok(found) => Some(found),
        Err(why) => {
            tracing::debug!(%why, "not a 2026-07-28 server; trying initialize");
            None
        }
    })
}

impl Client {
    /// Settings for a new connection.
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            handler: Arc::new(NoInput),
            era: EraChoice::Auto,
            name: "mcp-tasks-client".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            config: TaskConfig {
                stuck_after: None,
                default_poll_interval: Duration::from_secs(1),
                min_poll_interval: Duration::from_millis(10),
            },
            discover_timeout: Duration::from_secs(5),
            task_mode: TaskMode::Auto,
            task_ttl: None,
            bearer: None,
            credentials: None,
            oauth_scopes: None,
            headers: HeaderMap::new(),
            max_message: DEFAULT_MAX_MESSAGE,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            root_certificates: Vec::new(),
            tap: None,
            log_level: None,
            legacy_session: None,
        }
    }
}
