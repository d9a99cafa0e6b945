//! Fetches from the authorization server: its metadata, its keys, its introspection endpoint.
//! Every fetch has a deadline and a cap on the response's size, so that a slow or hostile issuer
//! can neither hold a request nor fill the server's memory.

use super::InvalidCertificate;
use crate::error_chain::with_causes;
use serde_json::Value;
use std::time::Duration;

/// How long a fetch may take in all (connecting included), by default.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest response read, by default: a JWKS of a few dozen keys or a metadata document is a
/// few KiB.
pub(super) const DEFAULT_MAX_RESPONSE: usize = 256 * 1024;

/// An HTTP client for the issuer's endpoints: `timeout` for a whole fetch, no redirects (a
/// metadata or key URL is used as published), rustls trusting the built-in roots and `roots`.
/// Fails only when a root cannot be one, which [`roots`] has already ruled out for those it read.
pub(super) fn client(
    timeout: Duration,
    roots: &[reqwest::Certificate],
) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-tasks/", env!("CARGO_PKG_VERSION")));
    for root in roots {
        builder = builder.add_root_certificate(root.clone());
    }
    builder.build().map_err(|e| with_causes(&e))
}

/// [`client`], or (should building it fail after all) one with the defaults, logged: a fetch then
/// fails saying what, rather than the server failing.
pub(super) fn client_or_default(
    timeout: Duration,
    roots: &[reqwest::Certificate],
) -> reqwest::Client {
    client(timeout, roots).unwrap_or_else(|why| {
        tracing::error!(error = %why, "could not build the HTTP client for the issuer; using the defaults");
        reqwest::Client::default()
    })
}

/// The certificates of `pem` (one or more `-----BEGIN CERTIFICATE-----` blocks), checked now as
/// roots so that a bad one is a configuration error rather than a failure at the first token.
pub(super) fn roots(pem: &[u8]) -> Result<Vec<reqwest::Certificate>, InvalidCertificate> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::{Error, PemObject};
    let mut certs = Vec::new();
    for der in CertificateDer::pem_slice_iter(pem) {
        let der = der.map_err(|e| {
            InvalidCertificate(match e {
                Error::MissingSectionEnd { end_marker } => format!(
                    "the PEM text is cut short: a block has no `-----END {}-----` line",
                    String::from_utf8_lossy(&end_marker)
                ),
                Error::IllegalSectionStart { line } => format!(
                    "the PEM text has a malformed `-----BEGIN` line: `{}`",
                    String::from_utf8_lossy(&line)
                ),
                Error::Base64Decode(why) => {
                    format!("a certificate block of the PEM text is not valid base64 ({why})")
                }
                other => format!("the PEM text cannot be read: {other}"),
            })
        })?;
        let cert = reqwest::Certificate::from_der(&der).map_err(|e| {
            InvalidCertificate(format!(
                "a certificate of the PEM text cannot be read: {}",
                with_causes(&e)
            ))
        })?;
        certs.push(cert);
    }
    if certs.is_empty() {
        return Err(InvalidCertificate(
            "the PEM text holds no certificate (expected one or more `-----BEGIN CERTIFICATE-----` blocks)"
                .into(),
        ));
    }
    client(DEFAULT_TIMEOUT, &certs).map_err(|why| {
        InvalidCertificate(format!(
            "a certificate of the PEM text cannot be a trusted root ({why})"
        ))
    })?;
    Ok(certs)
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
        // Why: refused, no such host, or (HTTPS) a certificate that does not verify, which
        // reqwest's own text ("error sending request") does not say.
        let mut why = "could not connect".to_owned();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            let text = c.to_string();
            if c.source().is_none() || !text.starts_with("client error") {
                why.push_str(": ");
                why.push_str(&text);
            }
            cause = c.source();
        }
        why
    } else {
        with_causes(e)
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
