//! What a request must pass before it is dispatched: the `Host`/`Origin` check (DNS-rebinding
//! protection), the routing headers that must agree with the body (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `-32020`), and what the client accepts.

use super::*;
use crate::protocol::Params;

pub(super) const SESSION_HEADER: &str = "mcp-session-id";
pub(super) const PROTOCOL_HEADER: &str = "mcp-protocol-version";
pub(super) const METHOD_HEADER: &str = "mcp-method";
pub(super) const NAME_HEADER: &str = "mcp-name";

/// DNS-rebinding protection: `Host` and `Origin` must name an allowed host.
// The error is the finished rejection, built once per rejected request; boxing buys nothing.
#[allow(clippy::result_large_err)]
pub(super) fn check_host(policy: &HostPolicy, headers: &HeaderMap) -> Result<(), Response> {
    let HostPolicy::Only(allowed) = policy else {
        return Ok(());
    };
    let forbidden = |what: &str, value: &str| {
        rpc_error_response(
            StatusCode::FORBIDDEN,
            None,
            &RpcError::invalid_request(format!("Forbidden: {what} `{value}` is not allowed")),
        )
    };
    let allowed_host = |host: &str| allowed.iter().any(|a| a == &host.to_ascii_lowercase());
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        if !allowed_host(strip_port(host)) {
            return Err(forbidden("Host", host));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
            .map(strip_port);
        if !host.is_some_and(allowed_host) {
            return Err(forbidden("Origin", origin));
        }
    }
    Ok(())
}

/// `localhost:3000` -> `localhost`, `[::1]:3000` -> `[::1]`.
pub(super) fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    host.split(':').next().unwrap_or(host)
}

/// A header's value with surrounding whitespace removed and a `=?base64?…?=` sentinel decoded.
/// `Err` when it is not text or its base64 is broken.
pub(super) fn header_value(headers: &HeaderMap, name: &str) -> Option<Result<String, String>> {
    let mut values = headers.get_all(name).iter();
    let raw = values.next()?;
    if values.next().is_some() {
        return Some(Err(format!("the `{name}` header is sent more than once")));
    }
    Some(decode_header(raw).map_err(|why| format!("the `{name}` header {why}")))
}

pub(super) fn decode_header(raw: &HeaderValue) -> Result<String, String> {
    let text = std::str::from_utf8(raw.as_bytes()).map_err(|_| "is not UTF-8".to_owned())?;
    let text = text.trim_matches([' ', '\t']);
    match text
        .strip_prefix("=?base64?")
        .and_then(|t| t.strip_suffix("?="))
    {
        None => Ok(text.to_owned()),
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("has invalid base64 ({e})"))?;
            String::from_utf8(bytes).map_err(|_| "decodes to bytes that are not UTF-8".to_owned())
        }
    }
}

pub(super) fn header_mismatch(message: String) -> RpcError {
    RpcError::new(
        RpcError::HEADER_MISMATCH,
        format!("Header mismatch: {message}"),
    )
}

/// What `Mcp-Name` must equal for this request, and whether the header is required.
pub(super) fn expected_name(method: &str, params: &Params) -> Option<(String, bool)> {
    let (key, required) = match method {
        "tools/call" | "prompts/get" => ("name", true),
        "resources/read" => ("uri", true),
        // The tasks extension makes it a client MUST, but the core marks it required only for
        // the three above: checked when sent.
        "tasks/get" | "tasks/update" | "tasks/cancel" => ("taskId", false),
        _ => return None,
    };
    let value = params.str(key)??;
    Some((value.into_owned(), required))
}

/// The routing headers must agree with the body (SEP-2243). `modern_version`: the body's
/// `_meta` protocol version, when it has one; then the headers are required too.
pub(super) fn check_routing_headers(
    headers: &HeaderMap,
    method: &str,
    params: &Params,
    modern_version: Option<&str>,
) -> Result<(), RpcError> {
    let get = |name: &str| {
        header_value(headers, name)
            .transpose()
            .map_err(header_mismatch)
    };
    let protocol = get(PROTOCOL_HEADER)?;
    match (modern_version, protocol.as_deref()) {
        (Some(body), Some(header)) if header != body => {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version is `{header}` but the body's `_meta[\"{}\"]` is `{body}`",
                meta::PROTOCOL_VERSION
            )));
        }
        (Some(_), None) => {
            return Err(header_mismatch(
                "the MCP-Protocol-Version header is required".into(),
            ));
        }
        (None, Some(header))
            if !LEGACY_VERSIONS.contains(&header) && !MODERN_VERSIONS.contains(&header) =>
        {
            return Err(RpcError::invalid_request(format!(
                "Bad Request: unsupported MCP-Protocol-Version `{header}`"
            )));
        }
        _ => {}
    }
    match get(METHOD_HEADER)? {
        Some(h) if h != method => {
            return Err(header_mismatch(format!(
                "Mcp-Method is `{h}` but the body's method is `{method}`"
            )));
        }
        None if modern_version.is_some() => {
            return Err(header_mismatch("the Mcp-Method header is required".into()));
        }
        _ => {}
    }
    if let Some((want, required)) = expected_name(method, params) {
        match get(NAME_HEADER)? {
            Some(h) if h != want => {
                return Err(header_mismatch(format!(
                    "Mcp-Name is `{h}` but the body names `{want}`"
                )));
            }
            None if required && modern_version.is_some() => {
                return Err(header_mismatch(format!(
                    "the Mcp-Name header is required for `{method}`"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` must agree with the arguments the
/// tool's schema marks `x-mcp-header` (SEP-2243): present exactly when the argument is, with the
/// same value (after `=?base64?…?=` decoding). An unknown tool is left to dispatch.
pub(super) fn check_param_headers(
    server: &ServerInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<(), RpcError> {
    let Some(tool) = params
        .str("name")
        .flatten()
        .and_then(|name| server.tools.get(&name))
    else {
        return Ok(());
    };
    if tool.header_params().is_empty() {
        return Ok(());
    }
    let arguments = params.value("arguments");
    let arguments = arguments.as_ref();
    for param in tool.header_params() {
        let header = param.header();
        let argument = param.path.join(".");
        let sent = header_value(headers, &header.to_ascii_lowercase())
            .transpose()
            .map_err(header_mismatch)?;
        match (param.value_in(arguments), sent) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(header_mismatch(format!(
                    "the {header} header is required: the arguments set `{argument}`"
                )));
            }
            (None, Some(_)) => {
                return Err(header_mismatch(format!(
                    "{header} is sent but the arguments do not set `{argument}`"
                )));
            }
            (Some(value), Some(sent)) if !crate::tool::header_matches(&sent, value) => {
                return Err(header_mismatch(format!(
                    "{header} is `{sent}` but the arguments' `{argument}` is {value}"
                )));
            }
            (Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

pub(super) struct Accepts {
    pub(super) json: bool,
    pub(super) sse: bool,
}

pub(super) fn accepts(headers: &HeaderMap) -> Accepts {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Accepts {
            json: true,
            sse: false,
        };
    };
    let types: Vec<String> = accept
        .split(',')
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    let any = types.iter().any(|t| t == "*/*");
    Accepts {
        json: any
            || types
                .iter()
                .any(|t| t == "application/json" || t == "application/*"),
        sse: types
            .iter()
            .any(|t| t == "text/event-stream" || t == "text/*"),
    }
}

pub(super) fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_trimmed_and_base64_decoded() {
        let v = |s: &'static str| decode_header(&HeaderValue::from_static(s));
        assert_eq!(v("  greet \t").unwrap(), "greet");
        assert_eq!(v("=?base64?Z3JlZXQ=?=").unwrap(), "greet");
        assert!(v("=?base64?Z3J!ZXQ=?=").is_err());
        assert_eq!(v("=?base64?").unwrap(), "=?base64?");
    }

    #[test]
    fn ports_are_stripped_from_hosts() {
        assert_eq!(strip_port("localhost:3000"), "localhost");
        assert_eq!(strip_port("[::1]:3000"), "[::1]");
        assert_eq!(strip_port("127.0.0.1"), "127.0.0.1");
    }
}
