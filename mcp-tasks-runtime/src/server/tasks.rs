//! The task methods of both eras, over the task store: `tasks/get`, `tasks/update` and
//! `tasks/cancel` of the tasks extension (2026-07-28); `tasks/get`, `tasks/list`, `tasks/cancel`
//! and the blocking `tasks/result` of the 2025-11-25 experimental tasks. Every answer is written
//! from the store's view of the task (a stored result is copied as text, not parsed).

use super::authz::Authorized;
use super::incoming::Answer;
use super::inner::ServerInner;
use super::peer::Peer;
use crate::protocol::jsonrpc::{Payload, RpcError};
use crate::protocol::task::{
    AsTaskView, OutcomeView, Owner, RelatedResult, TaskId, TaskShape, TaskView,
};
use crate::protocol::{Params, TASKS_EXTENSION, meta};
use crate::race::unless;
use crate::store::{CancelResult, StoreError};
use crate::task::mrtr;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// `tasks/get`, `tasks/update`, `tasks/cancel` of the tasks extension (2026-07-28).
pub(crate) async fn modern_task_method(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Authorized,
) -> Result<Payload, RpcError> {
    // The capability gate comes before the lookup: a non-declaring client learns nothing about ids.
    if !req.client.capabilities.has_extension(TASKS_EXTENSION) {
        return Err(missing_tasks_capability());
    }
    let id = task_id_param(&req.params)?;
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match req.method.as_str() {
        "tasks/get" => {
            if let Some(settled) = settle(server, &id, &owner) {
                settled.await;
            }
            // Written to text as the store shows it (a stored result is copied, not parsed).
            let info = server.info_json();
            let mut text = None;
            let mut write = |t: TaskView<'_>| {
                text = Some(
                    t.render(TaskShape::ModernGet)
                        .with_server_info(info)
                        .to_text(),
                );
            };
            store.get_view(&id, &owner, &mut write).await?;
            text.map(Payload::Text).ok_or_else(task_not_found)
        }
        "tasks/update" => {
            if !req.params.contains_key("inputResponses") {
                return Err(RpcError::invalid_params(
                    "missing required parameter `inputResponses`",
                ));
            }
            // Only the methods of the outstanding requests, not a copy of the record.
            let mut asked = Map::new();
            let mut methods = |t: TaskView<'_>| {
                let methods = t.input_requests.iter();
                asked = methods
                    .map(|(k, r)| (k.clone(), r.method.clone().into()))
                    .collect();
            };
            if !store.get_view(&id, &owner, &mut methods).await? {
                return Err(task_not_found());
            }
            // The same shape rules as an MRTR retry, keeping only the answers to outstanding
            // requests (the others are counted, not built); then each must fit its request. A
            // wrong answer is the caller's error and uses nothing up: the question stays open for
            // a right one.
            let (responses, unknown) =
                mrtr::read_responses(req.params.raw("inputResponses"), |k| asked.contains_key(k))
                    .map_err(RpcError::invalid_params)?;
            if unknown > 0 {
                tracing::debug!(task = %id, unknown, "tasks/update ignored answers to no outstanding request");
            }
            for (key, answer) in &responses {
                if let Some(method) = asked.get(key).and_then(Value::as_str)
                    && let Err(why) = mrtr::check_answer(method, answer)
                {
                    return Err(RpcError::invalid_params(format!(
                        "`inputResponses.{key}` does not answer its `{method}` request: {why}"
                    ))
                    .with_data(json!({ "key": key })));
                }
            }
            match store.deliver_responses(&id, &owner, responses).await {
                Ok(report) => {
                    if !report.ignored.is_empty() {
                        tracing::debug!(task = %id, ignored = ?report.ignored, "tasks/update ignored keys that are not outstanding");
                    }
                    Ok(Payload::Tree(json!({})))
                }
                Err(StoreError::NotFound) => Err(task_not_found()),
                Err(e) => Err(e.to_rpc_error()),
            }
        }
        _ => match store.cancel(&id, &owner).await {
            // Cancelling an ended task is acknowledged like any other (the extension's rule).
            Ok(_) => Ok(Payload::Tree(json!({}))),
            Err(StoreError::NotFound) => Err(task_not_found()),
            Err(e) => Err(e.to_rpc_error()),
        },
    }
}

/// `tasks/get`, `tasks/list`, `tasks/cancel` of the 2025-11-25 experimental tasks.
pub(crate) async fn legacy_task_method(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Authorized,
) -> Result<Payload, RpcError> {
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match req.method.as_str() {
        "tasks/list" => {
            let cursor = match req.params.value("cursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(c)) => Some(c),
                Some(_) => return Err(RpcError::invalid_params("`cursor` must be a string")),
            };
            let page = store.list(&owner, cursor.as_deref(), LIST_PAGE).await?;
            Ok(Payload::Tree(crate::protocol::task::legacy_list_result(
                &page.tasks,
                page.next_cursor.as_deref(),
            )))
        }
        "tasks/get" => {
            let id = task_id_param(&req.params)?;
            if let Some(settled) = settle(server, &id, &owner) {
                settled.await;
            }
            let mut text = None;
            let mut write =
                |t: TaskView<'_>| text = Some(t.render(TaskShape::LegacyTask).to_text());
            store.get_view(&id, &owner, &mut write).await?;
            text.map(Payload::Text).ok_or_else(task_not_found)
        }
        _ => {
            let id = task_id_param(&req.params)?;
            match store.cancel(&id, &owner).await {
                Ok(CancelResult::Cancelled(record)) => Ok(Payload::Text(
                    record.task_view().render(TaskShape::LegacyTask).to_text(),
                )),
                Ok(CancelResult::AlreadyTerminal(record)) => {
                    Err(RpcError::invalid_params(format!(
                        "Cannot cancel task: already in terminal status '{}'",
                        record.status.as_str()
                    )))
                }
                Err(StoreError::NotFound) => Err(task_not_found()),
                Err(e) => Err(e.to_rpc_error()),
            }
        }
    }
}

/// How many tasks a legacy `tasks/list` page holds.
const LIST_PAGE: usize = 50;

/// Legacy `tasks/result`: blocks until the task ends, then answers exactly what the call would have
/// (its result with `related-task` meta, or its JSON-RPC error). It waits on the task's version
/// and status only, and writes a stored result from its text.
pub(crate) async fn legacy_task_result(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Authorized,
    cancel: CancellationToken,
) -> Answer {
    let id = match task_id_param(&req.params) {
        Ok(id) => id,
        Err(e) => return Some(Err(e)),
    };
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match store.get_view(&id, &owner, &mut |_| {}).await {
        Ok(true) => {}
        Ok(false) => return Some(Err(task_not_found())),
        Err(e) => return Some(Err(e.to_rpc_error())),
    }
    // The task's questions go to this request's stream while it waits.
    peer.follow_task(&req.id, &id);
    // Version 0 is older than any task's: the first wait answers at once.
    let mut seen = 0;
    loop {
        let changed = unless(cancel.cancelled(), store.changed_status(&id, seen)).await?;
        match changed {
            Ok((_, status)) if status.is_terminal() => break,
            Ok((version, _)) => seen = version,
            Err(StoreError::NotFound) => return Some(Err(task_not_found())),
            Err(e) => return Some(Err(e.to_rpc_error())),
        }
    }
    let mut answer = None;
    let mut write = |t: TaskView<'_>| {
        answer = Some(match t.outcome {
            Some(OutcomeView::Error(error)) => Err(error.clone()),
            Some(result) => Ok(Payload::Text(
                RelatedResult {
                    result,
                    task_id: id.as_str(),
                }
                .to_text(),
            )),
            None => Err(RpcError::internal(format!(
                "Task was {} before producing a result",
                t.status.as_str()
            ))
            .with_data(json!({ meta::RELATED_TASK: { "taskId": id.as_str() } }))),
        });
    };
    match store.get_view(&id, &owner, &mut write).await {
        Ok(_) => Some(answer.unwrap_or_else(|| Err(task_not_found()))),
        Err(e) => Some(Err(e.to_rpc_error())),
    }
}

/// The answer to a task method (or `subscriptions/listen`) from a 2026-07-28 client that did not
/// declare the tasks extension on the request.
pub(crate) fn missing_tasks_capability() -> RpcError {
    RpcError::new(
        RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: declare the `{TASKS_EXTENSION}` extension in this request's clientCapabilities"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }))
}

/// The request's `taskId` (recorded on the request's span).
fn task_id_param(params: &Params) -> Result<TaskId, RpcError> {
    match params.str("taskId") {
        Some(Some(id)) => {
            tracing::Span::current().record("task", &*id);
            Ok(TaskId::from(&*id))
        }
        Some(None) => Err(RpcError::invalid_params("`taskId` must be a string")),
        None => Err(RpcError::invalid_params(
            "missing required parameter `taskId`",
        )),
    }
}

fn task_not_found() -> RpcError {
    RpcError::invalid_params("Failed to retrieve task: Task not found")
}

/// How long a `tasks/get` waits for the outcome of a task whose tool has just returned here.
const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Before a `tasks/get` reads the caller's task: if its tool has returned in this instance and
/// its outcome is being written (the store commits it), a wait for that write (at most
/// [`SETTLE_WAIT`]). A client that polls right after the tool returned then sees the task
/// ended, instead of `working` and another poll: with a durable store, whose commit takes longer
/// than a client's round trip, that was one poll in two on SQLite and several on Postgres. The
/// answer is what the store holds after the wait, as ever. Another principal's task is not
/// waited for: its id reads as unknown at once. (Boxed, and only when there is something to wait
/// for: every request's future would otherwise carry the timer; see `driver.rs`'s sizes test.)
fn settle(
    server: &ServerInner,
    id: &TaskId,
    owner: &Owner,
) -> Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
    let recorded = server.engine().settling(id, owner)?;
    Some(Box::pin(async move {
        let _ = tokio::time::timeout(SETTLE_WAIT, recorded).await;
    }))
}
