//! JSON-RPC 2.0 envelopes.

pub use super::params::Params;
use super::params::ReadParams;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
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
    /// A server limit was reached (this implementation's; in the range 2026-07-28 leaves to
    /// implementations). `data.limit` names the limit, `data.max` is its value; nothing was
    /// started or queued, and the request may be tried again once something ends.
    pub const LIMIT_REACHED: i64 = -32010;
}

/// A request id: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
    /// An integer outside the signed 64-bit range (`18446744073709551623`), kept as the exact
    /// digits the client sent: JSON sets no limit on a number's size, and a response must carry
    /// the id as it came. Written back byte-for-byte by [`Wire`]; a [`serde_json::Value`] cannot
    /// hold it, so a message built as a `Value` carries a placeholder that [`Wire`] replaces.
    BigNumber(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::BigNumber(digits) => f.write_str(digits),
        }
    }
}

impl RequestId {
    /// Reads an id out of a message's params (`notifications/cancelled`'s `requestId`): a string,
    /// an integer, or the placeholder [`Message::parse`] leaves for an integer beyond 64 bits.
    pub fn from_param(value: &Value) -> Option<RequestId> {
        if let Value::Object(m) = value
            && m.len() == 1
            && let Some(Value::String(digits)) = m.get(RAW_ID_KEY)
            && is_integer_literal(digits)
        {
            return Some(RequestId::BigNumber(digits.clone()));
        }
        serde_json::from_value(value.clone()).ok()
    }

    /// The id as it goes into a message built as a [`Value`]: a number, a string, or (for a
    /// [`BigNumber`](RequestId::BigNumber)) the placeholder object that [`Wire`] writes as the
    /// original digits. No client id is ever an object, so the placeholder cannot be mistaken for
    /// one.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
            RequestId::BigNumber(digits) => {
                let mut m = Map::new();
                m.insert(RAW_ID_KEY.into(), Value::from(digits.as_str()));
                Value::Object(m)
            }
        }
    }
}

/// The key of the placeholder a [`RequestId::BigNumber`] is in a [`Value`].
const RAW_ID_KEY: &str = "$mcp-tasks::raw-id";

/// Whether `text` is a JSON integer literal (`-?[0-9]+`).
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(text) => s.serialize_str(text),
            // Exact into a writer; into a `Value`, as close as a double gets (use `to_value`).
            RequestId::BigNumber(digits) => RawValue::from_string(digits.clone())
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RequestId, E> {
                Ok(match i64::try_from(v) {
                    Ok(n) => RequestId::Number(n),
                    Err(_) => RequestId::BigNumber(v.to_string()),
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::String(v))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A message as it goes on the wire: serialises the [`Value`] as is, except that a
/// [`RequestId::BigNumber`]'s placeholder in the top-level `id` is written as the original
/// digits. Every transport writes messages through this.
#[derive(Debug, Clone, Copy)]
pub struct Wire<'a>(pub &'a Value);

impl Wire<'_> {
    /// The message as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let raw = match self.0 {
            Value::Object(obj) => match obj.get("id") {
                Some(Value::Object(id)) => id.get(RAW_ID_KEY).and_then(Value::as_str),
                _ => None,
            },
            _ => None,
        };
        let (Some(digits), Value::Object(obj)) = (raw, self.0) else {
            return self.0.serialize(s);
        };
        let id = RequestId::BigNumber(digits.to_owned());
        let mut map = s.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            if k == "id" {
                map.serialize_entry(k, &id)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// `-32010` Limit reached: `Limit reached: {what} (at most {max})`, with
    /// `data: {"limit": limit, "max": max}`.
    pub fn limit_reached(limit: &str, max: usize, what: &str) -> Self {
        Self::new(
            codes::LIMIT_REACHED,
            format!("Limit reached: {what} (at most {max})"),
        )
        .with_data(serde_json::json!({ "limit": limit, "max": max }))
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
///
/// Its params' `_meta` is kept apart, as the JSON text the client sent
/// ([`meta`](Self::meta)), and not in [`params`](Self::params): a server reads the few keys it
/// needs straight from the text ([`RequestMeta`](super::meta::RequestMeta)) instead of building a
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
fn raw_to_value(raw: &RawValue) -> Value {
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
            error: RpcError::new(codes::PARSE_ERROR, format!("Parse error: {e}")),
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

    /// The common case read straight from the text, without a JSON tree: a well-formed request
    /// or notification, whose `params` (an object) is kept as text ([`Params`]). `None` for
    /// anything else (a response, an error to report, a duplicate or unknown envelope key, an id
    /// beyond 64 bits, `notifications/cancelled`, a params value a tree would refuse):
    /// [`Message::parse_tree`] then reads the text as a tree, which gives the same message for
    /// what this path accepts and the precise error for what it does not.
    fn parse_common(text: &str) -> Option<Message> {
        let mut de = serde_json::Deserializer::from_str(text);
        let envelope =
            serde::de::DeserializeSeed::deserialize(ReadEnvelope { base: text }, &mut de).ok()?;
        de.end().ok()?;
        if envelope.jsonrpc != "2.0" || envelope.method == "notifications/cancelled" {
            return None;
        }
        let (params, meta) = match envelope.params {
            Some((params, meta)) => (Some(params), meta),
            None => (None, None),
        };
        let method = envelope.method.to_owned();
        Some(match envelope.id {
            None => {
                // A notification's params stay whole, as a tree.
                let params = params.map(|params| {
                    let mut params = params.to_map();
                    if let Some(meta) = meta {
                        params.insert("_meta".into(), raw_to_value(&meta));
                    }
                    Value::Object(params)
                });
                Message::Notification(Notification { method, params })
            }
            Some(raw) => {
                let id = match serde_json::from_str::<RequestId>(raw.get()).ok()? {
                    RequestId::BigNumber(_) => return None,
                    id => id,
                };
                Message::Request(Request {
                    id,
                    method,
                    params,
                    meta,
                })
            }
        })
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

/// The deepest nesting of arrays and objects a JSON text may have to be read as a tree
/// (`serde_json`'s recursion limit: 128 levels refused, 127 read).
const MAX_NESTING: usize = 127;

/// A well-formed request's or notification's envelope, read from its text (`base`) by
/// [`Message::parse_common`], its params as [`Params`]. A response, a key given twice, a key it
/// does not know (skipped, its value would not be read as a tree reads it: a number out of range
/// would pass) or a key with escapes is an error: `parse_tree` then reads the message.
struct ReadEnvelope<'b> {
    base: &'b str,
}

struct Envelope<'a> {
    jsonrpc: &'a str,
    id: Option<&'a RawValue>,
    method: &'a str,
    params: Option<(Params, Option<Box<RawValue>>)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ReadEnvelope<'_> {
    type Value = Envelope<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ReadEnvelope<'_> {
    type Value = Envelope<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request or notification")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        /// Sets a field read once.
        fn once<T, E: Error>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), E> {
            match slot.replace(value) {
                None => Ok(()),
                Some(_) => Err(E::duplicate_field(name)),
            }
        }
        let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "jsonrpc" => once(&mut jsonrpc, "jsonrpc", map.next_value()?)?,
                "id" => once(&mut id, "id", map.next_value()?)?,
                "method" => once(&mut method, "method", map.next_value()?)?,
                "params" => {
                    // The envelope and the params object are two levels of nesting.
                    let read = ReadParams {
                        base: self.base,
                        max_depth: MAX_NESTING - 2,
                    };
                    once(&mut params, "params", map.next_value_seed(read)?)?
                }
                "result" | "error" => return Err(A::Error::custom("a response")),
                other => return Err(A::Error::unknown_field(other, &[])),
            }
        }
        Ok(Envelope {
            jsonrpc: jsonrpc.ok_or_else(|| A::Error::missing_field("jsonrpc"))?,
            id,
            method: method.ok_or_else(|| A::Error::missing_field("method"))?,
            params,
        })
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

/// A response on its way out, kept as its parts until it is written: [`Serialize`] writes it
/// straight to text, with the bytes [`Wire`] writes for [`Reply::into_value`] (keys in the same
/// order, the id byte-for-byte), but without building the envelope as a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Payload, RpcError>,
    /// The server's `serverInfo`, for a 2026-07-28 result: an object result
    /// ([`Payload::Tree`]) then also carries `resultType` (`"complete"` unless it has one) and
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub server_info: Option<std::sync::Arc<Value>>,
}

/// A reply's result.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A tree; a 2026-07-28 reply shapes it as it writes it (see [`Reply::server_info`]).
    Tree(Value),
    /// JSON text already in its final shape, written as it is: for a 2026-07-28 reply, with its
    /// `resultType` and the `serverInfo` in `_meta` (a task rendered with
    /// [`Rendered::with_server_info`](super::task::Rendered::with_server_info)). Written as a
    /// tree would write it (compact, keys sorted), so that a reply's bytes do not depend on
    /// which form its result took.
    Text(Box<RawValue>),
    /// A `tools/call` result, written as its tree would be (keys sorted) without building it; a
    /// 2026-07-28 reply shapes it as it writes it, like a tree.
    Tool(super::CallToolResult),
}

impl Payload {
    /// The result as a tree (text is parsed).
    pub fn into_value(self) -> Value {
        match self {
            Payload::Tree(value) => value,
            Payload::Text(text) => serde_json::from_str(text.get()).unwrap_or(Value::Null),
            Payload::Tool(result) => serde_json::to_value(result).unwrap_or(Value::Null),
        }
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Payload::Tree(value)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Payload::Tree(a), Payload::Tree(b)) => a == b,
            (Payload::Text(a), Payload::Text(b)) => a.get() == b.get(),
            (Payload::Tool(a), Payload::Tool(b)) => a == b,
            _ => false,
        }
    }
}

impl Reply {
    /// The response as a JSON tree (what [`Serialize`] writes, as a [`Value`] for [`Wire`]).
    pub fn into_value(self) -> Value {
        match self.outcome {
            Ok(Payload::Text(text)) => result_message(&self.id, Payload::Text(text).into_value()),
            Ok(Payload::Tool(result)) => Reply {
                outcome: Ok(Payload::Tree(Payload::Tool(result).into_value())),
                ..self
            }
            .into_value(),
            Ok(Payload::Tree(mut result)) => {
                if let (Some(info), Value::Object(obj)) = (&self.server_info, &mut result) {
                    obj.entry("resultType")
                        .or_insert_with(|| Value::String("complete".into()));
                    let meta = obj
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(meta) = meta {
                        meta.insert(super::meta::SERVER_INFO.into(), Value::clone(info));
                    }
                }
                result_message(&self.id, result)
            }
            Err(error) => error_message(Some(&self.id), &error),
        }
    }
}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // Keys in the order a tree (sorted keys) writes them.
        let mut map = s.serialize_map(Some(3))?;
        match &self.outcome {
            Ok(result) => {
                map.serialize_entry("id", &self.id)?;
                map.serialize_entry("jsonrpc", "2.0")?;
                match (&self.server_info, result) {
                    (_, Payload::Text(text)) => map.serialize_entry("result", text)?,
                    (info, Payload::Tool(result)) => map.serialize_entry(
                        "result",
                        &SortedToolResult {
                            result,
                            info: info.as_deref(),
                        },
                    )?,
                    (Some(info), Payload::Tree(Value::Object(obj))) => {
                        map.serialize_entry("result", &Shaped { obj, info })?
                    }
                    (_, Payload::Tree(result)) => map.serialize_entry("result", result)?,
                }
            }
            Err(error) => {
                map.serialize_entry("error", &ErrorObject(error))?;
                map.serialize_entry("id", &self.id)?;
                map.serialize_entry("jsonrpc", "2.0")?;
            }
        }
        map.end()
    }
}

/// An error object with its keys sorted, as a tree writes it.
pub(crate) struct ErrorObject<'a>(pub(crate) &'a RpcError);

impl Serialize for ErrorObject<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("code", &self.0.code)?;
        if let Some(data) = &self.0.data {
            map.serialize_entry("data", data)?;
        }
        map.serialize_entry("message", &self.0.message)?;
        map.end()
    }
}

/// A 2026-07-28 result object as [`Reply::into_value`] shapes it, written without copying it:
/// the object's entries with `_meta` and `resultType` merged in, in sorted key order.
struct Shaped<'a> {
    obj: &'a Map<String, Value>,
    info: &'a Value,
}

impl Serialize for Shaped<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        // The two keys shaping adds, in sorted order ("_" sorts before lowercase letters).
        let mut added = ["_meta", "resultType"].into_iter().peekable();
        let write_added =
            |map: &mut S::SerializeMap, key: &str, own: Option<&Value>| match (key, own) {
                ("_meta", Some(Value::Object(meta))) => map.serialize_entry(
                    key,
                    &MetaWith {
                        meta,
                        info: self.info,
                    },
                ),
                ("_meta", Some(other)) => map.serialize_entry(key, other),
                ("_meta", None) => map.serialize_entry(
                    key,
                    &MetaWith {
                        meta: &Map::new(),
                        info: self.info,
                    },
                ),
                (_, Some(own)) => map.serialize_entry(key, own),
                (_, None) => map.serialize_entry(key, "complete"),
            };
        for (key, value) in self.obj {
            while let Some(next) = added.next_if(|a| *a < key.as_str()) {
                write_added(&mut map, next, None)?;
            }
            if added.next_if(|a| *a == key.as_str()).is_some() {
                write_added(&mut map, key, Some(value))?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        for next in added {
            write_added(&mut map, next, None)?;
        }
        map.end()
    }
}

/// A `CallToolResult` as its tree writes it (keys sorted; the derive writes them in field order),
/// shaped for 2026-07-28 (`_meta` with the `serverInfo`, `resultType`) when `info` is given.
/// Every field is named in the patterns below, so a field added to these types fails to compile
/// here until it is written.
struct SortedToolResult<'a> {
    result: &'a super::CallToolResult,
    info: Option<&'a Value>,
}

impl Serialize for SortedToolResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let super::CallToolResult {
            content,
            structured_content,
            is_error,
            meta,
        } = self.result;
        let mut map = s.serialize_map(None)?;
        match (self.info, meta) {
            (Some(info), meta) => {
                let empty = Map::new();
                let meta = meta.as_ref().unwrap_or(&empty);
                map.serialize_entry("_meta", &MetaWith { meta, info })?;
            }
            (None, Some(meta)) => map.serialize_entry("_meta", meta)?,
            (None, None) => {}
        }
        map.serialize_entry("content", &SortedContents(content))?;
        if *is_error {
            map.serialize_entry("isError", &true)?;
        }
        if self.info.is_some() {
            map.serialize_entry("resultType", "complete")?;
        }
        if let Some(structured) = structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.end()
    }
}

/// Content blocks, each with its keys sorted.
struct SortedContents<'a>(&'a [super::Content]);

impl Serialize for SortedContents<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use super::{Content, ResourceContents};
        use serde::ser::{SerializeMap, SerializeSeq};
        struct Block<'a>(&'a Content);
        impl Serialize for Block<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                match self.0 {
                    Content::Text { text } => {
                        map.serialize_entry("text", text)?;
                        map.serialize_entry("type", "text")?;
                    }
                    Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                        let kind = match self.0 {
                            Content::Image { .. } => "image",
                            _ => "audio",
                        };
                        map.serialize_entry("data", data)?;
                        map.serialize_entry("mimeType", mime_type)?;
                        map.serialize_entry("type", kind)?;
                    }
                    Content::ResourceLink { uri, name } => {
                        map.serialize_entry("name", name)?;
                        map.serialize_entry("type", "resource_link")?;
                        map.serialize_entry("uri", uri)?;
                    }
                    Content::Resource { resource } => {
                        map.serialize_entry("resource", &Resource(resource))?;
                        map.serialize_entry("type", "resource")?;
                    }
                }
                map.end()
            }
        }
        struct Resource<'a>(&'a ResourceContents);
        impl Serialize for Resource<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                let (uri, mime_type, key, body) = match self.0 {
                    ResourceContents::Text {
                        uri,
                        mime_type,
                        text,
                    } => (uri, mime_type, "text", text),
                    ResourceContents::Blob {
                        uri,
                        mime_type,
                        blob,
                    } => (uri, mime_type, "blob", blob),
                };
                if key == "blob" {
                    map.serialize_entry(key, body)?;
                }
                if let Some(mime_type) = mime_type {
                    map.serialize_entry("mimeType", mime_type)?;
                }
                if key == "text" {
                    map.serialize_entry(key, body)?;
                }
                map.serialize_entry("uri", uri)?;
                map.end()
            }
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for block in self.0 {
            seq.serialize_element(&Block(block))?;
        }
        seq.end()
    }
}

/// A result's `_meta` object with the server's `serverInfo` set in it, in sorted key order.
struct MetaWith<'a> {
    meta: &'a Map<String, Value>,
    info: &'a Value,
}

impl Serialize for MetaWith<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let key = super::meta::SERVER_INFO;
        let mut map = s.serialize_map(None)?;
        let mut pending = true;
        for (k, v) in self.meta {
            if pending && key <= k.as_str() {
                map.serialize_entry(key, self.info)?;
                pending = false;
            }
            if k != key {
                map.serialize_entry(k, v)?;
            }
        }
        if pending {
            map.serialize_entry(key, self.info)?;
        }
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": info}`: the `_meta` a 2026-07-28 result without one
/// of its own gets.
pub(crate) struct ServerInfoMeta<'a>(pub(crate) &'a Value);

impl Serialize for ServerInfoMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        MetaWith {
            meta: &Map::new(),
            info: self.0,
        }
        .serialize(s)
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
        message.insert("id".into(), id.to_value());
    }
    message.insert(key.into(), payload);
    Value::Object(message)
}

/// Serialises an error response (`id: null` when the request's id could not be read).
pub fn error_message(id: Option<&RequestId>, error: &RpcError) -> Value {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), Value::from("2.0"));
    message.insert("id".into(), id.map_or(Value::Null, RequestId::to_value));
    let error = serde_json::to_value(error).unwrap_or(Value::Null);
    message.insert("error".into(), error);
    Value::Object(message)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The envelope read without a tree gives what the tree gives, and leaves every other case
    /// (and its precise error) to the tree.
    #[test]
    fn the_common_path_agrees_with_the_tree() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let taken = [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"t",{meta}}}}}"#
            ),
            r#"{"id":"a\"b","method":"ping","jsonrpc":"2.0"}"#.to_owned(),
            r#" {"jsonrpc":"2.0","id":-7,"method":"x","params":{ "k" : [1,{"a":null}] } } "#
                .to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m","params":{"a":1,"a":2}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":7,"b":{"_meta":1}}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"_meta":[ 2 ]}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":"p"},"x":1}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"a":1},"_met":2}}"#
                .to_owned(),
        ];
        for text in &taken {
            let fast = Message::parse_common(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast.map(Ok), Some(Message::parse_tree(text)), "{text}");
        }
        // A request's `_meta` is kept apart as sent (the last one, when given twice); a
        // notification's stays in its params.
        let Ok(Message::Request(req)) = Message::parse(&taken[6]) else {
            panic!("{}", taken[6])
        };
        assert_eq!(req.meta.as_deref().map(RawValue::get), Some("[ 2 ]"));
        assert_eq!(req.params.as_ref().map(Params::to_map), Some(Map::new()));
        assert_eq!(
            req.params_with_meta(),
            Some(serde_json::json!({"_meta": [2]}))
        );
        let Ok(Message::Request(req)) = Message::parse(&taken[8]) else {
            panic!("{}", taken[8])
        };
        assert_eq!(req.meta_value(), Some(serde_json::json!({"a": 1})));
        assert_eq!(
            req.params.as_ref().map(|p| Value::Object(p.to_map())),
            Some(serde_json::json!({"_met": 2}))
        );
        let Ok(Message::Notification(n)) = Message::parse(&taken[7]) else {
            panic!("{}", taken[7])
        };
        assert_eq!(
            n.params,
            Some(serde_json::json!({"_meta": {"progressToken": "p"}, "x": 1}))
        );
        let left = [
            "{",
            "[]",
            "3",
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551623,"method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"m"}"#,
            r#"{"id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":18446744073709551623}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"x","params":{},"extra":[1,{"a":null}]}"#,
        ];
        for text in left {
            assert_eq!(Message::parse_common(text), None, "{text}");
        }
    }

    /// What a tree refuses in a value kept as text or skipped (a number out of range, a lone
    /// surrogate), in params, in `_meta` or under an envelope key nobody reads, is refused with
    /// the tree's error.
    #[test]
    fn values_a_tree_refuses_are_refused() {
        for value in [
            "1e400",
            "-1E+309",
            &"9".repeat(400),
            r#""\ud800""#,
            r#"["x", {"y": "\udc00z"}]"#,
        ] {
            for text in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{value}}}}}"#),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"x":{value}}}}}}}"#
                ),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","extra":{value}}}"#),
                format!(r#"{{"jsonrpc":"2.0","extra":{value},"method":"m"}}"#),
            ] {
                let parsed = Message::parse(&text);
                assert_eq!(parsed, Message::parse_tree(&text), "{text}");
                assert_eq!(Message::parse_common(&text), None, "{text}");
                assert_eq!(
                    parsed.map_err(|r| r.error.code),
                    Err(codes::PARSE_ERROR),
                    "{text}"
                );
            }
        }
        for value in ["1e300", "-0.0", &"9".repeat(300), r#""\ud83d\ude00""#] {
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{value}}}}}"#);
            assert!(Message::parse_common(&text).is_some(), "{text}");
            assert_eq!(Message::parse(&text), Message::parse_tree(&text), "{text}");
            // An envelope key it does not know: read by the tree, and ignored.
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","extra":{value}}}"#);
            assert_eq!(Message::parse_common(&text), None, "{text}");
            assert!(
                matches!(Message::parse(&text), Ok(Message::Request(_))),
                "{text}"
            );
        }
    }

    /// Values kept as text nest no deeper than a tree may: the message a tree refuses is refused
    /// with the tree's error, wherever the nesting is (params kept as text, `_meta`).
    #[test]
    fn nesting_a_tree_refuses_is_refused() {
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        // The envelope and `params` are two levels: 125 more make 127, the most a tree takes.
        for (n, ok) in [(125, true), (126, false), (200, false)] {
            for text in [
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}}}}}"#,
                    nest(n)
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"x":{}}}}}}}"#,
                    nest(n - 1)
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"s":"[[[[[[","a":{}}}}}"#,
                    nest(n)
                ),
            ] {
                let parsed = Message::parse(&text);
                assert_eq!(parsed, Message::parse_tree(&text), "{n}");
                assert_eq!(parsed.is_ok(), ok, "{n}: {parsed:?}");
                if !ok {
                    assert_eq!(Message::parse_common(&text), None, "{n}");
                    let error = parsed.unwrap_err().error;
                    assert_eq!(error.code, codes::PARSE_ERROR, "{n}");
                    assert!(
                        error.message.contains("recursion limit"),
                        "{}",
                        error.message
                    );
                }
            }
        }
        // Brackets inside strings do not count.
        let strings = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"s":"{}\"{}"}}}}"#,
            "[".repeat(200),
            "{".repeat(200)
        );
        assert!(Message::parse_common(&strings).is_some());
    }

    /// A reply written from its parts is byte-for-byte the reply written as a tree.
    #[test]
    fn a_reply_writes_what_its_tree_writes() {
        let info = std::sync::Arc::new(serde_json::json!({"name": "s", "version": "1"}));
        let ids = [
            RequestId::Number(-3),
            RequestId::String("a\"b".into()),
            RequestId::BigNumber("18446744073709551623".into()),
        ];
        let results = [
            serde_json::json!({}),
            serde_json::json!({"content": [{"type": "text", "text": "hi"}], "isError": false}),
            serde_json::json!({"A": 1, "_a": 2, "_meta": {"a": 1, "z": 2}, "resultType": "task", "s": 3}),
            serde_json::json!({"_meta": {"io.modelcontextprotocol/serverInfo": 0, "io.z": 1}}),
            serde_json::json!({"_meta": {"io.a": 1}, "zz": null}),
            serde_json::json!({"_meta": 7, "q": 1, "resultTypf": 2}),
            serde_json::json!([1, 2]),
            serde_json::json!("text"),
        ];
        let errors = [
            RpcError::invalid_params("bad"),
            RpcError::limit_reached("tasks", 3, "tasks in flight"),
        ];
        for id in &ids {
            let mut replies = Vec::new();
            for result in &results {
                for server_info in [None, Some(info.clone())] {
                    replies.push(Reply {
                        id: id.clone(),
                        outcome: Ok(result.clone().into()),
                        server_info,
                    });
                }
            }
            for error in &errors {
                replies.push(Reply {
                    id: id.clone(),
                    outcome: Err(error.clone()),
                    server_info: Some(info.clone()),
                });
            }
            for result in tool_results() {
                for server_info in [None, Some(info.clone())] {
                    let tree = Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Tree(serde_json::to_value(&result).unwrap())),
                        server_info: server_info.clone(),
                    };
                    let tree = serde_json::to_string(&tree).unwrap();
                    replies.push(Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Tool(result.clone())),
                        server_info,
                    });
                    let direct = serde_json::to_string(replies.last().unwrap()).unwrap();
                    assert_eq!(direct, tree, "{result:?}");
                }
            }
            for reply in replies {
                let direct = serde_json::to_string(&reply).unwrap();
                assert_eq!(direct, Wire(&reply.into_value()).to_json());
            }
        }
    }

    /// `CallToolResult`s with every kind of content and every optional field.
    fn tool_results() -> Vec<crate::protocol::CallToolResult> {
        use crate::protocol::{CallToolResult, Content, ResourceContents};
        let every_block = vec![
            Content::text("a \"b\" \u{1}"),
            Content::image(b"png", "image/png"),
            Content::audio(b"wav", "audio/wav"),
            Content::ResourceLink {
                uri: "file:///x".into(),
                name: "x".into(),
            },
            Content::resource(ResourceContents::text("file:///t", "text/plain", "t")),
            Content::resource(ResourceContents::blob("file:///b", "app/x", b"b")),
            Content::resource(ResourceContents::Text {
                uri: "u".into(),
                mime_type: None,
                text: "t".into(),
            }),
            Content::resource(ResourceContents::Blob {
                uri: "u".into(),
                mime_type: None,
                blob: "AA==".into(),
            }),
        ];
        let meta = |pairs: Value| pairs.as_object().cloned();
        vec![
            CallToolResult::text("hi"),
            CallToolResult::empty(),
            CallToolResult::error("no"),
            CallToolResult::structured(serde_json::json!({"b": [1, 2.5], "a": null})),
            CallToolResult {
                structured_content: Some(Value::Null),
                is_error: true,
                meta: meta(serde_json::json!({})),
                ..CallToolResult::from_content(every_block)
            },
            CallToolResult {
                meta: meta(
                    serde_json::json!({"a": 1, "io.modelcontextprotocol/serverInfo": 2, "z": [3]}),
                ),
                ..CallToolResult::text("m")
            },
            CallToolResult {
                meta: meta(serde_json::json!({"io.z": 1, "A": 0})),
                ..CallToolResult::text("m")
            },
        ]
    }
}
