//! The fallback for clients without tasks ([`ServerBuilder::task_fallback`](super::ServerBuilder::task_fallback)),
//! on by default, in use on a server with a tool that may answer with it ([`may_start`]).
//!
//! A client that did not ask for a task (2025-11-25: no `task` in the `tools/call` params;
//! 2026-07-28: the request's capabilities do not declare the tasks extension) calling a tool that
//! runs only as a task (`task_support = "required"`) gets, at once, an ordinary `CallToolResult`
//! whose text names the task id and the companion tools; the task runs in the background. The
//! companion tools ([`TASK_STATUS_TOOL`], [`TASK_RESULT_TOOL`], [`TASK_CANCEL_TOOL`], each `{"taskId": string}`) are listed and
//! served only when the fallback is on; they act on the caller's own tasks only (the same owner
//! rules as `tasks/get`: a legacy session, or the connection's principal).
//!
//! Input: a fallback task asks by the inline route its client declared. On a 2025-11-25 session
//! the question goes out as an ordinary server-to-client request (as a legacy task's does; the
//! client must have declared `elicitation` / `sampling` / `roots`), and shows in
//! [`TASK_STATUS_TOOL`] while it waits. A 2026-07-28 client without the tasks extension has no
//! `tasks/update`, so the task's question is stored as a modern task's is, and a companion call
//! from a client that declared the capability it needs answers with an MRTR
//! `InputRequiredResult` carrying it; the retry's `inputResponses` reach the task
//! (`companion.rs`). A client that declared neither gets the tool's clear
//! [`InputError::NotSupported`](crate::tool::InputError::NotSupported) naming the capability.
//!
//! A task outcome is never a protocol error to such a client: [`TASK_RESULT_TOOL`] of a task that
//! failed or was cancelled is a tool result with `isError: true` and the task's own message.

mod companion;

pub(crate) use companion::call_companion;

use super::era::Era;
use super::inner::ServerInner;
use super::peer::{self, Peer};
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::Owner;
use crate::protocol::{
    ClientCapabilities, Execution, LogLevel, TASKS_EXTENSION, ToolAnnotations, ToolDescription,
    meta,
};
use crate::race::{Either, first, unless};
use crate::store::TaskRecord;
use crate::task::deferred::Deferred;
use crate::task::engine::{CaughtFuture, ClientChannel, Launch, Launched};
use crate::tool::{ContextBackend, RegisteredTool, RequestInfo};
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
    let promoted =
        server.promote_after.contains_key(tool.info.name) || server.config.promote_after.is_some();
    may_start(tool, promoted)
}

/// [`may_answer_started`], with `promoted`: the server sets a promotion threshold for `tool`
/// (per tool or server-wide). The fallback is in use on a server where this holds of some tool.
pub(crate) fn may_start(tool: &RegisteredTool, promoted: bool) -> bool {
    match tool.info.task_support {
        TaskSupport::Required => true,
        TaskSupport::Optional => promoted || tool.info.promote_after.is_some(),
        TaskSupport::Forbidden => false,
    }
}

/// The `execution.taskSupport` a 2025-11-25 `tools/list` shows for a tool of `declared` support:
/// the declared value, except that to a client the fallback serves (`fallback`: it is on and the
/// client did not declare tasks) a `required` tool is `optional`. Such a client can call it
/// without a task, and the fallback answers; client libraries refuse, before sending anything,
/// to call a `required` tool without a task (the TypeScript SDK 1.x `callTool` throws `-32600`
/// "requires task-based execution"), so the declared value would make the fallback unreachable.
pub(crate) fn listed_task_support(fallback: bool, declared: TaskSupport) -> &'static str {
    match declared {
        TaskSupport::Required if fallback => TaskSupport::Optional.as_str(),
        declared => declared.as_str(),
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
            meta: None,
        },
    )
}

/// Who a fallback task belongs to, and whose tasks the companion tools see: the authenticated
/// principal when the server authenticates callers, so that every session of that principal
/// follows it (clients such as LangChain's `get_tools()` open a session per call); otherwise the
/// owner `tasks/get` would see (a 2025-11-25 session over HTTP; a stdio client's one owner).
pub(crate) fn owner(peer: &dyn Peer, era: &Era) -> Owner {
    match peer.principal() {
        // The principal's owner is the one its modern-era tasks have, in every session.
        Some(_) => peer.owner(&Era::Modern),
        None => peer.owner(era),
    }
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
    let owner = owner(&**peer, &call.era);
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
    match server.engine().launch(launch).await? {
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
        Ok(fut) => crate::telemetry::timed_tool(tool.info.name, false, fut),
        // Arguments that do not fit the tool's input: the `isError` result at once.
        Err(err) => {
            return Some(err.into_outcome().and_then(|result| {
                serde_json::to_value(result).map_err(|e| RpcError::internal(e.to_string()))
            }));
        }
    };
    let mut fut: CaughtFuture = Box::pin(AssertUnwindSafe(fut).catch_unwind());
    let running = first(&mut fut, tokio::time::sleep(after));
    match unless(cancel.cancelled(), running).await {
        None => {
            tool_cancel.cancel();
            return None;
        }
        Some(Either::Left(outcome)) => {
            return Some(match outcome {
                Ok(Ok(result)) => {
                    serde_json::to_value(result).map_err(|e| RpcError::internal(e.to_string()))
                }
                Ok(Err(err)) => Err(err),
                Err(panic) => Err(crate::task::panic_error(tool.info.name, &*panic)),
            });
        }
        Some(Either::Right(())) => {}
    }
    let launch = Launch {
        tool: tool.clone(),
        arguments: call.arguments,
        owner: owner(&**peer, &call.era),
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

/// The answer to the call that started a fallback task: a text naming the task and the companion
/// tools, the task in `_meta` (`related-task`), and, for a tool without an `outputSchema` (whose
/// structured content could not match it), `{taskId, status}` as structured content.
pub(crate) fn started(record: &TaskRecord, tool: &RegisteredTool) -> Value {
    let id = record.id.as_str();
    let poll = record
        .poll_interval
        .map(|p| format!(" (no more often than every {} ms)", p.as_millis()))
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
