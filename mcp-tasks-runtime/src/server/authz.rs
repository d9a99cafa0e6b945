//! Authorization: the one step every request passes on its way to dispatch's methods, whatever
//! carried it (Streamable HTTP, stdio, `serve_io`, an in-memory or in-process client, the rmcp
//! bridge). Transports only authenticate: each request comes with a principal or none
//! ([`Peer::principal_of`], the request's own: in a 2025-11-25 HTTP session each POST may carry a
//! different token). Here that principal's OAuth scopes are checked against what the request uses
//! ([`authorize`]), and listings show it only what it may use ([`Listing`]).
//!
//! An [`Authorized`] request is made only with the [`Pass`] that [`authorize`] gives (nothing
//! else makes one), and dispatch's methods take nothing else, so no entry path can reach a tool,
//! a task, a resource or a prompt without passing here.

use super::fallback::{self, COMPANION_TOOLS};
use super::incoming::Incoming;
use super::inner::ServerInner;
use super::peer::Peer;
use crate::protocol::jsonrpc::{RequestId, RpcError};
use crate::protocol::task::{TaskId, parse_output_uri};
use crate::tool::{Principal, RegisteredTool};
use serde_json::{Value, json};
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::Arc;

/// A request that passed [`authorize`]: what dispatch's methods serve. Reads as the
/// [`Incoming`] it wraps.
pub(crate) struct Authorized(Incoming);

impl Deref for Authorized {
    type Target = Incoming;

    fn deref(&self) -> &Incoming {
        &self.0
    }
}

impl Authorized {
    /// The request [`authorize`] let through (with `pass`, what it answered for this request).
    pub(crate) fn new(req: Incoming, pass: Pass) -> Self {
        let Pass(()) = pass;
        Authorized(req)
    }

    /// What a listing shows this request's caller: everything, unless the caller is limited by
    /// OAuth scopes and [`ServerConfig::list_only_permitted_tools`] is on; then only what its
    /// token may use (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`
    /// alike).
    ///
    /// [`ServerConfig::list_only_permitted_tools`]: crate::server::ServerConfig::list_only_permitted_tools
    pub(crate) fn listing(&self, server: &ServerInner, peer: &dyn Peer) -> Listing {
        let limited = server.config.list_only_permitted_tools;
        Listing(limited.then(|| scoped(peer, &self.id)).flatten())
    }
}

/// What a listing shows `principal` (the rmcp bridge's, whose listing is rmcp's): as
/// [`Authorized::listing`].
#[cfg(feature = "rmcp")]
pub(crate) fn listing_for(server: &ServerInner, principal: Option<Principal>) -> Listing {
    let limited = server.config.list_only_permitted_tools;
    Listing(principal.filter(|p| limited && p.scopes().is_some()))
}

/// Which items a listing shows one caller ([`Authorized::listing`]).
pub(crate) struct Listing(Option<Principal>);

impl Listing {
    /// Whether an item needing `scopes` is listed.
    pub(crate) fn shows(&self, scopes: &[&str]) -> bool {
        self.0.as_ref().is_none_or(|p| p.has_scopes(scopes))
    }
}

/// The caller of request `id`, when it is limited by scopes (not by a static token, nor
/// anonymous).
fn scoped(peer: &dyn Peer, id: &RequestId) -> Option<Principal> {
    peer.principal_of(id).filter(|p| p.scopes().is_some())
}

/// Lets `req` through (a [`Pass`]), or refuses it when it uses something declaring OAuth scopes
/// (`scope = "..."` on the attribute) and its caller's token lacks one of them. What a request
/// uses: the tool of a `tools/call`; the tool of the task a task request (`tasks/get`,
/// `tasks/update`, `tasks/cancel`, `tasks/result`, a companion tool of the fallback) or a
/// `resources/read` of a task's output is about; the resource of any other `resources/read` (a
/// template's, for what it stands for; a skill's file, the scopes of its
/// [`Skills`](crate::skill::Skills)); the skill of a `skills/get`, the skill folder of a
/// `resources/directory/read`; the prompt of a `prompts/get`; the prompt or resource template a
/// `completion/complete` completes for.
///
/// Callers not limited by scopes (static tokens, no authenticator, anonymous) pass. So does a
/// request naming nothing known, and a task of another owner or none: the method answers it as
/// unknown (a refusal would tell that it exists).
///
/// The refusal ([`insufficient_scope`]) is the same JSON-RPC error on every path; over HTTP it is
/// also a 403 with a `WWW-Authenticate` challenge naming the scopes, so that the client can ask
/// for them and retry (step-up authorization).
pub(crate) fn authorize<'a>(
    server: &'a ServerInner,
    peer: &'a dyn Peer,
    req: &'a Incoming,
) -> Check<'a> {
    let Some(principal) = scoped(peer, &req.id) else {
        return Check::Done(Ok(Pass(())));
    };
    match uses(server, req) {
        None => Check::Done(Ok(Pass(()))),
        Some(Uses::Item(needs)) => Check::Done(decide(&principal, Some(needs))),
        Some(Uses::Task(id)) => Check::Task(Box::pin(async move {
            let tool = task_tool(server, peer, req, &id).await;
            decide(&principal, tool.as_deref().map(Needs::tool))
        })),
    }
}

/// That [`authorize`] let a request through: what [`Authorized::new`] takes. Made nowhere else.
pub(crate) struct Pass(());

/// [`authorize`]'s answer: decided at once, or once the task a request is about is read (boxed:
/// the future of every request need not carry the store read's size).
pub(crate) enum Check<'a> {
    Done(Result<Pass, RpcError>),
    Task(Pin<Box<dyn Future<Output = Result<Pass, RpcError>> + Send + 'a>>),
}

impl Check<'_> {
    /// The answer, once decided.
    pub(crate) async fn decided(self) -> Result<Pass, RpcError> {
        match self {
            Check::Done(checked) => checked,
            Check::Task(reading) => reading.await,
        }
    }
}

/// A pass, unless `needs` names scopes `principal` lacks.
fn decide(principal: &Principal, needs: Option<Needs>) -> Result<Pass, RpcError> {
    match needs {
        Some(needs) if !principal.has_scopes(needs.scopes) => {
            Err(insufficient_scope(&needs, principal))
        }
        _ => Ok(Pass(())),
    }
}

/// What declares the scopes a request needs.
struct Needs<'a> {
    /// What it is, for the message: "the tool `research`".
    kind: &'static str,
    name: &'a str,
    scopes: &'a [&'static str],
}

impl<'a> Needs<'a> {
    fn tool(tool: &'a RegisteredTool) -> Self {
        Needs {
            kind: "tool",
            name: tool.info.name,
            scopes: tool.info.scopes,
        }
    }
}

/// What a request uses: an item known at once, or a task whose tool decides.
enum Uses<'a> {
    Item(Needs<'a>),
    Task(TaskId),
}

/// What `req` uses, by its method and params; `None`: nothing that could declare scopes (or
/// nothing known, which the method answers).
fn uses<'a>(server: &'a ServerInner, req: &Incoming) -> Option<Uses<'a>> {
    let params = &req.params;
    let item = match req.method.as_str() {
        "tools/call" => {
            let name = params.str("name").flatten()?;
            if server.task_fallback && COMPANION_TOOLS.contains(&&*name) {
                // A companion tool follows a task, as `tasks/get` does.
                let arguments = params.value("arguments")?;
                let id = arguments.get("taskId")?.as_str()?;
                return Some(Uses::Task(TaskId::new(id)));
            }
            Needs::tool(server.tools.get(&name)?)
        }
        "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" => {
            return Some(Uses::Task(TaskId::new(params.str("taskId").flatten()?)));
        }
        "resources/read" => {
            let uri = params.str("uri").flatten()?;
            // A task's output (`task://{taskId}/{name}`) needs what its task's requests need.
            if let Some((id, _)) = parse_output_uri(&uri) {
                return Some(Uses::Task(id));
            }
            // A skill's file needs what its `Skills` declares.
            if let Some((name, scopes)) = server.skills.scopes_of(&uri) {
                return Some(Uses::Item(Needs {
                    kind: "skill file",
                    name,
                    scopes,
                }));
            }
            let found = server.resources.find(&uri)?;
            let info = &found.resource.info;
            Needs {
                kind: "resource",
                name: info.uri,
                scopes: info.scopes,
            }
        }
        // A skill (`skills/get`) or a skill folder (`resources/directory/read`), as its files.
        "skills/get" => {
            let (entry, scopes) = server.skills.get(&params.str("uri").flatten()?)?;
            Needs {
                kind: "skill",
                name: &entry.uri,
                scopes,
            }
        }
        "resources/directory/read" => {
            let (name, scopes) = server.skills.scopes_of(&params.str("uri").flatten()?)?;
            Needs {
                kind: "skill folder",
                name,
                scopes,
            }
        }
        "prompts/get" => {
            let prompt = server.prompts.get(&params.str("name").flatten()?)?;
            Needs {
                kind: "prompt",
                name: prompt.info.name,
                scopes: prompt.info.scopes,
            }
        }
        "completion/complete" => {
            let reference = params.value("ref")?;
            match reference.get("type").and_then(Value::as_str)? {
                "ref/prompt" => {
                    let prompt = server.prompts.get(reference.get("name")?.as_str()?)?;
                    Needs {
                        kind: "prompt",
                        name: prompt.info.name,
                        scopes: prompt.info.scopes,
                    }
                }
                "ref/resource" => {
                    let uri = reference.get("uri")?.as_str()?;
                    let resource = server.resources.iter().find(|r| r.info.uri == uri)?;
                    Needs {
                        kind: "resource",
                        name: resource.info.uri,
                        scopes: resource.info.scopes,
                    }
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(Uses::Item(item))
}

/// The tool that created task `id`, when the task is one the request's method would serve (its
/// owner is the one the request acts for, [`Peer::owner`]) and some tool declares scopes. `None`
/// otherwise: another owner's task, or none, is left to the method to answer as unknown, and a
/// store failure to the method to report.
async fn task_tool(
    server: &ServerInner,
    peer: &dyn Peer,
    req: &Incoming,
    id: &TaskId,
) -> Option<Arc<RegisteredTool>> {
    if server.tools.iter().all(|t| t.info.scopes.is_empty()) {
        return None;
    }
    // Read only for the tool's name.
    let record = server.store.get_unchecked(id).await.ok()??;
    // A fallback task (followed by a companion tool) may belong to the principal rather than
    // to the session (`fallback::owner`).
    if record.owner != peer.owner(&req.era) && record.owner != fallback::owner(peer, &req.era) {
        return None;
    }
    server.tools.get(record.tool.as_deref()?).cloned()
}

/// `data.error` of a refusal for want of a scope: the OAuth error code (RFC 6750).
pub(crate) const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

/// The refusal: `-32600` "Forbidden: ...", with `data.error = "insufficient_scope"`,
/// `data.scope` (every scope the item needs, space-separated, as a challenge names them) and
/// `data.missing` (those this token lacks).
fn insufficient_scope(needs: &Needs, principal: &Principal) -> RpcError {
    let missing: Vec<&str> = (needs.scopes.iter())
        .copied()
        .filter(|s| !principal.has_scope(s))
        .collect();
    RpcError::invalid_request(format!(
        "Forbidden: the {} `{}` needs the scope `{}`, which this token does not grant",
        needs.kind,
        needs.name,
        missing.join(" ")
    ))
    .with_data(json!({
        "error": INSUFFICIENT_SCOPE,
        "scope": needs.scopes.join(" "),
        "missing": missing,
    }))
}

/// The scopes a refusal says the item needs (`data.scope`), when `error` is one
/// ([`authorize`]'s): what HTTP names in its 403 challenge.
#[cfg(feature = "http")]
pub(crate) fn refused_scopes(error: &RpcError) -> Option<Vec<&str>> {
    let data = error.data.as_ref()?;
    if data.get("error")?.as_str()? != INSUFFICIENT_SCOPE {
        return None;
    }
    Some(data.get("scope")?.as_str()?.split_whitespace().collect())
}
