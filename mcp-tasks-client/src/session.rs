//! One connection's state: the wire, the agreed era, what the server said, and how requests get
//! the era's additions. Shared by the [`Client`](crate::Client) and the tasks it follows.

use crate::error::Error;
use crate::http::{Inbox, Outcome};
use crate::peer::Peer;
use mcp_tasks_runtime::__internal::{MODERN_VERSIONS, meta};
use mcp_tasks_runtime::protocol::{LEGACY_VERSION, MODERN_VERSION, RpcError, TASKS_EXTENSION};
use mcp_tasks_runtime::{Era, TaskSupport};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Whether the client asks for tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Modern: declare the tasks extension on every request (the server decides). Legacy: send
    /// `task` for tools whose `execution.taskSupport` is `optional` or `required`, when the server
    /// declares task-augmented `tools/call`.
    #[default]
    Auto,
    /// Never ask for tasks: tools that can only run as tasks fail with
    /// [`Error::TaskCreation`].
    Never,
}

/// What the server said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// `serverInfo.name` (empty when the server sent none).
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// Instructions for the model.
    pub instructions: Option<String>,
    /// The server's capabilities, as sent.
    pub capabilities: Value,
    /// Whether the server runs tool calls as tasks (modern: the tasks extension; legacy:
    /// `tasks.requests.tools.call`).
    pub supports_tasks: bool,
}

impl ServerInfo {
    pub(crate) fn from(result: &Value, server_info: Option<&Value>, modern: bool) -> Self {
        let text = |v: Option<&Value>, k: &str| {
            v.and_then(|v| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let capabilities = result.get("capabilities").cloned().unwrap_or(json!({}));
        let supports_tasks = if modern {
            capabilities
                .get("extensions")
                .and_then(|e| e.get(TASKS_EXTENSION))
                .is_some()
        } else {
            capabilities.pointer("/tasks/requests/tools/call").is_some()
        };
        ServerInfo {
            name: text(server_info, "name").unwrap_or_default(),
            version: text(server_info, "version").unwrap_or_default(),
            title: text(server_info, "title"),
            instructions: text(Some(result), "instructions"),
            capabilities,
            supports_tasks,
        }
    }
}

/// What `tools/list` said, kept for calls: legacy `taskSupport`, and the arguments mirrored into
/// `Mcp-Param-*` headers (`x-mcp-header`).
#[derive(Debug, Default)]
pub(crate) struct ToolCache {
    /// Whether `tools/list` has been read at all.
    pub(crate) listed: bool,
    pub(crate) tools: HashMap<String, Option<TaskSupport>>,
    /// Tools left out of the list, and why.
    pub(crate) invalid: HashMap<String, String>,
}

/// How tasks are followed.
#[derive(Debug, Clone)]
pub(crate) struct TaskConfig {
    pub(crate) stuck_after: Option<Duration>,
    pub(crate) default_poll_interval: Duration,
    pub(crate) min_poll_interval: Duration,
}

/// A connection after the era was agreed: what every request and task needs.
pub(crate) struct Session {
    pub(crate) peer: Arc<Peer>,
    pub(crate) era: Era,
    /// The protocol version agreed within the era (`server/discover`'s or `initialize`'s).
    pub(crate) version: String,
    pub(crate) server: ServerInfo,
    pub(crate) client_info: Value,
    pub(crate) config: TaskConfig,
    pub(crate) task_mode: TaskMode,
    pub(crate) task_ttl: Option<Duration>,
    /// The least severe server log level wanted ([`crate::ClientBuilder::log_level`]).
    pub(crate) log_level: Option<String>,
    /// What the last `tools/list` said about each tool.
    pub(crate) tools: Mutex<ToolCache>,
    pub(crate) child: tokio::sync::Mutex<Option<tokio::process::Child>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("era", &self.era)
            .field("version", &self.version)
            .field("server", &self.server.name)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Client capabilities for this era.
    fn capabilities(&self, modern: bool) -> Value {
        let mut caps = self.peer.handler().capabilities().to_json();
        if modern && self.task_mode == TaskMode::Auto {
            caps.insert("extensions".into(), json!({ TASKS_EXTENSION: {} }));
        }
        Value::Object(caps)
    }

    fn modern_meta(&self) -> Value {
        let mut meta = json!({
            meta::PROTOCOL_VERSION: MODERN_VERSION,
            meta::CLIENT_CAPABILITIES: self.capabilities(true),
            meta::CLIENT_INFO: self.client_info,
        });
        if let Some(level) = &self.log_level {
            meta[meta::LOG_LEVEL] = Value::from(level.as_str());
        }
        meta
    }

    /// `server/discover`: `Ok(Ok((version, info)))` for a 2026-07-28 server, `Ok(Err(why))` for one that is
    /// not (or did not answer within `timeout`), `Err` when the server cannot be reached.
    pub(crate) async fn discover(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Result<(String, ServerInfo), String>, Error> {
        if let Some(http) = self.peer.http() {
            http.set_modern(MODERN_VERSION);
        }
        let mut outcome = self.discover_once(timeout).await;
        if let Ok(Ok(Err(error))) = &outcome
            && error.code == RpcError::UNSUPPORTED_PROTOCOL_VERSION
            && error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .is_some_and(|s| s.iter().any(|v| v.as_str() == Some(MODERN_VERSION)))
        {
            // The server speaks our version after all (a load balancer, a restart): once more.
            outcome = self.discover_once(timeout).await;
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(t) => return Ok(Err(format!("no answer to server/discover within {t:?}"))),
        };
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => return Ok(Err(format!("server/discover: {error}"))),
            Err(
                e @ Error::Http {
                    status: 401 | 403, ..
                },
            ) => return Err(e),
            Err(Error::Http { status, body }) => {
                return Ok(Err(format!("server/discover: HTTP {status}: {body}")));
            }
            Err(Error::InvalidResponse { reason, .. }) => {
                return Ok(Err(format!("server/discover: {reason}")));
            }
            // Pinned to the modern era: the request timeout is the error.
            Err(e @ Error::Timeout { .. }) if timeout.is_none() => return Err(e),
            // Probing, with a request timeout shorter than the probe's own wait: no answer is no
            // answer (a legacy server may ignore a method it does not know).
            Err(Error::Timeout { after, .. }) => {
                return Ok(Err(format!(
                    "no answer to server/discover within {after:?}"
                )));
            }
            Err(e) => return Err(e),
        };
        let supported: Vec<&str> = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(version) = MODERN_VERSIONS
            .iter()
            .find(|v| supported.contains(v))
            .copied()
        else {
            return Ok(Err(format!(
                "the server supports {supported:?}, none of {MODERN_VERSIONS:?}"
            )));
        };
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO))
            .or_else(|| result.get("serverInfo"));
        let info = ServerInfo::from(&result, server_info, true);
        Ok(Ok((version.to_owned(), info)))
    }

    /// One `server/discover`; `Err(timeout)` when it took longer.
    async fn discover_once(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Result<Outcome, Error>, Duration> {
        let request = self
            .peer
            .request("server/discover", json!({ "_meta": self.modern_meta() }));
        match timeout {
            Some(t) => tokio::time::timeout(t, request).await.map_err(|_| t),
            None => Ok(request.await),
        }
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    pub(crate) async fn initialize(&mut self) -> Result<(), Error> {
        if let Some(http) = self.peer.http() {
            http.start_initialize();
        }
        let params = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.capabilities(false),
            "clientInfo": self.client_info,
        });
        let result = match self.peer.request("initialize", params).await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => {
                return Err(Error::Negotiation(format!("initialize failed: {error}")));
            }
            Err(e) => return Err(e),
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("initialize", "no `protocolVersion` in the result"))?
            .to_owned();
        if MODERN_VERSIONS.contains(&version.as_str()) {
            return Err(Error::Negotiation(format!(
                "initialize answered with {version}, a version that has no initialize"
            )));
        }
        self.server = ServerInfo::from(&result, result.get("serverInfo"), false);
        if let Some(http) = self.peer.http() {
            http.set_legacy(&version);
        }
        self.era = Era::Legacy;
        self.version = version;
        self.peer
            .notify("notifications/initialized", json!({}))
            .await?;
        if let Some(http) = self.peer.http() {
            let inbox: Arc<dyn Inbox> = self.peer.clone();
            http.open_session_stream(Arc::downgrade(&inbox)).await;
        }
        if let Some(level) = &self.log_level
            && self.server.capabilities.get("logging").is_some()
        {
            // Best effort: a server that refuses keeps its own level.
            if let Ok(Err(error)) = self
                .peer
                .request("logging/setLevel", json!({ "level": level }))
                .await
            {
                tracing::debug!(%error, "logging/setLevel refused");
            }
        }
        Ok(())
    }

    /// Params with the era's additions (`_meta` in the modern era).
    pub(crate) fn params(&self, mut params: Value) -> Value {
        if self.era.is_modern() {
            let obj = params.as_object_mut().expect("params are an object");
            let meta = obj.entry("_meta").or_insert_with(|| json!({}));
            if let (Some(meta), Value::Object(add)) = (meta.as_object_mut(), self.modern_meta()) {
                meta.extend(add);
            }
        }
        params
    }

    /// A request with the era's additions; a JSON-RPC error is [`Error::Rpc`].
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Value, Error> {
        match self.request(method, params).await? {
            Ok(v) => Ok(v),
            Err(error) => Err(Error::Rpc {
                method: method.to_owned(),
                error,
            }),
        }
    }

    /// A request with the era's additions, its JSON-RPC error kept apart.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Outcome, Error> {
        self.peer.request(method, self.params(params)).await
    }

    pub(crate) fn peer(&self) -> &Arc<Peer> {
        &self.peer
    }
}
