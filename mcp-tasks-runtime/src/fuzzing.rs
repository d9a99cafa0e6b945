//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`). Not an API: each function
//! feeds arbitrary bytes to one decoder and panics when a property that must hold does not. The
//! oracles they hold the fast readers to (the way requests were read before, through a tree) live
//! here too, with the unit tests that use them (the module is compiled for the crate's tests).

use crate::protocol::Era;
use crate::protocol::json_eq::assert_same_json;
use crate::protocol::jsonrpc::{Message, Payload, Reply, Wire, error_message, result_message};
use crate::protocol::jsonrpc::{Request, RpcError};
use crate::protocol::meta::{self, ClientView, MetaCache, MetaError, MetaFacts};
use crate::protocol::task::{Owner, TaskStatus};
use crate::protocol::{ClientCapabilities, InputRequest, LogLevel, MODERN_VERSIONS, Params};
use crate::store::{NewTask, TaskRecord};
use crate::task::mrtr;
#[cfg(feature = "fuzzing")]
use crate::task::state;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

/// Message parsing and classification (both transports' first step). Whatever the bytes, the
/// answer is a message or a precise rejection, the same whether the envelope is read directly or
/// through a JSON tree; an answer written for it parses again, with the
/// same id (byte-for-byte ids included); a reply written from its parts is the reply written as a
/// tree (with the request's params as the result, shaped as a modern one); a request's `_meta`
/// read from its text says what it says read as a tree (the same era, client, log level and
/// progress token, or exactly the same error); each field a request's `Params` read from the
/// text reads as it does in the tree (a key sent twice: the last one).
pub fn message(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Message::parse(text);
    assert_eq!(
        parsed,
        Message::parse_tree(text),
        "{text:?}: the two parsers disagree"
    );
    match parsed {
        Ok(Message::Request(req)) => {
            check_meta(text, &req);
            if let Some(params) = &req.params {
                check_params(text, params);
            }
            let params = Value::Object(req.params.as_ref().map(Params::to_map).unwrap_or_default());
            let reply = Wire(&result_message(&req.id, Value::Object(Map::new()))).to_json();
            let parts = Reply {
                id: req.id.clone(),
                outcome: Ok(params.clone().into()),
                server_info: Some(Arc::new(Value::String("info".into()))),
            };
            let direct = serde_json::to_string(&parts).expect("a reply serialises");
            assert_same_json(&direct, &Wire(&parts.into_value()).to_json());
            // A result already written as text goes out as it is.
            let written = serde_json::value::to_raw_value(&params).expect("params serialise");
            let parts = Reply {
                id: req.id.clone(),
                outcome: Ok(Payload::Text(written)),
                server_info: None,
            };
            let tree = Wire(&result_message(&req.id, params)).to_json();
            assert_same_json(
                &serde_json::to_string(&parts).expect("a reply serialises"),
                &tree,
            );
            match Message::parse(&reply) {
                Ok(Message::Response(resp)) => assert_eq!(resp.id, req.id, "{reply}"),
                other => panic!("the reply to {text:?} does not parse back: {reply} -> {other:?}"),
            }
        }
        Ok(Message::Response(resp)) => {
            let _ = resp.outcome;
        }
        Ok(Message::Notification(_)) => {}
        Err(rejected) => {
            let written = Wire(&error_message(rejected.id.as_ref(), &rejected.error)).to_json();
            // Read as a shape, not a tree: the id may be an integer beyond what a tree holds,
            // which the reply repeats digit for digit.
            #[derive(wire::Deserialize)]
            struct ErrorReply {
                error: RpcError,
            }
            let back: ErrorReply = serde_json::from_str(&written)
                .unwrap_or_else(|e| panic!("{written}: not an error reply: {e}"));
            assert_eq!(back.error, rejected.error, "{written}");
            if let Some(id) = &rejected.id {
                match Message::parse(&written) {
                    Ok(Message::Response(resp)) => assert_eq!(&resp.id, id, "{written}"),
                    other => panic!("{written} -> {other:?}"),
                }
            }
        }
    }
}

/// What the server reads of a request's `_meta` (through [`MetaCache`]) against what the tree
/// reader says of it. Whether the request is a 2026-07-28 one.
fn check_meta(text: &str, req: &Request) -> bool {
    let tree = match req.clone().params_with_meta() {
        Some(Value::Object(params)) => params,
        _ => Map::new(),
    };
    let want = read_meta_tree(&tree);
    let read = (req.meta.as_deref()).map(|m| MetaCache::read(Cow::Borrowed(m)));
    let no_meta = Ok(MetaFacts {
        modern: None,
        progress_token: None,
    });
    let got = match &read {
        Some(read) => read.facts.as_ref(),
        None => no_meta.as_ref(),
    };
    assert_eq!(
        got,
        want.as_ref(),
        "{text:?}: the two `_meta` readers disagree"
    );
    got.is_ok_and(|f| f.modern.is_some())
}

/// What a `_meta` says, read through a tree of the params (with `_meta`), the way requests were
/// read before: the oracle the fuzz target and the tests hold the server's reader to.
pub(crate) fn read_meta_tree(params: &Map<String, Value>) -> Result<MetaFacts, MetaError> {
    let meta_obj = match params.get("_meta") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err(MetaError::NotObject),
    };
    let progress_token = meta_obj.and_then(|m| m.get(meta::PROGRESS_TOKEN)).cloned();
    let version = meta_obj.and_then(|m| m.get(meta::PROTOCOL_VERSION));
    let caps = meta_obj.and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
    if version.is_none() && caps.is_none() {
        return Ok(MetaFacts {
            modern: None,
            progress_token,
        });
    }
    let version = match version {
        Some(Value::String(v)) => v.clone(),
        Some(_) => return Err(MetaError::VersionNotString),
        None => return Err(MetaError::Missing(meta::PROTOCOL_VERSION)),
    };
    if !MODERN_VERSIONS.contains(&version.as_str()) {
        return Err(MetaError::UnsupportedVersion(version));
    }
    let capabilities = match caps {
        Some(Value::Object(c)) => ClientCapabilities(c.clone()),
        Some(_) => return Err(MetaError::CapabilitiesNotObject),
        None => return Err(MetaError::Missing(meta::CLIENT_CAPABILITIES)),
    };
    let info = meta_obj
        .and_then(|m| m.get(meta::CLIENT_INFO))
        .and_then(|v| serde::Deserialize::deserialize(v).ok());
    let log_level = match meta_obj.and_then(|m| m.get(meta::LOG_LEVEL)) {
        None => None,
        Some(v) => Some(LogLevel::from_wire(v).map_err(MetaError::LogLevel)?),
    };
    let client = Arc::new(ClientView {
        capabilities: Arc::new(capabilities),
        info,
    });
    Ok(MetaFacts {
        modern: Some((version, client, log_level)),
        progress_token,
    })
}

/// The fields of `params` (read from `text`) against the params of `text` read as a tree.
fn check_params(text: &str, params: &Params) {
    let tree: Value = serde_json::from_str(text).expect("a request read from text is JSON");
    let mut want = match tree.get("params") {
        Some(Value::Object(map)) => map.clone(),
        other => panic!("{text:?}: params {other:?} read as {params:?}"),
    };
    want.remove("_meta");
    assert_eq!(params.to_map(), want, "{text:?}");
    let remade = Params::from_map(&want);
    assert_eq!(remade.to_map(), want, "{text:?}: params made from the tree");
    for (key, value) in &want {
        assert_eq!(params.value(key).as_ref(), Some(value), "{text:?}: `{key}`");
        let string = params.str(key).map(|s| s.map(|s| s.into_owned()));
        assert_eq!(
            string,
            Some(value.as_str().map(str::to_owned)),
            "{text:?}: `{key}`"
        );
        assert_eq!(
            params.has_non_null(key),
            !value.is_null(),
            "{text:?}: `{key}`"
        );
    }
    for absent in [
        "_meta",
        "taskId",
        "name",
        "arguments",
        "task",
        "inputResponses",
    ] {
        if !want.contains_key(absent) {
            assert!(!params.contains_key(absent), "{text:?}: `{absent}`");
            assert_eq!(params.raw(absent), None, "{text:?}: `{absent}`");
        }
    }
}

/// `tasks/update` / MRTR `inputResponses`: the shape check, the per-method answer check, and the
/// state machine taking what passed. Answers only go where a request is outstanding; every
/// answer accepted is there for the tool to take exactly once.
pub fn input_responses(data: &[u8]) {
    let Ok(Value::Object(mut params)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let raw = params.get("inputResponses").map(Value::to_string);
    let parsed = mrtr::parse_responses(params.remove("inputResponses"));
    // Reading from the text, keeping some keys, agrees with the tree on what is accepted and
    // keeps exactly the kept keys' answers.
    let keep = |k: &str| k.len().is_multiple_of(2);
    match (mrtr::read_responses(raw.as_deref(), keep), &parsed) {
        (Ok((kept, ignored)), Ok(all)) => {
            let want: Map<String, Value> = all
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(kept, want, "{raw:?}");
            assert!(ignored >= all.len() - want.len(), "{raw:?}");
        }
        (Err(_), Err(_)) => {}
        (read, parsed) => panic!("{raw:?}: read {read:?}, parsed {parsed:?}"),
    }
    let Ok(responses) = parsed else {
        return;
    };
    const METHODS: [&str; 4] = [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
        "other/method",
    ];
    let now = SystemTime::now();
    let mut record = TaskRecord::new(NewTask::new(Owner::new("o"), Era::Modern), now);
    for (i, method) in METHODS.iter().enumerate() {
        let request = InputRequest::new(*method, Value::Object(Map::new()));
        record
            .add_input_request(format!("k{i}"), request, now)
            .expect("a fresh key on a working task");
    }
    let mut fitting = Map::new();
    for (key, answer) in &responses {
        assert!(answer.is_object(), "parse_responses let through {answer}");
        let checked = match record.input_requests.get(key) {
            Some(asked) => mrtr::check_answer(&asked.method, answer),
            None => Ok(()),
        };
        if checked.is_ok() {
            fitting.insert(key.clone(), answer.clone());
        }
    }
    let outstanding = record.input_requests.clone();
    let delivery = record.deliver_responses(fitting.clone(), now);
    for key in &delivery.accepted {
        assert!(outstanding.contains_key(key));
        let taken = record.take_response(key);
        assert_eq!(taken.as_ref(), fitting.get(key));
        // Taken answers are kept: taking again gives the same answer, and changes nothing.
        let version = record.version;
        assert_eq!(record.take_response(key), taken);
        assert_eq!(record.version, version);
    }
    for key in &delivery.ignored {
        assert!(!outstanding.contains_key(key));
    }
    assert_eq!(
        record.status == TaskStatus::InputRequired,
        !record.input_requests.is_empty()
    );
}

/// Opening a `requestState`: arbitrary text is refused without a panic; a body sealed with the
/// right key (the first byte picks which) goes through deserialisation and the MRTR bookkeeping.
/// (Only with the feature: it seals with `state::seal_raw`, which only the feature builds.)
#[cfg(feature = "fuzzing")]
pub fn request_state(data: &[u8]) {
    let key = state::StateKey::from_secret(b"fuzzing");
    let call = state::call_digest("tool", None, "owner");
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let opened = if mode % 2 == 0 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        state::open(&key, text, &call)
    } else {
        // A JSON object gets a valid call and expiry, so that what follows the checks runs.
        let body = match serde_json::from_slice::<Value>(rest) {
            Ok(Value::Object(mut body)) => {
                body.insert("call".into(), Value::from(call.as_str()));
                body.insert("exp".into(), Value::from(u64::MAX / 2));
                serde_json::to_vec(&body).expect("JSON")
            }
            _ => rest.to_vec(),
        };
        state::open(&key, &state::seal_raw(&key, &body), &call)
    };
    if let Ok(mut gathered) = opened {
        let mut responses = Map::new();
        responses.insert("k".into(), Value::Object(Map::new()));
        mrtr::accept_responses(&mut gathered, responses);
        let resealed = state::seal(&key, gathered.clone());
        let again = state::open(&key, &resealed, &call).expect("a state this server sealed opens");
        assert_eq!(again.answers, gathered.answers);
        assert_eq!(again.asked, gathered.asked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's `_meta` read from its text says what it says read as a tree, as the server
    /// read it before: the same era, client, log level and progress token, or exactly the same
    /// error. (The fuzz target `message` holds every parsed request to this too.)
    #[test]
    fn the_meta_reader_agrees_with_the_tree() {
        let v = r#""io.modelcontextprotocol/protocolVersion""#;
        let c = r#""io.modelcontextprotocol/clientCapabilities""#;
        let i = r#""io.modelcontextprotocol/clientInfo""#;
        let l = r#""io.modelcontextprotocol/logLevel""#;
        let caps = r#"{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}"#;
        let info = r#"{"name":"c","version":"1"}"#;
        let metas = [
            "{}".to_owned(),
            "null".into(),
            r#""x""#.into(),
            "[1]".into(),
            "7".into(),
            r#"{"progressToken":5,"other":{"a":[1,{}]}}"#.into(),
            r#"{"progressToken":{"a":[1]},"progressToken":"last"}"#.into(),
            format!(r#"{{{v}:"2026-07-28"}}"#),
            format!(r#"{{{c}:{{}}}}"#),
            format!(r#"{{{v}:7,{c}:{{}}}}"#),
            format!(r#"{{{v}:"2025-11-25",{c}:{{}}}}"#),
            format!(r#"{{{v}:"1999-01-01",{c}:{{}}}}"#),
            format!(r#"{{{v}:"2026\u002d07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:[]}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:null}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:"x"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{info}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{info},"progressToken":"p"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":"other","version":"1"}}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}: {{ "sampling" : {{ }} }} ,{i}:{info}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":1}}}}"#),
            format!(
                r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":"a","name":"b","version":"1"}}}}"#
            ),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:"info"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:"bogus"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:3}}"#),
            format!(r#"{{{v}:"bad",{v}:"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{v}:"bad",{c}:{caps}}}"#),
            format!(r#"{{"io.modelcontextprotocol\/protocolVersion":"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{l}:"bogus"}}"#),
        ];
        let mut modern = 0;
        for text in &metas {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":1,"_meta":{text}}}}}"#
            );
            let Ok(Message::Request(req)) = Message::parse(&text) else {
                panic!("{text}")
            };
            modern += check_meta(&text, &req) as usize;
        }
        assert_eq!(modern, 11);
    }
}
