//! An inline `tools/call` in the modern era: input goes through MRTR (an `InputRequiredResult`
//! with the questions and a sealed `requestState`, retried with `inputResponses`), and a call
//! that may become a task hands its running tool to the task engine when it does.

use super::super::fallback;
use super::super::incoming::{Answer, Incoming, request_info};
use super::super::inline::{self, ProgressLine};
use super::super::inner::ServerInner;
use super::super::peer::Peer;
use super::super::plan::Becomes;
use super::{Caught, ToolCall, finish};
use crate::protocol::Era;
use crate::protocol::InputRequest;
use crate::protocol::jsonrpc::{Payload, RpcError};
use crate::protocol::task::Owner;
use crate::race::{Either, first, unless};
use crate::task::deferred::Deferred;
use crate::task::engine::{CaughtFuture, Launch};
use crate::task::{mrtr, state};
use crate::tool::{ArgumentError, ContextBackend, RequestInfo, ToolContext};
use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// An inline call in the modern era: input goes through MRTR (`InputRequiredResult`, retried with
/// `inputResponses` and the sealed `requestState`). In three steps: [`restore`] what earlier
/// rounds gathered; [`Mrtr::start`] the tool and [`Mrtr::drive`] it until it ends, asks, or is
/// due to become a task; then answer with its result, [`suspend`] it with its questions, or
/// [`Mrtr::promote`] it into a task.
pub(super) async fn run_mrtr(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: ToolCall,
    req: &Incoming,
    cancel: CancellationToken,
    becomes: Becomes,
    line: Option<&Arc<ProgressLine>>,
) -> Answer {
    let owner = peer.owner(&req.era);
    let name = call.tool.info.name;
    let digest = state::call_digest(name, call.arguments.as_ref(), owner.as_str());
    let (gathered, volunteered) = match restore(&server.state_key, req, digest) {
        Ok(restored) => restored,
        Err(err) => return Some(Err(err)),
    };
    let (progress, log) = notifiers(peer, line, req);
    let replay = Arc::new(mrtr::Replay::new(&gathered, volunteered, progress, log));
    let info = request_info(&**peer, req);
    let may_become_task = !matches!(becomes, Becomes::Never);
    let started = Mrtr::start(
        server,
        req,
        &call,
        replay,
        &info,
        may_become_task,
        &cancel,
        line,
    );
    let mut run = match started {
        Ok(run) => run,
        // Arguments that do not fit the tool's input: an `isError` result at once, in every
        // round (nothing ran, so nothing is sealed) and before any task exists.
        Err(err) => return Some(err.into_outcome().map(Payload::Tool)),
    };
    let promote_after = match becomes {
        Becomes::WhenAskedOrAfter(after) | Becomes::FallbackAfter(after) => Some(after),
        _ => None,
    };
    let step = run.drive(&cancel, promote_after).await?;
    Some(match step {
        mrtr::Step::Done(outcome) => finish(name, outcome),
        // The client's answer does not fit its question: its error, and nothing is used up (a
        // retry with a fitting answer under the same `requestState` goes on).
        mrtr::Step::Misfit(why) => {
            run.tool_cancel.cancel();
            Err(RpcError::invalid_params(why))
        }
        mrtr::Step::Suspended(needed) => {
            Ok(suspend(&server.state_key, &run.replay, gathered, needed))
        }
        mrtr::Step::Promote => {
            let fallback = matches!(becomes, Becomes::FallbackAfter(_));
            // Boxed: the rare step need not make every inline call's future larger.
            Box::pin(run.promote(server, req, call, owner, info, fallback)).await
        }
    })
}

/// What the earlier rounds of a call gathered, and the answers offered before any question. A
/// first round (no `requestState`) has gathered nothing, and its answers are offered to the tool
/// under their keys; a retry opens its sealed `requestState`, and only the keys it says were
/// asked count.
pub(in crate::server) fn restore(
    key: &state::StateKey,
    req: &Incoming,
    call: String,
) -> Result<(state::Gathered, Map<String, Value>), RpcError> {
    let raw = req.params.raw("inputResponses");
    match req.params.value("requestState") {
        None | Some(Value::Null) => {
            let responses = mrtr::parse_responses(req.params.value("inputResponses"))
                .map_err(RpcError::invalid_params)?;
            let gathered = state::Gathered {
                call,
                ..Default::default()
            };
            Ok((gathered, responses))
        }
        Some(Value::String(text)) => {
            let mut gathered = state::open(key, &text, &call)
                .map_err(|e| RpcError::invalid_params(e.to_string()))?;
            // Only the answers to what the last round asked are built (`accept_responses`
            // would drop the others).
            let (responses, _unknown) =
                mrtr::read_responses(raw, |k| gathered.asked.contains_key(k))
                    .map_err(RpcError::invalid_params)?;
            mrtr::accept_responses(&mut gathered, responses);
            Ok((gathered, Map::new()))
        }
        Some(_) => Err(RpcError::invalid_params("`requestState` must be a string")),
    }
}

/// How an MRTR call reports progress (on `line`, under the call's progress token) and log
/// messages (when the request asked for them): on the request's own stream, while it is there.
pub(in crate::server) fn notifiers(
    peer: &Arc<dyn Peer>,
    line: Option<&Arc<ProgressLine>>,
    req: &Incoming,
) -> (Option<mrtr::ProgressFn>, Option<mrtr::LogFn>) {
    let progress = line.cloned().map(|line| {
        Box::new(move |p: f64, total: Option<f64>, message: Option<String>| {
            line.report(p, total, message)
        }) as mrtr::ProgressFn
    });
    let log = req.log_level.map(|_| {
        let weak = Arc::downgrade(peer);
        Box::new(move |params: Value| inline::send_log(&weak, params)) as mrtr::LogFn
    });
    (progress, log)
}

/// The `InputRequiredResult` of a call that waits on answers: its questions, and the sealed
/// state that carries what was gathered (the answers this round used included) to the retry.
pub(in crate::server) fn suspend(
    key: &state::StateKey,
    replay: &mrtr::Replay,
    mut gathered: state::Gathered,
    needed: Vec<(String, InputRequest)>,
) -> Payload {
    replay.keep_used(&mut gathered);
    mrtr::record_asked(&mut gathered, &needed);
    let requests: Map<String, Value> = needed
        .into_iter()
        .map(|(k, r)| (k, serde_json::to_value(r).unwrap_or(Value::Null)))
        .collect();
    Payload::Tree(json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state::seal(key, gathered),
    }))
}

/// A modern inline call under way.
struct Mrtr {
    /// The tool's future, panics caught: a promoted call hands it to the engine as it is.
    fut: CaughtFuture,
    replay: Arc<mrtr::Replay>,
    /// For a call that may become a task: its backend, which switches to the task's.
    deferred: Option<Arc<Deferred>>,
    /// What cancels the tool: the request's own cancellation, unless the call may become a task;
    /// then its own (once it is a task, cancelling the `tools/call` no longer reaches it, only
    /// `tasks/cancel` does).
    tool_cancel: CancellationToken,
}

impl Mrtr {
    /// Calls the tool with the replay as its backend (behind a [`Deferred`] when the call may
    /// become a task; its status also kept on `line`, for the keepalive notifications). `Err`
    /// when its arguments do not decode (nothing runs).
    #[allow(clippy::too_many_arguments)]
    fn start(
        server: &ServerInner,
        req: &Incoming,
        call: &ToolCall,
        replay: Arc<mrtr::Replay>,
        info: &Arc<RequestInfo>,
        may_become_task: bool,
        cancel: &CancellationToken,
        line: Option<&Arc<ProgressLine>>,
    ) -> Result<Mrtr, ArgumentError> {
        let inline: Arc<dyn ContextBackend> = match line {
            Some(line) => inline::with_status(replay.clone(), line.clone()),
            None => replay.clone(),
        };
        let (backend, deferred, tool_cancel): (Arc<dyn ContextBackend>, _, _) = if may_become_task {
            let deferred = Arc::new(Deferred::new(inline));
            (deferred.clone(), Some(deferred), CancellationToken::new())
        } else {
            (inline, None, cancel.clone())
        };
        let ctx = ToolContext::new(
            backend,
            req.client.capabilities.clone(),
            tool_cancel.clone(),
        )
        .with_log_level(req.log_level)
        .with_request(info.clone())
        .with_state(server.state.clone());
        let fut = call.tool.call(ctx, call.arguments.clone())?;
        let fut = crate::telemetry::timed_tool(call.tool.info.name, false, fut);
        Ok(Mrtr {
            fut: Box::pin(AssertUnwindSafe(fut).catch_unwind()),
            replay,
            deferred,
            tool_cancel,
        })
    }

    /// Drives the tool until it ends, waits on answers, is handed one that does not fit, asks to
    /// become a task, or is still running at `promote_after`. `None`: the request was cancelled
    /// first (and the tool with it).
    async fn drive(
        &mut self,
        cancel: &CancellationToken,
        promote_after: Option<Duration>,
    ) -> Option<mrtr::Step<Caught>> {
        let Mrtr {
            fut,
            replay,
            deferred,
            tool_cancel,
        } = self;
        let wants_task = || deferred.as_ref().is_some_and(|d| d.wants_task());
        let running = first(
            mrtr::drive(fut, replay, wants_task),
            // Still running at the threshold: the same run goes on as a task.
            sleep_or_never(promote_after),
        );
        match unless(cancel.cancelled(), running).await {
            None => {
                tool_cancel.cancel();
                None
            }
            Some(Either::Left(step)) => Some(step),
            Some(Either::Right(())) => Some(mrtr::Step::Promote),
        }
    }

    /// Hands the running tool to the task engine: the same run goes on as a task, and the answer
    /// is its `CreateTaskResult` (for a client without tasks, the fallback's answer naming it).
    async fn promote(
        self,
        server: &ServerInner,
        req: &Incoming,
        call: ToolCall,
        owner: Owner,
        info: Arc<RequestInfo>,
        fallback: bool,
    ) -> Result<Payload, RpcError> {
        let deferred = self
            .deferred
            .expect("only a deferred call asks to become a task");
        let started = call.tool.clone();
        let launch = Launch {
            tool: call.tool,
            arguments: call.arguments,
            owner,
            origin: Era::Modern,
            requested_ttl: None,
            capabilities: req.client.capabilities.clone(),
            channel: None,
            // A taskless client's progress token ends with the fallback's answer.
            progress_token: call.progress_token.filter(|_| !fallback),
            start_after: None,
            log_level: req.log_level,
            request: info,
            state: server.state.clone(),
        };
        let engine = server.engine();
        let prepared = engine.prepare(&launch);
        // A fallback task asks as any modern task does: the question is stored, and the
        // companion tools carry it to a client that can answer it inline.
        let task_backend = prepared.backend();
        // The MRTR phase's keys end here; the task has its own key space.
        let record = engine
            .start(prepared, self.fut, self.tool_cancel, |record| {
                deferred.switch_to(record.id.as_str(), task_backend)
            })
            .await?;
        Ok(Payload::Tree(match fallback {
            true => fallback::started(&record, &started),
            false => record.modern_create_result(),
        }))
    }
}

/// Resolves after `after`, or never.
async fn sleep_or_never(after: Option<Duration>) {
    match after {
        Some(after) => tokio::time::sleep(after).await,
        None => std::future::pending().await,
    }
}
