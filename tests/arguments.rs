//! Arguments that do not fit a tool's input are tool execution errors (MCP tools, "Error
//! Handling", 2025-11-25 and 2026-07-28: "Input validation errors"): a `CallToolResult` with
//! `isError: true` whose text names the argument, so the model can read it and correct its call.
//! Over real stdio and Streamable HTTP, in both eras, on every route a call can take: inline
//! (legacy, and MRTR), a call that asked for a task (modern: the result at once; legacy: a task
//! that fails at once, whose `tasks/result` is that result), the fallback for clients without
//! tasks (the result at once, no task started) and promotion. JSON-RPC `-32602` stays for what
//! the spec calls protocol errors: an unknown tool and a malformed `tools/call`.

use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{StdioClient, WAIT, example_bin, modern_meta};
use serde_json::{Value, json};
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// How the client reaches the server.
enum Wire {
    Stdio(StdioClient),
    Http {
        http: reqwest::Client,
        url: String,
        /// The legacy session, once `initialize` opened it.
        session: Option<String>,
        _server: HttpServer,
    },
}

/// One client of one example server, over one transport, in one era.
struct Client {
    wire: Wire,
    /// The modern era's per-request capabilities; `None`: a legacy (2025-11-25) session.
    caps: Option<Value>,
}

impl Client {
    /// `bin` with `args` over stdio; a legacy session is initialized.
    async fn stdio(bin: &str, args: &[&str], caps: Option<Value>) -> Client {
        let mut c = StdioClient::spawn_with(&example_bin(bin), args);
        if caps.is_none() {
            c.initialize(json!({})).await;
        }
        Client {
            wire: Wire::Stdio(c),
            caps,
        }
    }

    /// `bin` with `args` over Streamable HTTP; a legacy session is initialized.
    async fn http(bin: &str, args: &[&str], caps: Option<Value>) -> Client {
        let server = HttpServer::start_bin(bin, args);
        let mut c = Client {
            wire: Wire::Http {
                http: reqwest::Client::builder()
                    .timeout(Duration::from_secs(20))
                    .build()
                    .expect("client"),
                url: server.url.clone(),
                session: None,
                _server: server,
            },
            caps,
        };
        if c.caps.is_none() {
            let init = c
                .request(
                    "initialize",
                    json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": { "name": "mcp-tasks-tests", "version": "0" } }),
                )
                .await;
            assert!(init.get("result").is_some(), "{init}");
            c.notify("notifications/initialized").await;
        }
        c
    }

    /// Sends a request (with this era's `_meta`) and returns the whole response message.
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        if let Some(caps) = &self.caps {
            params["_meta"] = modern_meta(caps.clone());
        }
        match &mut self.wire {
            Wire::Stdio(c) => c.request(method, params).await,
            Wire::Http {
                http, url, session, ..
            } => {
                let msg = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
                let mut b = http
                    .post(url.as_str())
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream");
                if self.caps.is_some() {
                    let name = params["name"].as_str().or(params["taskId"].as_str());
                    b = b
                        .header("mcp-protocol-version", "2026-07-28")
                        .header("mcp-method", method);
                    if let Some(name) = name {
                        b = b.header("mcp-name", name);
                    }
                } else if let Some(session) = session {
                    b = b
                        .header("mcp-session-id", session.as_str())
                        .header("mcp-protocol-version", "2025-11-25");
                }
                let r = b.body(msg.to_string()).send().await.expect("an answer");
                if let Some(id) = r.headers().get("mcp-session-id") {
                    *session = Some(id.to_str().expect("text").to_owned());
                }
                let text = r.text().await.expect("a body");
                serde_json::from_str::<Value>(&text)
                    .ok()
                    .or_else(|| {
                        text.lines()
                            .filter_map(|l| l.strip_prefix("data:"))
                            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                            .find(|m| m.get("result").is_some() || m.get("error").is_some())
                    })
                    .unwrap_or_else(|| panic!("no response in {text}"))
            }
        }
    }

    async fn notify(&mut self, method: &str) {
        match &mut self.wire {
            Wire::Stdio(c) => c.notify(method, json!({})).await,
            Wire::Http {
                http, url, session, ..
            } => {
                let session = session.as_deref().expect("a legacy session");
                http.post(url.as_str())
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", "2025-11-25")
                    .body(json!({ "jsonrpc": "2.0", "method": method }).to_string())
                    .send()
                    .await
                    .expect("an answer");
            }
        }
    }

    /// `tools/call` with `extra` params merged in; the whole response message.
    async fn call_with(&mut self, name: &str, arguments: Value, extra: Value) -> Value {
        let mut params = json!({ "name": name, "arguments": arguments });
        if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
            params.extend(extra);
        }
        self.request("tools/call", params).await
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.call_with(name, arguments, json!({})).await
    }
}

/// A tool error that says `text` (the start of it): no JSON-RPC error, no task.
fn assert_tool_error(resp: &Value, text: &str, modern: bool) {
    let result = resp
        .get("result")
        .unwrap_or_else(|| panic!("expected a tool error, got {resp}"));
    assert_eq!(result["isError"], true, "{resp}");
    let said = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.starts_with(text), "expected `{text}...`, got {resp}");
    assert!(
        result.get("task").is_none() && result.get("taskId").is_none(),
        "{resp}"
    );
    assert!(
        result["_meta"]["io.modelcontextprotocol/related-task"].is_null(),
        "no task was started: {resp}"
    );
    if modern {
        assert_eq!(result["resultType"], "complete", "{resp}");
    }
}

fn assert_protocol_error(resp: &Value, text: &str) {
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    let said = resp["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains(text), "expected `{text}` in {resp}");
}

/// Inline calls of `example_server`: tool errors for arguments that do not fit; `-32602` for an
/// unknown tool and a malformed `tools/call`.
async fn inline_calls(c: &mut Client) {
    let modern = c.caps.is_some();
    let resp = c.call("add", json!({ "a": "two", "b": 1 })).await;
    assert_tool_error(
        &resp,
        "invalid argument `a`: invalid type: string \"two\", expected f64",
        modern,
    );
    let resp = c.call("greet", json!({})).await;
    assert_tool_error(&resp, "missing required argument `name`", modern);
    // The same call with good arguments still works.
    let resp = c.call("greet", json!({ "name": "Ada" })).await;
    assert_eq!(
        resp["result"]["content"][0]["text"], "Hello, Ada!",
        "{resp}"
    );

    let resp = c.call("no_such_tool", json!({})).await;
    assert_protocol_error(&resp, "Unknown tool: `no_such_tool`");
    let resp = c.call("greet", json!("Ada")).await;
    assert_protocol_error(&resp, "`arguments` must be an object, found a string");
    let resp = c.request("tools/call", json!({ "arguments": {} })).await;
    assert_protocol_error(&resp, "missing required parameter `name`");
    let resp = c.request("tools/call", json!({ "name": 7 })).await;
    assert_protocol_error(&resp, "`name` must be a string");
}

/// A call that asked for a task (legacy `task`, modern with the tasks extension): the modern
/// client gets the tool error at once (the server decides whether to make a task; the client
/// takes either); the legacy client, which waits for a `CreateTaskResult`, gets a task that is
/// `failed` at once, and its `tasks/result` is the tool error.
async fn task_calls(c: &mut Client, tool: &str, arguments: Value, text: &str) {
    if c.caps.is_some() {
        let resp = c.call(tool, arguments).await;
        assert_tool_error(&resp, text, true);
        return;
    }
    let created = match &mut c.wire {
        // Over stdio, the order shows: the task's status notification (it is `failed` at once)
        // comes only after the `CreateTaskResult` that names the task.
        Wire::Stdio(stdio) => {
            let id = stdio.id();
            let params = json!({ "name": tool, "arguments": arguments, "task": { "ttl": 60000 } });
            stdio
                .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
                .await;
            let mut before = Vec::new();
            let created = loop {
                let msg = stdio.recv().await;
                if msg["id"] == id {
                    break msg;
                }
                before.push(msg);
            };
            let task = &created["result"]["task"]["taskId"];
            assert!(
                !before.iter().any(|m| &m["params"]["taskId"] == task),
                "a message about task {task} before the CreateTaskResult: {before:?}"
            );
            created
        }
        Wire::Http { .. } => {
            c.call_with(tool, arguments, json!({ "task": { "ttl": 60000 } }))
                .await
        }
    };
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a CreateTaskResult: {created}"))
        .to_owned();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let got = c.request("tasks/get", json!({ "taskId": id })).await;
        let status = got["result"]["status"].clone();
        if status == "failed" {
            break;
        }
        assert_eq!(status, "working", "{got}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "never failed: {got}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let result = c.request("tasks/result", json!({ "taskId": id })).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    let said = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.starts_with(text), "expected `{text}...`, got {result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str(),
        "{result}"
    );
}

fn tasks_caps() -> Value {
    json!({ "extensions": { TASKS: {} } })
}

const RESEARCH_TOPIC: &str =
    "invalid argument `topic`: invalid type: integer `5`, expected a string";

#[tokio::test]
async fn bad_arguments_are_tool_errors_over_stdio_in_both_eras() {
    for caps in [None, Some(json!({}))] {
        let mut c = Client::stdio("example_server", &[], caps).await;
        inline_calls(&mut c).await;
    }
    // A first MRTR round may volunteer answers; bad arguments are still the tool error.
    let mut c = Client::stdio("example_server", &[], Some(json!({}))).await;
    let resp = c
        .call_with("greet", json!({}), json!({ "inputResponses": {} }))
        .await;
    assert_tool_error(&resp, "missing required argument `name`", true);
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_over_http_in_both_eras() {
    for caps in [None, Some(json!({}))] {
        let mut c = Client::http("example_server", &[], caps).await;
        inline_calls(&mut c).await;
    }
}

#[tokio::test]
async fn a_task_call_with_bad_arguments_is_the_tool_error_or_a_task_failed_with_it() {
    for caps in [None, Some(tasks_caps())] {
        let mut c = Client::stdio("example_server", &[], caps.clone()).await;
        task_calls(&mut c, "research", json!({ "topic": 5 }), RESEARCH_TOPIC).await;
        // `optional`, with the client's tasks: the same.
        task_calls(
            &mut c,
            "countdown",
            json!({ "seconds": -1 }),
            "invalid argument `seconds`: invalid value: integer `-1`, expected u32",
        )
        .await;
        let mut c = Client::http("example_server", &[], caps).await;
        task_calls(&mut c, "research", json!({ "topic": 5 }), RESEARCH_TOPIC).await;
    }
}

/// The fallback: a client without tasks calling a task-required tool with bad arguments gets the
/// tool error at once, not a started task; so does a promotable call (`tally`, promoted after
/// 300 ms), and a client with tasks on the same server.
#[tokio::test]
async fn the_fallback_and_promotion_answer_bad_arguments_with_the_tool_error() {
    let report = json!({ "steps": "many", "step_ms": 1 });
    let steps = "invalid argument `steps`: invalid type: string \"many\", expected u32";
    let tally = "invalid argument `to`: invalid type: string \"x\", expected u32";
    for http in [false, true] {
        for caps in [None, Some(json!({})), Some(tasks_caps())] {
            let modern = caps.is_some();
            let with_tasks = caps.as_ref().is_some_and(|c| c != &json!({}));
            let mut c = match http {
                false => Client::stdio("fallback_server", &["--task-fallback"], caps).await,
                true => Client::http("fallback_server", &["--task-fallback"], caps).await,
            };
            if with_tasks {
                task_calls(&mut c, "report", report.clone(), steps).await;
            } else {
                let resp = c.call("report", report.clone()).await;
                assert_tool_error(&resp, steps, modern);
            }
            let resp = c.call("tally", json!({ "to": "x" })).await;
            assert_tool_error(&resp, tally, modern);
            // Good arguments still start the fallback's task.
            let resp = c.call("report", json!({ "steps": 1, "step_ms": 1 })).await;
            assert!(resp.get("result").is_some(), "{resp}");
        }
    }
}
