//! Access tokens for a server protected by OAuth 2.1 (MCP authorization, 2025-11-25 and
//! 2026-07-28): a token given as is, or one obtained with the client credentials grant.
//!
//! With client credentials, the first `401` (or a token about to expire) starts discovery: the
//! challenge's `resource_metadata` (RFC 9728; else the well-known paths of the server's origin)
//! names the authorization server, whose metadata (RFC 8414, else OpenID Connect Discovery) names
//! the token endpoint; the client asks it for a token for this server (`resource`, RFC 8707) and
//! the scopes the challenge or the metadata name, and retries the request once. A `403`
//! `insufficient_scope` asks again with the scopes the challenge adds (step-up), once.

use crate::error::Error;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The most read from a metadata document or a token endpoint.
const MAX_DOCUMENT: usize = 256 * 1024;

/// Refreshes a token this long before it expires (half its life, for a token that lives less
/// than twice as long: renewing before every request would cost a token each).
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// Where the client's tokens come from.
#[derive(Debug)]
pub(crate) enum Auth {
    /// A token given as is (`--token`): sent, never refreshed.
    Static(String),
    /// The client credentials grant.
    ClientCredentials(Box<ClientCredentials>),
}

/// The client credentials grant's settings and its current token.
#[derive(Debug)]
pub(crate) struct ClientCredentials {
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    /// Scopes always asked for (space-separated), besides what challenges name.
    pub(crate) scopes: Option<String>,
    current: Mutex<Current>,
}

#[derive(Debug, Default)]
struct Current {
    token: Option<String>,
    /// When to get a new token: [`EXPIRY_MARGIN`] (at most half its life) before it expires.
    renew_at: Option<Instant>,
    /// The token endpoint, once discovered.
    token_endpoint: Option<String>,
    /// The scopes the current token was asked with.
    scopes: Vec<String>,
}

/// A `WWW-Authenticate: Bearer` challenge's parameters.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// Reads `Bearer k="v", k2="v2"` (quoted or bare values).
    pub(crate) fn parse(header: &str) -> Option<Challenge> {
        let rest = header.trim();
        let (scheme, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let mut challenge = Challenge::default();
        loop {
            rest = rest.trim_start_matches([' ', ',']);
            let Some((key, after)) = rest.split_once('=') else {
                break;
            };
            let key = key.trim().to_ascii_lowercase();
            let (value, after) = match after.strip_prefix('"') {
                Some(quoted) => match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..]),
                    None => (quoted, ""),
                },
                None => match after.find(',') {
                    Some(end) => (after[..end].trim(), &after[end..]),
                    None => (after.trim(), ""),
                },
            };
            match key.as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value.to_owned()),
                "scope" => challenge.scope = Some(value.to_owned()),
                "error" => challenge.error = Some(value.to_owned()),
                _ => {}
            }
            rest = after;
        }
        Some(challenge)
    }
}

impl Auth {
    pub(crate) fn client_credentials(
        client_id: String,
        client_secret: String,
        scopes: Option<String>,
    ) -> Auth {
        Auth::ClientCredentials(Box::new(ClientCredentials {
            client_id,
            client_secret,
            scopes,
            current: Mutex::default(),
        }))
    }

    /// The token to send now: the static one, or the current client credentials token when it
    /// is not about to expire (`None`: get one first, on the server's challenge).
    pub(crate) async fn token(&self) -> Option<String> {
        match self {
            Auth::Static(token) => Some(token.clone()),
            Auth::ClientCredentials(cc) => {
                let current = cc.current.lock().await;
                let live = current.renew_at.is_none_or(|at| Instant::now() < at);
                current.token.clone().filter(|_| live)
            }
        }
    }

    /// Whether a new token may help after this answer (a static token cannot change).
    pub(crate) fn can_renew(&self) -> bool {
        matches!(self, Auth::ClientCredentials(_))
    }

    /// Gets a new token for the server at `url` after `challenge` (`None`: no challenge, the
    /// token expired): discovers the token endpoint on first use, and asks for the scopes
    /// configured, the challenge's and those of the last token.
    pub(crate) async fn renew(
        &self,
        http: &reqwest::Client,
        url: &str,
        challenge: Option<&Challenge>,
    ) -> Result<String, Error> {
        let Auth::ClientCredentials(cc) = self else {
            return Err(Error::transport("a static token cannot be renewed"));
        };
        let mut current = cc.current.lock().await;
        let endpoint = match &current.token_endpoint {
            Some(endpoint) => endpoint.clone(),
            None => {
                let (endpoint, supported) = discover(http, url, challenge).await?;
                if cc.scopes.is_none() && challenge.and_then(|c| c.scope.as_ref()).is_none() {
                    // Nothing says which scopes: ask for what the server supports.
                    current.scopes = supported;
                }
                current.token_endpoint = Some(endpoint.clone());
                endpoint
            }
        };
        let mut scopes = current.scopes.clone();
        let asked = (cc.scopes.iter())
            .chain(challenge.and_then(|c| c.scope.as_ref()))
            .flat_map(|s| s.split(' '))
            .filter(|s| !s.is_empty());
        for scope in asked {
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        }
        let resource = canonical(url);
        let mut form = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("resource", resource),
        ];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let response = http
            .post(&endpoint)
            .basic_auth(&cc.client_id, Some(&cc.client_secret))
            .form(&form)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| Error::transport(format!("the token endpoint {endpoint}: {e}")))?;
        let status = response.status();
        let body = read_json(response, &endpoint).await?;
        if !status.is_success() {
            let error = body.get("error").and_then(Value::as_str).unwrap_or("?");
            let description = (body.get("error_description").and_then(Value::as_str)).unwrap_or("");
            return Err(Error::Http {
                status: status.as_u16(),
                body: format!(
                    "the token endpoint {endpoint} refused the client credentials: {error} {description}"
                ),
            });
        }
        let token = body
            .get("access_token")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::transport(format!("{endpoint} answered no access_token")))?
            .to_owned();
        current.renew_at = (body.get("expires_in").and_then(Value::as_u64)).map(|s| {
            let life = Duration::from_secs(s);
            Instant::now() + life - EXPIRY_MARGIN.min(life / 2)
        });
        current.token = Some(token.clone());
        current.scopes = scopes;
        Ok(token)
    }
}

/// The resource URI of the endpoint at `url` (RFC 8707): the URL without fragment.
fn canonical(url: &str) -> String {
    url.split('#').next().unwrap_or(url).to_owned()
}

/// The token endpoint of the server at `url`'s authorization server, and the scopes the server
/// supports.
async fn discover(
    http: &reqwest::Client,
    url: &str,
    challenge: Option<&Challenge>,
) -> Result<(String, Vec<String>), Error> {
    let parsed = reqwest::Url::parse(url).map_err(Error::transport)?;
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    if let Some(given) = challenge.and_then(|c| c.resource_metadata.clone()) {
        candidates.push(given);
    }
    candidates.push(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ));
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    let mut metadata = None;
    for candidate in &candidates {
        if let Ok(found) = get_json(http, candidate).await {
            metadata = Some(found);
            break;
        }
    }
    let metadata = metadata.ok_or_else(|| {
        Error::transport(format!(
            "the server's OAuth protected resource metadata was not found (tried {})",
            candidates.join(", ")
        ))
    })?;
    let supported = (metadata.get("scopes_supported").and_then(Value::as_array))
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let issuer = (metadata
        .get("authorization_servers")
        .and_then(Value::as_array))
    .and_then(|list| list.first())
    .and_then(Value::as_str)
    .ok_or_else(|| Error::transport("the server's metadata names no authorization server"))?;
    let issuer_url = reqwest::Url::parse(issuer).map_err(Error::transport)?;
    let origin = issuer_url.origin().ascii_serialization();
    let path = issuer_url.path().trim_end_matches('/');
    let tried = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    for candidate in &tried {
        if let Ok(found) = get_json(http, candidate).await
            && let Some(endpoint) = found.get("token_endpoint").and_then(Value::as_str)
        {
            return Ok((endpoint.to_owned(), supported));
        }
    }
    Err(Error::transport(format!(
        "the authorization server {issuer} publishes no token endpoint (tried {})",
        tried.join(", ")
    )))
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, Error> {
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| Error::transport(format!("GET {url}: {e}")))?;
    if !response.status().is_success() {
        return Err(Error::Http {
            status: response.status().as_u16(),
            body: format!("GET {url}"),
        });
    }
    read_json(response, url).await
}

async fn read_json(response: reqwest::Response, url: &str) -> Result<Value, Error> {
    let bytes = super::read_body(response, MAX_DOCUMENT)
        .await
        .map_err(|e| Error::transport(format!("reading {url}: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::transport(format!("{url}: not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read() {
        let c = Challenge::parse(
            r#"Bearer resource_metadata="https://a/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="research files:read", error_description="needs, this""#,
        )
        .unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("research files:read"));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(Challenge::parse("Bearer"), Some(Challenge::default()));
        assert_eq!(
            Challenge::parse("Bearer error=invalid_token, scope=a")
                .unwrap()
                .scope
                .as_deref(),
            Some("a")
        );
        assert_eq!(Challenge::parse("Basic realm=\"x\""), None);
    }
}
