//! JWT access tokens (RFC 9068) checked against the issuer's published keys (JWKS): the
//! signature with an allowed algorithm and a key of that algorithm's family, the issuer, the
//! audience (this resource), `exp` and `nbf` with a small skew, and a subject.
//!
//! The keys are fetched once and kept. A token naming a key id (`kid`) that is not kept makes the
//! validator fetch the keys again (the issuer rotated them), at most once per cooldown, so a
//! stream of tokens with made-up key ids costs one fetch, not one each. Requests that need the
//! keys while a fetch is under way wait for that fetch rather than starting their own.

use super::answers::Answers;
use super::fetch::{self, FetchError};
use super::{InvalidCertificate, TokenClaims, TokenError, TokenValidator, ValidateFuture};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Validates JWT access tokens (RFC 9068 profile) signed by one issuer, with the keys it
/// publishes.
///
/// The keys' URL comes from the issuer's metadata (RFC 8414
/// `/.well-known/oauth-authorization-server`, else OpenID Connect Discovery), or is given with
/// [`jwks_uri`](Self::jwks_uri). Only asymmetric algorithms are accepted (default RS256, RS384,
/// RS512, PS256, PS384, PS512, ES256, ES384, EdDSA): never `none`, never an HMAC, so that a public
/// key can never be used as an HMAC secret.
///
/// ```
/// use mcp_tasks_runtime::server::oauth::JwtValidator;
/// use std::time::Duration;
///
/// let validator = JwtValidator::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     .leeway(Duration::from_secs(30))
///     .refresh_cooldown(Duration::from_secs(10));
/// # let _ = validator;
/// ```
///
/// A clone shares what its original fetched and checked (the keys, the tokens that passed); a
/// setting given to a clone makes it a validator of its own, which fetches anew.
#[derive(Clone)]
pub struct JwtValidator {
    settings: Settings,
    state: Arc<State>,
}

#[derive(Debug, Clone)]
struct Settings {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refresh_cooldown: Duration,
    max_key_age: Duration,
    max_keys: usize,
    timeout: Duration,
    max_response: usize,
    jwks_uri: Option<String>,
    require_typ: bool,
    cache_size: usize,
    /// Trusted besides the built-in roots.
    roots: Vec<reqwest::Certificate>,
}

/// The keys, and how they were last fetched.
#[derive(Default)]
struct State {
    keys: RwLock<Keys>,
    /// Held while fetching: one fetch at a time.
    refresh: tokio::sync::Mutex<Refresh>,
    client: OnceLock<reqwest::Client>,
    /// Tokens that passed, kept until their `exp` (at most `max_key_age`).
    passed: OnceLock<Answers>,
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys the issuer published without a `kid`.
    unnamed: Vec<Arc<Key>>,
    /// When the keys were last fetched; `None`: never.
    fetched_at: Option<Instant>,
}

#[derive(Default)]
struct Refresh {
    /// The keys' URL, once known.
    jwks_uri: Option<String>,
    /// When a fetch was last started, and why it failed if it did.
    last_attempt: Option<Instant>,
    last_error: Option<String>,
    /// When a fetch was last made for a key id the fresh keys did not have.
    last_unknown: Option<Instant>,
}

struct Key {
    decoding: DecodingKey,
    family: AlgorithmFamily,
    /// The key's own `alg`, when it names one: then only that algorithm may use it.
    alg: Option<Algorithm>,
}

impl fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtValidator")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The algorithms accepted unless [`JwtValidator::algorithms`] says otherwise.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl JwtValidator {
    /// Tokens of `issuer` (its issuer identifier, as in its metadata and the tokens' `iss`) whose
    /// audience (`aud`) includes `audience`: this resource's canonical URI.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtValidator {
            settings: Settings {
                issuer: issuer.into(),
                audiences: vec![audience.into()],
                algorithms: DEFAULT_ALGORITHMS.to_vec(),
                leeway: Duration::from_secs(30),
                refresh_cooldown: Duration::from_secs(10),
                max_key_age: Duration::from_secs(15 * 60),
                max_keys: 32,
                timeout: fetch::DEFAULT_TIMEOUT,
                max_response: fetch::DEFAULT_MAX_RESPONSE,
                jwks_uri: None,
                require_typ: false,
                cache_size: 10_000,
                roots: Vec::new(),
            },
            state: Arc::default(),
        }
    }

    /// Also accepts tokens for this audience (a resource known by two URIs during a move).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.settings.audiences.push(audience.into());
        self.detached()
    }

    /// The keys' URL, instead of finding it in the issuer's metadata.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.settings.jwks_uri = Some(uri.into());
        self.detached()
    }

    /// The signature algorithms accepted (default: the RSA, RSA-PSS, ECDSA and EdDSA ones). HMAC
    /// algorithms (`HS256`, …) are left out whatever is asked: a resource server holds no
    /// shared secret, and accepting them would let a public key be used as one.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.settings.algorithms = algorithms
            .into_iter()
            .filter(|a| a.family() != AlgorithmFamily::Hmac)
            .collect();
        self.detached()
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.settings.leeway = leeway;
        self.detached()
    }

    /// The least time between two fetches of the keys (default 10 s): a token naming an unknown
    /// key id within it is refused without a fetch.
    pub fn refresh_cooldown(mut self, cooldown: Duration) -> Self {
        self.settings.refresh_cooldown = cooldown;
        self.detached()
    }

    /// How long fetched keys are used before they are fetched again (default 15 minutes), so
    /// that a key the issuer withdrew stops being trusted.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.settings.max_key_age = age;
        self.detached()
    }

    /// The most keys kept from one fetch (default 32); the rest are ignored.
    pub fn max_keys(mut self, n: usize) -> Self {
        self.settings.max_keys = n.max(1);
        self.detached()
    }

    /// How long a fetch from the issuer may take (default 5 s). A request waiting for it gets
    /// HTTP 503 when it is over.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self.detached()
    }

    /// The largest metadata or key set read from the issuer (default 256 KiB).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_response = bytes;
        self.detached()
    }

    /// Whether a token must say it is an access token, with the header `typ` `at+jwt` (or
    /// `application/at+jwt`), as RFC 9068 section 4 has resource servers check (default `false`).
    ///
    /// Off by default because Keycloak, Auth0 and Entra ID issue access tokens typed `JWT`, or
    /// not typed at all, so requiring it would refuse every token they give. Turn it on when
    /// your issuer types its access tokens (Auth0 and Okta can be set to; oauth2-proxy-style
    /// issuers built on RFC 9068 do): an ID token or any other JWT the same issuer signs can then
    /// never pass for an access token, even one naming this resource in `aud`. Whatever this
    /// says, a token whose `typ` names another kind of JWT (`logout+jwt`, `dpop+jwt`,
    /// `secevent+jwt`, ...) is always refused: only a missing `typ`, the generic `JWT` and
    /// `at+jwt` pass.
    pub fn require_access_token_typ(mut self, require: bool) -> Self {
        self.settings.require_typ = require;
        self.detached()
    }

    /// How many tokens that passed are kept (default 10,000), so that the same token again, as
    /// a client sends it with each request, costs a lookup instead of a signature check; each for
    /// at most [`max_key_age`](Self::max_key_age) and never past its `exp`. Only tokens that
    /// passed are kept, by their SHA-256. Zero keeps none.
    pub fn cache_size(mut self, n: usize) -> Self {
        self.settings.cache_size = n;
        self.detached()
    }

    /// The same settings with nothing fetched or kept yet: what a clone shares with its original
    /// (keys, the HTTP client, tokens that passed) was got under the original's settings.
    fn detached(mut self) -> Self {
        self.state = Arc::default();
        self
    }

    fn passed(&self) -> &Answers {
        self.state
            .passed
            .get_or_init(|| Answers::new(self.settings.max_key_age, self.settings.cache_size))
    }

    /// HTTPS: also trusts the certificate(s) in `pem` (PEM text, one or more
    /// `-----BEGIN CERTIFICATE-----` blocks) as roots for the issuer's metadata and keys, besides
    /// the Mozilla roots built in: for an issuer behind a private CA (an in-house Keycloak) or
    /// with a self-signed certificate. Call once per file.
    ///
    /// # Errors
    /// When `pem` holds no certificate, or one that cannot be a root; the error says which.
    ///
    /// ```
    /// use mcp_tasks_runtime::server::oauth::JwtValidator;
    ///
    /// let refused = JwtValidator::new("https://auth.internal", "https://mcp.internal/mcp")
    ///     .root_certificate_pem("not a certificate");
    /// assert!(refused.unwrap_err().to_string().contains("no certificate"));
    /// ```
    pub fn root_certificate_pem(
        mut self,
        pem: impl AsRef<[u8]>,
    ) -> Result<Self, InvalidCertificate> {
        self.settings.roots.extend(fetch::roots(pem.as_ref())?);
        Ok(self.detached())
    }

    fn client(&self) -> &reqwest::Client {
        (self.state.client)
            .get_or_init(|| fetch::client_or_default(self.settings.timeout, &self.settings.roots))
    }

    async fn check(&self, token: &str) -> Result<TokenClaims, TokenError> {
        let (alg, kid) = self.read_header(token)?;
        let keys = self.keys_for(kid.as_deref(), alg).await?;
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&self.settings.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway.as_secs();
        let mut last = None;
        for key in keys {
            match jsonwebtoken::decode::<Value>(token, &key.decoding, &validation) {
                Ok(data) => return claims(&data.claims),
                Err(e) => last = Some(e),
            }
        }
        Err(TokenError::Invalid(match last {
            Some(e) => explain(&e, &self.settings),
            None => "no key of the issuer can check this token".into(),
        }))
    }

    /// The header's `alg` (one of the accepted ones) and `kid`. Read here rather than by the
    /// library so that a refused algorithm (`none`, `HS256`) gets a message that names it.
    fn read_header(&self, token: &str) -> Result<(Algorithm, Option<String>), TokenError> {
        let malformed = || {
            TokenError::Invalid(
                "the token is not a JWT (expected three base64url parts separated by dots)".into(),
            )
        };
        let mut parts = token.split('.');
        let (Some(header), Some(_), Some(_), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed());
        };
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .ok_or_else(malformed)?;
        let written = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let accepted = || {
            let names: Vec<String> = (self.settings.algorithms.iter())
                .map(|a| format!("{a:?}"))
                .collect();
            names.join(", ")
        };
        let alg = Algorithm::from_str(written)
            .ok()
            .filter(|a| self.settings.algorithms.contains(a))
            .ok_or_else(|| {
                TokenError::Invalid(format!(
                    "the token's algorithm `{written}` is not accepted (accepted: {})",
                    accepted()
                ))
            })?;
        check_typ(header.get("typ"), self.settings.require_typ)?;
        let kid = header.get("kid").and_then(Value::as_str).map(str::to_owned);
        Ok((alg, kid))
    }

    /// The keys that may have signed a token with `alg` and `kid`: the one with that id, or
    /// (no `kid`) every key of the algorithm's family. Fetches the keys when they were never
    /// fetched, are old, or do not have that id.
    async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Vec<Arc<Key>>, TokenError> {
        let (found, fresh) = self.lookup(kid, alg);
        if !found.is_empty() && fresh {
            return Ok(found);
        }
        self.refresh(kid, alg).await?;
        let (found, _) = self.lookup(kid, alg);
        if !found.is_empty() {
            return Ok(found);
        }
        Err(TokenError::Invalid(match kid {
            Some(kid) => format!(
                "the token is signed with a key (`kid` {kid:?}) that the issuer does not publish"
            ),
            None => format!("the issuer publishes no {alg:?} key to check this token with"),
        }))
    }

    /// The kept keys for `kid` and `alg`, and whether the kept keys are fresh.
    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> (Vec<Arc<Key>>, bool) {
        let keys = self.state.keys.read().unwrap_or_else(|e| e.into_inner());
        let fresh = keys
            .fetched_at
            .is_some_and(|at| at.elapsed() < self.settings.max_key_age);
        let fits = |k: &&Arc<Key>| k.family == alg.family() && k.alg.is_none_or(|a| a == alg);
        let found = match kid {
            Some(kid) => keys
                .by_kid
                .get(kid)
                .filter(fits)
                .cloned()
                .into_iter()
                .collect(),
            None => (keys.by_kid.values())
                .chain(&keys.unnamed)
                .filter(fits)
                .cloned()
                .collect(),
        };
        (found, fresh)
    }

    /// Fetches the keys again unless another request just did. Two things hold a fetch back for
    /// the cooldown: a fetch that failed (the issuer is not hammered while it is down), and a
    /// fetch already made for a key id the fresh keys did not have (a flood of made-up key ids
    /// costs one fetch). The first fetch and the refresh of old keys are never held back by an
    /// earlier unknown key id, so a rotation right after start is seen at once. Fails (HTTP 503)
    /// only when there are no keys to go on with, or the token's key could not be looked for.
    async fn refresh(&self, kid: Option<&str>, alg: Algorithm) -> Result<(), TokenError> {
        let mut refresh = self.state.refresh.lock().await;
        let (found, fresh) = self.lookup(kid, alg);
        if !found.is_empty() && fresh {
            // Another request fetched them while this one waited.
            return Ok(());
        }
        let have_keys = (self.state.keys.read())
            .map(|k| k.fetched_at.is_some())
            .unwrap_or(false);
        let cooling = |at: Option<Instant>| {
            at.is_some_and(|at| at.elapsed() < self.settings.refresh_cooldown)
        };
        let failed_lately = refresh.last_error.is_some() && cooling(refresh.last_attempt);
        let unknown_kid = have_keys && fresh;
        if failed_lately || (unknown_kid && cooling(refresh.last_unknown)) {
            return match (&refresh.last_error, have_keys && !unknown_kid) {
                (Some(why), false) if failed_lately => Err(TokenError::Unavailable(why.clone())),
                _ => Ok(()),
            };
        }
        refresh.last_attempt = Some(Instant::now());
        if unknown_kid {
            refresh.last_unknown = refresh.last_attempt;
        }
        match self.fetch_keys(&mut refresh).await {
            Ok(keys) => {
                refresh.last_error = None;
                let count = keys.by_kid.len() + keys.unnamed.len();
                tracing::debug!(issuer = %self.settings.issuer, keys = count, "fetched the issuer's keys");
                *self.state.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
                Ok(())
            }
            Err(why) => {
                tracing::warn!(issuer = %self.settings.issuer, error = %why, "could not fetch the issuer's keys");
                refresh.last_error = Some(why.clone());
                if have_keys && !found.is_empty() {
                    // Old keys that have this token's key: good to go on with until the issuer
                    // answers again.
                    Ok(())
                } else {
                    // No keys, or not the one this token names, and no way to look now.
                    Err(TokenError::Unavailable(why))
                }
            }
        }
    }

    async fn fetch_keys(&self, refresh: &mut Refresh) -> Result<Keys, String> {
        let max = self.settings.max_response;
        let uri = match (&self.settings.jwks_uri, &refresh.jwks_uri) {
            (Some(uri), _) | (None, Some(uri)) => uri.clone(),
            (None, None) => {
                let metadata =
                    fetch::issuer_metadata(self.client(), &self.settings.issuer, max).await?;
                let uri = metadata
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .ok_or("the authorization server's metadata has no `jwks_uri`")?
                    .to_owned();
                refresh.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set = fetch::json(self.client().get(&uri), max)
            .await
            .map_err(|e| match e {
                FetchError::Status(status) => {
                    format!("the issuer's keys ({uri}) answered HTTP {status}")
                }
                FetchError::Failed(why) => format!("the issuer's keys ({uri}): {why}"),
            })?;
        let listed = set
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("the issuer's keys ({uri}) are not a JWK set"))?;
        let mut keys = Keys {
            fetched_at: Some(Instant::now()),
            ..Keys::default()
        };
        let mut kept = 0;
        for jwk in listed {
            if kept == self.settings.max_keys {
                tracing::warn!(
                    uri,
                    max = self.settings.max_keys,
                    "the issuer publishes more keys than kept; the rest are ignored"
                );
                break;
            }
            let Some(key) = read_key(jwk) else { continue };
            kept += 1;
            match jwk.get("kid").and_then(Value::as_str) {
                Some(kid) => {
                    keys.by_kid.insert(kid.to_owned(), Arc::new(key));
                }
                None => keys.unnamed.push(Arc::new(key)),
            }
        }
        Ok(keys)
    }
}

/// The header's `typ` (RFC 9068 section 4). A media type, compared without case and with the
/// `application/` prefix RFC 7515 section 4.1.9 lets a writer leave out. `at+jwt`: an access
/// token. Missing, or the generic `JWT` (RFC 7519 section 5.1), as Keycloak, Auth0 and Entra ID
/// write their access tokens: taken unless `require` (RFC 9068 wants `at+jwt`). Anything else
/// names another kind of JWT (a logout token, a DPoP proof, a security event, ...), which RFC
/// 9068 section 4 has resource servers refuse, and which explicit typing exists to tell apart
/// (RFC 8725 section 3.11): always refused.
fn check_typ(typ: Option<&Value>, require: bool) -> Result<(), TokenError> {
    let written = match typ {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            return Err(TokenError::Invalid(
                "the token's header `typ` is not a string".into(),
            ));
        }
    };
    let lower = written.map(str::to_ascii_lowercase);
    let normal = (lower.as_deref()).map(|t| t.strip_prefix("application/").unwrap_or(t));
    match (normal, require) {
        (Some("at+jwt"), _) | (None | Some("jwt"), false) => Ok(()),
        (None, true) => Err(TokenError::Invalid(
            "the token has no `typ`; this server takes only access tokens typed `at+jwt` (RFC 9068)"
                .into(),
        )),
        (Some("jwt"), true) => Err(TokenError::Invalid(format!(
            "the token's `typ` is `{}`, not `at+jwt`; this server takes only access tokens typed \
             as RFC 9068 has them",
            written.unwrap_or_default()
        ))),
        (Some(_), _) => Err(TokenError::Invalid(format!(
            "the token's `typ` `{}` says it is not an access token (RFC 9068 section 4: `at+jwt`)",
            written.unwrap_or_default()
        ))),
    }
}

/// A signing key of a JWK set: an asymmetric public key meant for signatures. Symmetric keys
/// (`kty: oct`), encryption keys and keys this library cannot read are skipped.
fn read_key(jwk: &Value) -> Option<Key> {
    if jwk
        .get("use")
        .and_then(Value::as_str)
        .is_some_and(|u| u != "sig")
    {
        return None;
    }
    let parsed: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk.clone()).ok()?;
    let decoding = DecodingKey::from_jwk(&parsed).ok()?;
    let family = decoding.family();
    if family == AlgorithmFamily::Hmac {
        return None;
    }
    let alg = match jwk.get("alg").and_then(Value::as_str) {
        Some(alg) => Some(
            Algorithm::from_str(alg)
                .ok()
                .filter(|a| a.family() == family)?,
        ),
        None => None,
    };
    Some(Key {
        decoding,
        family,
        alg,
    })
}

/// The claims a resource server uses: `sub`, `iss`, the scopes (`scope`, space-separated, as RFC
/// 9068 has it; or `scp`, a list or a string, as some issuers write it), `exp`.
fn claims(claims: &Value) -> Result<TokenClaims, TokenError> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| TokenError::Invalid("the token has no subject (`sub`)".into()))?;
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(TokenClaims {
        issuer: claims.get("iss").and_then(Value::as_str).map(str::to_owned),
        subject: subject.to_owned(),
        scopes: Some(scopes),
        expires_at: (claims.get("exp").and_then(Value::as_u64))
            .map(|s| UNIX_EPOCH + Duration::from_secs(s)),
    })
}

/// A validation failure, for people.
fn explain(e: &jsonwebtoken::errors::Error, settings: &Settings) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match e.kind() {
        K::ExpiredSignature => "the token has expired (`exp` is past)".into(),
        K::ImmatureSignature => format!("the token is not valid yet (`nbf` is after now, {now})"),
        K::InvalidAudience => format!(
            "the token is not for this resource (its `aud` does not include {})",
            settings.audiences.join(" or ")
        ),
        K::InvalidIssuer => format!("the token was not issued by {} (`iss`)", settings.issuer),
        K::InvalidSignature => "the token's signature does not verify with the issuer's key".into(),
        K::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        K::InvalidClaimFormat(claim) => format!("the token's `{claim}` claim is malformed"),
        K::InvalidAlgorithm | K::MissingAlgorithm => {
            "the token's algorithm does not fit the issuer's key".into()
        }
        K::Base64(_) | K::Json(_) | K::Utf8(_) | K::InvalidToken => {
            "the token is not a well-formed JWT".into()
        }
        _ => format!("the token could not be verified ({e})"),
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(async move {
            let key = Answers::key(token);
            if let Some(passed) = self.passed().get(&key) {
                return passed;
            }
            let answer = self.check(token).await;
            if answer.is_ok() {
                self.passed().keep(key, &answer);
            }
            answer
        })
    }
}
