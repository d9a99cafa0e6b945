//! JSON-RPC 2.0 envelopes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// JSON-RPC and MCP error codes.
pub mod codes {
    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP header disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// Unsupported protocol version (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A request id: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// A message for people.
    pub message: String,
    /// Anything else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }
    /// `-32600`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }
    /// `-32601`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
    /// `-32603`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// One incoming message, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request (has an id and a method).
    Request(Request),
    /// A notification (a method, no id).
    Notification(Notification),
    /// A response to a request this side sent.
    Response(Response),
}

/// A request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// Its params (an object, when present).
    pub params: Option<Value>,
}

/// A notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Its method.
    pub method: String,
    /// Its params.
    pub params: Option<Value>,
}

/// A response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Value, RpcError>,
}

/// A message that could not be taken as JSON-RPC: what to answer (an id when one could be read).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The id, if the message had a readable one.
    pub id: Option<RequestId>,
    /// The error to answer with.
    pub error: RpcError,
}

impl Message {
    /// Parses one JSON text into a message, or says precisely why it is not one.
    pub fn parse(text: &str) -> Result<Message, Rejected> {
        let value: Value = serde_json::from_str(text).map_err(|e| Rejected {
            id: None,
            error: RpcError::new(codes::PARSE_ERROR, format!("Parse error: {e}")),
        })?;
        Self::from_value(value)
    }

    /// Classifies a parsed JSON value.
    pub fn from_value(value: Value) -> Result<Message, Rejected> {
        let mut obj = match value {
            Value::Object(obj) => obj,
            Value::Array(_) => {
                return Err(Rejected {
                    id: None,
                    error: RpcError::invalid_request(
                        "Invalid Request: batches are not supported; send one message at a time",
                    ),
                });
            }
            other => {
                return Err(Rejected {
                    id: None,
                    error: RpcError::invalid_request(format!(
                        "Invalid Request: a message must be a JSON object, found {}",
                        json_kind(&other)
                    )),
                });
            }
        };
        let id = match obj.remove("id") {
            None => None,
            Some(v) => match serde_json::from_value::<RequestId>(v.clone()) {
                Ok(id) => Some(id),
                Err(_) if v.is_null() => {
                    return Err(Rejected {
                        id: None,
                        error: RpcError::invalid_request("Invalid Request: `id` must not be null"),
                    });
                }
                Err(_) => {
                    return Err(Rejected {
                        id: None,
                        error: RpcError::invalid_request(
                            "Invalid Request: `id` must be a string or an integer",
                        ),
                    });
                }
            },
        };
        let reject = |id: &Option<RequestId>, msg: &str| Rejected {
            id: id.clone(),
            error: RpcError::invalid_request(msg),
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(reject(&id, "Invalid Request: `jsonrpc` must be \"2.0\""));
        }
        match obj.remove("method") {
            Some(Value::String(method)) => {
                let params = obj.remove("params");
                if let Some(p) = &params
                    && !p.is_object()
                {
                    return Err(reject(&id, "Invalid Request: `params` must be an object"));
                }
                Ok(match id {
                    Some(id) => Message::Request(Request { id, method, params }),
                    None => Message::Notification(Notification { method, params }),
                })
            }
            Some(_) => Err(reject(&id, "Invalid Request: `method` must be a string")),
            None => {
                let Some(id) = id else {
                    return Err(reject(
                        &id,
                        "Invalid Request: a message needs a `method` (or an `id` and a `result`/`error`)",
                    ));
                };
                let outcome = if let Some(result) = obj.remove("result") {
                    Ok(result)
                } else if let Some(error) = obj.remove("error") {
                    Err(serde_json::from_value(error).map_err(|_| {
                        reject(
                            &Some(id.clone()),
                            "Invalid Request: malformed `error` object",
                        )
                    })?)
                } else {
                    return Err(reject(
                        &Some(id),
                        "Invalid Request: a response needs `result` or `error`",
                    ));
                };
                Ok(Message::Response(Response { id, outcome }))
            }
        }
    }
}

/// Serialises a success response.
pub fn result_message(id: &RequestId, result: Value) -> Value {
    envelope(Some(id), "result", result)
}

/// `{"jsonrpc": "2.0", "id"?, key: payload}`, moving `payload` in. (`json!` would serialise the
/// payload into a second tree, deep-copying every result, as much work as writing it out.)
fn envelope(id: Option<&RequestId>, key: &str, payload: Value) -> Value {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), Value::from("2.0"));
    if let Some(id) = id {
        let id = match id {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        };
        message.insert("id".into(), id);
    }
    message.insert(key.into(), payload);
    Value::Object(message)
}

/// Serialises an error response (`id: null` when the request's id could not be read).
pub fn error_message(id: Option<&RequestId>, error: &RpcError) -> Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// Serialises a notification.
pub fn notification_message(method: &str, params: Value) -> Value {
    let mut message = envelope(None, "params", params);
    message["method"] = Value::from(method);
    message
}

/// Serialises a request.
pub fn request_message(id: &RequestId, method: &str, params: Value) -> Value {
    let mut message = envelope(Some(id), "params", params);
    message["method"] = Value::from(method);
    message
}

/// An empty object.
pub fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// "a string", "an object", ...: for error messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
