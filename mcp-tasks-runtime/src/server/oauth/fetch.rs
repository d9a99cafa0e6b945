//! Fetches from the authorization server: its metadata, its keys, its introspection endpoint.
//! Every fetch has a deadline and a cap on the response's size, so that a slow or hostile issuer
//! can neither hold a request nor fill the server's memory.

use serde_json::Value;
use std::time::Duration;

/// How long a fetch may take in all (connecting included), by default.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest response read, by default: a JWKS of a few dozen keys or a metadata document is a
/// few KiB.
pub(super) const DEFAULT_MAX_RESPONSE: usize = 256 * 1024;

/// An HTTP client for the issuer's endpoints: `timeout` for a whole fetch, no redirects (a
/// metadata or key URL is used as published), rustls.
pub(super) fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-tasks/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

/// What went wrong with a fetch, for people.
#[derive(Debug)]
pub(super) enum FetchError {
    /// The endpoint answered with this status (404: it has no such document).
    Status(u16),
    /// It did not answer (refused, timed out), or answered something unreadable.
    Failed(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status(status) => write!(f, "HTTP {status}"),
            FetchError::Failed(why) => f.write_str(why),
        }
    }
}

/// Sends `request` and reads a JSON object of at most `max` bytes.
pub(super) async fn json(
    request: reqwest::RequestBuilder,
    max: usize,
) -> Result<Value, FetchError> {
    let mut response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| FetchError::Failed(describe(&e)))?;
    if !response.status().is_success() {
        return Err(FetchError::Status(response.status().as_u16()));
    }
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(FetchError::Failed(format!(
            "the response is larger than {max} bytes"
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| FetchError::Failed(describe(&e)))?
    {
        if body.len() + chunk.len() > max {
            return Err(FetchError::Failed(format!(
                "the response is larger than {max} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(FetchError::Failed(
            "the response is not a JSON object".into(),
        )),
        Err(e) => Err(FetchError::Failed(format!("the response is not JSON: {e}"))),
    }
}

fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "no answer within the timeout".into()
    } else if e.is_connect() {
        "could not connect".into()
    } else {
        e.to_string()
    }
}

/// The authorization server's metadata: RFC 8414 (`/.well-known/oauth-authorization-server`,
/// inserted before the issuer's path), falling back to OpenID Connect Discovery
/// (`/.well-known/openid-configuration`, appended to it, and inserted, as the MCP authorization
/// spec has clients try). The document must name the same `issuer` (RFC 8414 section 3.3).
pub(super) async fn issuer_metadata(
    client: &reqwest::Client,
    issuer: &str,
    max: usize,
) -> Result<Value, String> {
    let url = reqwest::Url::parse(issuer).map_err(|e| format!("issuer `{issuer}`: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    let mut tried = Vec::new();
    for candidate in candidates {
        match json(client.get(&candidate), max).await {
            Ok(metadata) => {
                let named = metadata.get("issuer").and_then(Value::as_str);
                if named.map(|n| n.trim_end_matches('/')) != Some(issuer.trim_end_matches('/')) {
                    return Err(format!(
                        "the metadata at {candidate} names the issuer {named:?}, not `{issuer}`"
                    ));
                }
                return Ok(metadata);
            }
            // No document here: try the next form.
            Err(FetchError::Status(404)) => tried.push(format!("{candidate}: HTTP 404")),
            Err(e) => {
                tried.push(format!("{candidate}: {e}"));
                // The issuer is down or broken, not merely without this document: trying the
                // other forms would only triple the wait.
                if matches!(e, FetchError::Failed(_)) {
                    break;
                }
            }
        }
    }
    Err(format!(
        "the authorization server's metadata could not be read ({})",
        tried.join("; ")
    ))
}
