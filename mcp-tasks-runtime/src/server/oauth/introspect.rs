//! Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662), with the
//! answers kept for a while so that a busy client does not cost one round trip per request.

use super::answers::Answers;
use super::fetch::{self, FetchError};
use super::{InvalidCertificate, TokenClaims, TokenError, TokenValidator, ValidateFuture};
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Validates opaque access tokens at the authorization server's introspection endpoint (RFC 7662),
/// authenticating as a client (HTTP Basic with its id and secret).
///
/// A token is accepted when the answer says `active: true`, names this resource in `aud` (unless
/// [`require_audience(false)`](Self::require_audience)), names a subject (`sub`, else the
/// `client_id`), and has not expired. Answers, good and bad, are kept for
/// [`cache_ttl`](Self::cache_ttl) (never past the token's `exp`), for at most
/// [`cache_size`](Self::cache_size) tokens, keyed by the token's SHA-256 (the tokens themselves
/// are not kept).
///
/// The endpoint is given, or found in the issuer's metadata
/// ([`discover`](Self::discover)):
///
/// ```
/// use mcp_tasks_runtime::server::oauth::Introspection;
///
/// let validator = Introspection::new(
///     "https://auth.example.com/oauth2/introspect",
///     "https://mcp.example.com/mcp",
/// )
/// .client("mcp-server", "s3cret");
/// let discovered =
///     Introspection::discover("https://auth.example.com", "https://mcp.example.com/mcp")
///         .client("mcp-server", "s3cret");
/// # let _ = (validator, discovered);
/// ```
pub struct Introspection {
    /// Configured; `None`: found in the issuer's metadata.
    endpoint: Option<String>,
    discovered: tokio::sync::Mutex<Discovery>,
    audience: String,
    require_audience: bool,
    issuer: Option<String>,
    client: Option<(String, String)>,
    timeout: Duration,
    max_response: usize,
    /// Trusted besides the built-in roots.
    roots: Vec<reqwest::Certificate>,
    http: OnceLock<reqwest::Client>,
    answers: Answers,
}

/// The endpoint found in the issuer's metadata, or why it could not be, and when.
#[derive(Default)]
struct Discovery {
    endpoint: Option<String>,
    failed: Option<(Instant, String)>,
}

/// How long a failed discovery is answered from memory before the issuer is asked again.
const DISCOVERY_COOLDOWN: Duration = Duration::from_secs(10);

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("audience", &self.audience)
            .field("client_id", &self.client.as_ref().map(|(id, _)| id))
            .field("cache_ttl", &self.answers.ttl())
            .field("cache_size", &self.answers.size())
            .field("root_certificates", &self.roots.len())
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// Tokens checked at `endpoint` (the issuer's `introspection_endpoint`) that must be for
    /// `audience`, this resource's canonical URI.
    pub fn new(endpoint: impl Into<String>, audience: impl Into<String>) -> Self {
        Self::with_endpoint(Some(endpoint.into()), audience.into())
    }

    /// Tokens of `issuer` (its issuer identifier) that must be for `audience`, this resource's
    /// canonical URI, checked at the `introspection_endpoint` its metadata names (RFC 8414
    /// `/.well-known/oauth-authorization-server`, else OpenID Connect Discovery, as
    /// [`JwtValidator`](super::JwtValidator) finds its keys). The metadata is read at the first
    /// token and the endpoint kept; until it can be read, tokens get HTTP 503 (the issuer is
    /// asked again at most every 10 s). Principals are qualified with `issuer`, as with
    /// [`issuer`](Self::issuer).
    pub fn discover(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self::with_endpoint(None, audience.into()).issuer(issuer)
    }

    fn with_endpoint(endpoint: Option<String>, audience: String) -> Self {
        Introspection {
            endpoint,
            discovered: tokio::sync::Mutex::default(),
            audience,
            require_audience: true,
            issuer: None,
            client: None,

            timeout: fetch::DEFAULT_TIMEOUT,
            max_response: fetch::DEFAULT_MAX_RESPONSE,
            roots: Vec::new(),
            http: OnceLock::new(),
            answers: Answers::new(Duration::from_secs(60), 10_000),
        }
    }

    /// Authenticates to the endpoint as this client (HTTP Basic).
    pub fn client(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = Some((id.into(), secret.into()));
        self
    }

    /// The issuer the principal is qualified with (and that `iss`, when the answer has one,
    /// must equal).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Whether an answer without this resource in `aud` is refused (default `true`; RFC 7662
    /// makes `aud` optional, and some servers leave it out).
    pub fn require_audience(mut self, require: bool) -> Self {
        self.require_audience = require;
        self
    }

    /// How long an answer is kept (default 60 s; zero: not kept). A revoked token may be
    /// accepted this long after its revocation.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.answers = self.answers.with_ttl(ttl);
        self
    }

    /// How many answers are kept at most (default 10,000).
    pub fn cache_size(mut self, n: usize) -> Self {
        self.answers = self.answers.with_size(n);
        self
    }

    /// How long a call to the endpoint may take (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest answer read (default 256 KiB).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// HTTPS: also trusts the certificate(s) in `pem` (PEM text, one or more
    /// `-----BEGIN CERTIFICATE-----` blocks) as roots for the introspection endpoint and the
    /// issuer's metadata, besides the Mozilla roots built in: for an issuer behind a private CA
    /// or with a self-signed certificate. Call once per file.
    ///
    /// # Errors
    /// When `pem` holds no certificate, or one that cannot be a root; the error says which.
    pub fn root_certificate_pem(
        mut self,
        pem: impl AsRef<[u8]>,
    ) -> Result<Self, InvalidCertificate> {
        self.roots.extend(fetch::roots(pem.as_ref())?);
        Ok(self)
    }

    async fn check(&self, token: &str) -> Result<TokenClaims, TokenError> {
        let key = Answers::key(token);
        if let Some(answer) = self.answers.get(&key) {
            return answer;
        }
        let answer = self.introspect(token).await;
        if !matches!(answer, Err(TokenError::Unavailable(_))) {
            self.answers.keep(key, &answer);
        }
        answer
    }

    fn http(&self) -> &reqwest::Client {
        (self.http).get_or_init(|| fetch::client_or_default(self.timeout, &self.roots))
    }

    /// The endpoint: configured, or found in the issuer's metadata (once; a failure is
    /// remembered for [`DISCOVERY_COOLDOWN`] so that a down issuer is not asked on every token).
    async fn endpoint(&self) -> Result<String, TokenError> {
        if let Some(endpoint) = &self.endpoint {
            return Ok(endpoint.clone());
        }
        let mut discovery = self.discovered.lock().await;
        if let Some(endpoint) = &discovery.endpoint {
            return Ok(endpoint.clone());
        }
        if let Some((at, why)) = &discovery.failed
            && at.elapsed() < DISCOVERY_COOLDOWN
        {
            return Err(TokenError::Unavailable(why.clone()));
        }
        let issuer = self.issuer.as_deref().unwrap_or_default();
        let found = fetch::issuer_metadata(self.http(), issuer, self.max_response)
            .await
            .and_then(|metadata| {
                (metadata
                    .get("introspection_endpoint")
                    .and_then(Value::as_str))
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!(
                        "the metadata of {issuer} names no `introspection_endpoint`; give the \
                             endpoint with `Introspection::new`"
                    )
                })
            });
        match found {
            Ok(endpoint) => {
                tracing::debug!(issuer, endpoint, "found the introspection endpoint");
                discovery.endpoint = Some(endpoint.clone());
                discovery.failed = None;
                Ok(endpoint)
            }
            Err(why) => {
                tracing::warn!(issuer, error = %why, "could not find the introspection endpoint");
                discovery.failed = Some((Instant::now(), why.clone()));
                Err(TokenError::Unavailable(why))
            }
        }
    }

    async fn introspect(&self, token: &str) -> Result<TokenClaims, TokenError> {
        let endpoint = self.endpoint().await?;
        let mut request = self
            .http()
            .post(&endpoint)
            .form(&[("token", token), ("token_type_hint", "access_token")]);
        if let Some((id, secret)) = &self.client {
            request = request.basic_auth(id, Some(secret));
        }
        let answer = fetch::json(request, self.max_response)
            .await
            .map_err(refusal_or_trouble)?;
        self.read(&answer)
    }

    fn read(&self, answer: &Value) -> Result<TokenClaims, TokenError> {
        let invalid = |why: &str| Err(TokenError::Invalid(why.to_owned()));
        if answer.get("active") != Some(&Value::Bool(true)) {
            return invalid("the token is not active (revoked, expired, or unknown to the issuer)");
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let exp = answer.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp <= now) {
            return invalid("the token has expired (`exp` is past)");
        }
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(&self.audience)),
            _ => !self.require_audience,
        };
        if !audience_ok {
            return Err(TokenError::Invalid(format!(
                "the token is not for this resource (its `aud` does not include {})",
                self.audience
            )));
        }
        let iss = answer.get("iss").and_then(Value::as_str);
        if let (Some(want), Some(iss)) = (&self.issuer, iss)
            && want != iss
        {
            return Err(TokenError::Invalid(format!(
                "the token was not issued by {want} (`iss`)"
            )));
        }
        let subject = (answer.get("sub").or_else(|| answer.get("client_id")))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let Some(subject) = subject else {
            return invalid("the introspection answer names no subject (`sub`)");
        };
        let scopes = (answer.get("scope").and_then(Value::as_str))
            .map(|s| {
                s.split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Ok(TokenClaims {
            issuer: self.issuer.clone().or_else(|| iss.map(str::to_owned)),
            subject: subject.to_owned(),
            scopes: Some(scopes),
            expires_at: exp.map(|s| UNIX_EPOCH + Duration::from_secs(s)),
        })
    }
}

/// What a failed call to the introspection endpoint means for the token. The endpoint refusing
/// the request with a 4xx (node-oidc-provider answers `400 unsupported_token_type` for a JWT
/// access token) is a verdict on the token, `Invalid` (401: the client gets a fresh one). An
/// endpoint that could not answer (down, timed out, a 5xx, 408 or 429) is `Unavailable` (503:
/// the client retries), and so is one refusing this server's own credentials (401 or 403, RFC
/// 7662 section 2.3): no token is at fault, and no fresh one would pass.
fn refusal_or_trouble(e: FetchError) -> TokenError {
    match e {
        FetchError::Status(status @ (401 | 403)) => {
            tracing::error!(
                status,
                "the introspection endpoint refused this server's client credentials \
                 (`Introspection::client`)"
            );
            TokenError::Unavailable(format!(
                "the introspection endpoint refused this server's credentials (HTTP {status})"
            ))
        }
        FetchError::Status(status @ 400..=499) if !matches!(status, 408 | 429) => {
            TokenError::Invalid(format!(
                "the issuer refused to introspect the token (HTTP {status})"
            ))
        }
        FetchError::Status(status) => {
            TokenError::Unavailable(format!("the introspection endpoint answered HTTP {status}"))
        }
        FetchError::Failed(why) => {
            TokenError::Unavailable(format!("the introspection endpoint: {why}"))
        }
    }
}

impl TokenValidator for Introspection {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(self.check(token))
    }
}
