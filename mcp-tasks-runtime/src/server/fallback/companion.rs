//! The fallback's companion tools ([`TASK_STATUS_TOOL`], [`TASK_RESULT_TOOL`],
//! [`TASK_CANCEL_TOOL`], each `{"taskId": string}`), for the caller's own tasks only (the owner
//! rules of `tasks/get`).
//!
//! Everything about a task is a tool result a model can read: a task that failed or was
//! cancelled, an id that is unknown or another client's (the two read the same), a wrong
//! argument. Only a malformed call (`arguments` not an object, an answer that does not fit its
//! question) or a store that cannot be reached is a JSON-RPC error.
//!
//! A 2026-07-28 client without the tasks extension answers a task's question through MRTR: while
//! the task waits on requests this client declared the capability for, [`TASK_STATUS_TOOL`] and
//! [`TASK_RESULT_TOOL`] answer an `InputRequiredResult` carrying them (under the task's own keys);
//! the retry's `inputResponses` are delivered to the task as `tasks/update` would, and the retry
//! answers with what the companion tool says of the task once it has acted on them (it waits up
//! to 2 s for the task to end or ask something new).

use super::{TASK_CANCEL_TOOL, TASK_RESULT_TOOL, TASK_STATUS_TOOL};
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::protocol::{ClientCapabilities, Era, InputRequest, Params, meta};
use crate::server::incoming::Incoming;
use crate::server::inner::ServerInner;
use crate::store::{CancelResult, StoreError, TaskRecord, TaskStore};
use crate::task::mrtr;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Serves a call of companion tool `name` (one of [`COMPANION_TOOLS`](super::COMPANION_TOOLS))
/// for `owner`; `per_session`: `owner` is the caller's session (2025-11-25 over HTTP, without
/// authentication), which the answer for an unknown id then explains.
pub(crate) async fn call_companion(
    server: &ServerInner,
    name: &str,
    req: &Incoming,
    owner: &Owner,
    per_session: bool,
) -> Result<Value, RpcError> {
    let unknown = |id: &TaskId| unknown_task(id, per_session);
    let id = match task_id_argument(&req.params)? {
        Ok(id) => id,
        Err(why) => return Ok(text_result(why, None, true)),
    };
    let store = server.engine().store().clone();
    if name == TASK_CANCEL_TOOL {
        return match store.cancel(&id, owner).await {
            Ok(CancelResult::Cancelled(record)) => Ok(text_result(
                format!("Task {} is cancelled.", id.as_str()),
                Some(task(&record, req.era)),
                false,
            )),
            Ok(CancelResult::AlreadyTerminal(record)) => Ok(text_result(
                format!(
                    "Task {} had already {}; there is nothing to cancel.",
                    id.as_str(),
                    match record.status {
                        TaskStatus::Completed => "completed",
                        TaskStatus::Failed => "failed",
                        _ => "been cancelled",
                    }
                ),
                Some(task(&record, req.era)),
                true,
            )),
            Err(StoreError::NotFound) => Ok(unknown(&id)),
            Err(e) => Err(e.to_rpc_error()),
        };
    }
    let Some(mut record) = store.get(&id, owner).await? else {
        return Ok(unknown(&id));
    };
    if req.era.is_modern() && req.params.contains_key("inputResponses") {
        // An MRTR retry: the answers go to the task, as `tasks/update` delivers them. An answer
        // that does not fit its question is the client's error and uses nothing up.
        let (responses, _unknown) = mrtr::read_responses(req.params.raw("inputResponses"), |k| {
            record.input_requests.contains_key(k)
        })
        .map_err(RpcError::invalid_params)?;
        for (key, answer) in &responses {
            if let Some(asked) = record.input_requests.get(key)
                && let Err(why) = mrtr::check_answer(&asked.method, answer)
            {
                return Err(RpcError::invalid_params(format!(
                    "`inputResponses.{key}` does not answer its `{}` request: {why}",
                    asked.method
                ))
                .with_data(json!({ "key": key })));
            }
        }
        let answered: Vec<String> = responses.keys().cloned().collect();
        match store.deliver_responses(&id, owner, responses).await {
            Ok(_) => {}
            Err(StoreError::NotFound) => return Ok(unknown(&id)),
            Err(e) => return Err(e.to_rpc_error()),
        }
        record = match settled(store.as_ref(), &id, owner, &answered).await? {
            Some(record) => record,
            None => return Ok(unknown(&id)),
        };
    }
    if req.era.is_modern()
        && let Some(asked) = askable(&record, &req.client.capabilities)
    {
        return Ok(json!({ "resultType": "input_required", "inputRequests": asked }));
    }
    Ok(match name {
        TASK_STATUS_TOOL => status(&record, req.era),
        _ => result(record, req.era),
    })
}

/// How long a companion call that delivered answers waits for the task to act on them.
const SETTLE: Duration = Duration::from_secs(2);

/// The task after answers to `answered` took effect: it waits (at most [`SETTLE`]) until the task
/// has ended or asks something new, so that the reply says what the answer led to rather than
/// that the task is still waiting or running. `None`: the task is gone.
async fn settled(
    store: &dyn TaskStore,
    id: &TaskId,
    owner: &Owner,
    answered: &[String],
) -> Result<Option<TaskRecord>, RpcError> {
    let Some(mut record) = store.get(id, owner).await? else {
        return Ok(None);
    };
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let moved_on = record.status.is_terminal()
            || (record.status == TaskStatus::InputRequired
                && record.input_requests.keys().any(|k| !answered.contains(k)));
        if moved_on {
            return Ok(Some(record));
        }
        match tokio::time::timeout_at(deadline, store.changed(id, record.version)).await {
            // Read again through the owner check.
            Ok(Ok(_)) => match store.get(id, owner).await? {
                Some(next) => record = next,
                None => return Ok(None),
            },
            Ok(Err(StoreError::NotFound)) => return Ok(None),
            Ok(Err(e)) => return Err(e.to_rpc_error()),
            // Still working: say so.
            Err(_) => return Ok(Some(record)),
        }
    }
}

/// The questions a waiting task has that this client declared it can answer, by their keys.
fn askable(record: &TaskRecord, capabilities: &ClientCapabilities) -> Option<Map<String, Value>> {
    if record.status != TaskStatus::InputRequired {
        return None;
    }
    let asked: Map<String, Value> = record
        .input_requests
        .iter()
        .filter(|(_, r)| r.required_capability().is_none_or(|c| capabilities.has(c)))
        .map(|(k, r)| (k.clone(), serde_json::to_value(r).unwrap_or(Value::Null)))
        .collect();
    (!asked.is_empty()).then_some(asked)
}

/// `{"taskId": string}`, and nothing else. The outer error is a malformed call (`arguments` not
/// an object); the inner one a wrong argument, which the caller reads as a tool error.
fn task_id_argument(params: &Params) -> Result<Result<TaskId, String>, RpcError> {
    let args = match params.value("arguments") {
        Some(Value::Object(args)) => args,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(RpcError::invalid_params("`arguments` must be an object")),
    };
    if let Some(other) = args.keys().find(|k| *k != "taskId") {
        return Ok(Err(format!(
            "Unknown argument `{other}`: the only argument is `taskId`, the id of the task."
        )));
    }
    Ok(match args.get("taskId") {
        Some(Value::String(id)) => {
            tracing::Span::current().record("task", id.as_str());
            Ok(TaskId::new(id.clone()))
        }
        Some(_) => Err("The argument `taskId` must be a string: the id of the task.".into()),
        None => Err("Missing the argument `taskId`: the id of the task to look at.".into()),
    })
}

/// The answer for an id that is unknown or another owner's: the two read the same. Where tasks
/// belong to a session (`per_session`), it says so, and how to keep one: the usual cause is a
/// client that opens a session per call.
fn unknown_task(id: &TaskId, per_session: bool) -> Value {
    let mut text = format!(
        "There is no task {} for this client: the id is wrong, or the task has ended and been removed.",
        id.as_str()
    );
    if per_session {
        text.push_str(SESSIONS);
    }
    text_result(text, None, true)
}

/// What the answer for an unknown id adds where tasks belong to the session that started them.
pub(crate) const SESSIONS: &str = " Tasks belong to the MCP session that started them: call this tool in the same session as the call that started the task. A client that opens a new session for every call cannot follow a task; keep one session open instead (LangChain's langchain-mcp-adapters: `async with client.session(\"server\") as session:` then `tools = await load_mcp_tools(session)`), or have the server authenticate callers, whose tasks every session of theirs can follow.";

fn text_result(text: String, structured: Option<Value>, is_error: bool) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if let Some(structured) = structured {
        result["structuredContent"] = structured;
    }
    if is_error {
        result["isError"] = json!(true);
    }
    result
}

/// The task in the field names of the client's era (2025-11-25 `Task`, 2026-07-28 `Task`), with
/// the questions it waits on. A completed task's status message is dropped: it is the last
/// thing the tool said while it ran, stale once it is done.
fn task(record: &TaskRecord, era: Era) -> Value {
    let mut task = match era {
        Era::Legacy => record.legacy_task(),
        Era::Modern => record.modern_create_result(),
    };
    if let Value::Object(fields) = &mut task {
        fields.remove("resultType");
        if record.status == TaskStatus::Completed {
            fields.remove("statusMessage");
        }
        if !record.input_requests.is_empty() {
            fields.insert("inputRequests".into(), json!(record.input_requests));
        }
    }
    task
}

/// The task's status message, if it has one worth reading now.
fn message(record: &TaskRecord) -> Option<&str> {
    let message = record.status_message.as_deref()?.trim();
    (!message.is_empty() && record.status != TaskStatus::Completed).then_some(message)
}

/// `text`, then `: message`, as one sentence.
fn with_message(mut text: String, message: Option<&str>) -> String {
    if let Some(message) = message {
        text.push_str(": ");
        text.push_str(message);
    }
    if !text.ends_with(['.', '!', '?']) {
        text.push('.');
    }
    text
}

/// What the task is doing, for people: "Task X is still running: reading sources."
fn state_sentence(record: &TaskRecord) -> String {
    let id = record.id.as_str();
    let (what, message) = match record.status {
        TaskStatus::Working => (format!("Task {id} is still running"), message(record)),
        TaskStatus::InputRequired => {
            let questions: Vec<String> = record.input_requests.values().map(question).collect();
            let waits = if questions.is_empty() {
                format!("Task {id} is waiting for input")
            } else {
                format!(
                    "Task {id} is waiting for an answer to {}",
                    questions.join(" and ")
                )
            };
            (waits, None)
        }
        TaskStatus::Completed => (format!("Task {id} has completed"), None),
        TaskStatus::Failed => (format!("Task {id} failed"), message(record)),
        TaskStatus::Cancelled => (format!("Task {id} was cancelled"), None),
    };
    with_message(what, message)
}

/// [`TASK_STATUS_TOOL`]: the task, as a sentence and as structured content.
fn status(record: &TaskRecord, era: Era) -> Value {
    let mut text = state_sentence(record);
    text.push_str(&match record.status {
        TaskStatus::Completed | TaskStatus::Failed => {
            format!(" Call `{TASK_RESULT_TOOL}` to get its result.")
        }
        TaskStatus::Cancelled => String::new(),
        _ => format!(
            " Call `{TASK_STATUS_TOOL}` again later, or `{TASK_RESULT_TOOL}` once it is done."
        ),
    });
    text_result(text, Some(task(record, era)), false)
}

/// One open question, for people.
fn question(request: &InputRequest) -> String {
    let message = request.params.get("message").and_then(Value::as_str);
    match (request.method.as_str(), message) {
        ("elicitation/create", Some(m)) => format!("the question \"{m}\""),
        ("sampling/createMessage", _) => "a request for the client's model".into(),
        ("roots/list", _) => "a request for the client's roots".into(),
        (method, _) => format!("a `{method}` request"),
    }
}

/// [`TASK_RESULT_TOOL`]: the tool's own result once the task has ended with one (with
/// `related-task` in `_meta`, as legacy `tasks/result` answers); an `isError` result with the
/// task's own message when it failed with an error or was cancelled; a note while it runs.
fn result(record: TaskRecord, era: Era) -> Value {
    let id = record.id.as_str().to_owned();
    if !record.status.is_terminal() {
        let mut text = state_sentence(&record);
        text.pop();
        text.push_str(&format!(
            "; it has no result yet. Call `{TASK_RESULT_TOOL}` again later."
        ));
        return text_result(text, None, false);
    }
    let related = json!({ meta::RELATED_TASK: { "taskId": id } });
    let mut answer = match (&record.status, record.outcome.as_ref()) {
        (_, Some(TaskOutcome::Result(result))) => result.clone(),
        (_, Some(TaskOutcome::Error(error))) => text_result(
            with_message(format!("Task {id} failed"), Some(&error.message)),
            Some(task(&record, era)),
            true,
        ),
        (TaskStatus::Cancelled, None) => text_result(
            format!("Task {id} was cancelled before it produced a result."),
            Some(task(&record, era)),
            true,
        ),
        (_, None) => text_result(
            with_message(
                format!("Task {id} failed before it produced a result"),
                message(&record),
            ),
            Some(task(&record, era)),
            true,
        ),
    };
    if let Value::Object(fields) = &mut answer
        && let Value::Object(m) = fields.entry("_meta").or_insert_with(|| json!({}))
        && let Value::Object(related) = related
    {
        m.extend(related);
    }
    answer
}
