//! Method dispatch for both eras: a service over the server (its tools, configuration and task
//! engine) and one client seen as a [`Peer`]. [`request`] decides a request's era (`incoming.rs`),
//! has it authorized (`authz.rs`: scopes; the methods take only what that step let through) and
//! routes it by method. It answers the small methods itself (`server/discover`, `tools/list`,
//! `ping`, `logging/setLevel`); a `tools/call` goes on to `call.rs`, the resource methods to
//! `resources.rs`, the task methods to
//! `tasks.rs`, `subscriptions/listen` to `listen.rs`. (`initialize`, which opens a legacy session,
//! is `session.rs`'s: a transport calls it in order, before anything read after it.) It knows
//! nothing of connections or transports: `driver.rs` calls in with the connection as a [`Peer`].

use super::authz::{self, Authorized};
use super::call;
use super::fallback;
use super::incoming::{Answer, Incoming, classify, tree};
use super::inner::ServerInner;
use super::listen::Listen;
use super::page;
use super::peer::Peer;
use super::prompts;
use super::resources;
use super::skills;
use super::tasks::{self, missing_tasks_capability};
use crate::protocol::jsonrpc::{Reply, Request, RpcError};
use crate::protocol::meta::ReadMeta;
use crate::protocol::{
    Cacheable, DiscoverResult, Execution, LEGACY_VERSIONS, ListToolsResult, LogLevel,
    MODERN_VERSION, MODERN_VERSIONS, ServerCapabilities, TASKS_EXTENSION, ToolDescription,
    ToolMeta,
};
use crate::tool::TaskSupport;
use crate::tool::registry::RegisteredTool;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Handles a request. `None` means no response is due (the request was cancelled).
pub(crate) async fn request(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Request,
    meta: Option<Arc<ReadMeta>>,
    cancel: CancellationToken,
) -> Option<Reply> {
    let id = req.id.clone();
    let incoming = match classify(&**peer, req, meta) {
        Ok(incoming) => incoming,
        Err(err) => {
            return Some(Reply {
                id,
                outcome: Err(err),
                server_info: None,
            });
        }
    };
    let modern = incoming.era.is_modern();
    let span = tracing::Span::current();
    span.record("era", if modern { "modern" } else { "legacy" });
    span.record("owner", peer.owner(&incoming.era).as_str());
    let timer = crate::telemetry::RequestTimer::start(&incoming.method);
    // Only what the authorization step lets through is routed (`authz.rs`). (Decided before the
    // route starts, so that nothing of the check is kept beside the route's future.)
    let pass = match authz::authorize(server, &**peer, &incoming).decided().await {
        Ok(pass) => pass,
        Err(refused) => {
            timer.done(false);
            return Some(Reply {
                id,
                outcome: Err(refused),
                server_info: modern.then(|| server.info_json().clone()),
            });
        }
    };
    let outcome = route(server, peer, Authorized::new(incoming, pass), cancel).await?;
    timer.done(outcome.is_ok());
    // What every modern result carries (`resultType`, `serverInfo`) is added as it is written.
    Some(Reply {
        id,
        outcome,
        server_info: modern.then(|| server.info_json().clone()),
    })
}

async fn route(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Authorized,
    cancel: CancellationToken,
) -> Answer {
    let modern = req.era.is_modern();
    match (req.method.as_str(), modern) {
        ("server/discover", true) => tree(Some(Ok(discover(server)))),
        ("ping", false) => tree(Some(Ok(json!({})))),
        ("logging/setLevel", false) => tree(Some(set_log_level(&**peer, &req))),
        ("tools/list", _) => tree(Some(tools_list(server, &**peer, &req))),
        ("prompts/list", _) if !server.prompts.is_empty() => {
            tree(Some(prompts::prompts_list(server, &**peer, &req)))
        }
        ("prompts/get", _) if !server.prompts.is_empty() => {
            Box::pin(prompts::prompts_get(server, peer, req, cancel)).await
        }
        ("completion/complete", _) if server.completions.has_completers() => {
            prompts::complete(server, &req).await
        }
        // The large futures (`tools/call`'s is most of a request's) are boxed: a request's
        // future is copied as its task is spawned and as it ends, and the common small methods
        // (`tasks/get`) need not carry their size (see bench/HISTORY.md and
        // `driver::start_request`).
        ("tools/call", _) => Box::pin(call::tools_call(server, peer, req, cancel)).await,
        ("tasks/get" | "tasks/update" | "tasks/cancel", true) => {
            Some(tasks::modern_task_method(server, peer, &req).await)
        }
        // Not methods of a session whose version has no tasks (2025-06-18, 2025-03-26).
        ("tasks/get" | "tasks/list" | "tasks/cancel", false) if req.has_tasks() => {
            Some(tasks::legacy_task_method(server, peer, &req).await)
        }
        ("tasks/result", false) if req.has_tasks() => {
            Box::pin(tasks::legacy_task_result(server, peer, &req, cancel)).await
        }
        ("resources/list" | "resources/templates/list" | "resources/read", _)
        | ("resources/subscribe" | "resources/unsubscribe", false)
            if server.serves_resources() =>
        {
            tree(Box::pin(resources::method(server, peer, &req, cancel)).await)
        }
        ("skills/list" | "skills/get" | "resources/directory/read", _)
            if !server.skills.is_empty() =>
        {
            tree(Some(skills::method(server, &**peer, &req)))
        }
        ("subscriptions/listen", true) => {
            let declared = req.client.capabilities.has_extension(TASKS_EXTENSION);
            match Listen::parse(&req.params, declared, missing_tasks_capability) {
                Ok(listen) => {
                    let owner = peer.owner(&req.era);
                    tree(Box::pin(listen.run(server, &**peer, &req.id, owner, cancel)).await)
                }
                Err(err) => Some(Err(err)),
            }
        }
        // A request with per-request `_meta` is a 2026-07-28 request, and `initialize` is not a
        // 2026-07-28 method (SEP-2575: -32601, HTTP 404). A 2025-11-25 client sends it without
        // `_meta`, and the transport opens a legacy session before it gets here.
        ("initialize", _) => Some(Err(RpcError::new(
            RpcError::METHOD_NOT_FOUND,
            format!(
                "Method not found: `initialize` is not a {MODERN_VERSION} method (use `server/discover`); a {} client sends `initialize` without per-request `_meta`",
                LEGACY_VERSIONS[0]
            ),
        ))),
        (method, _) => Some(Err(RpcError::method_not_found(method))),
    }
}

/// `logging/setLevel` (2025-11-25; the modern era sets a level per request in `_meta`).
fn set_log_level(peer: &dyn Peer, req: &Incoming) -> Result<Value, RpcError> {
    let level = match req.params.value("level") {
        Some(v) => LogLevel::from_wire(&v)
            .map_err(|why| RpcError::invalid_params(format!("`level`: {why}")))?,
        None => {
            return Err(RpcError::invalid_params(
                "missing required parameter `level`",
            ));
        }
    };
    if !peer.set_log_level(level) {
        return Err(RpcError::internal("the session ended"));
    }
    Ok(json!({}))
}

/// `server/discover` (2026-07-28).
fn discover(server: &ServerInner) -> Value {
    let mut supported_versions: Vec<&str> = MODERN_VERSIONS.to_vec();
    supported_versions.extend_from_slice(LEGACY_VERSIONS);
    let result = DiscoverResult {
        supported_versions,
        capabilities: server.capabilities(ServerCapabilities::modern()),
        cache: Cacheable::PRIVATE,
        instructions: server.instructions.as_deref(),
    };
    serde_json::to_value(result).unwrap_or_default()
}

/// One tool as a client in `era` sees it in `tools/list` (`fallback`: the fallback serves this
/// client); also what the rmcp bridge lists (`rmcp_bridge.rs`).
pub(crate) fn describe<'a>(
    server: &ServerInner,
    t: &'a RegisteredTool,
    era: &super::era::Era,
    fallback: bool,
) -> ToolDescription<'a> {
    let info = &t.info;
    ToolDescription {
        name: info.name,
        title: info.title,
        description: info.description,
        input_schema: &t.input_schema,
        output_schema: (t.output_schema.as_deref())
            .filter(|_| !(fallback && fallback::may_answer_started(server, t))),
        annotations: info.annotations,
        execution: (!era.is_modern()).then(|| Execution {
            task_support: fallback::listed_task_support(fallback, info.task_support),
        }),
        meta: info.ui.map(|ui| ToolMeta {
            resource_uri: ui.resource_uri,
            visibility: ui.visibility.wire(),
        }),
    }
}

/// `tools/list`: the tools as this client's era shows them, and the fallback's companion tools
/// when it is on, a page at a time (`page.rs`). To a client the fallback serves, a tool is listed
/// the way that client's library will call it ([`fallback::listed_task_support`]).
fn tools_list(server: &ServerInner, peer: &dyn Peer, req: &Authorized) -> Result<Value, RpcError> {
    let (era, client) = (&req.era, &req.client);
    let takes_tasks = req.has_tasks() && fallback::declares_tasks(era, &client.capabilities);
    let offers_fallback = server.task_fallback && peer.offers_fallback();
    let fallback = offers_fallback && !takes_tasks;
    // A caller limited by scopes sees only the tools its token may call (unless configured off).
    let listing = req.listing(server, peer);
    let permitted = |t: &&Arc<RegisteredTool>| listing.shows(t.info.scopes);
    // With the fallback off, a client that cannot take a task could never run a tool that runs
    // only as a task: it is not offered one. Which clients cannot: a 2026-07-28 request without
    // the extension, a 2025-06-18 or 2025-03-26 session. (A 2025-11-25 client may send `task`
    // without declaring the `tasks` capability, which is about requests sent to it: the tool is
    // listed `execution.taskSupport: "required"`, which says how to call it.)
    let can_take_tasks = match era {
        super::era::Era::Modern => takes_tasks,
        super::era::Era::Legacy => req.has_tasks(),
    };
    let runnable = |t: &&Arc<RegisteredTool>| {
        can_take_tasks || fallback || t.info.task_support != TaskSupport::Required
    };
    let mut tools: Vec<ToolDescription<'_>> = server
        .tools
        .iter()
        .filter(permitted)
        .filter(runnable)
        .map(|t| describe(server, t, era, fallback))
        .collect();
    if offers_fallback {
        tools.extend(fallback::tools(era));
    }
    if !req.has_tasks() {
        // 2025-06-18 and 2025-03-26 have no `execution` on a tool; 2025-03-26 has no `title`,
        // `outputSchema` or `_meta` either.
        let before_2025_06_18 = req.version.as_str() < "2025-06-18";
        for tool in &mut tools {
            tool.execution = None;
            if before_2025_06_18 {
                tool.title = None;
                tool.output_schema = None;
                tool.meta = None;
            }
        }
    }
    let (range, next_cursor) = page::page(&req.params, tools.len(), server.config.page_size)?;
    tools.truncate(range.end);
    tools.drain(..range.start);
    let result = ListToolsResult {
        tools,
        next_cursor,
        // 2026-07-28: ListToolsResult is a CacheableResult. The list never changes while the
        // server runs, but it differs by era, so it must not be shared across clients.
        cache: era.is_modern().then_some(Cacheable::PRIVATE),
    };
    Ok(serde_json::to_value(result).unwrap_or_default())
}
