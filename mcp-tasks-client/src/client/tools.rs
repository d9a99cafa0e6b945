//! `tools/list`: every page, each tool's task support, and the `x-mcp-header` annotations that
//! decide a call's HTTP headers.

use super::{Client, lock};
use crate::error::Error;
use crate::session::ToolCache;
use mcp_tasks_runtime::TaskSupport;
use mcp_tasks_runtime::protocol::ListedTool;
use serde_json::Value;
use std::collections::HashMap;

/// The characters of an HTTP token (RFC 9110 `tchar`).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The `x-mcp-header` annotations of a tool's input schema as `(argument, header name)` pairs,
/// or why they are invalid (then the tool must not be used): a name must be a non-empty HTTP
/// token, unique (ignoring case), on a `string`, `integer` or `boolean` property.
fn header_params(input_schema: &Value) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Some(props) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(out);
    };
    for (prop, schema) in props {
        let Some(header) = schema.get("x-mcp-header") else {
            continue;
        };
        let header = header
            .as_str()
            .ok_or_else(|| format!("`{prop}`: x-mcp-header is not a string"))?;
        if !is_token(header) {
            return Err(format!(
                "`{prop}`: x-mcp-header {header:?} is not a valid header name"
            ));
        }
        let kind = schema.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "`{prop}`: x-mcp-header is allowed on string, integer and boolean properties only"
            ));
        }
        if out.iter().any(|(_, h)| h.eq_ignore_ascii_case(header)) {
            return Err(format!("`{prop}`: x-mcp-header {header:?} is used twice"));
        }
        out.push((prop.clone(), header.to_owned()));
    }
    Ok(out)
}

impl Client {
    /// Every tool (all pages of `tools/list`). In 2025-11-25 a tool says whether it runs as a
    /// task ([`ListedTool::task_support`]); a 2026-07-28 server decides per call.
    pub async fn list_tools(&self) -> Result<Vec<ListedTool>, Error> {
        let modern = self.inner.era.is_modern();
        let mut tools = Vec::new();
        let mut headers = HashMap::new();
        let mut invalid = HashMap::new();
        for tool in self.list_all::<ListedTool>("tools/list", "tools").await? {
            match header_params(&tool.input_schema) {
                Ok(params) => {
                    headers.insert(tool.name.clone(), params);
                    tools.push(tool);
                }
                Err(why) => {
                    tracing::warn!(tool = %tool.name, %why, "left out a tool with an invalid x-mcp-header");
                    invalid.insert(tool.name, why);
                }
            }
        }
        if let Some(http) = self.inner.peer.http() {
            headers.retain(|_, params: &mut Vec<(String, String)>| !params.is_empty());
            http.set_param_headers(headers);
        }
        *lock(&self.inner.tools) = ToolCache {
            listed: true,
            tools: tools
                .iter()
                .map(|t| (t.name.clone(), (!modern).then(|| t.task_support())))
                .collect(),
            invalid,
        };
        Ok(tools)
    }

    /// Legacy: a tool's `taskSupport`, listing the tools first if it is not known yet.
    pub(super) async fn task_support(&self, name: &str) -> Option<TaskSupport> {
        {
            let cache = lock(&self.inner.tools);
            if let Some(known) = cache.tools.get(name) {
                return *known;
            }
            if cache.listed {
                return None;
            }
        }
        self.list_tools_for_call().await;
        lock(&self.inner.tools).tools.get(name).copied().flatten()
    }

    /// Lists the tools for what a call needs to know; a server that cannot list them is called
    /// without that knowledge (and not asked again).
    pub(super) async fn list_tools_for_call(&self) {
        if let Err(e) = self.list_tools().await {
            tracing::debug!(error = %e, "tools/list failed; calling without the tools' metadata");
            lock(&self.inner.tools).listed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn x_mcp_header_annotations_are_validated() {
        let schema = |props: Value| json!({ "type": "object", "properties": props });
        let ok = header_params(&schema(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "n": { "type": "integer", "x-mcp-header": "N" },
            "b": { "type": "boolean", "x-mcp-header": "Flag_1" },
            "plain": { "type": "number" },
        })))
        .unwrap();
        assert_eq!(ok.len(), 3);
        for (why, props) in [
            (
                "empty",
                json!({ "a": { "type": "string", "x-mcp-header": "" } }),
            ),
            (
                "space",
                json!({ "a": { "type": "string", "x-mcp-header": "A B" } }),
            ),
            (
                "colon",
                json!({ "a": { "type": "string", "x-mcp-header": "A:B" } }),
            ),
            (
                "non-ASCII",
                json!({ "a": { "type": "string", "x-mcp-header": "Ré" } }),
            ),
            (
                "control",
                json!({ "a": { "type": "string", "x-mcp-header": "A\u{1}" } }),
            ),
            (
                "number",
                json!({ "a": { "type": "number", "x-mcp-header": "A" } }),
            ),
            (
                "object",
                json!({ "a": { "type": "object", "x-mcp-header": "A" } }),
            ),
            (
                "array",
                json!({ "a": { "type": "array", "x-mcp-header": "A" } }),
            ),
            (
                "null",
                json!({ "a": { "type": "null", "x-mcp-header": "A" } }),
            ),
            (
                "not a string",
                json!({ "a": { "type": "string", "x-mcp-header": 1 } }),
            ),
            (
                "duplicate",
                json!({
                    "a": { "type": "string", "x-mcp-header": "Region" },
                    "b": { "type": "string", "x-mcp-header": "region" },
                }),
            ),
        ] {
            assert!(
                header_params(&schema(props)).is_err(),
                "{why} must be refused"
            );
        }
    }
}
