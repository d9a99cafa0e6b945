//! `prompts/list`, `prompts/get` and `completion/complete`, in both eras.
//!
//! A prompt runs inline, as a `forbidden` tool does: what it asks through its [`ToolContext`]
//! goes out as MRTR in the 2026-07-28 era (an `InputRequiredResult` with a sealed
//! `requestState`, retried with `inputResponses`; the same machinery as `tools/call`, in
//! `call/mrtr.rs`) and as a plain server-to-client request in a 2025-11-25 session.

use super::authz::Authorized;
use super::call::mrtr::{notifiers, restore, suspend};
use super::incoming::{Answer, Incoming, request_info, tree};
use super::inline;
use super::inner::ServerInner;
use super::page;
use super::peer::Peer;
use crate::completion::CompleteRequest;
use crate::prompt::{PromptFuture, RegisteredPrompt};
use crate::protocol::jsonrpc::{Payload, RpcError};
use crate::protocol::{Cacheable, GetPromptResult, ListPromptsResult, PromptDescription};
use crate::race::unless;
use crate::task::{mrtr, state};
use crate::tool::ToolContext;
use futures_util::FutureExt;
use serde_json::{Value, json};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// `prompts/list`: a page of the prompts, in registration order (`page.rs`), with the
/// 2026-07-28 caching hints; to a caller limited by OAuth scopes, only the prompts its token may
/// get ([`Authorized::listing`]).
pub(crate) fn prompts_list(
    server: &ServerInner,
    peer: &dyn Peer,
    req: &Authorized,
) -> Result<Value, RpcError> {
    let listing = req.listing(server, peer);
    let mut prompts: Vec<PromptDescription<'_>> = server
        .prompts
        .iter()
        .filter(|p| listing.shows(p.info.scopes))
        .map(|p| PromptDescription {
            name: p.info.name,
            title: p.info.title,
            description: p.info.description,
            arguments: &p.arguments,
        })
        .collect();
    let (range, next_cursor) = page::page(&req.params, prompts.len(), server.config.page_size)?;
    prompts.truncate(range.end);
    prompts.drain(..range.start);
    let result = ListPromptsResult {
        prompts,
        next_cursor,
        // 2026-07-28: ListPromptsResult is a CacheableResult; the list is fixed while the server
        // runs, but kept private and unshared like the tools list.
        cache: req.era.is_modern().then_some(Cacheable::PRIVATE),
    };
    Ok(serde_json::to_value(result).unwrap_or_default())
}

/// `prompts/get`: an unknown prompt, a missing required argument or one that is not a string is
/// `-32602` (both eras, `server/prompts`: "Invalid prompt name", "Missing required arguments").
pub(crate) async fn prompts_get(
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
    let Some(prompt) = server.prompts.get(&name).cloned() else {
        return Some(Err(RpcError::invalid_params(format!(
            "Invalid params: unknown prompt `{name}`"
        ))
        .with_data(json!({ "prompt": name }))));
    };
    let arguments = req.params.value("arguments");
    if req.era.is_modern() {
        return get_mrtr(server, peer, &prompt, arguments, &req, cancel).await;
    }
    let backend = inline::legacy_backend(Arc::downgrade(peer), None);
    let ctx = ToolContext::new(backend, req.client.capabilities.clone(), cancel.clone())
        .with_log_level(req.log_level)
        .with_request(request_info(&**peer, &req))
        .with_state(server.state.clone());
    let fut = match prompt.get(ctx, arguments) {
        Ok(fut) => fut,
        Err(err) => return Some(Err(err.to_rpc())),
    };
    let outcome = unless(cancel.cancelled(), caught(fut)).await?;
    Some(finish(&prompt, outcome))
}

/// What a prompt's future gives, panics caught.
type Outcome = Result<Result<GetPromptResult, RpcError>, Box<dyn Any + Send>>;

type Caught = Pin<Box<dyn Future<Output = Outcome> + Send>>;

fn caught(fut: PromptFuture) -> Caught {
    Box::pin(AssertUnwindSafe(fut).catch_unwind())
}

/// A prompt's answer; a panic is `-32603` naming the prompt, and the server goes on.
fn finish(prompt: &RegisteredPrompt, outcome: Outcome) -> Result<Payload, RpcError> {
    match outcome {
        Ok(Ok(result)) => Ok(Payload::Tree(
            serde_json::to_value(result).unwrap_or_default(),
        )),
        Ok(Err(err)) => Err(err),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            let name = prompt.info.name;
            tracing::error!(prompt = name, panic = %what, "a prompt panicked");
            Err(RpcError::internal(format!(
                "prompt `{name}` panicked: {what}"
            )))
        }
    }
}

/// `prompts/get` in the modern era: the prompt runs with the MRTR replay as its backend, and a
/// question it asks suspends it into an `InputRequiredResult` (its `requestState` bound to this
/// prompt, its arguments and the caller, as a tool call's is).
async fn get_mrtr(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    prompt: &Arc<RegisteredPrompt>,
    arguments: Option<Value>,
    req: &Incoming,
    cancel: CancellationToken,
) -> Answer {
    let owner = peer.owner(&req.era);
    // Bound to `prompts/get` as well as the name: a tool's `requestState` never opens here.
    let bound = format!("prompts/get\0{}", prompt.info.name);
    let digest = state::call_digest(&bound, arguments.as_ref(), owner.as_str());
    let (gathered, volunteered) = match restore(&server.state_key, req, digest) {
        Ok(restored) => restored,
        Err(err) => return Some(Err(err)),
    };
    let (progress, log) = notifiers(peer, None, req);
    let replay = Arc::new(mrtr::Replay::new(&gathered, volunteered, progress, log));
    let ctx = ToolContext::new(
        replay.clone(),
        req.client.capabilities.clone(),
        cancel.clone(),
    )
    .with_log_level(req.log_level)
    .with_request(request_info(&**peer, req))
    .with_state(server.state.clone());
    let fut = match prompt.get(ctx, arguments) {
        Ok(fut) => fut,
        Err(err) => return Some(Err(err.to_rpc())),
    };
    let mut fut = caught(fut);
    let step = unless(cancel.cancelled(), mrtr::drive(&mut fut, &replay, || false)).await?;
    Some(match step {
        mrtr::Step::Done(outcome) => finish(prompt, outcome),
        mrtr::Step::Misfit(why) => Err(RpcError::invalid_params(why)),
        mrtr::Step::Suspended(needed) => Ok(suspend(&server.state_key, &replay, gathered, needed)),
        // A prompt is never a task: `ctx.start_task()` does nothing here.
        mrtr::Step::Promote => Err(RpcError::internal(format!(
            "prompt `{}` asked to become a task; prompts run inline",
            prompt.info.name
        ))),
    })
}

/// `completion/complete`: an unknown reference or argument is `-32602` (both eras,
/// `server/utilities/completion`: "Invalid prompt name").
pub(crate) async fn complete(server: &ServerInner, req: &Authorized) -> Answer {
    let request = match CompleteRequest::parse(
        req.params.value("ref"),
        req.params.value("argument"),
        req.params.value("context"),
    ) {
        Ok(request) => request,
        Err(err) => return Some(Err(err)),
    };
    let fut = match server.completions.complete(request, server.state.clone()) {
        Ok(fut) => fut,
        Err(err) => return Some(Err(err)),
    };
    tree(Some(match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(Ok(completion)) => Ok(json!({ "completion": completion })),
        Ok(Err(err)) => Err(err),
        Err(_) => Err(RpcError::internal("the completion function panicked")),
    }))
}
