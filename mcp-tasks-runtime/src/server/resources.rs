//! The resource methods: `resources/list` (the fixed resources, then what each template's `list`
//! function names), `resources/templates/list`, `resources/read`, and in a 2025-11-25 session
//! `resources/subscribe` / `resources/unsubscribe`. (A 2026-07-28 client subscribes through
//! `subscriptions/listen`, `listen.rs`.) Both lists are paged (`page.rs`) and, in the modern era,
//! carry caching hints.
//!
//! A legacy session that uses resources gets one forwarder: a task that follows the server's
//! [`ResourceNotifier`](crate::resource::ResourceNotifier) feed and sends the session
//! `notifications/resources/updated` for the URIs it subscribed to, and
//! `notifications/resources/list_changed`. It ends with the session (at the first change after).

use super::authz::Authorized;
use super::incoming::{Incoming, request_info};
use super::inline;
use super::inner::{ServerInner, SessionMap, Subscribed};
use super::page;
use super::peer::Peer;
use crate::protocol::jsonrpc::{RpcError, notification_message};
use crate::protocol::task::parse_output_uri;
use crate::protocol::{Cacheable, InputRequest, ResourceContents};
use crate::race::unless;
use crate::resource::{ListedResource, ResourceEvent, resource_not_found};
use crate::tool::{ContextBackend, InputError, InputFuture, ToolContext};
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Serves one resource method; `None` when cancelled.
pub(crate) async fn method(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Authorized,
    cancel: CancellationToken,
) -> Option<Result<Value, RpcError>> {
    let modern = req.era.is_modern();
    if !modern {
        forward_to_session(server, peer);
    }
    let cache = modern.then_some(Cacheable::PRIVATE);
    let work = async {
        match req.method.as_str() {
            "resources/list" => list(server, peer, req, cache).await,
            "resources/templates/list" => templates(server, &**peer, req, cache),
            "resources/read" => read(server, peer, req, cache, cancel.clone()).await,
            "resources/subscribe" => subscription(server, peer, req, true),
            _ => subscription(server, peer, req, false),
        }
    };
    unless(cancel.cancelled(), work).await
}

/// A context for a resource function, as a tool's inline call gets one: the legacy session's
/// plain requests, or in the modern era no way to ask (see [`NoInput`]).
fn context(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
    cancel: CancellationToken,
) -> ToolContext {
    let backend: Arc<dyn ContextBackend> = if req.era.is_modern() {
        Arc::new(NoInput)
    } else {
        inline::legacy_backend(Arc::downgrade(peer), None)
    };
    ToolContext::new(backend, req.client.capabilities.clone(), cancel)
        .with_log_level(req.log_level)
        .with_request(request_info(&**peer, req))
        .with_state(server.state.clone())
}

/// A 2026-07-28 resource read cannot ask the client yet: `resources/read` may answer
/// `InputRequiredResult` (MRTR), but mcp-tasks routes MRTR for `tools/call` only so far.
struct NoInput;

impl ContextBackend for NoInput {
    fn input(&self, _: InputRequest) -> InputFuture {
        Box::pin(async {
            Err(InputError::Client {
                code: RpcError::INTERNAL_ERROR,
                message: "a 2026-07-28 `resources/read` cannot ask the client for input: \
                          mcp-tasks answers `InputRequiredResult` on `tools/call` only"
                    .to_owned(),
            })
        })
    }
}

#[derive(wire::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListResult<'a, T> {
    #[serde(flatten)]
    items: HashMap<&'static str, &'a [T]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    cache: Option<Cacheable>,
}

fn page_of<T: Serialize>(
    req: &Incoming,
    server: &ServerInner,
    key: &'static str,
    items: &[T],
    cache: Option<Cacheable>,
) -> Result<Value, RpcError> {
    let (range, next_cursor) = page::page(&req.params, items.len(), server.config.page_size)?;
    let result = ListResult {
        items: HashMap::from([(key, &items[range])]),
        next_cursor,
        cache,
    };
    Ok(serde_json::to_value(result).unwrap_or_default())
}

/// `resources/list`: the fixed resources, then the ones each template's `list` names.
async fn list(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Authorized,
    cache: Option<Cacheable>,
) -> Result<Value, RpcError> {
    let registry = &server.resources;
    // A caller limited by OAuth scopes sees only what its token may read.
    let listing = req.listing(server, &**peer);
    let mut items: Vec<ListedResource> = registry
        .fixed()
        .iter()
        .filter(|r| listing.shows(r.info.scopes))
        .map(|r| {
            let info = &r.info;
            ListedResource {
                uri: info.uri.to_owned(),
                name: info.name.to_owned(),
                title: info.title.map(str::to_owned),
                description: info.description.map(str::to_owned),
                mime_type: info.mime_type.map(str::to_owned),
                size: info.size,
            }
        })
        .collect();
    for template in registry.templates() {
        if !listing.shows(template.info.scopes) {
            continue;
        }
        let ctx = context(server, peer, req, CancellationToken::new());
        if let Some(listing) = template.list(ctx) {
            let listed = AssertUnwindSafe(listing)
                .catch_unwind()
                .await
                .map_err(|_| {
                    RpcError::internal(format!(
                        "the `list` function of resource template `{}` panicked",
                        template.info.uri
                    ))
                })?;
            items.extend(listed.into_iter().map(|mut item| {
                if item.mime_type.is_none() {
                    item.mime_type = template.info.mime_type.map(str::to_owned);
                }
                item
            }));
        }
    }
    // The skills' files (`server/skills.rs`), each SKILL.md named and described as its skill.
    let skill_files = server.skills.files().filter(|f| listing.shows(&f.scopes));
    items.extend(skill_files.map(|f| f.listed()));
    page_of(req, server, "resources", &items, cache)
}

#[derive(wire::Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateEntry {
    uri_template: &'static str,
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'static str>,
}

/// `resources/templates/list` (to a caller limited by scopes, the templates it may read).
fn templates(
    server: &ServerInner,
    peer: &dyn Peer,
    req: &Authorized,
    cache: Option<Cacheable>,
) -> Result<Value, RpcError> {
    let listing = req.listing(server, peer);
    let items: Vec<TemplateEntry> = server
        .resources
        .templates()
        .iter()
        .filter(|r| listing.shows(r.info.scopes))
        .map(|r| TemplateEntry {
            uri_template: r.info.uri,
            name: r.info.name,
            title: r.info.title,
            description: r.info.description,
            mime_type: r.info.mime_type,
        })
        .collect();
    page_of(req, server, "resourceTemplates", &items, cache)
}

#[derive(wire::Serialize)]
struct ReadResult {
    contents: Vec<ResourceContents>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    cache: Option<Cacheable>,
}

/// The `uri` param.
fn uri_param(req: &Incoming) -> Result<String, RpcError> {
    match req.params.str("uri") {
        Some(Some(uri)) => Ok(uri.into_owned()),
        Some(None) => Err(RpcError::invalid_params("`uri` must be a string")),
        None => Err(RpcError::invalid_params("missing required parameter `uri`")),
    }
}

/// A URI that names no resource: `-32602` with `data.uri` (SEP-2164) in the modern era; in a
/// 2025-11-25 session the code that version's spec gives, `-32002`, with the same `data.uri`.
fn not_found(req: &Incoming, uri: &str) -> RpcError {
    let mut err = resource_not_found(uri);
    if !req.era.is_modern() {
        err.code = LEGACY_RESOURCE_NOT_FOUND;
    }
    err
}

/// "Resource not found" in 2025-11-25 (`server/resources`, Error Handling); retired by SEP-2164.
const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;

/// `resources/read`: a task's output, or one of the server's resources.
async fn read(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
    cache: Option<Cacheable>,
    cancel: CancellationToken,
) -> Result<Value, RpcError> {
    let uri = uri_param(req)?;
    let contents = match parse_output_uri(&uri) {
        Some((task, name)) => {
            // For the task's owner only: anyone else's read is an unknown URI's.
            let owner = peer.owner(&req.era);
            let store = server.engine().store();
            let output = store.read_output(&task, &owner, name).await?;
            vec![output.ok_or_else(|| not_found(req, &uri))?]
        }
        None => read_resource(server, peer, req, &uri, cancel).await?,
    };
    Ok(serde_json::to_value(ReadResult { contents, cache }).unwrap_or_default())
}

/// What the server's resource at `uri` holds, read by its function.
async fn read_resource(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
    uri: &str,
    cancel: CancellationToken,
) -> Result<Vec<ResourceContents>, RpcError> {
    if let Some(file) = server.skills.file(uri) {
        return Ok(vec![file.contents()]);
    }
    let Some(found) = server.resources.find(uri) else {
        return Err(not_found(req, uri));
    };
    let resource = found.resource.clone();
    let ctx = context(server, peer, req, cancel);
    // The function's own "not found" (`resource_not_found`) speaks the era's code too.
    let era_code = |err: RpcError| {
        if err.code == RpcError::INVALID_PARAMS && err.data == Some(json!({ "uri": uri })) {
            not_found(req, uri)
        } else {
            err
        }
    };
    let fut = resource.read(ctx, found.request)?;
    let contents = AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(|panic| crate::task::panic_error(resource.info.name, &*panic))?
        .map_err(era_code)?;
    if contents.is_empty() {
        // SEP-2164: never an empty `contents` for a read; an empty resource is one empty item.
        return Err(RpcError::internal(format!(
            "resource `{}` returned no contents",
            resource.info.name
        )));
    }
    Ok(contents)
}

/// `resources/subscribe` / `resources/unsubscribe` (2025-11-25): the URI must name a resource.
fn subscription(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
    subscribe: bool,
) -> Result<Value, RpcError> {
    let uri = uri_param(req)?;
    let Some(subs) = session_subscriptions(server, peer) else {
        return Err(RpcError::internal("the session ended"));
    };
    let mut subs = subs.lock().unwrap_or_else(|e| e.into_inner());
    if subscribe {
        if server.resources.find(&uri).is_none() {
            return Err(not_found(req, &uri));
        }
        subs.insert(uri);
    } else {
        subs.remove(&uri);
    }
    Ok(json!({}))
}

fn session_subscriptions(server: &ServerInner, peer: &Arc<dyn Peer>) -> Option<Subscribed> {
    let id = peer.session()?.id;
    let sessions = server
        .resource_sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    sessions.get(&id).cloned()
}

/// Starts the session's forwarder, once.
fn forward_to_session(server: &ServerInner, peer: &Arc<dyn Peer>) {
    let Some(session) = peer.session() else {
        return;
    };
    let subs = {
        let mut sessions = server
            .resource_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if sessions.contains_key(&session.id) {
            return;
        }
        let subs = Arc::new(Mutex::new(HashSet::new()));
        sessions.insert(session.id.clone(), subs.clone());
        subs
    };
    let feed = server.resource_notifier.subscribe();
    let peer = Arc::downgrade(peer);
    let sessions = Arc::downgrade(&server.resource_sessions);
    tokio::spawn(forward(feed, peer, subs, sessions, session.id));
}

async fn forward(
    mut feed: broadcast::Receiver<ResourceEvent>,
    peer: Weak<dyn Peer>,
    subs: Subscribed,
    sessions: Weak<SessionMap>,
    id: String,
) {
    loop {
        let event = match feed.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let Some(peer) = peer.upgrade() else { break };
        let message = match event {
            ResourceEvent::Updated(uri) => {
                if !subs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&uri)
                {
                    continue;
                }
                notification_message("notifications/resources/updated", json!({ "uri": uri }))
            }
            ResourceEvent::ListChanged => {
                notification_message("notifications/resources/list_changed", json!({}))
            }
        };
        if !peer.send(message) {
            break;
        }
    }
    if let Some(sessions) = sessions.upgrade() {
        sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }
}
