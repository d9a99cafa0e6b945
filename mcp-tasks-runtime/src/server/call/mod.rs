//! `tools/call`: decides how the call runs (a [`CallPlan`], see `plan.rs`) and carries it out. A
//! task goes to the task engine ([`launch_task`]); a call for a client without tasks goes to the
//! fallback; an inline call runs here: with plain server-to-client requests in a legacy session,
//! or through MRTR in the modern era (`mrtr.rs`: restore what earlier rounds gathered, drive the
//! tool, then answer, ask, or hand the running tool to the engine as a task).

pub(super) mod mrtr;

use super::authz::Authorized;
use super::era::Era;
use super::fallback;
use super::incoming::{Answer, Incoming, request_info, tree};
use super::inline::{self, ProgressLine};
use super::inner::ServerInner;
use super::peer::{self, Peer};
use super::plan::{self, Becomes, CallFacts, CallPlan, Promotion};
use crate::protocol::jsonrpc::{Payload, RpcError};
use crate::protocol::task::{AsTaskView, TaskShape};
use crate::protocol::{CallToolResult, TASKS_EXTENSION};
use crate::race::unless;
use crate::task::engine::{Launch, Launched};
use crate::tool::{RegisteredTool, TaskSupport, ToolContext};
use futures_util::FutureExt;
use futures_util::future::Either;
use mrtr::run_mrtr;
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One `tools/call`, read: the tool, its arguments, and the progress token to report under.
struct ToolCall {
    tool: Arc<RegisteredTool>,
    arguments: Option<Value>,
    progress_token: Option<Value>,
}

impl ToolCall {
    /// What the task fallback needs of this call.
    fn fallback(self, peer: &dyn Peer, req: &Incoming) -> fallback::Call {
        fallback::Call {
            era: req.era,
            id: req.id.clone(),
            capabilities: req.client.capabilities.clone(),
            log_level: req.log_level,
            request: request_info(peer, req),
            arguments: self.arguments,
            tool: self.tool,
        }
    }
}

/// `tools/call`: decides how the call runs (a [`CallPlan`], see `plan.rs`) and carries it out.
pub(crate) async fn tools_call(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Authorized,
    cancel: CancellationToken,
) -> Answer {
    let name = match req.params.str("name") {
        Some(Some(name)) => name.into_owned(),
        Some(None) => return Some(Err(RpcError::invalid_params("`name` must be a string"))),
        None => {
            return Some(Err(RpcError::invalid_params(
                "missing required parameter `name`",
            )));
        }
    };
    tracing::Span::current().record("tool", name.as_str());
    let offers_fallback = server.task_fallback && peer.offers_fallback();
    if offers_fallback && fallback::COMPANION_TOOLS.contains(&name.as_str()) {
        // The companion tools run inline, like any `forbidden` tool.
        if let CallPlan::Refuse(err) = plan::plan(&CallFacts {
            support: TaskSupport::Forbidden,
            era: req.era,
            declared: req.client.capabilities.has_extension(TASKS_EXTENSION),
            task_param: req.has_tasks() && req.params.has_non_null("task"),
            version_has_tasks: req.has_tasks(),
            defers: false,
            fallback: false,
            promotion: Promotion::default(),
        }) {
            return Some(Err(err));
        }
        let owner = fallback::owner(&**peer, &req.era);
        // Tasks are the session's where the caller's owner differs by era (HTTP, 2025-11-25,
        // without authentication).
        let per_session = owner != peer.owner(&Era::Modern);
        let line = progress_line(peer, req.progress_token());
        let answer = fallback::call_companion(server, &name, &req, &owner, per_session);
        return tree(Some(kept(server, line.as_ref(), answer).await));
    }
    let Some(tool) = server.tools.get(&name).cloned() else {
        return Some(Err(RpcError::invalid_params(format!(
            "Unknown tool: `{name}`"
        ))
        .with_data(json!({ "tool": name }))));
    };
    let info = &tool.info;
    let plan = plan::plan(&CallFacts {
        support: info.task_support,
        era: req.era,
        declared: req.client.capabilities.has_extension(TASKS_EXTENSION),
        task_param: req.has_tasks() && req.params.has_non_null("task"),
        version_has_tasks: req.has_tasks(),
        defers: info.defer_task,
        fallback: offers_fallback,
        promotion: Promotion {
            builder: server.promote_after.get(info.name).copied(),
            attribute: info.promote_after,
            server: server.config.promote_after,
        },
    });
    let call = ToolCall {
        arguments: req.params.value("arguments"),
        progress_token: req.progress_token(),
        tool,
    };
    let becomes = match plan {
        CallPlan::Refuse(err) => return Some(Err(err)),
        CallPlan::Task => return Some(launch_task(server, peer, call, &req).await),
        CallPlan::Fallback => {
            let call = call.fallback(&**peer, &req);
            return tree(Some(fallback::launch(server, peer, call).await));
        }
        CallPlan::Inline { becomes } => becomes,
    };
    // From here the call waits on its tool: kept alive for a client that gave a progress token.
    let line = progress_line(peer, call.progress_token.clone());
    let line = line.as_ref();
    if req.era.is_modern() {
        return match keepalive(server, line) {
            Some((kept_line, every)) => {
                let run = run_mrtr(server, peer, call, &req, cancel, becomes, line);
                Box::pin(inline::keep_alive(kept_line, every, run)).await
            }
            // Awaited in place: the MRTR future is large, and a call without a token (the
            // common case) should not pay for moving it into a wrapper.
            None => run_mrtr(server, peer, call, &req, cancel, becomes, line).await,
        };
    }
    let backend = inline::legacy_backend(Arc::downgrade(peer), line.cloned());
    if let Becomes::FallbackAfter(after) = becomes {
        let call = call.fallback(&**peer, &req);
        let run = fallback::run_promotable(server, peer, call, backend, cancel, after);
        return tree(kept(server, line, run).await);
    }
    let ctx = ToolContext::new(backend, req.client.capabilities.clone(), cancel.clone())
        .with_log_level(req.log_level)
        .with_request(request_info(&**peer, &req))
        .with_state(server.state.clone());
    let name_of = call.tool.info.name;
    let fut = match call.tool.call(ctx, call.arguments) {
        Ok(fut) => crate::telemetry::timed_tool(name_of, false, fut),
        // Arguments that do not fit the tool's input: an `isError` result the model can read.
        Err(err) => return Some(err.into_outcome().map(Payload::Tool)),
    };
    let running = kept(server, line, AssertUnwindSafe(fut).catch_unwind());
    let outcome = unless(cancel.cancelled(), running).await?;
    Some(finish(&name, outcome))
}

/// The progress notifications of a request that carried `_meta.progressToken`.
fn progress_line(peer: &Arc<dyn Peer>, token: Option<Value>) -> Option<Arc<ProgressLine>> {
    token.map(|token| ProgressLine::new(Arc::downgrade(peer), token))
}

/// `fut`, kept alive on `line` at the server's keepalive interval (see
/// [`ServerConfig::keepalive_interval`](crate::ServerConfig::keepalive_interval)); as it is,
/// with no timer, for a request without a progress token or a server without keepalive. The
/// kept future is boxed, so that calls without a token do not carry its timer's room.
fn kept<'a, F: Future + 'a>(
    server: &ServerInner,
    line: Option<&'a Arc<ProgressLine>>,
    fut: F,
) -> Either<F, Pin<Box<impl Future<Output = F::Output> + 'a>>> {
    match keepalive(server, line) {
        Some((line, every)) => Either::Right(Box::pin(inline::keep_alive(line, every, fut))),
        None => Either::Left(fut),
    }
}

/// The line to keep a call alive on, and how often: when the request has a progress token and
/// the server a keepalive interval.
fn keepalive<'a>(
    server: &ServerInner,
    line: Option<&'a Arc<ProgressLine>>,
) -> Option<(&'a ProgressLine, Duration)> {
    Some((line?, server.config.keepalive_interval?))
}

/// What a tool's future gives, panics caught.
type Caught = Result<Result<CallToolResult, RpcError>, Box<dyn std::any::Any + Send>>;

/// An inline call's answer: its `CallToolResult` is written as it is, with no tree on the way.
fn finish(tool: &str, outcome: Caught) -> Result<Payload, RpcError> {
    match outcome {
        Ok(Ok(result)) => Ok(Payload::Tool(result)),
        Ok(Err(err)) => Err(err),
        Err(panic) => Err(crate::task::panic_error(tool, &*panic)),
    }
}

/// Starts a task for a `tools/call` and answers with the era's `CreateTaskResult`.
async fn launch_task(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: ToolCall,
    req: &Incoming,
) -> Result<Payload, RpcError> {
    let ToolCall {
        tool,
        arguments,
        progress_token,
    } = call;
    let origin = req.era;
    let (requested_ttl, channel) = match origin {
        Era::Modern => (None, None),
        Era::Legacy => {
            let ttl = match req
                .params
                .value("task")
                .and_then(|mut t| t.get_mut("ttl").map(Value::take))
            {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(ms) => Some(Duration::from_millis(ms)),
                    None => {
                        return Err(RpcError::invalid_params(
                            "`task.ttl` must be a non-negative integer (milliseconds)",
                        ));
                    }
                },
            };
            (ttl, Some(peer::channel(Arc::downgrade(peer))))
        }
    };
    let launch = Launch {
        tool,
        arguments,
        owner: peer.owner(&req.era),
        origin,
        requested_ttl,
        capabilities: req.client.capabilities.clone(),
        // A legacy task's tool may send requests naming the task on the session at once: it starts
        // only after the client has its `CreateTaskResult`.
        start_after: channel.as_ref().map(|_| peer.after_reply(&req.id)),
        channel,
        progress_token,
        log_level: req.log_level,
        request: request_info(&**peer, req),
        state: server.state.clone(),
    };
    let engine = server.engine();
    let record = match engine.launch(launch).await? {
        Launched::Task(record) => record,
        // Arguments that do not fit the tool's input. A modern client that declared the tasks
        // extension takes a `CallToolResult` as well as a task (the server decides), so it gets
        // the `isError` result at once. A legacy client asked for a task and waits for a
        // `CreateTaskResult`: it gets a task that ends at once, `failed` (2025-11-25 maps an
        // `isError` result so), whose `tasks/result` is that result.
        Launched::Refused(refused) => match origin {
            Era::Modern => return Ok(Payload::Tool(refused.result())),
            // Boxed: the rare path need not make every call's future larger.
            Era::Legacy => Box::pin(refused.into_task(engine)).await?,
        },
    };
    let view = record.task_view();
    Ok(Payload::Text(match origin {
        Era::Modern => view
            .render(TaskShape::ModernCreate)
            .with_server_info(server.info_json())
            .to_text(),
        Era::Legacy => view.render(TaskShape::LegacyCreate).to_text(),
    }))
}
