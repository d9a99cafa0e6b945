//! Input for inline calls in the modern era (MRTR, SEP-2322): the call answers
//! `InputRequiredResult` and the client retries with `inputResponses`. The retry may reach another
//! process, so the tool is *replayed* from the start: answers already given are handed back at once
//! (in the order the tool asks), and the first unanswered request suspends the call again.

use super::state::{Gathered, request_digest};
use crate::protocol::InputRequest;
use crate::tool::{ContextBackend, InputError, InputFuture};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

/// A progress sink for inline calls.
pub(crate) type ProgressFn = Box<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;
/// A log sink for inline calls: the params of `notifications/message`.
pub(crate) type LogFn = Box<dyn Fn(Value) + Send + Sync>;

/// The backend of an inline modern call: replays known answers, records what is still needed.
pub(crate) struct Replay {
    answers: Map<String, Value>,
    asked_before: Map<String, Value>,
    /// First round only (no `requestState` yet): answers the client gave before being asked. One
    /// counts when the tool asks under its key; the rest are ignored, as MRTR says of unknown keys.
    volunteered: Map<String, Value>,
    /// Volunteered answers the tool took, with the digest of what it asked (key, digest, answer),
    /// so a suspension carries them in the next `requestState`.
    used: Mutex<Vec<(String, String, Value)>>,
    counter: AtomicUsize,
    needed: Mutex<Vec<(String, InputRequest)>>,
    /// An answer that does not fit the request it answers ([`check_answer`]): the retry is the
    /// client's error (`-32602`), not the tool's.
    misfit: Mutex<Option<String>>,
    progress: Option<ProgressFn>,
    log: Option<LogFn>,
}

impl Replay {
    pub(crate) fn new(
        gathered: &Gathered,
        volunteered: Map<String, Value>,
        progress: Option<ProgressFn>,
        log: Option<LogFn>,
    ) -> Self {
        Replay {
            answers: gathered.answers.clone(),
            asked_before: gathered.asked.clone(),
            volunteered,
            used: Mutex::new(Vec::new()),
            counter: AtomicUsize::new(0),
            needed: Mutex::new(Vec::new()),
            misfit: Mutex::new(None),
            progress,
            log,
        }
    }

    fn take_needed(&self) -> Vec<(String, InputRequest)> {
        std::mem::take(&mut *self.needed.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Moves the volunteered answers the tool took into what was gathered, as if asked and
    /// answered in an earlier round: the replay after a suspension gets them back and checks that
    /// the tool still asks the same thing.
    pub(crate) fn keep_used(&self, gathered: &mut Gathered) {
        let used = std::mem::take(&mut *self.used.lock().unwrap_or_else(|e| e.into_inner()));
        for (key, digest, answer) in used {
            gathered.asked.insert(key.clone(), Value::String(digest));
            gathered.answers.insert(key, answer);
        }
    }

    fn take_misfit(&self) -> Option<String> {
        self.misfit.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Hands `answer` to the tool if it fits `request`; otherwise records why and holds the tool.
    fn answer(&self, key: &str, request: &InputRequest, answer: Value) -> InputFuture {
        if let Err(why) = check_answer(&request.method, &answer) {
            let mut misfit = self.misfit.lock().unwrap_or_else(|e| e.into_inner());
            misfit.get_or_insert_with(|| {
                format!(
                    "`inputResponses.{key}` does not answer its `{}` request: {why}",
                    request.method
                )
            });
            return Box::pin(std::future::pending());
        }
        Box::pin(async move { Ok(answer) })
    }

    fn has_needed(&self) -> bool {
        !self
            .needed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}

impl ContextBackend for Replay {
    fn input(&self, request: InputRequest) -> InputFuture {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let key = request
            .key
            .clone()
            .unwrap_or_else(|| super::input_key(&request.method, n));
        let digest = request_digest(&request);
        if let Some(before) = self.asked_before.get(&key)
            && before.as_str() != Some(digest.as_str())
        {
            return Box::pin(async move {
                Err(InputError::InvalidResponse(format!(
                    "input `{key}` was asked differently on this retry than before; a tool must ask for input in the same order each time it runs"
                )))
            });
        }
        if let Some(answer) = self.answers.get(&key) {
            return self.answer(&key, &request, answer.clone());
        }
        if let Some(answer) = self.volunteered.get(&key) {
            let answer = answer.clone();
            self.used.lock().unwrap_or_else(|e| e.into_inner()).push((
                key.clone(),
                digest,
                answer.clone(),
            ));
            return self.answer(&key, &request, answer);
        }
        self.needed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, request));
        Box::pin(std::future::pending())
    }

    fn is_replay(&self) -> bool {
        // A retry carries the questions asked before; a first run has none.
        !self.asked_before.is_empty()
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(f) = &self.progress {
            f(progress, total, message);
        }
    }

    fn log(&self, params: Value) {
        if let Some(f) = &self.log {
            f(params);
        }
    }
}

/// How an inline modern call stopped.
pub(crate) enum Step<T> {
    /// The tool finished.
    Done(T),
    /// The tool needs these answers first.
    Suspended(Vec<(String, InputRequest)>),
    /// The tool asked to become a task (`ctx.start_task()`); its future is still there to drive.
    Promote,
    /// An answer the client sent does not fit the request it answers (why, naming the key).
    Misfit(String),
}

/// Drives the tool until it finishes, waits on input nobody has given yet, is handed an answer
/// that does not fit its question, or asks to become a task. The future stays with the caller,
/// so a promoted call goes on where it stopped.
pub(crate) async fn drive<F: Future + Unpin>(
    fut: &mut F,
    replay: &Replay,
    wants_task: impl Fn() -> bool,
) -> Step<F::Output> {
    std::future::poll_fn(|cx| match Pin::new(&mut *fut).poll(cx) {
        Poll::Ready(out) => Poll::Ready(Step::Done(out)),
        Poll::Pending => {
            if let Some(why) = replay.take_misfit() {
                Poll::Ready(Step::Misfit(why))
            } else if replay.has_needed() {
                Poll::Ready(Step::Suspended(replay.take_needed()))
            } else if wants_task() {
                Poll::Ready(Step::Promote)
            } else {
                Poll::Pending
            }
        }
    })
    .await
}

/// Checks the shape of a retry's `inputResponses`: absent, or an object whose every value is the
/// result object of the request under that key. Anything else is a protocol error (`-32602`),
/// not an answer for the tool to trip over.
///
/// `responses`: the params' `inputResponses`, when they have it.
pub(crate) fn parse_responses(responses: Option<Value>) -> Result<Map<String, Value>, String> {
    match responses {
        None => Ok(Map::new()),
        Some(Value::Object(responses)) => {
            if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
                return Err(format!(
                    "`inputResponses.{key}` must be an object: the result of the request sent under `{key}`"
                ));
            }
            Ok(responses)
        }
        Some(_) => Err(
            "`inputResponses` must be an object mapping each key of `inputRequests` to its result"
                .into(),
        ),
    }
}

/// [`parse_responses`] for a request whose outstanding keys are known (`tasks/update`, a retry of
/// a fallback companion call, an MRTR retry with its `requestState`): reads `inputResponses` from
/// its raw text, with the same shape rules, and keeps only the answers under keys `keep` accepts.
/// The others are counted, never built into trees: a request of any size with thousands of
/// unknown keys costs little more than its own text. `Ok((kept, ignored))`.
///
/// `raw`: the text of the params' `inputResponses`, when they have it.
pub(crate) fn read_responses(
    raw: Option<&str>,
    keep: impl Fn(&str) -> bool,
) -> Result<(Map<String, Value>, usize), String> {
    let Some(raw) = raw else {
        return Ok((Map::new(), 0));
    };
    let not_an_object = || {
        "`inputResponses` must be an object mapping each key of `inputRequests` to its result"
            .to_owned()
    };
    if !raw.trim_start().starts_with('{') {
        return Err(not_an_object());
    }
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let read = serde::de::Deserializer::deserialize_map(
        &mut deserializer,
        KeepVisitor {
            keep: &keep,
            kept: Map::new(),
            ignored: 0,
        },
    );
    match read {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(key)) => Err(format!(
            "`inputResponses.{key}` must be an object: the result of the request sent under `{key}`"
        )),
        Err(_) => Err(not_an_object()),
    }
}

/// Walks `inputResponses` one entry at a time; `Ok(Err(key))` names the first entry whose value
/// is not an object.
struct KeepVisitor<'k, K> {
    keep: &'k K,
    kept: Map<String, Value>,
    ignored: usize,
}

impl<'de, K: Fn(&str) -> bool> serde::de::Visitor<'de> for KeepVisitor<'_, K> {
    type Value = Result<(Map<String, Value>, usize), String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> Result<Self::Value, A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let raw: &'de serde_json::value::RawValue = map.next_value()?;
            if !raw.get().starts_with('{') {
                return Ok(Err(key.into_owned()));
            }
            if (self.keep)(&key) {
                let value = serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?;
                self.kept.insert(key.into_owned(), value);
            } else {
                self.ignored += 1;
            }
        }
        Ok(Ok((self.kept, self.ignored)))
    }
}

/// Checks one answer against the request it answers, by method: an elicitation result needs an
/// `action` of `accept`, `decline` or `cancel` (and `content`, when sent, is an object); a sampling
/// result needs `role`, `content` and `model`; a roots result needs a `roots` list. `Err` says what
/// is wrong, for a `-32602` naming the key. Other methods are only checked to be objects (by
/// [`parse_responses`]).
pub(crate) fn check_answer(method: &str, answer: &Value) -> Result<(), String> {
    match method {
        "elicitation/create" => {
            match answer.get("action") {
                Some(Value::String(a)) if matches!(a.as_str(), "accept" | "decline" | "cancel") => {
                }
                Some(Value::String(a)) => {
                    return Err(format!(
                        "`action` must be \"accept\", \"decline\" or \"cancel\", not \"{a}\""
                    ));
                }
                Some(_) => return Err("`action` must be a string".into()),
                None => return Err("an elicitation result needs `action`".into()),
            }
            match answer.get("content") {
                None | Some(Value::Object(_)) => Ok(()),
                Some(_) => Err("`content` must be an object".into()),
            }
        }
        "sampling/createMessage" => {
            serde_json::from_value::<crate::protocol::CreateMessageResult>(answer.clone())
                .map(drop)
                .map_err(|e| format!("not a sampling result: {e}"))
        }
        "roots/list" => serde_json::from_value::<crate::protocol::ListRootsResult>(answer.clone())
            .map(drop)
            .map_err(|e| format!("not a roots result: {e}")),
        _ => Ok(()),
    }
}

/// Folds a retry's `inputResponses` into what was gathered: only keys asked last time and not yet
/// answered count; anything else is ignored (as MRTR asks).
pub(crate) fn accept_responses(gathered: &mut Gathered, responses: Map<String, Value>) {
    for (key, value) in responses {
        if gathered.asked.contains_key(&key) && !gathered.answers.contains_key(&key) {
            gathered.answers.insert(key, value);
        }
    }
}

/// Records what was asked in this round, for the next `requestState`.
pub(crate) fn record_asked(gathered: &mut Gathered, needed: &[(String, InputRequest)]) {
    for (key, request) in needed {
        gathered
            .asked
            .insert(key.clone(), Value::String(request_digest(request)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_kept_answers_are_built_and_the_rest_are_counted() {
        let raw = r#" {"a": {"action": "accept"}, "b\u0062": {"x": 1}, "zz": {}, "a": {"action": "decline"}} "#;
        let (kept, ignored) = read_responses(Some(raw), |k| k.len() == 1 || k == "bb").unwrap();
        // A key sent twice: the last one counts, as in a tree; escapes are read.
        assert_eq!(
            Value::Object(kept),
            json!({ "a": { "action": "decline" }, "bb": { "x": 1 } })
        );
        assert_eq!(ignored, 1);
        assert_eq!(read_responses(None, |_| true).unwrap(), (Map::new(), 0));
    }

    #[test]
    fn the_shape_rules_are_those_of_parse_responses() {
        let err = read_responses(Some(r#"{"ok": {}, "k": 3}"#), |_| false).unwrap_err();
        assert_eq!(
            err,
            "`inputResponses.k` must be an object: the result of the request sent under `k`"
        );
        for raw in ["[1]", "\"x\"", "{\"a\": {}", "null"] {
            let err = read_responses(Some(raw), |_| true).unwrap_err();
            assert!(
                err.starts_with("`inputResponses` must be an object"),
                "{raw}: {err}"
            );
        }
    }
}
