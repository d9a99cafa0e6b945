//! The fallback for clients without tasks (`Server::task_fallback`), over real stdio and HTTP
//! against `fallback_server` (`report`: required, progress, structured output; `interview`:
//! required, elicits): a taskless call of a required tool answers a task id at once; the companion
//! tools `tasks_status`, `tasks_result` and `tasks_cancel` follow it, for its owner only; with the
//! fallback off nothing changes.

use mcp_tasks_runtime::{Server, tool};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{StdioClient, WAIT, example_bin, modern, modern_meta};
use serde_json::{Value, json};
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn fallback_server() -> StdioClient {
    StdioClient::spawn_with(&example_bin("fallback_server"), &["--task-fallback"])
}

/// The task id a fallback answer names: in the text, and in `_meta`.
fn started_id(result: &Value) -> String {
    assert_ne!(result["isError"], json!(true), "{result}");
    let id = result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no related-task in {result}"))
        .to_owned();
    let text = result["content"][0]["text"].as_str().expect("a text");
    assert!(text.contains(&id), "{text}");
    for tool in ["tasks_status", "tasks_result", "tasks_cancel"] {
        assert!(text.contains(tool), "{text}");
    }
    id
}

/// A `tools/call` in the era `caps` says: `None` for a legacy session, `Some(caps)` for modern.
fn call_params(name: &str, args: Value, caps: &Option<Value>) -> Value {
    let params = json!({ "name": name, "arguments": args });
    match caps {
        Some(caps) => modern(params, caps.clone()),
        None => params,
    }
}

async fn call(c: &mut StdioClient, name: &str, args: Value, caps: &Option<Value>) -> Value {
    c.result("tools/call", call_params(name, args, caps)).await
}

async fn call_err(c: &mut StdioClient, name: &str, args: Value, caps: &Option<Value>) -> Value {
    c.error("tools/call", call_params(name, args, caps)).await
}

/// Calls `tasks_result` until the task has a result (the note while it runs is not one).
async fn wait_result(c: &mut StdioClient, id: &str, caps: &Option<Value>) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let resp = c
            .request(
                "tools/call",
                call_params("tasks_result", json!({ "taskId": id }), caps),
            )
            .await;
        if let Some(result) = resp.get("result") {
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            if !text.contains("has no result yet") {
                return resp;
            }
        } else {
            return resp;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The required tool -> a task id at once; status while it runs (with progress); the result is the
/// tool's real result; no task notification reaches a client that knows nothing of tasks.
async fn report_runs_to_its_result(c: &mut StdioClient, caps: Option<Value>) {
    let list = c
        .result(
            "tools/list",
            match &caps {
                Some(caps) => json!({ "_meta": modern_meta(caps.clone()) }),
                None => json!({}),
            },
        )
        .await;
    let tools = list["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for companion in ["tasks_status", "tasks_result", "tasks_cancel"] {
        assert!(names.contains(&companion), "{names:?}");
        let tool = tools
            .iter()
            .find(|t| t["name"] == companion)
            .expect("listed");
        assert_eq!(tool["inputSchema"]["required"], json!(["taskId"]));
    }
    // The client only ever gets the fallback's answer from `report`, so no `outputSchema` it
    // would reject that answer against.
    let report = tools
        .iter()
        .find(|t| t["name"] == "report")
        .expect("report");
    assert!(report.get("outputSchema").is_none(), "{report}");
    // A client library refuses to call a `required` tool without a task (the TypeScript SDK 1.x
    // throws before sending), so the fallback lists it as what it is for this client: callable
    // without one. The modern era lists no `execution` at all.
    match &caps {
        None => assert_eq!(report["execution"]["taskSupport"], "optional", "{report}"),
        Some(_) => assert!(report.get("execution").is_none(), "{report}"),
    }

    let started = tokio::time::Instant::now();
    let result = call(c, "report", json!({ "steps": 40, "step_ms": 50 }), &caps).await;
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered at once"
    );
    let id = started_id(&result);
    assert!(
        result.get("structuredContent").is_none(),
        "report declares an outputSchema: {result}"
    );

    let status = call(c, "tasks_status", json!({ "taskId": id }), &caps).await;
    assert_eq!(status["structuredContent"]["taskId"], json!(id), "{status}");
    assert_eq!(status["structuredContent"]["status"], "working", "{status}");
    // Progress shows in the status message.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = call(c, "tasks_status", json!({ "taskId": id }), &caps).await;
        let message = status["structuredContent"]["statusMessage"]
            .as_str()
            .unwrap_or_default();
        if message.contains("/40: step") {
            assert!(
                status["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .contains(message)
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no progress in {status}"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let early = call(c, "tasks_result", json!({ "taskId": id }), &caps).await;
    assert!(
        early["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("has no result yet"),
        "{early}"
    );
    assert_ne!(early["isError"], json!(true));

    let done = wait_result(c, &id, &caps).await;
    let result = &done["result"];
    assert_eq!(
        result["structuredContent"],
        json!({ "steps": 40, "note": "report of 40 steps" }),
        "{done}"
    );
    assert_ne!(result["isError"], json!(true));
    let status = call(c, "tasks_status", json!({ "taskId": id }), &caps).await;
    assert_eq!(
        status["structuredContent"]["status"], "completed",
        "{status}"
    );
    // The last progress line is stale once the task is done: neither the text nor the task
    // repeats it.
    let text = status["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("Task {id} has completed. Call `tasks_result` to get its result."),
        "{status}"
    );
    assert!(
        status["structuredContent"].get("statusMessage").is_none(),
        "{status}"
    );
    // The task in the field names of the client's era.
    let task = &status["structuredContent"];
    match &caps {
        None => assert!(
            task.get("ttl").is_some() && task.get("ttlMs").is_none(),
            "{task}"
        ),
        Some(_) => assert!(
            task.get("ttlMs").is_some() && task.get("ttl").is_none(),
            "{task}"
        ),
    }
    assert!(
        c.try_take(
            |m| m["method"] == "notifications/tasks/status" || m["method"] == "notifications/tasks"
        )
        .is_none(),
        "a client without tasks got a task notification"
    );
}

/// A long `report` is cancelled through `tasks_cancel`: it ends `cancelled`, its tool sees it, and
/// neither a second cancel nor `tasks_result` pretends otherwise.
async fn report_is_cancelled(c: &mut StdioClient, caps: Option<Value>) {
    let id = started_id(&call(c, "report", json!({ "steps": 1000, "step_ms": 50 }), &caps).await);
    let cancelled = call(c, "tasks_cancel", json!({ "taskId": id }), &caps).await;
    assert_eq!(
        cancelled["structuredContent"]["status"], "cancelled",
        "{cancelled}"
    );
    assert_ne!(cancelled["isError"], json!(true));
    c.wait_for_log("report: cancelled").await;
    let status = call(c, "tasks_status", json!({ "taskId": id }), &caps).await;
    assert_eq!(
        status["structuredContent"]["status"], "cancelled",
        "{status}"
    );
    assert_eq!(
        status["content"][0]["text"],
        format!("Task {id} was cancelled."),
        "{status}"
    );
    let result = call(c, "tasks_result", json!({ "taskId": id }), &caps).await;
    assert_eq!(result["isError"], json!(true), "{result}");
    assert_eq!(
        result["content"][0]["text"],
        format!("Task {id} was cancelled before it produced a result."),
        "{result}"
    );
    let again = call(c, "tasks_cancel", json!({ "taskId": id }), &caps).await;
    assert_eq!(again["isError"], json!(true), "{again}");
    assert_eq!(
        again["content"][0]["text"],
        format!("Task {id} had already been cancelled; there is nothing to cancel."),
        "{again}"
    );
}

#[tokio::test]
async fn legacy_session_without_tasks_gets_a_task_id_and_follows_it_with_the_companion_tools() {
    let mut c = fallback_server();
    let init = c.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    report_runs_to_its_result(&mut c, None).await;
    report_is_cancelled(&mut c, None).await;
    // Companion tools run inline only, like any `forbidden` tool.
    let err = c
        .error(
            "tools/call",
            json!({ "name": "tasks_status", "arguments": { "taskId": "x" }, "task": {} }),
        )
        .await;
    assert_eq!(err["code"], -32601, "{err}");
    c.close().await;
}

#[tokio::test]
async fn modern_client_without_the_extension_gets_a_task_id_and_follows_it_with_the_companion_tools()
 {
    let mut c = fallback_server();
    let caps = Some(json!({ "elicitation": {} }));
    report_runs_to_its_result(&mut c, caps.clone()).await;
    report_is_cancelled(&mut c, caps.clone()).await;
    c.close().await;
}

/// A 2026-07-28 client without the tasks extension that declared `elicitation` answers a
/// fallback task's question inline: the companion call answers an MRTR `InputRequiredResult`
/// carrying the task's own request, and its retry with `inputResponses` reaches the task.
#[tokio::test]
async fn a_modern_fallback_task_asks_through_mrtr_on_the_companion_tools() {
    let mut c = fallback_server();
    let caps = Some(json!({ "elicitation": {} }));
    let id = started_id(&call(&mut c, "interview", json!({}), &caps).await);
    let deadline = tokio::time::Instant::now() + WAIT;
    let asked = loop {
        let status = call(&mut c, "tasks_status", json!({ "taskId": id }), &caps).await;
        if status["resultType"] == "input_required" {
            break status;
        }
        assert_eq!(status["structuredContent"]["status"], "working", "{status}");
        assert!(tokio::time::Instant::now() < deadline, "never asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let requests = asked["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{asked}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    assert_eq!(
        request["params"]["message"], "What is your name?",
        "{asked}"
    );
    // `tasks_result` asks the same question while it waits.
    let again = call(&mut c, "tasks_result", json!({ "taskId": id }), &caps).await;
    assert_eq!(again["inputRequests"], asked["inputRequests"], "{again}");

    // An answer that does not fit its question uses nothing up.
    let mut retry = call_params("tasks_status", json!({ "taskId": id }), &caps);
    retry["inputResponses"] = json!({ key: { "action": "maybe" } });
    let misfit = c.error("tools/call", retry.clone()).await;
    assert_eq!(misfit["code"], -32602, "{misfit}");
    retry["inputResponses"] = json!({ key: { "action": "accept", "content": { "name": "Ada" } } });
    let answered = c.result("tools/call", retry).await;
    assert_ne!(answered["resultType"], "input_required", "{answered}");
    assert_ne!(answered["isError"], json!(true), "{answered}");
    let done = wait_result(&mut c, &id, &caps).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Nice to meet you, Ada.",
        "{done}"
    );
    c.close().await;
}

/// A client that declared no way to answer a question: the task fails at once with the tool's
/// error naming the missing capability, and `tasks_result` says so as a tool error (never a
/// JSON-RPC error about the tasks extension), in both eras.
#[tokio::test]
async fn a_fallback_task_whose_question_cannot_be_asked_fails_as_a_tool_error() {
    let mut c = fallback_server();
    c.initialize(json!({})).await;
    for caps in [None, Some(json!({}))] {
        let id = started_id(&call(&mut c, "interview", json!({}), &caps).await);
        let done = wait_result(&mut c, &id, &caps).await;
        let result = &done["result"];
        assert_eq!(result["isError"], json!(true), "{done}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("Task {id} failed: ")) && text.contains("`elicitation`"),
            "{text}"
        );
        assert!(!text.contains(TASKS), "{text}");
        let status = call(&mut c, "tasks_status", json!({ "taskId": id }), &caps).await;
        assert_eq!(status["structuredContent"]["status"], "failed", "{status}");
        let said = status["content"][0]["text"].as_str().unwrap();
        assert!(said.starts_with(&format!("Task {id} failed: ")), "{said}");
    }
    c.close().await;
}

/// On a legacy session a fallback task's question is an ordinary `elicitation/create` request;
/// `tasks_status` shows it while it waits; the answer reaches the tool.
#[tokio::test]
async fn a_legacy_fallback_task_asks_with_an_ordinary_request_and_the_status_shows_the_question() {
    let mut c = fallback_server();
    c.initialize(json!({ "elicitation": {} })).await;
    let id = started_id(&call(&mut c, "interview", json!({}), &None).await);
    let ask = c.wait_for(|m| m["method"] == "elicitation/create").await;
    assert_eq!(ask["params"]["message"], "What is your name?", "{ask}");
    let status = call(&mut c, "tasks_status", json!({ "taskId": id }), &None).await;
    assert_eq!(
        status["structuredContent"]["status"], "input_required",
        "{status}"
    );
    let text = status["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("What is your name?"), "{text}");
    assert_eq!(
        status["structuredContent"]["inputRequests"]
            .as_object()
            .map(|m| m.len()),
        Some(1),
        "{status}"
    );
    c.send(&json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": "Ada" } } }))
        .await;
    let done = wait_result(&mut c, &id, &None).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Nice to meet you, Ada.",
        "{done}"
    );
    c.close().await;
}

/// An unknown id and a wrong argument are tool errors a model can read and correct; only a
/// malformed call (`arguments` not an object) is a JSON-RPC error.
#[tokio::test]
async fn bad_and_unknown_task_ids_are_tool_errors() {
    let mut c = fallback_server();
    c.initialize(json!({})).await;
    for caps in [None, Some(json!({}))] {
        let caps = &caps;
        let unknown = call(
            &mut c,
            "tasks_status",
            json!({ "taskId": "no-such-task" }),
            caps,
        )
        .await;
        assert_eq!(unknown["isError"], json!(true), "{unknown}");
        assert_eq!(
            unknown["content"][0]["text"],
            "There is no task no-such-task for this client: the id is wrong, or the task has ended and been removed.",
            "{unknown}"
        );
        for tool in ["tasks_result", "tasks_cancel"] {
            let other = call(&mut c, tool, json!({ "taskId": "no-such-task" }), caps).await;
            assert_eq!(other["content"], unknown["content"], "{tool}: {other}");
            assert_eq!(other["isError"], json!(true), "{tool}: {other}");
        }
        for (args, says) in [
            (json!({}), "Missing the argument `taskId`"),
            (json!({ "taskId": 7 }), "`taskId` must be a string"),
            (
                json!({ "taskId": "a", "extra": 1 }),
                "Unknown argument `extra`",
            ),
        ] {
            let result = call(&mut c, "tasks_status", args.clone(), caps).await;
            assert_eq!(result["isError"], json!(true), "{args}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains(says), "{args}: {text}");
        }
        let err = call_err(&mut c, "tasks_status", json!([1]), caps).await;
        assert_eq!(err["code"], -32602, "{err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("`arguments` must be an object"),
            "{err}"
        );
    }
    c.close().await;
}

/// Clients that ask for tasks are served as without the fallback.
#[tokio::test]
async fn clients_that_ask_for_tasks_still_get_tasks() {
    let mut c = fallback_server();
    c.initialize(json!({})).await;
    let legacy = c
        .result(
            "tools/call",
            json!({ "name": "report", "arguments": { "steps": 1, "step_ms": 1 }, "task": {} }),
        )
        .await;
    assert!(legacy["task"]["taskId"].is_string(), "{legacy}");
    let modern = call(
        &mut c,
        "report",
        json!({ "steps": 1, "step_ms": 1 }),
        &Some(json!({ "extensions": { TASKS: {} } })),
    )
    .await;
    assert_eq!(modern["resultType"], "task", "{modern}");
    let list = c
        .result(
            "tools/list",
            json!({ "_meta": modern_meta(json!({ "extensions": { TASKS: {} } })) }),
        )
        .await;
    let report = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "report")
        .unwrap()
        .clone();
    assert!(report.get("outputSchema").is_some(), "{report}");
    // A 2025-11-25 session that declared tasks sees the declared `required`.
    let mut tasks = fallback_server();
    tasks
        .initialize(json!({ "tasks": { "requests": { "tools": { "call": {} } } } }))
        .await;
    let list = tasks.result("tools/list", json!({})).await;
    let report = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "report")
        .unwrap()
        .clone();
    assert_eq!(report["execution"]["taskSupport"], "required", "{report}");
    tasks.close().await;
    c.close().await;
}

/// An `optional` tool with a promotion threshold (`tally`, 300 ms): a quick taskless call answers
/// inline; a long one answers the fallback's text past the threshold, and the same run's result
/// comes through `tasks_result`. In both eras.
#[tokio::test]
async fn a_long_taskless_call_of_a_promotable_tool_gets_the_fallback_answer() {
    let mut c = fallback_server();
    c.initialize(json!({})).await;
    for caps in [None, Some(json!({}))] {
        let quick = call(&mut c, "tally", json!({ "to": 3 }), &caps).await;
        assert_eq!(quick["content"][0]["text"], "counted to 3", "{quick}");
        assert!(
            quick
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/related-task"))
                .is_none()
        );
        let started = tokio::time::Instant::now();
        let long = call(&mut c, "tally", json!({ "to": 250 }), &caps).await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_millis(2000),
            "answered after {waited:?}"
        );
        let id = started_id(&long);
        let status = call(&mut c, "tasks_status", json!({ "taskId": id }), &caps).await;
        assert_eq!(status["structuredContent"]["status"], "working", "{status}");
        let done = wait_result(&mut c, &id, &caps).await;
        assert_eq!(
            done["result"]["content"][0]["text"], "counted to 250",
            "{done}"
        );
    }
    c.close().await;
}

/// A user tool with a companion tool's name.
#[tool]
async fn tasks_result() -> String {
    "mine".into()
}

/// A tool that runs only as a task: the fallback is in use on a server that has one.
#[tool(task_support = "required")]
async fn only_a_task() -> String {
    "done".into()
}

#[test]
fn a_tool_named_like_a_companion_tool_is_a_setup_error_where_the_fallback_is_in_use() {
    // The fallback (on by default) is not in use without a tool that may answer with it.
    let plain = Server::builder("t", "1").tool::<tasks_result>();
    assert!(plain.clone().build().is_ok());
    let with_task_tool = plain.tool::<only_a_task>();
    let err = with_task_tool
        .clone()
        .build()
        .expect_err("a clash")
        .to_string();
    assert!(
        err.contains("`tasks_result`") && err.contains("task_fallback"),
        "{err}"
    );
    assert!(with_task_tool.task_fallback(false).build().is_ok());
}

// --- HTTP: owners ---------------------------------------------------------------------------

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

/// The JSON-RPC response in a body that is JSON or an SSE stream.
async fn answer(r: reqwest::Response) -> Value {
    let text = r.text().await.expect("a body");
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or_else(|| panic!("no response in {text}"))
}

/// A modern `tools/call` (no tasks extension) as the holder of `token`.
async fn modern_call(
    c: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    args: Value,
) -> Value {
    modern_call_status(c, url, token, name, args).await.1
}

/// [`modern_call`], with the HTTP status of the answer.
async fn modern_call_status(
    c: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    args: Value,
) -> (reqwest::StatusCode, Value) {
    let params = json!({ "name": name, "arguments": args, "_meta": modern_meta(json!({})) });
    let r = c
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params })
                .to_string(),
        )
        .send()
        .await
        .expect("the server answers");
    (r.status(), answer(r).await)
}

/// A legacy message on `session` (or `initialize` without one) as the holder of `token`.
async fn legacy_post(
    c: &reqwest::Client,
    url: &str,
    token: &str,
    session: Option<&str>,
    msg: Value,
) -> reqwest::Response {
    let mut b = c
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(msg.to_string());
    if let Some(session) = session {
        b = b
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    b.send().await.expect("the server answers")
}

async fn legacy_session(c: &reqwest::Client, url: &str, token: &str) -> String {
    let r = legacy_post(c, url, token, None, json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })).await;
    let session = r.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    answer(r).await;
    legacy_post(
        c,
        url,
        token,
        Some(&session),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    )
    .await;
    session
}

async fn legacy_call(
    c: &reqwest::Client,
    url: &str,
    token: &str,
    session: &str,
    name: &str,
    args: Value,
) -> Value {
    let msg = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": name, "arguments": args } });
    answer(legacy_post(c, url, token, Some(session), msg).await).await
}

/// The text of a tool result, with the task id `id` in it written `ID`.
fn reads(answer: &Value, id: &str) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .replace(id, "ID")
}

/// A task started by one owner is invisible to another through every companion tool (the same
/// tool error as an id that never existed), over HTTP: two bearer tokens (modern), and legacy
/// sessions of two principals; another session of the same principal follows it.
#[tokio::test]
async fn another_owner_sees_nothing_of_a_fallback_task() {
    let s = HttpServer::start_bin(
        "fallback_server",
        &["--task-fallback", "--token", "A=alice", "--token", "B=bob"],
    );
    let c = http();
    let long = json!({ "steps": 1000, "step_ms": 50 });
    let started = modern_call(&c, &s.url, "A", "report", long.clone()).await;
    let id = started_id(&started["result"]);
    let unknown = modern_call(
        &c,
        &s.url,
        "B",
        "tasks_status",
        json!({ "taskId": "no-such-task" }),
    )
    .await;
    assert_eq!(unknown["result"]["isError"], json!(true), "{unknown}");
    let unknown_reads = reads(&unknown, "no-such-task");
    for tool in ["tasks_status", "tasks_result", "tasks_cancel"] {
        let foreign = modern_call(&c, &s.url, "B", tool, json!({ "taskId": id })).await;
        assert_eq!(
            foreign["result"]["isError"],
            json!(true),
            "{tool}: {foreign}"
        );
        assert_eq!(reads(&foreign, &id), unknown_reads, "{tool}: {foreign}");
    }
    // Still running for its owner (bob's cancel did nothing), who can cancel it.
    let own = modern_call(&c, &s.url, "A", "tasks_status", json!({ "taskId": id })).await;
    assert_eq!(
        own["result"]["structuredContent"]["status"], "working",
        "{own}"
    );
    let cancelled = modern_call(&c, &s.url, "A", "tasks_cancel", json!({ "taskId": id })).await;
    assert_eq!(
        cancelled["result"]["structuredContent"]["status"], "cancelled",
        "{cancelled}"
    );

    // Legacy: a fallback task belongs to the principal, whichever of its sessions started it (a
    // client that opens a session per call follows it); another principal's session sees nothing.
    let one = legacy_session(&c, &s.url, "A").await;
    let two = legacy_session(&c, &s.url, "A").await;
    let bobs = legacy_session(&c, &s.url, "B").await;
    let started = legacy_call(&c, &s.url, "A", &one, "report", long).await;
    let id = started_id(&started["result"]);
    for tool in ["tasks_status", "tasks_result", "tasks_cancel"] {
        let foreign = legacy_call(&c, &s.url, "B", &bobs, tool, json!({ "taskId": id })).await;
        assert_eq!(
            foreign["result"]["isError"],
            json!(true),
            "{tool}: {foreign}"
        );
        assert_eq!(reads(&foreign, &id), unknown_reads, "{tool}: {foreign}");
    }
    let status = legacy_call(
        &c,
        &s.url,
        "A",
        &two,
        "tasks_status",
        json!({ "taskId": id }),
    )
    .await;
    assert_eq!(
        status["result"]["structuredContent"]["status"], "working",
        "{status}"
    );
    let own = legacy_call(
        &c,
        &s.url,
        "A",
        &two,
        "tasks_cancel",
        json!({ "taskId": id }),
    )
    .await;
    assert_eq!(
        own["result"]["structuredContent"]["status"], "cancelled",
        "{own}"
    );
}

/// Over HTTP, `tasks_result` of a fallback task that failed (its question could not be asked: the
/// client declared no elicitation) is an HTTP 200 with an `isError` tool result carrying the
/// task's message, not a JSON-RPC error (which client libraries throw on).
#[tokio::test]
async fn over_http_tasks_result_of_a_failed_fallback_task_is_a_200_tool_error() {
    let s = HttpServer::start_bin(
        "fallback_server",
        &["--task-fallback", "--token", "A=alice"],
    );
    let c = http();
    let started = modern_call(&c, &s.url, "A", "interview", json!({})).await;
    let id = started_id(&started["result"]);
    let deadline = tokio::time::Instant::now() + WAIT;
    let (status, done) = loop {
        let (status, done) =
            modern_call_status(&c, &s.url, "A", "tasks_result", json!({ "taskId": id })).await;
        let text = done["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if !text.contains("has no result yet") {
            break (status, done);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status, reqwest::StatusCode::OK, "{done}");
    assert!(done.get("error").is_none(), "{done}");
    let result = &done["result"];
    assert_eq!(result["isError"], json!(true), "{done}");
    assert_eq!(result["resultType"], "complete", "{done}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Task {id} failed: ")) && text.contains("`elicitation`"),
        "{text}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id),
        "{done}"
    );
}
