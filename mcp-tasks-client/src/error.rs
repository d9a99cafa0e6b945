//! What can go wrong, typed so a caller can act on it.

use mcp_tasks_runtime::protocol::{CallToolResult, RpcError};
use std::fmt;

/// An error from the client. Cheap to clone: a task's outcome is kept and handed to every caller
/// of [`TaskHandle::result`](crate::TaskHandle::result).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The connection could not be made or broke: the command did not start, an HTTP request
    /// failed, the server closed the connection.
    Transport(String),
    /// The HTTP server answered with a status the protocol does not explain (no JSON-RPC error in
    /// the body), e.g. 401 without a valid bearer token.
    Http {
        /// The HTTP status.
        status: u16,
        /// The start of the body, for people.
        body: String,
    },
    /// Neither protocol era could be agreed on (or the pinned one was refused).
    Negotiation(String),
    /// The server did not answer a request within the client's
    /// [`request_timeout`](crate::ClientBuilder::request_timeout), nor send progress for it or
    /// a question of its own meanwhile. The request was given up (the server is told, with
    /// `notifications/cancelled` or by closing its HTTP response).
    Timeout {
        /// The request's method.
        method: String,
        /// The timeout that ran out.
        after: std::time::Duration,
    },
    /// The server answered a request with a JSON-RPC error.
    Rpc {
        /// The request's method.
        method: String,
        /// The error.
        error: RpcError,
    },
    /// A message from the server does not have the shape the protocol requires.
    InvalidResponse {
        /// The request's method.
        method: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The call could not become a task: the server refused a task-augmented `tools/call` (legacy
    /// era: `task` sent), or answered with a task handle that is not valid.
    TaskCreation {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
        /// The server's JSON-RPC error, when it sent one.
        error: Option<RpcError>,
    },
    /// `tasks/get` failed for this task (unknown or expired id, `-32602`, or another JSON-RPC error).
    TaskGet {
        /// The task.
        task_id: String,
        /// The server's error.
        error: RpcError,
    },
    /// The task ended `failed`: the JSON-RPC error it failed with.
    TaskFailed {
        /// The task.
        task_id: String,
        /// The error.
        error: RpcError,
    },
    /// The task ended `cancelled`.
    TaskCancelled {
        /// The task.
        task_id: String,
        /// The server's `statusMessage`, if any.
        message: Option<String>,
    },
    /// `resources/read` of a URI the server does not know: it answered `-32602` (the code of
    /// 2025-11-25 and 2026-07-28; SEP-2164 puts the URI in `data.uri`) or `-32002` (earlier
    /// versions).
    ResourceNotFound {
        /// The URI that was read.
        uri: String,
        /// The server's error.
        error: RpcError,
    },
    /// A 2026-07-28 server did not agree to watch a resource ([`Client::subscribe_resource`](crate::Client::subscribe_resource)).
    SubscriptionRefused {
        /// The URI.
        uri: String,
        /// Why, in words.
        reason: String,
    },
    /// The input handler declined a request on a route that has no way to say no (sampling or
    /// roots asked inline by a modern server), so the call was abandoned.
    InputDeclined {
        /// The request's method (`sampling/createMessage`, `roots/list`).
        method: String,
    },
    /// A skill file did not match its skill's entry (SEP-2640): its size, its digest, its
    /// frontmatter, or it is not listed; or the entry itself is not one a client may load. The
    /// content was not used.
    SkillVerification {
        /// The file (or, for an entry, its `SKILL.md`).
        uri: String,
        /// What did not match.
        reason: String,
    },
    /// The tool answered with `isError: true` where a typed value was asked for.
    Tool(CallToolResult),
    /// The result's structured content did not decode into the type asked for.
    Decode(String),
}

impl Error {
    pub(crate) fn transport(why: impl fmt::Display) -> Self {
        Error::Transport(why.to_string())
    }

    pub(crate) fn invalid(method: &str, reason: impl Into<String>) -> Self {
        Error::InvalidResponse {
            method: method.to_owned(),
            reason: reason.into(),
        }
    }

    /// The JSON-RPC error the server sent, if this error is one.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc { error, .. }
            | Error::TaskGet { error, .. }
            | Error::TaskFailed { error, .. }
            | Error::ResourceNotFound { error, .. } => Some(error),
            Error::TaskCreation { error, .. } => error.as_ref(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Transport(why) => write!(f, "transport error: {why}"),
            Error::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            Error::Negotiation(why) => write!(f, "could not agree on a protocol version: {why}"),
            Error::Timeout { method, after } => write!(
                f,
                "no answer to {method} within {} (the request timeout)",
                DisplayDuration(*after)
            ),
            Error::Rpc { method, error } => write!(f, "{method} failed: {error}"),
            Error::InvalidResponse { method, reason } => {
                write!(f, "invalid answer to {method}: {reason}")
            }
            Error::TaskCreation {
                tool,
                reason,
                error,
            } => match error {
                Some(e) => write!(f, "`{tool}` could not run as a task: {reason}: {e}"),
                None => write!(f, "`{tool}` could not run as a task: {reason}"),
            },
            Error::TaskGet { task_id, error } => {
                write!(f, "tasks/get failed for task {task_id}: {error}")
            }
            Error::TaskFailed { task_id, error } => write!(f, "task {task_id} failed: {error}"),
            Error::TaskCancelled { task_id, message } => match message {
                Some(m) => write!(f, "task {task_id} was cancelled: {m}"),
                None => write!(f, "task {task_id} was cancelled"),
            },
            Error::ResourceNotFound { uri, error } => {
                write!(f, "the server has no resource {uri}: {error}")
            }
            Error::SubscriptionRefused { uri, reason } => {
                write!(f, "the server did not subscribe to {uri}: {reason}")
            }
            Error::InputDeclined { method } => write!(
                f,
                "the input handler declined a {method} request the server cannot do without"
            ),
            Error::SkillVerification { uri, reason } => {
                write!(f, "skill file {uri} failed verification: {reason}")
            }
            Error::Tool(result) => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        mcp_tasks_runtime::Content::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                write!(f, "the tool reported an error: {}", text.join(" "))
            }
            Error::Decode(why) => write!(f, "the result did not decode: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// A duration as people write it: `60 s`, `1.5 s`, `250 ms`.
struct DisplayDuration(std::time::Duration);

impl fmt::Display for DisplayDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if ms < 1000 {
            write!(f, "{ms} ms")
        } else if ms.is_multiple_of(1000) {
            write!(f, "{} s", ms / 1000)
        } else {
            write!(f, "{} s", self.0.as_secs_f64())
        }
    }
}
