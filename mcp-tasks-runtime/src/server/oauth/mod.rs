//! An OAuth 2.1 resource server (MCP authorization, 2025-11-25 and 2026-07-28): the HTTP endpoint
//! publishes Protected Resource Metadata (RFC 9728), takes access tokens issued for it (audience =
//! its canonical URI, RFC 8707) and answers a missing or bad token in the form clients act on.
//!
//! - [`ResourceServer`] is the [`Authenticator`]: it reads `Authorization: Bearer`, asks a
//!   [`TokenValidator`], and turns the answer into a principal (the token's issuer and subject,
//!   who then owns the tasks it creates) or a challenge:
//!   `401` + `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` without a token,
//!   the same with `error="invalid_token"` for a bad one, `503` with `Retry-After` when the
//!   issuer could not be asked. A token lacking a tool's scope gets `403`
//!   `error="insufficient_scope"`.
//! - The validators: [`JwtValidator`] (JWT access tokens, RFC 9068, checked against the issuer's
//!   JWKS), [`Introspection`] (opaque tokens, RFC 7662), and the static [`BearerTokens`].
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`ResourceServer`], the metadata, the challenges, [`TokenValidator`] |
//! | `jwt.rs` | [`JwtValidator`] and its key cache |
//! | `introspect.rs` | [`Introspection`] and its token cache |
//! | `fetch.rs` | bounded HTTP fetches (timeouts, a size cap, extra PEM roots) and issuer discovery |

mod answers;
mod fetch;
mod introspect;
mod jwt;

pub use introspect::Introspection;
pub use jwt::JwtValidator;

use super::auth::{AuthFuture, Authenticator, BearerTokens, Principal, RequestParts, Unauthorized};
use serde_json::{Value, json};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// [`ResourceServer::retry_after`] unless set.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(10);

/// What a valid access token says: whose it is and what it grants.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenClaims {
    /// The issuer (`iss`), when the token names one.
    pub issuer: Option<String>,
    /// The subject (`sub`): the user, or the client for the client credentials grant.
    pub subject: String,
    /// The scopes granted (`scope`, space-separated; or `scp`); `None`: not limited by scopes.
    pub scopes: Option<Vec<String>>,
    /// When the token expires (`exp`).
    pub expires_at: Option<SystemTime>,
}

impl TokenClaims {
    /// A token of `subject`, not limited by scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        TokenClaims {
            issuer: None,
            subject: subject.into(),
            scopes: None,
            expires_at: None,
        }
    }

    /// Sets the issuer.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Limits the token to these scopes.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The principal these claims name: the subject, qualified by the issuer when there is one
    /// (`https://issuer.example#alice`; an issuer identifier has no fragment, RFC 8414), so that
    /// two issuers' subjects never meet. The same token gives the same principal on every
    /// instance, so tasks it created are found wherever its next request lands.
    pub fn principal(&self) -> Principal {
        let id = match &self.issuer {
            Some(issuer) => format!("{issuer}#{}", self.subject),
            None => self.subject.clone(),
        };
        let principal = Principal::new(id);
        match &self.scopes {
            Some(scopes) => principal.with_scopes(scopes.iter().cloned()),
            None => principal,
        }
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    /// The token is bad (malformed, forged, expired, for another audience, …): HTTP 401
    /// `invalid_token`, and the client should get a new one. The text says what is wrong.
    Invalid(String),
    /// The token could not be judged now (the issuer's keys or its introspection endpoint did not
    /// answer): HTTP 503, and the client should retry later with the same token.
    Unavailable(String),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Invalid(why) | TokenError::Unavailable(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for TokenError {}

/// The future a [`TokenValidator`] returns.
pub type ValidateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<TokenClaims, TokenError>> + Send + 'a>>;

/// Decides whether an access token is valid for this resource, and what it says.
///
/// Shipped: [`JwtValidator`], [`Introspection`], [`BearerTokens`]. Implement it for another
/// kind of token:
///
/// ```
/// use mcp_tasks_runtime::server::oauth::{TokenClaims, TokenError, TokenValidator, ValidateFuture};
///
/// /// Tokens of the form `user:<name>` (for a demo).
/// struct Demo;
///
/// impl TokenValidator for Demo {
///     fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
///         Box::pin(async move {
///             token
///                 .strip_prefix("user:")
///                 .map(|user| TokenClaims::new(user).scopes(["research"]))
///                 .ok_or_else(|| TokenError::Invalid("not a demo token".into()))
///         })
///     }
/// }
/// ```
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates one access token (the text after `Bearer `).
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a>;
}

impl TokenValidator for BearerTokens {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        let found = self.find(token);
        Box::pin(async move {
            found
                .map(|p| TokenClaims::new(p.as_str()))
                .ok_or_else(|| TokenError::Invalid("unknown bearer token".into()))
        })
    }
}

impl<V: TokenValidator + ?Sized> TokenValidator for Arc<V> {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        (**self).validate(token)
    }
}

/// The OAuth 2.1 resource server: an [`Authenticator`] for
/// [`HttpConfig::authenticator`](crate::server::HttpConfig::authenticator) that publishes
/// Protected Resource Metadata (RFC 9728) and validates access tokens with a
/// [`TokenValidator`].
///
/// ```no_run
/// use mcp_tasks_runtime::server::HttpConfig;
/// use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
///
/// let resource = "https://mcp.example.com/mcp";
/// let issuer = "https://auth.example.com/realms/mcp";
/// let oauth = ResourceServer::new(resource, JwtValidator::new(issuer, resource))
///     .expect("a valid resource URI")
///     .authorization_server(issuer)
///     .scopes_supported(["research"]);
/// let config = HttpConfig::default().authenticator(oauth);
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct ResourceServer {
    resource: String,
    metadata_url: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    challenge_scopes: Vec<String>,
    resource_name: Option<String>,
    retry_after: Duration,
    validator: Arc<dyn TokenValidator>,
}

impl fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .finish_non_exhaustive()
    }
}

/// A resource URI that cannot be one (RFC 8707 section 2: absolute, no fragment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidResource(String);

impl fmt::Display for InvalidResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidResource {}

/// A PEM text given to trust as a root ([`JwtValidator::root_certificate_pem`],
/// [`Introspection::root_certificate_pem`]) that holds no usable certificate. The text says what
/// is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidCertificate(String);

impl fmt::Display for InvalidCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidCertificate {}

impl ResourceServer {
    /// The resource server for the MCP endpoint at `resource`, its canonical URI (e.g.
    /// `https://mcp.example.com/mcp`: what clients send as `resource` and what tokens must name as
    /// their audience), validating tokens with `validator`.
    pub fn new(resource: &str, validator: impl TokenValidator) -> Result<Self, InvalidResource> {
        let url = reqwest::Url::parse(resource)
            .map_err(|e| InvalidResource(format!("`{resource}` is not an absolute URI: {e}")))?;
        if url.fragment().is_some() {
            return Err(InvalidResource(format!(
                "`{resource}`: a resource URI has no fragment (RFC 8707 section 2)"
            )));
        }
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(InvalidResource(format!(
                "`{resource}`: an MCP server's resource URI is an http(s) URL with a host"
            )));
        }
        let path = url.path().trim_end_matches('/');
        let metadata_url = format!(
            "{}/.well-known/oauth-protected-resource{path}",
            url.origin().ascii_serialization()
        );
        Ok(ResourceServer {
            resource: resource.to_owned(),
            metadata_url,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            challenge_scopes: Vec::new(),
            resource_name: None,
            retry_after: DEFAULT_RETRY_AFTER,
            validator: Arc::new(validator),
        })
    }

    /// Names an authorization server (its issuer identifier) in the metadata: where clients get
    /// tokens. Call once per issuer.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes published in the metadata (`scopes_supported`).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a `401` challenge asks for (`scope="…"`): what a client should request to use
    /// the server at all. Default: the [`scopes_supported`](Self::scopes_supported), which is
    /// what the MCP authorization spec has a client ask for when the challenge names none (its
    /// *Scope Selection Strategy*), said in the challenge as the spec's servers SHOULD; with
    /// neither, the challenge names no scope (any token the issuer gives for this resource will
    /// do).
    pub fn challenge_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.challenge_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long a client told `503` (the issuer's keys or introspection endpoint did not answer)
    /// should wait before retrying, sent as `Retry-After` (default 10 s: [`JwtValidator`]'s
    /// refresh cooldown, within which it would not ask the issuer again anyway).
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after;
        self
    }

    /// A name for people in the metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The canonical URI of the resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata is published (the path-suffixed form, RFC 9728 section 3.1); the
    /// `resource_metadata` of every challenge.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// `Bearer resource_metadata="…"[, scope="…"]` plus `extra` parameters.
    fn challenge(&self, extra: &[(&str, &str)]) -> String {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        let scopes = if self.challenge_scopes.is_empty() {
            &self.scopes_supported
        } else {
            &self.challenge_scopes
        };
        if !scopes.is_empty() && !extra.iter().any(|(k, _)| *k == "scope") {
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        for (key, value) in extra {
            challenge.push_str(&format!(", {key}=\"{}\"", quoted(value)));
        }
        challenge
    }

    async fn check(&self, parts: &RequestParts) -> Result<Option<Principal>, Unauthorized> {
        let missing = |message: &str| {
            Unauthorized::new(format!("Unauthorized: {message}"))
                .with_challenge(self.challenge(&[]))
        };
        let Some(header) = parts.headers.get(axum::http::header::AUTHORIZATION) else {
            return Err(missing(
                "this server needs an OAuth access token: send `Authorization: Bearer <token>` (the resource metadata says where to get one)",
            ));
        };
        let invalid = |message: String| {
            let challenge = self.challenge(&[
                ("error", "invalid_token"),
                ("error_description", message.as_str()),
            ]);
            Unauthorized::new(format!("Unauthorized: {message}")).with_challenge(challenge)
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Err(invalid(
                "expected `Authorization: Bearer <token>`".to_owned(),
            ));
        };
        match self.validator.validate(token).await {
            Ok(claims) => Ok(Some(claims.principal())),
            Err(TokenError::Invalid(why)) => Err(invalid(why)),
            Err(TokenError::Unavailable(why)) => Err(Unauthorized::unavailable(format!(
                "Service unavailable: the access token could not be checked now ({why}); retry later"
            ))
            .with_retry_after(self.retry_after)),
        }
    }
}

/// A challenge parameter's value as a quoted-string body: no `"` or `\`, no control characters
/// (RFC 6750 section 3: `error_description` is printable ASCII without them).
fn quoted(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}

impl Authenticator for ResourceServer {
    fn authenticate<'a>(&'a self, parts: &'a RequestParts) -> AuthFuture<'a> {
        Box::pin(self.check(parts))
    }

    fn resource_metadata(&self) -> Option<Value> {
        let mut metadata = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            metadata["scopes_supported"] = json!(self.scopes_supported);
        }
        if let Some(name) = &self.resource_name {
            metadata["resource_name"] = json!(name);
        }
        Some(metadata)
    }

    fn insufficient_scope(&self, scopes: &[&str]) -> String {
        let needed = scopes.join(" ");
        let description = format!("this request needs the scope {needed}");
        self.challenge(&[
            ("error", "insufficient_scope"),
            ("scope", &needed),
            ("error_description", &description),
        ])
    }
}
