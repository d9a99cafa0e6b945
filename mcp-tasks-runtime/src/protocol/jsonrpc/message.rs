//! Incoming messages: [`Message`] and its parts, read through a JSON tree ([`Message::parse_tree`],
//! every message and every error); the common case takes the fast path in `fast.rs` first.

use super::id::is_integer_literal;
use super::{Params, RequestId, RpcError, json_kind};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

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
///
/// Its params' `_meta` is kept apart, as the JSON text the client sent
/// ([`meta`](Self::meta)), and not in [`params`](Self::params): a server reads the few keys it
/// needs straight from the text (`RequestMeta`) instead of building a
/// tree of it for every request. [`params_with_meta`](Self::params_with_meta) puts it back.
#[derive(Debug, Clone)]
pub struct Request {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// Its params (an object, when present), without `_meta`, as text with an index of its
    /// fields.
    pub params: Option<Params>,
    /// Its params' `_meta`, as sent (any JSON value: the server, not the reader, refuses one that
    /// is not an object).
    pub meta: Option<Box<RawValue>>,
}

impl Request {
    /// The params' `_meta` as a JSON tree.
    pub fn meta_value(&self) -> Option<Value> {
        self.meta.as_deref().map(raw_to_value)
    }

    /// The params as sent: [`params`](Self::params) with `_meta` back in.
    pub fn params_with_meta(self) -> Option<Value> {
        let Some(meta) = self.meta.as_deref().map(raw_to_value) else {
            return self.params.map(|p| Value::Object(p.to_map()));
        };
        let mut params = self.params.map(|p| p.to_map()).unwrap_or_default();
        params.insert("_meta".into(), meta);
        Some(Value::Object(params))
    }
}

/// Equal when the id, method, params and `_meta` are (`_meta` compared as JSON, not as text).
impl PartialEq for Request {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.method == other.method
            && self.params == other.params
            && self.meta_value() == other.meta_value()
    }
}

/// A JSON text already checked by the parser that produced it, as a tree.
pub(super) fn raw_to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
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
        match Self::parse_common(text) {
            Some(message) => Ok(message),
            None => Self::parse_tree(text),
        }
    }

    /// [`Message::parse`] through a JSON tree of the whole message: every message, every error.
    pub(crate) fn parse_tree(text: &str) -> Result<Message, Rejected> {
        let value: Value = serde_json::from_str(text).map_err(|e| Rejected {
            id: None,
            error: RpcError::new(RpcError::PARSE_ERROR, format!("Parse error: {e}")),
        })?;
        // An integer id beyond 64 bits parsed as a double: read its digits again from the text
        // (rare, so the common path pays nothing).
        let big = matches!(value.get("id"), Some(Value::Number(n)) if n.is_f64());
        let raw_id = big
            .then(|| {
                #[derive(Deserialize)]
                struct IdOnly<'a> {
                    #[serde(borrow)]
                    id: &'a RawValue,
                }
                let raw = serde_json::from_str::<IdOnly<'_>>(text).ok()?;
                let digits = raw.id.get().trim();
                is_integer_literal(digits).then(|| RequestId::BigNumber(digits.to_owned()))
            })
            .flatten();
        let mut message = Self::classify(value, raw_id)?;
        // `notifications/cancelled` names a request by its id: one beyond 64 bits keeps its digits
        // the same way (as the placeholder of `RequestId::to_value`, which `RequestId::from_param`
        // reads).
        if let Message::Notification(n) = &mut message
            && n.method == "notifications/cancelled"
            && let Some(params) = n.params.as_mut().and_then(Value::as_object_mut)
            && matches!(params.get("requestId"), Some(Value::Number(x)) if x.is_f64())
        {
            #[derive(Deserialize)]
            struct Params<'a> {
                #[serde(borrow, rename = "requestId")]
                request_id: &'a RawValue,
            }
            #[derive(Deserialize)]
            struct Cancelled<'a> {
                #[serde(borrow)]
                params: Params<'a>,
            }
            if let Ok(raw) = serde_json::from_str::<Cancelled<'_>>(text) {
                let digits = raw.params.request_id.get().trim();
                if is_integer_literal(digits) {
                    let id = RequestId::BigNumber(digits.to_owned());
                    params.insert("requestId".into(), id.to_value());
                }
            }
        }
        Ok(message)
    }

    /// Classifies a parsed JSON value.
    pub fn from_value(value: Value) -> Result<Message, Rejected> {
        Self::classify(value, None)
    }

    /// `big_id`: the id, when it is an integer too large for `value` to hold exactly.
    fn classify(value: Value, big_id: Option<RequestId>) -> Result<Message, Rejected> {
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
            Some(_) if big_id.is_some() => big_id,
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
                    Some(id) => {
                        let (params, meta) = split_meta(params);
                        Message::Request(Request {
                            id,
                            method,
                            params,
                            meta,
                        })
                    }
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

/// A request's params tree split as [`ReadParams`] splits the text (`params`: an object).
fn split_meta(params: Option<Value>) -> (Option<Params>, Option<Box<RawValue>>) {
    match params {
        Some(Value::Object(mut map)) => {
            let meta = map
                .remove("_meta")
                .and_then(|m| serde_json::value::to_raw_value(&m).ok());
            (Some(Params::from_map(&map)), meta)
        }
        _ => (None, None),
    }
}
