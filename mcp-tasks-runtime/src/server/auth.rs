//! Who is calling: the pluggable [`Authenticator`] of the HTTP transport, and the principal tasks
//! are bound to.

use axum::http::request::Parts;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use subtle::ConstantTimeEq;

pub(crate) use crate::tool::Principal;

/// Why a request was not let in: answered with `status` (HTTP 401 unless said otherwise), a
/// `WWW-Authenticate` challenge and a JSON-RPC error carrying `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    /// For people (and the JSON-RPC error message).
    pub message: String,
    /// The `WWW-Authenticate` challenge (default `Bearer`); empty: none is sent.
    pub challenge: String,
    /// The HTTP status: 401 (the default), or 503 when whoever decides could not be asked (the
    /// authorization server's keys could not be fetched, say): the client should retry later,
    /// not drop its token.
    pub status: axum::http::StatusCode,
    /// For a 503: when to try again, sent as `Retry-After` (whole seconds, rounded up; RFC 9110
    /// section 10.2.3). `None`: no `Retry-After`.
    pub retry_after: Option<std::time::Duration>,
}

impl Unauthorized {
    /// A `Bearer` challenge with this message (HTTP 401).
    pub fn new(message: impl Into<String>) -> Self {
        Unauthorized {
            message: message.into(),
            challenge: "Bearer".into(),
            status: axum::http::StatusCode::UNAUTHORIZED,
            retry_after: None,
        }
    }

    /// HTTP 503 with this message and no challenge: the request could not be judged now (the
    /// authorization server is unreachable); the client should retry later.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Unauthorized {
            message: message.into(),
            challenge: String::new(),
            status: axum::http::StatusCode::SERVICE_UNAVAILABLE,
            retry_after: None,
        }
    }

    /// Tells the client when to try again (`Retry-After`).
    pub fn with_retry_after(mut self, after: std::time::Duration) -> Self {
        self.retry_after = Some(after);
        self
    }

    /// Replaces the `WWW-Authenticate` challenge (e.g. `Bearer resource_metadata="…"`).
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = challenge.into();
        self
    }
}

/// The head of an HTTP request (method, URI, headers, extensions): what an [`Authenticator`] sees.
pub type RequestParts = Parts;

/// The future an [`Authenticator`] returns.
pub type AuthFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<Principal>, Unauthorized>> + Send + 'a>>;

/// Decides who sends an HTTP request, from its head (method, URI, headers, extensions).
///
/// `Ok(Some(principal))`: the request runs as that principal. `Ok(None)`: an anonymous caller,
/// allowed (its tasks belong to the server's one anonymous principal, or to its legacy session).
/// `Err(_)`: HTTP 401.
///
/// ```
/// use mcp_tasks_runtime::Principal;
/// use mcp_tasks_runtime::server::{
///     AuthFuture, Authenticator, RequestParts, Unauthorized,
/// };
///
/// /// Lets in whoever names themselves in `X-User` (for a trusted proxy in front).
/// struct FromProxy;
///
/// impl Authenticator for FromProxy {
///     fn authenticate<'a>(&'a self, parts: &'a RequestParts) -> AuthFuture<'a> {
///         let user = parts.headers.get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
///         Box::pin(async move {
///             user.map(|u| Some(Principal::new(u))).ok_or_else(|| Unauthorized::new("missing X-User"))
///         })
///     }
/// }
/// ```
pub trait Authenticator: Send + Sync + 'static {
    /// Authenticates one request.
    fn authenticate<'a>(&'a self, parts: &'a Parts) -> AuthFuture<'a>;

    /// The OAuth Protected Resource Metadata (RFC 9728) served at
    /// `/.well-known/oauth-protected-resource` and at that path followed by the endpoint's path;
    /// `None` (the default): nothing is served there.
    fn resource_metadata(&self) -> Option<serde_json::Value> {
        None
    }

    /// The `WWW-Authenticate` challenge of an HTTP 403 answering a caller whose token lacks
    /// `scopes` (all of them needed). The default names them:
    /// `Bearer error="insufficient_scope", scope="a b"`.
    fn insufficient_scope(&self, scopes: &[&str]) -> String {
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", error_description=\"this request needs the scope {}\"",
            scopes.join(" "),
            scopes.join(" ")
        )
    }
}

/// Static bearer tokens, each naming a principal: `Authorization: Bearer <token>`. A request
/// without a known token is refused with 401.
///
/// ```
/// use mcp_tasks_runtime::server::{BearerTokens, HttpConfig};
///
/// let config = HttpConfig::default().authenticator(
///     BearerTokens::new().token("s3cret-alice", "alice").token("s3cret-bob", "bob"),
/// );
/// # let _ = config;
/// ```
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: HashMap<String, Principal>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the tokens themselves.
        f.debug_struct("BearerTokens")
            .field("principals", &self.tokens.values().collect::<Vec<_>>())
            .finish()
    }
}

impl BearerTokens {
    /// No tokens yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `principal`.
    pub fn token(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        self.tokens
            .insert(token.into(), Principal::new(principal.into()));
        self
    }

    /// The principal of `token`, compared with every known token in constant time so that
    /// timing does not tell how much of one matched.
    pub(crate) fn find(&self, token: &str) -> Option<Principal> {
        self.tokens.iter().fold(None, |found, (known, principal)| {
            if bool::from(known.as_bytes().ct_eq(token.as_bytes())) {
                Some(principal.clone())
            } else {
                found
            }
        })
    }

    fn check(&self, parts: &Parts) -> Result<Option<Principal>, Unauthorized> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| {
                Unauthorized::new("Unauthorized: send `Authorization: Bearer <token>`")
            })?;
        let value = header
            .to_str()
            .map_err(|_| Unauthorized::new("Unauthorized: the Authorization header is not text"))?;
        let token = value
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or_else(|| Unauthorized::new("Unauthorized: expected a Bearer token"))?;
        self.find(token).map(Some).ok_or_else(|| {
            Unauthorized::new("Unauthorized: unknown bearer token")
                .with_challenge("Bearer error=\"invalid_token\"")
        })
    }
}

impl Authenticator for BearerTokens {
    fn authenticate<'a>(&'a self, parts: &'a Parts) -> AuthFuture<'a> {
        let result = self.check(parts);
        Box::pin(async move { result })
    }
}
