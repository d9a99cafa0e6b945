//! A request's `_meta`: the reserved keys, a reader of the few the runtime needs straight from
//! the text ([`RequestMeta`]), what a `_meta` says (the facts of a 2026-07-28 request, or the
//! error that refuses it), and the one per-thread cache of what was last read ([`MetaCache`]).

/// Request: the protocol version (2026-07-28).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Request: the client capabilities for this request (2026-07-28).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Request: the least severe log level the client wants `notifications/message` for, on this
/// request only (2026-07-28; absent: no log messages).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Request: client name and version (2026-07-28).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Result: server name and version (2026-07-28).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Legacy tasks: the task a message belongs to (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Progress token.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// Notification: the `subscriptions/listen` request it is delivered for (its JSON-RPC id;
/// 2026-07-28).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// Request: the W3C Trace Context `traceparent` of the client's span (SEP-414 reserves it, with
/// [`TRACESTATE`] and `baggage`, as un-prefixed keys; both eras). See `trace.rs`.
pub const TRACEPARENT: &str = "traceparent";
/// Request: the W3C Trace Context `tracestate` that goes with [`TRACEPARENT`] (SEP-414).
pub const TRACESTATE: &str = "tracestate";

use super::trace::TraceContext;
use super::{ClientCapabilities, Implementation, LEGACY_VERSIONS, LogLevel, MODERN_VERSIONS};
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The keys of a request's `_meta` the runtime reads, each as the JSON text the client sent, read
/// from `_meta`'s text without building a tree of it ([`Request::meta`]). A key given twice: the
/// last one counts, as in a [`serde_json::Map`]; other keys are skipped.
///
/// [`Request::meta`]: super::jsonrpc::Request::meta
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RequestMeta<'a> {
    /// [`PROTOCOL_VERSION`].
    pub protocol_version: Option<&'a RawValue>,
    /// [`CLIENT_CAPABILITIES`].
    pub client_capabilities: Option<&'a RawValue>,
    /// [`CLIENT_INFO`].
    pub client_info: Option<&'a RawValue>,
    /// [`LOG_LEVEL`].
    pub log_level: Option<&'a RawValue>,
    /// [`PROGRESS_TOKEN`].
    pub progress_token: Option<&'a RawValue>,
    /// [`RELATED_TASK`].
    pub related_task: Option<&'a RawValue>,
    /// [`TRACEPARENT`].
    pub traceparent: Option<&'a RawValue>,
    /// [`TRACESTATE`].
    pub tracestate: Option<&'a RawValue>,
}

impl<'a> RequestMeta<'a> {
    /// Reads `_meta`'s text. `None` when it is not a JSON object.
    pub fn read(meta: &'a RawValue) -> Option<RequestMeta<'a>> {
        serde_json::from_str(meta.get()).ok()
    }

    /// Whether it names a protocol version or client capabilities: what makes a request a
    /// 2026-07-28 one.
    pub fn is_modern(&self) -> bool {
        self.protocol_version.is_some() || self.client_capabilities.is_some()
    }
}

/// The string a JSON text holds, if it is one (borrowed unless it has escapes).
pub fn as_str(value: &RawValue) -> Option<Cow<'_, str>> {
    str_of(value.get())
}

/// [`as_str`] of a JSON text the parser already read.
pub(crate) fn str_of(text: &str) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// Whether a JSON text is an object.
pub fn is_object(value: &RawValue) -> bool {
    value.get().trim_start().starts_with('{')
}

impl<'de> Deserialize<'de> for RequestMeta<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const KEYS: [&str; 8] = [
            PROTOCOL_VERSION,
            CLIENT_CAPABILITIES,
            CLIENT_INFO,
            LOG_LEVEL,
            PROGRESS_TOKEN,
            RELATED_TASK,
            TRACEPARENT,
            TRACESTATE,
        ];
        /// A key, as its index in `KEYS` (`None`: one of no interest).
        struct Key;
        impl<'de> DeserializeSeed<'de> for Key {
            type Value = Option<usize>;
            fn deserialize<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.deserialize_str(self)
            }
        }
        impl Visitor<'_> for Key {
            type Value = Option<usize>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Option<usize>, E> {
                Ok(KEYS.iter().position(|k| *k == key))
            }
        }
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = RequestMeta<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key_seed(Key)? {
                    let slot = match key {
                        Some(0) => &mut meta.protocol_version,
                        Some(1) => &mut meta.client_capabilities,
                        Some(2) => &mut meta.client_info,
                        Some(3) => &mut meta.log_level,
                        Some(4) => &mut meta.progress_token,
                        Some(5) => &mut meta.related_task,
                        Some(6) => &mut meta.traceparent,
                        Some(_) => &mut meta.tracestate,
                        None => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(meta)
            }
        }
        d.deserialize_map(Visit)
    }
}

/// What the client said about itself: at `initialize` (legacy) or in the request's `_meta` (modern).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ClientView {
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) info: Option<Implementation>,
}

/// What a request's `_meta` says: the era's facts of a 2026-07-28 request, and the progress token.
#[derive(Debug, PartialEq)]
pub(crate) struct MetaFacts {
    /// A 2026-07-28 request's version, client and log level; `None` for a request without them.
    pub(crate) modern: Option<(String, Arc<ClientView>, Option<LogLevel>)>,
    pub(crate) progress_token: Option<Value>,
}

/// What the fields of a `_meta` say (`None`: it is not an object), read without a tree of it: the
/// error is the one a request with that `_meta` gets. The fuzz target `message` holds it to the
/// tree reader (`fuzzing::read_meta_tree`).
fn facts(fields: Option<RequestMeta<'_>>) -> Result<MetaFacts, MetaError> {
    let Some(fields) = fields else {
        return Err(MetaError::NotObject);
    };
    let progress_token = fields.progress_token.map(to_value);
    if !fields.is_modern() {
        return Ok(MetaFacts {
            modern: None,
            progress_token,
        });
    }
    let version = match fields.protocol_version {
        Some(v) => match as_str(v) {
            Some(v) => v,
            None => return Err(MetaError::VersionNotString),
        },
        None => return Err(MetaError::Missing(PROTOCOL_VERSION)),
    };
    if !MODERN_VERSIONS.contains(&&*version) {
        return Err(MetaError::UnsupportedVersion(version.into_owned()));
    }
    let client = match fields.client_capabilities {
        Some(c) if is_object(c) => MetaCache::client(c, fields.client_info),
        Some(_) => return Err(MetaError::CapabilitiesNotObject),
        None => return Err(MetaError::Missing(CLIENT_CAPABILITIES)),
    };
    let log_level = match fields.log_level {
        None => None,
        Some(v) => Some(LogLevel::from_wire(&to_value(v)).map_err(MetaError::LogLevel)?),
    };
    Ok(MetaFacts {
        modern: Some((version.into_owned(), client, log_level)),
        progress_token,
    })
}

/// A JSON text the parser already checked, as a tree.
fn to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A request's `_meta` as read by [`MetaCache::read`]: its text, what it says, and (once a tool is
/// called with it) its tree.
#[derive(Debug)]
pub(crate) struct ReadMeta {
    text: Box<RawValue>,
    /// What it says, or the error that refuses it.
    pub(crate) facts: Result<MetaFacts, MetaError>,
    /// Whether it names a protocol version or client capabilities (a 2026-07-28 request, refused
    /// or not): what the HTTP transport routes by.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) claims_modern: bool,
    /// Its protocol version, when that is a string (the HTTP transport checks its header against
    /// it).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) version: Option<Box<str>>,
    /// Where in `text` the values of `traceparent` and `tracestate` are, when it has a
    /// `traceparent` ([`trace_context`](Self::trace_context) reads them when a span wants them).
    trace: Option<(Range<usize>, Option<Range<usize>>)>,
    tree: OnceLock<Map<String, Value>>,
}

impl ReadMeta {
    fn new(text: Box<RawValue>) -> ReadMeta {
        let said = Said::of(RequestMeta::read(&text), text.get());
        ReadMeta::with(text, said)
    }

    /// `text`, which says `said`.
    fn with(text: Box<RawValue>, said: Said) -> ReadMeta {
        ReadMeta {
            text,
            facts: said.facts,
            claims_modern: said.claims_modern,
            version: said.version,
            trace: said.trace,
            tree: OnceLock::new(),
        }
    }

    /// The client's span its `traceparent` and `tracestate` name, when they are valid
    /// (`trace.rs`).
    pub(crate) fn trace_context(&self) -> Option<TraceContext> {
        let (traceparent, tracestate) = self.trace.clone()?;
        let text = self.text.get();
        let Some(traceparent) = str_of(&text[traceparent]) else {
            tracing::debug!("`_meta.traceparent` is not a string; ignored");
            return None;
        };
        let tracestate = tracestate.map(|at| str_of(&text[at]).unwrap_or_default());
        TraceContext::from_strs(&traceparent, tracestate.as_deref())
    }

    /// The `_meta` object as a tree, made once (when a tool first asks for it).
    pub(crate) fn tree_ref(&self) -> &Map<String, Value> {
        let tree = || serde_json::from_str(self.text.get()).unwrap_or_default();
        self.tree.get_or_init(tree)
    }
}

/// What the fields of a `_meta` say ([`ReadMeta`] without its text).
struct Said {
    facts: Result<MetaFacts, MetaError>,
    claims_modern: bool,
    version: Option<Box<str>>,
    trace: Option<(Range<usize>, Option<Range<usize>>)>,
}

impl Said {
    /// What `fields`, read from `text`, say (`None`: the `_meta` is not an object).
    fn of(fields: Option<RequestMeta<'_>>, text: &str) -> Said {
        // Where a value is in `text` (the reader lends pieces of it).
        let at = |value: &RawValue| {
            let start = value.get().as_ptr() as usize - text.as_ptr() as usize;
            start..start + value.get().len()
        };
        Said {
            trace: fields.and_then(|f| Some((at(f.traceparent?), f.tracestate.map(at)))),
            claims_modern: fields.is_some_and(|f| f.is_modern()),
            version: (fields.and_then(|f| f.protocol_version))
                .and_then(as_str)
                .map(Into::into),
            facts: facts(fields),
        }
    }
}

/// A client view with the texts of the capabilities and `clientInfo` it was read from.
struct ReadClient {
    capabilities: Box<str>,
    info: Option<Box<str>>,
    view: Arc<ClientView>,
}

/// The one cache of `_meta` readings, per thread. A client sends the same `_meta` with request
/// after request, so what was read of the last one is kept, and a request with the same text
/// costs a comparison of texts instead of a reading. Three slots, for the three readings a
/// request's `_meta` goes through, each keyed by the exact text it was made from (so a hit is
/// always what reading again would give):
///
/// - `checked`: the text the parser last checked ([`MetaCache::checked`]: nesting and JSON
///   validity, as a tree of the whole message would refuse it) and the nesting limit it passed;
/// - `read`: the text last read for what it says ([`MetaCache::read`]), with the reading;
/// - `client`: the capabilities and `clientInfo` texts a 2026-07-28 `_meta` last named, with the
///   client view made of them: it survives a `_meta` that changes elsewhere (a progress token per
///   request).
///
/// The slots are apart because the parser and dispatch may run on different threads and see
/// different texts in between; each slot holds one entry and is replaced on a miss. Nothing here
/// outlives what it was read from in a way that matters: an entry is only ever compared to, or
/// handed out as an `Arc` (a reading is immutable).
#[derive(Default)]
pub(crate) struct MetaCache {
    checked: Option<(String, usize)>,
    read: Option<Arc<ReadMeta>>,
    client: Option<ReadClient>,
}

thread_local! {
    static CACHE: RefCell<MetaCache> = RefCell::new(MetaCache::default());
}

impl MetaCache {
    /// `check(text)` unless `text` is the text last checked on this thread within the same
    /// `max_depth`; a text that passes becomes the last one.
    pub(crate) fn checked(
        text: &str,
        max_depth: usize,
        check: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let known = CACHE.with_borrow(|cache| {
            cache
                .checked
                .as_ref()
                .is_some_and(|(last, depth)| *depth == max_depth && last == text)
        });
        if known {
            return Ok(());
        }
        check()?;
        CACHE.with_borrow_mut(|cache| match &mut cache.checked {
            Some((last, depth)) => {
                last.clear();
                last.push_str(text);
                *depth = max_depth;
            }
            None => cache.checked = Some((text.to_owned(), max_depth)),
        });
        Ok(())
    }

    /// What `text` says, read once for the same text in a row on this thread.
    pub(crate) fn read(text: Cow<'_, RawValue>) -> Arc<ReadMeta> {
        let last = CACHE.with_borrow(|cache| cache.read.clone());
        if let Some(last) = last
            && last.text.get() == text.get()
        {
            return last;
        }
        let read = Arc::new(ReadMeta::new(text.into_owned()));
        CACHE.with_borrow_mut(|cache| cache.read = Some(read.clone()));
        read
    }

    /// The client a 2026-07-28 `_meta` describes: its capabilities (an object) and `clientInfo`,
    /// made once for the same two texts in a row on this thread.
    fn client(capabilities: &RawValue, info: Option<&RawValue>) -> Arc<ClientView> {
        let (caps_text, info_text) = (capabilities.get(), info.map(RawValue::get));
        CACHE.with_borrow_mut(|cache| {
            if let Some(read) = &cache.client
                && *read.capabilities == *caps_text
                && read.info.as_deref() == info_text
            {
                return read.view.clone();
            }
            let view = Arc::new(ClientView {
                capabilities: Arc::new(ClientCapabilities(
                    serde_json::from_str(caps_text).unwrap_or_default(),
                )),
                // Read through a tree, as `clientInfo` always was (a key given twice: the last
                // counts).
                info: info.and_then(|v| Deserialize::deserialize(to_value(v)).ok()),
            });
            cache.client = Some(ReadClient {
                capabilities: caps_text.into(),
                info: info_text.map(Into::into),
                view: view.clone(),
            });
            view
        })
    }
}

/// Why a request's `_meta` is refused (the server answers it as `-32602`, or `-32022` for a
/// version it does not speak).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MetaError {
    /// `_meta` is not an object.
    NotObject,
    /// The protocol version is not a string.
    VersionNotString,
    /// A 2026-07-28 request lacks this key.
    Missing(&'static str),
    /// A version no 2026-07-28 request may name (a legacy one is served after `initialize`).
    UnsupportedVersion(String),
    /// The client capabilities are not an object.
    CapabilitiesNotObject,
    /// The log level is not one (why).
    LogLevel(String),
}

impl fmt::Display for MetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaError::NotObject => f.write_str("`_meta` must be an object"),
            MetaError::VersionNotString => {
                write!(f, "`_meta[\"{PROTOCOL_VERSION}\"]` must be a string")
            }
            MetaError::Missing(key) => write!(f, "missing required `_meta[\"{key}\"]`"),
            MetaError::UnsupportedVersion(requested) => {
                let hint = if LEGACY_VERSIONS.contains(&requested.as_str()) {
                    "; that version is served after `initialize`"
                } else {
                    ""
                };
                write!(f, "Unsupported protocol version: {requested}{hint}")
            }
            MetaError::CapabilitiesNotObject => {
                write!(f, "`_meta[\"{CLIENT_CAPABILITIES}\"]` must be an object")
            }
            MetaError::LogLevel(why) => write!(f, "`_meta[\"{LOG_LEVEL}\"]`: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same `_meta` text again is what was read from it before (one tree for the tools that
    /// look); another text of the same length is read anew, and a refused one is refused again.
    #[test]
    fn a_meta_sent_again_is_read_once() {
        let raw = |text: &str| Cow::Owned(RawValue::from_string(text.to_owned()).unwrap());
        let meta = |level: &str| {
            format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/logLevel":"{level}"}}"#
            )
        };
        let first = MetaCache::read(raw(&meta("debug")));
        let again = MetaCache::read(raw(&meta("debug")));
        assert!(Arc::ptr_eq(&first, &again));
        assert!(std::ptr::eq(first.tree_ref(), again.tree_ref()));
        let other = MetaCache::read(raw(&meta("error")));
        assert!(!Arc::ptr_eq(&first, &other));
        let level = |m: &ReadMeta| {
            m.facts
                .as_ref()
                .ok()?
                .modern
                .as_ref()
                .and_then(|(_, _, l)| *l)
        };
        assert_eq!(level(&first), Some(LogLevel::Debug));
        assert_eq!(level(&other), Some(LogLevel::Error));
        assert_eq!(
            other.tree_ref()["io.modelcontextprotocol/logLevel"],
            "error"
        );
        // The client is read once for both: only the log level differs.
        let client = |m: &ReadMeta| {
            m.facts
                .as_ref()
                .ok()?
                .modern
                .as_ref()
                .map(|(_, c, _)| c.clone())
        };
        assert!(Arc::ptr_eq(
            &client(&first).unwrap(),
            &client(&other).unwrap()
        ));
        for _ in 0..2 {
            let refused = MetaCache::read(raw(&meta("nope")));
            assert!(matches!(refused.facts, Err(MetaError::LogLevel(_))));
            assert!(refused.claims_modern);
            assert_eq!(refused.version.as_deref(), Some("2026-07-28"));
        }
    }

    /// A text checked within a nesting limit passes again without its check; another limit or
    /// another text is checked anew, and a text that fails is not kept.
    #[test]
    fn a_meta_checked_again_is_checked_once() {
        let calls = std::cell::Cell::new(0);
        let pass = || {
            calls.set(calls.get() + 1);
            Ok(())
        };
        MetaCache::checked("{}", 8, pass).unwrap();
        MetaCache::checked("{}", 8, pass).unwrap();
        assert_eq!(calls.get(), 1);
        MetaCache::checked("{}", 9, pass).unwrap();
        MetaCache::checked("{\"a\":1}", 9, pass).unwrap();
        assert_eq!(calls.get(), 3);
        let fail = || Err("no".to_owned());
        assert!(MetaCache::checked("[", 9, fail).is_err());
        assert!(MetaCache::checked("[", 9, fail).is_err());
        MetaCache::checked("{\"a\":1}", 9, pass).unwrap();
        assert_eq!(calls.get(), 3);
    }
}
