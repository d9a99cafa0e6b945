//! The skills extension's methods (SEP-2640), both eras: `skills/list` (the entries a page at a
//! time, an entry never split), `skills/get` (`-32602` for a URI that is no skill's), and
//! `resources/directory/read` (a skill folder's direct children, `inode/directory` for folders).
//! The skills' files themselves are resources: `resources.rs` lists and reads them.
//!
//! A caller limited by OAuth scopes is refused a skill, file or folder whose `Skills` declares a
//! scope it lacks (`authz.rs`), and its `skills/list` shows only the skills it may read.

use super::authz::Authorized;
use super::incoming::Incoming;
use super::inner::ServerInner;
use super::page;
use super::peer::Peer;
use crate::protocol::skill::SkillEntry;
use crate::protocol::{Cacheable, RpcError};
use crate::skill::DirChild;
use serde_json::{Value, json};

/// Serves `skills/list`, `skills/get` or `resources/directory/read`.
pub(crate) fn method(
    server: &ServerInner,
    peer: &dyn Peer,
    req: &Authorized,
) -> Result<Value, RpcError> {
    let cache = req.era.is_modern().then_some(Cacheable::PRIVATE);
    match req.method.as_str() {
        "skills/list" => list(server, peer, req, cache),
        "skills/get" => get(server, req, cache),
        _ => directory(server, req),
    }
}

#[derive(wire::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListSkillsResult<'a> {
    skills: Vec<&'a SkillEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    cache: Option<Cacheable>,
}

/// `skills/list`: the entries this caller may read, in URI order, a page of
/// [`page_size`](super::ServerConfig::page_size) entries at a time.
fn list(
    server: &ServerInner,
    peer: &dyn Peer,
    req: &Authorized,
    cache: Option<Cacheable>,
) -> Result<Value, RpcError> {
    let listing = req.listing(server, peer);
    let mut skills: Vec<&SkillEntry> = (server.skills.entries().iter())
        .filter(|(_, scopes)| listing.shows(scopes))
        .map(|(entry, _)| entry)
        .collect();
    let (range, next_cursor) = page::page(&req.params, skills.len(), server.config.page_size)?;
    skills.truncate(range.end);
    skills.drain(..range.start);
    let result = ListSkillsResult {
        skills,
        next_cursor,
        cache,
    };
    Ok(serde_json::to_value(result).unwrap_or_default())
}

#[derive(wire::Serialize)]
struct GetSkillResult<'a> {
    skill: &'a SkillEntry,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    cache: Option<Cacheable>,
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
fn get(server: &ServerInner, req: &Incoming, cache: Option<Cacheable>) -> Result<Value, RpcError> {
    let uri = uri_param(req)?;
    let Some((skill, _)) = server.skills.get(&uri) else {
        return Err(
            RpcError::invalid_params(format!("No skill is served at `{uri}`"))
                .with_data(json!({ "uri": uri })),
        );
    };
    Ok(serde_json::to_value(GetSkillResult { skill, cache }).unwrap_or_default())
}

#[derive(wire::Serialize)]
#[serde(rename_all = "camelCase")]
struct DirectoryResult<'a> {
    resources: &'a [&'a DirChild],
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

/// `resources/directory/read`: the direct children of a skill folder (`skill://a/b`, no trailing
/// `/`), a page at a time; `-32602` for anything that is not one.
fn directory(server: &ServerInner, req: &Incoming) -> Result<Value, RpcError> {
    let uri = uri_param(req)?;
    let Some((children, _)) = server.skills.dir(&uri) else {
        let what = if server.skills.file(&uri).is_some() {
            "is not a directory resource"
        } else {
            "is not a directory this server serves"
        };
        return Err(
            RpcError::invalid_params(format!("`{uri}` {what}")).with_data(json!({ "uri": uri }))
        );
    };
    let (range, next_cursor) = page::page(&req.params, children.len(), server.config.page_size)?;
    let result = DirectoryResult {
        resources: &children[range],
        next_cursor,
    };
    Ok(serde_json::to_value(result).unwrap_or_default())
}

/// The `uri` param.
fn uri_param(req: &Incoming) -> Result<String, RpcError> {
    match req.params.str("uri") {
        Some(Some(uri)) => Ok(uri.into_owned()),
        Some(None) => Err(RpcError::invalid_params("`uri` must be a string")),
        None => Err(RpcError::invalid_params("missing required parameter `uri`")),
    }
}
