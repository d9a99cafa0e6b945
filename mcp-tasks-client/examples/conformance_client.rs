//! The client under test for the official conformance suite's client scenarios
//! (`conformance client --command "conformance_client" --scenario NAME`).
//!
//! The suite starts `conformance_client <server URL>` with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`, the protocol version in `MCP_CONFORMANCE_PROTOCOL_VERSION` and,
//! for some scenarios, what to do in `MCP_CONFORMANCE_CONTEXT` (JSON). Each scenario is a few
//! calls on [`mcp_tasks_client::Client`]; what the suite checks (headers, `_meta`, SSE resumption,
//! MRTR retries, schemas kept verbatim, tools with bad `x-mcp-header`s left out) is the library's
//! own behaviour, not this file's.
//!
//! Exits 0 when the scenario's calls succeeded, 1 (with the reason on stderr) otherwise.

use mcp_tasks_client::{
    Client, ElicitRequest, ElicitResponse, EraChoice, Error, InputCapabilities, InputHandler,
    SkillFiles,
};
use serde_json::{Map, Value, json};

/// Accepts every form, with each field's default (SEP-1034) and `true` for booleans without one.
struct Defaults;

impl InputHandler for Defaults {
    fn capabilities(&self) -> InputCapabilities {
        InputCapabilities {
            elicitation: true,
            ..InputCapabilities::none()
        }
    }

    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let mut content = Map::new();
        let props = request
            .requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        for (name, prop) in props.into_iter().flatten() {
            match (
                prop.get("default"),
                prop.get("type").and_then(Value::as_str),
            ) {
                (Some(d), _) => {
                    content.insert(name.clone(), d.clone());
                }
                (None, Some("boolean")) => {
                    content.insert(name.clone(), Value::Bool(true));
                }
                _ => {}
            }
        }
        ElicitResponse::Accept(content)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let url = std::env::args().nth(1).unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&url, &scenario, &version, &context).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_client {scenario}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, version: &str, context: &Value) -> Result<(), String> {
    let era = if version.starts_with("2025-") {
        EraChoice::Legacy
    } else {
        EraChoice::Modern
    };
    let client = Client::builder()
        .client_info("mcp-tasks-conformance-client", env!("CARGO_PKG_VERSION"))
        .era(era)
        .handler(Defaults)
        .connect_http(url)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let call = |name: String, args: Value| {
        let client = client.clone();
        async move {
            let result = client
                .call_tool(&name, args)
                .await
                .map_err(|e| format!("tools/call {name}: {e}"))?
                .result()
                .await
                .map_err(|e| format!("tools/call {name}: {e}"))?;
            eprintln!("{name}: {}", mcp_tasks_client::text(&result));
            Ok::<_, String>(result)
        }
    };
    match scenario {
        "tools_call" => {
            call("add_numbers".into(), json!({ "a": 5, "b": 3 })).await?;
        }
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults".into(), json!({})).await?;
        }
        "sse-retry" => {
            call("test_reconnection".into(), json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call(name.into(), json!({})).await?;
            }
        }
        "http-custom-headers" => {
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
            for c in calls {
                let name = c["name"].as_str().ok_or("a tool call without a name")?;
                call(name.into(), c["arguments"].clone()).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("json_schema_2020_12_tool is not listed")?;
            call(
                "json_schema_echo".into(),
                json!({ "schema": focal.input_schema }),
            )
            .await?;
        }
        // Every tool the client kept: the ones with valid headers, called with a value for
        // each required string field.
        "http-standard-headers" | "http-invalid-tool-headers" => {
            for t in &tools {
                let mut args = Map::new();
                let required = t.input_schema["required"].as_array().cloned();
                for r in required.into_iter().flatten() {
                    if let Some(r) = r.as_str() {
                        args.insert(r.to_owned(), json!("us-west1"));
                    }
                }
                call(t.name.clone(), Value::Object(args)).await?;
            }
        }
        // Skills (SEP-2640): listing reads no skill file.
        "sep-2640-client-no-prefetch" => {
            let skills = client
                .list_skills()
                .await
                .map_err(|e| format!("skills/list: {e}"))?;
            for skill in skills {
                eprintln!("skill {}: {}", skill.uri, skill.description().unwrap_or(""));
            }
        }
        // Each listed skill loaded (its SKILL.md read and checked), then its other files read,
        // only when SKILL.md checked out. A skill that fails its checks is refused: that is the
        // behaviour under test, so the scenario still succeeds.
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => {
            let skills = client
                .list_skills()
                .await
                .map_err(|e| format!("skills/list: {e}"))?;
            for skill in skills {
                match client.load_skill(&skill).await {
                    Ok(_) => {
                        let SkillFiles::Listed(files) = &skill.resources else {
                            continue;
                        };
                        for file in files.iter().filter(|f| f.uri != skill.uri) {
                            client
                                .read_skill_file(&skill, &file.uri)
                                .await
                                .map_err(|e| format!("{}: {e}", file.uri))?;
                        }
                    }
                    Err(e @ Error::SkillVerification { .. }) => eprintln!("refused: {e}"),
                    Err(e) => return Err(format!("load {}: {e}", skill.uri)),
                }
            }
        }
        // initialize, request-metadata, json-schema-ref-no-deref: connecting and listing is the
        // scenario.
        _ => {}
    }
    client.close().await;
    Ok(())
}
