//! Messages built as JSON trees, for the side that sends requests and notifications, and for
//! errors answered before a request could be read.

use super::{RequestId, RpcError};
use serde_json::{Map, Value};

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
