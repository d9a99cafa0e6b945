//! The fallback for clients without tasks ([`ServerBuilder::task_fallback`](super::ServerBuilder::task_fallback)).
//!
//! A client that did not ask for a task (2025-11-25: no `task` in the `tools/call` params;
//! 2026-07-28: the request's capabilities do not declare the tasks extension) calling a tool that
//! runs only as a task (`task_support = "required"`) gets, at once, an ordinary `CallToolResult`
//! whose text names the task id and the companion tools; the task runs in the background. The
//! companion tools ([`TASK_STATUS_TOOL`], [`TASK_RESULT_TOOL`], [`TASK_CANCEL_TOOL`], each `{"taskId": string}`) are listed and
//! served only when the fallback is on; they act on the caller's own tasks only (the same owner
//! rules as `tasks/get`: a legacy session, or the connection's principal).
//!
//! Input: a fallback task started on a 2025-11-25 session asks the client with ordinary
//! server-to-client requests on that session (as a legacy task does; the client must have declared
//! `elicitation` / `sampling` / `roots`), and the question shows in [`TASK_STATUS_TOOL`] while it waits. A
//! 2026-07-28 client without the tasks extension has no way to answer a task's question
//! (`tasks/update` is the extension's), so there the tool's input request fails at once with
//! [`InputError::NotSupported`] naming the tasks extension (`-32021` when the tool returns it with
//! `?`), instead of waiting for an answer that cannot come.

use super::ServerInner;
use super::era::Era;
use super::peer::{self, Peer};
use crate::protocol::Params;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId, TaskOutcome, TaskStatus};
use crate::protocol::{
    ClientCapabilities, Execution, InputRequest, LogLevel, TASKS_EXTENSION, ToolAnnotations,
    ToolDescription, meta,
};
use crate::store::{CancelResult, StoreError, TaskRecord};
use crate::task::deferred::Deferred;
use crate::task::engine::{CaughtFuture, ClientChannel, Launch, Launched};
use crate::tool::{ContextBackend, InputError, InputFuture, RegisteredTool, RequestInfo};
use crate::tool::{TaskSupport, ToolContext};
use futures_util::FutureExt;
use serde_json::{Value, json};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use tokio_util::sync::CancellationToken;

/// The companion tool that reads a task's status: `{"taskId": string}`.
pub const TASK_STATUS_TOOL: &str = "tasks_status";
/// The companion tool that gets a task's result: `{"taskId": string}`.
pub const TASK_RESULT_TOOL: &str = "tasks_result";
/// The companion tool that cancels a task: `{"taskId": string}`.
pub const TASK_CANCEL_TOOL: &str = "tasks_cancel";
/// The three companion tools' names.
pub const COMPANION_TOOLS: [&str; 3] = [TASK_STATUS_TOOL, TASK_RESULT_TOOL, TASK_CANCEL_TOOL];

/// Whether a client declared that it knows tasks: the tasks extension in this request's
/// capabilities (2026-07-28), `tasks` in the session's `initialize` capabilities (2025-11-25).
/// `tools/list` shows a client that did not no `outputSchema` for the tools that may answer it with
/// the fallback's answer ([`may_answer_started`]) while the fallback is on: that answer has no
/// structured content to match one (clients reject a result without it for a tool that declares
/// one).
pub(crate) fn declares_tasks(era: &Era, caps: &ClientCapabilities) -> bool {
    match era {
        Era::Modern => caps.has_extension(TASKS_EXTENSION),
        Era::Legacy => caps.has("tasks"),
    }
}

/// Whether a taskless call of `tool` may be answered with the fallback's answer: it runs only as a
/// task, or it is `optional` with a promotion threshold.
pub(crate) fn may_answer_started(server: &ServerInner, tool: &RegisteredTool) -> bool {
    match tool.info.task_support {
        TaskSupport::Required => true,
        TaskSupport::Optional => {
            server.promote_after.contains_key(tool.info.name)
                || tool.info.promote_after.is_some()
                || server.config.promote_after.is_some()
        }
        TaskSupport::Forbidden => false,
    }
}

/// The companion tools, as `tools/list` shows them in `era`.
pub(crate) fn tools<'a>(era: &Era) -> impl Iterator<Item = ToolDescription<'a>> + use<'a> {
    static INPUT_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "taskId": { "type": "string", "description": "The task id the long-running tool answered with." }
            },
            "required": ["taskId"],
            "additionalProperties": false,
        })
    });
    let reads = ToolAnnotations {
        read_only_hint: Some(true),
        idempotent_hint: Some(true),
        open_world_hint: Some(false),
        ..ToolAnnotations::default()
    };
    let about = [
        (
            TASK_STATUS_TOOL,
            "Task status",
            "Read the status of a task started by a long-running tool: its status (working, input_required, completed, failed, cancelled), its status message (with progress) and any question it waits on.",
            reads,
        ),
        (
            TASK_RESULT_TOOL,
            "Task result",
            "Get the result of a task started by a long-running tool: the tool's own result once the task has completed, or a note that it is still running (call again later).",
            reads,
        ),
        (
            TASK_CANCEL_TOOL,
            "Cancel task",
            "Cancel a running task started by a long-running tool.",
            ToolAnnotations {
                read_only_hint: Some(false),
                destructive_hint: Some(true),
                ..reads
            },
        ),
    ];
    let legacy = !era.is_modern();
    about.into_iter().map(
        move |(name, title, description, annotations)| ToolDescription {
            name,
            title: Some(title),
            description: Some(description),
            input_schema: &INPUT_SCHEMA,
            output_schema: None,
            annotations,
            execution: legacy.then_some(Execution {
                task_support: "forbidden",
            }),
        },
    )
}

/// What a fallback launch needs of the `tools/call`.
pub(crate) struct Call {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) era: Era,
    pub(crate) id: crate::protocol::jsonrpc::RequestId,
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) arguments: Option<Value>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) request: Arc<RequestInfo>,
}

/// Starts `tool` as a task for a client without tasks and answers the `CallToolResult` that names
/// it.
pub(crate) async fn launch(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: Call,
) -> Result<Value, RpcError> {
    let tool = call.tool;
    let owner = peer.owner(&call.era);
    let legacy = !call.era.is_modern();
    let launch = Launch {
        tool: tool.clone(),
        arguments: call.arguments,
        owner,
        origin: call.era,
        requested_ttl: None,
        capabilities: call.capabilities,
        // Questions go to a legacy session as ordinary requests; task status notifications do not
        // (the client knows nothing of tasks).
        channel: legacy.then(|| {
            Arc::new(Quiet(peer::channel(Arc::downgrade(peer)))) as Arc<dyn ClientChannel>
        }),
        // The call's progress token ends with its answer, which comes at once.
        progress_token: None,
        // The tool's first request to the session comes after the answer naming the task.
        start_after: legacy.then(|| peer.after_reply(&call.id)),
        log_level: call.log_level,
        request: call.request,
        state: server.state.clone(),
    };
    let engine = server.engine();
    let launched = if legacy {
        engine.launch(launch).await?
    } else {
        // A backend that refuses input: nobody could answer it.
        engine.launch_with(launch, no_answers).await?
    };
    match launched {
        Launched::Task(record) => Ok(started(&record, &tool)),
        // Arguments that do not fit the tool's input: the `isError` result at once, no task.
        Launched::Refused(refused) => {
            serde_json::to_value(refused.result()).map_err(|e| RpcError::internal(e.to_string()))
        }
    }
}

/// A legacy taskless call of an `optional` tool with a promotion threshold
/// ([`ServerBuilder::promote_after`](super::ServerBuilder::promote_after)): it runs inline on `inline` (the
/// session's backend) and answers inline if it ends within `after`; otherwise the same run goes on
/// as a fallback task and the client gets the fallback's answer. Cancelling the request reaches
/// the tool only while it is inline.
pub(crate) async fn run_promotable(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: Call,
    inline: Arc<dyn ContextBackend>,
    cancel: CancellationToken,
    after: std::time::Duration,
) -> Option<Result<Value, RpcError>> {
    let tool = call.tool;
    let deferred = Arc::new(Deferred::new(inline));
    let tool_cancel = CancellationToken::new();
    let ctx = ToolContext::new(
        deferred.clone(),
        call.capabilities.clone(),
        tool_cancel.clone(),
    )
    .with_log_level(call.log_level)
    .with_request(call.request.clone())
    .with_state(server.state.clone());
    let fut = match tool.call(ctx, call.arguments.clone()) {
        Ok(fut) => fut,
        // Arguments that do not fit the tool's input: the `isError` result at once.
        Err(err) => {
            return Some(err.into_outcome().and_then(|result| {
                serde_json::to_value(result).map_err(|e| RpcError::internal(e.to_string()))
            }));
        }
    };
    let mut fut: CaughtFuture = Box::pin(AssertUnwindSafe(fut).catch_unwind());
    tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            tool_cancel.cancel();
            return None;
        }
        outcome = &mut fut => {
            return Some(match outcome {
                Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| RpcError::internal(e.to_string())),
                Ok(Err(err)) => Err(err),
                Err(panic) => Err(crate::task::panic_error(tool.info.name, &*panic)),
            });
        }
        _ = tokio::time::sleep(after) => {}
    }
    let launch = Launch {
        tool: tool.clone(),
        arguments: call.arguments,
        owner: peer.owner(&call.era),
        origin: Era::Legacy,
        requested_ttl: None,
        capabilities: call.capabilities,
        channel: Some(Arc::new(Quiet(peer::channel(Arc::downgrade(peer))))),
        progress_token: None,
        start_after: None,
        log_level: call.log_level,
        request: call.request,
        state: server.state.clone(),
    };
    let engine = server.engine();
    let prepared = engine.prepare(&launch);
    let backend = prepared.backend();
    Some(
        engine
            .start(prepared, fut, tool_cancel, |record| {
                deferred.switch_to(record.id.as_str(), backend)
            })
            .await
            .map(|record| started(&record, &tool)),
    )
}

/// A modern fallback task's backend: `task`'s, but input requests fail at once.
pub(crate) fn no_answers(task: Arc<dyn ContextBackend>) -> Arc<dyn ContextBackend> {
    Arc::new(NoAnswers(task))
}

/// The answer to the call that started a fallback task: a text naming the task and the companion
/// tools, the task in `_meta` (`related-task`), and, for a tool without an `outputSchema` (whose
/// structured content could not match it), `{taskId, status}` as structured content.
pub(crate) fn started(record: &TaskRecord, tool: &RegisteredTool) -> Value {
    let id = record.id.as_str();
    let poll = record
        .poll_interval
        .map(|p| format!(" (about every {} ms)", p.as_millis()))
        .unwrap_or_default();
    let text = format!(
        "`{}` is running in the background as task {id}. Call the tool `{TASK_STATUS_TOOL}` with {{\"taskId\": \"{id}\"}} to see how it is doing{poll}, `{TASK_RESULT_TOOL}` with the same arguments to get its result once it is done, or `{TASK_CANCEL_TOOL}` to stop it.",
        tool.info.name
    );
    let mut result = json!({
        "content": [{ "type": "text", "text": text }],
        "_meta": { meta::RELATED_TASK: { "taskId": id } },
    });
    if tool.output_schema.is_none() {
        result["structuredContent"] = json!({ "taskId": id, "status": record.status.as_str() });
    }
    result
}

/// Serves a call of companion tool `name` (one of [`COMPANION_TOOLS`]) for `owner`.
pub(crate) async fn call_companion(
    server: &ServerInner,
    name: &str,
    params: &Params,
    owner: &Owner,
) -> Result<Value, RpcError> {
    let id = task_id_argument(params)?;
    let store = server.engine().store().clone();
    if name == TASK_CANCEL_TOOL {
        return match store.cancel(&id, owner).await {
            Ok(CancelResult::Cancelled(record)) => Ok(text_result(
                format!("Task {} is cancelled.", id.as_str()),
                Some(record.legacy_task()),
                false,
            )),
            Ok(CancelResult::AlreadyTerminal(record)) => Ok(text_result(
                format!(
                    "Task {} already ended ({}); there is nothing to cancel.",
                    id.as_str(),
                    record.status.as_str()
                ),
                Some(record.legacy_task()),
                true,
            )),
            Err(StoreError::NotFound) => Err(task_not_found()),
            Err(e) => Err(e.to_rpc_error()),
        };
    }
    let Some(record) = store.get(&id, owner).await? else {
        return Err(task_not_found());
    };
    if name == TASK_STATUS_TOOL {
        return Ok(status(&record));
    }
    result(record)
}

/// The answer of `tasks/get` for an id that is unknown or another owner's.
fn task_not_found() -> RpcError {
    RpcError::invalid_params("Failed to retrieve task: Task not found")
}

/// `{"taskId": string}`, and nothing else.
fn task_id_argument(params: &Params) -> Result<TaskId, RpcError> {
    let args = match params.value("arguments") {
        Some(Value::Object(args)) => args,
        None | Some(Value::Null) => {
            return Err(RpcError::invalid_params(
                "missing required argument `taskId` (a string)",
            ));
        }
        Some(_) => return Err(RpcError::invalid_params("`arguments` must be an object")),
    };
    if let Some(other) = args.keys().find(|k| *k != "taskId") {
        return Err(RpcError::invalid_params(format!(
            "unknown argument `{other}`: the only argument is `taskId`"
        )));
    }
    match args.get("taskId") {
        Some(Value::String(id)) => {
            tracing::Span::current().record("task", id.as_str());
            Ok(TaskId::new(id.clone()))
        }
        Some(_) => Err(RpcError::invalid_params(
            "argument `taskId` must be a string",
        )),
        None => Err(RpcError::invalid_params(
            "missing required argument `taskId` (a string)",
        )),
    }
}

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

/// [`TASK_STATUS_TOOL`]: the task (2025-11-25 `Task` fields) with the questions it waits on, as structured
/// content and as a sentence.
fn status(record: &TaskRecord) -> Value {
    let id = record.id.as_str();
    let mut text = format!("Task {id} is {}", record.status.as_str());
    if let Some(message) = record.status_message.as_deref().filter(|m| !m.is_empty()) {
        text.push_str(&format!(": {message}"));
    }
    text.push('.');
    let mut task = record.legacy_task();
    if !record.input_requests.is_empty() {
        let questions: Vec<String> = record.input_requests.values().map(question).collect();
        text.push_str(&format!(
            " It waits for the client to answer: {}.",
            questions.join("; ")
        ));
        task["inputRequests"] = json!(record.input_requests);
    }
    text.push_str(&match record.status {
        TaskStatus::Completed | TaskStatus::Failed => {
            format!(" Call `{TASK_RESULT_TOOL}` to get its result.")
        }
        TaskStatus::Cancelled => String::new(),
        _ => format!(
            " Call `{TASK_STATUS_TOOL}` again later, or `{TASK_RESULT_TOOL}` once it is done."
        ),
    });
    text_result(text, Some(task), false)
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

/// [`TASK_RESULT_TOOL`]: the tool's own result once completed (with `related-task` in `_meta`, as legacy
/// `tasks/result` answers), its JSON-RPC error once failed with one; a note while it runs.
fn result(record: TaskRecord) -> Result<Value, RpcError> {
    let id = record.id.as_str().to_owned();
    let related = json!({ "taskId": id });
    match (record.status.is_terminal(), record.outcome) {
        (false, _) => {
            let message = record
                .status_message
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            Ok(text_result(
                format!(
                    "Task {id} is still {}{message}: it has no result yet. Call `{TASK_RESULT_TOOL}` again later.",
                    record.status.as_str()
                ),
                None,
                false,
            ))
        }
        (true, Some(TaskOutcome::Result(mut result))) => {
            if let Value::Object(obj) = &mut result
                && let Value::Object(m) = obj.entry("_meta").or_insert_with(|| json!({}))
            {
                m.insert(meta::RELATED_TASK.into(), related);
            }
            Ok(result)
        }
        (true, Some(TaskOutcome::Error(error))) => Err(error),
        (true, None) => {
            let why = record
                .status_message
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            Ok(text_result(
                format!(
                    "Task {id} was {} before producing a result{why}.",
                    record.status.as_str()
                ),
                None,
                true,
            ))
        }
    }
}

/// A legacy session as a fallback task's way back: requests and notifications go through, except
/// the task status notifications a client without tasks has no use for.
struct Quiet(Arc<dyn ClientChannel>);

impl ClientChannel for Quiet {
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + '_>> {
        self.0.request(method, params)
    }

    fn notify(&self, method: &str, params: Value) {
        if method != "notifications/tasks/status" {
            self.0.notify(method, params);
        }
    }
}

/// A modern fallback task's backend: the task's, but an input request fails at once, since the
/// client cannot answer it (it has no `tasks/update`).
struct NoAnswers(Arc<dyn ContextBackend>);

impl ContextBackend for NoAnswers {
    fn input(&self, _request: InputRequest) -> InputFuture {
        Box::pin(async {
            Err(InputError::NotSupported {
                capability: TASKS_EXTENSION,
            })
        })
    }

    fn status(&self, message: String) {
        self.0.status(message);
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.0.progress(progress, total, message);
    }

    fn log(&self, params: Value) {
        self.0.log(params);
    }

    fn task_id(&self) -> Option<&str> {
        self.0.task_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_companion_tools_follow_the_tool_name_rules_and_are_listed_in_both_eras() {
        // MCP tool names: 1 to 128 characters of A-Z, a-z, 0-9, `_`, `-`, `.`.
        for name in COMPANION_TOOLS {
            assert!((1..=128).contains(&name.len()), "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
                "{name}"
            );
        }
        let listed = |era: Era| -> Vec<Value> {
            tools(&era)
                .map(|t| serde_json::to_value(t).expect("a tool serializes"))
                .collect()
        };
        let modern = listed(Era::Modern);
        let legacy = listed(Era::Legacy);
        for list in [&modern, &legacy] {
            let names: Vec<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
            assert_eq!(names, COMPANION_TOOLS);
        }
        assert!(modern.iter().all(|t| t.get("execution").is_none()));
        assert!(
            legacy
                .iter()
                .all(|t| t["execution"]["taskSupport"] == "forbidden")
        );
    }
}
