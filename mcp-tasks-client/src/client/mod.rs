//! The client: connecting (stdio, Streamable HTTP, in-process), agreeing on an era, listing and
//! calling tools, reading resources, getting prompts. The builder and the connect paths are in
//! `builder`, `tools/list` and the `x-mcp-header` annotations in `tools`, `tools/call` in both
//! eras in `call` (with the MRTR rounds that `prompts/get` and `resources/read` share), resources
//! in `resources`, prompts and `completion/complete` in `prompts`, resource subscriptions in `subscribe`,
//! skills (SEP-2640: listed, loaded and verified) in `skills`. Every list follows
//! `nextCursor` to the last page (`Client::list_all`).

mod builder;
mod call;
mod prompts;
mod resources;
mod skills;
mod subscribe;
mod tools;

pub use builder::ClientBuilder;
pub use call::ToolCall;
pub use prompts::CompletionRef;
pub use resources::{ReadResourceResult, ResourceContent, ResourceData};
pub use subscribe::ResourceSubscription;

use crate::error::Error;
use crate::session::{ServerInfo, Session};
use mcp_tasks_runtime::Era;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many pages one listing may take before the client gives up (a server whose cursors never
/// end): 10,000 pages, ten million items at the spec's usual page sizes.
const MAX_PAGES: usize = 10_000;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Which protocol era to speak: the connect option of [`ClientBuilder::era`]. The era agreed on
/// is then [`Client::era`] (an [`Era`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EraChoice {
    /// Find the server's era as the 2026-07-28 spec says (`versioning.mdx`): `server/discover`,
    /// which every 2026-07-28 server must answer with a `DiscoverResult` naming the versions it
    /// supports; an error (a 2025-11-25 server does not know the method; over HTTP it refuses
    /// the POST), a result without a 2026-07-28 version, or no answer within
    /// [`discover_timeout`](ClientBuilder::discover_timeout) means `initialize` (2025-11-25).
    /// A server of both eras is spoken to in 2026-07-28. (`ping` cannot tell: a server of both
    /// eras, as rmcp's, answers it before anything else with `{}`, as a 2025-11-25 one does.)
    #[default]
    Auto,
    /// 2026-07-28 only (stateless, per-request `_meta`, the tasks extension).
    Modern,
    /// 2025-11-25 only (`initialize`, a session, experimental tasks).
    Legacy,
}

impl From<Era> for EraChoice {
    /// Pins that era.
    fn from(era: Era) -> Self {
        match era {
            Era::Modern => EraChoice::Modern,
            Era::Legacy => EraChoice::Legacy,
        }
    }
}

/// A connection to an MCP server. Cheap to clone; the connection closes when the last clone (and
/// the last task handle) is dropped, or with [`close`](Self::close).
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_tasks_client::Error> {
/// use mcp_tasks_client::Client;
///
/// let client = Client::builder()
///     .bearer_token("secret")
///     .connect_http("http://127.0.0.1:8080/mcp")
///     .await?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client
///     .call_tool("greet", serde_json::json!({ "name": "Ada" }))
///     .await?
///     .result()
///     .await?;
/// println!("{result:?}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Session>,
}

impl Client {
    /// The protocol era the client and server agreed on.
    pub fn era(&self) -> Era {
        self.inner.era
    }

    /// The protocol version agreed within [`era`](Self::era): `2026-07-28` after
    /// `server/discover`, or the version `initialize` negotiated (`2025-11-25`, `2025-06-18`,
    /// ...).
    pub fn protocol_version(&self) -> &str {
        &self.inner.version
    }

    /// The 2025-11-25 HTTP session's id (`Mcp-Session-Id`), when the server gave one: what
    /// another client joins with [`ClientBuilder::legacy_session`] to follow this session's tasks.
    pub fn session_id(&self) -> Option<String> {
        self.inner.peer.http().and_then(|h| h.session_id())
    }

    /// What the server said about itself.
    pub fn server(&self) -> &ServerInfo {
        &self.inner.server
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self) -> Result<(), Error> {
        self.inner.call("ping", json!({})).await.map(|_| ())
    }

    /// Sends any request (with the era's `_meta` added) and returns its result; for methods this
    /// client has no call for.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        if !params.is_object() {
            return Err(Error::Decode("request params must be a JSON object".into()));
        }
        self.inner.call(method, params).await
    }

    /// Every item of a paginated list (`tools/list`, `resources/list`, `prompts/list`, ...): the
    /// `key` array of each page, following `nextCursor` until a page has none. A cursor the server
    /// already gave (a loop) or a page without the array is [`Error::InvalidResponse`].
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, Error> {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.inner.call(method, params).await?;
            match page.get_mut(key).map(Value::take) {
                Some(page @ Value::Array(_)) => items.extend(
                    serde_json::from_value::<Vec<T>>(page)
                        .map_err(|e| Error::invalid(method, format!("`{key}`: {e}")))?,
                ),
                _ => return Err(Error::invalid(method, format!("no `{key}` array"))),
            }
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(items),
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::invalid(
                            method,
                            format!("nextCursor {next:?} was given before (the pages loop)"),
                        ));
                    }
                    cursor = Some(next.clone());
                }
                Some(other) => {
                    return Err(Error::invalid(
                        method,
                        format!("nextCursor is not a string: {other}"),
                    ));
                }
            }
        }
        Err(Error::invalid(
            method,
            format!("more than {MAX_PAGES} pages"),
        ))
    }

    /// Ends the connection: a legacy HTTP session is deleted; a spawned server gets its stdin
    /// closed and up to 2 seconds to exit before it is killed. Task handles stop working.
    pub async fn close(&self) {
        if let Some(http) = self.inner.peer.http() {
            http.close().await;
        }
        self.inner.peer.close_duplex();
        if let Some(mut child) = self.inner.child.lock().await.take()
            && tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }
}
