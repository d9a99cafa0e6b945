//! Every host served as it is (issue 54): each protocol version served as itself (2025-06-18 and
//! 2025-03-26 sessions see no tasks on the wire, and their task-only tools go through the
//! fallback); the fallback on by default, and off on request; the companion reply after an answer
//! showing what the answer led to; `research` completing for a client without sampling; LangChain's
//! default `get_tools()` (a session per call) following a fallback task. Over real stdio and HTTP
//! against the example servers.

use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{StdioClient, WAIT, example_bin, modern, modern_meta};
use serde_json::{Value, json};
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn fallback_server() -> StdioClient {
    StdioClient::spawn(&example_bin("fallback_server"))
}

/// The task id a fallback answer names: in the text, and in `_meta`.
fn started_id(result: &Value) -> String {
    assert_ne!(result["isError"], json!(true), "{result}");
    let id = result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no related-task in {result}"))
        .to_owned();
    let text = result["content"][0]["text"].as_str().expect("a text");
    assert!(
        text.contains(&id) && text.contains("tasks_result"),
        "{text}"
    );
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

/// Calls `tasks_result` until the task has a result (the note while it runs is not one),
/// answering with `answer` each server-to-client request the task sends meanwhile (a legacy
/// session's inline route). Returns the result, and the methods of the requests answered.
async fn wait_result(
    c: &mut StdioClient,
    id: &str,
    caps: &Option<Value>,
    answer: impl Fn(&Value) -> Value,
) -> (Value, Vec<String>) {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut asked = Vec::new();
    loop {
        while let Some(ask) = c.try_take(|m| m.get("method").is_some() && m.get("id").is_some()) {
            asked.push(ask["method"].as_str().unwrap_or_default().to_owned());
            c.send(&json!({ "jsonrpc": "2.0", "id": ask["id"], "result": answer(&ask) }))
                .await;
        }
        let result = call(c, "tasks_result", json!({ "taskId": id }), caps).await;
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if !text.contains("has no result yet") {
            return (result, asked);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls `companion` on task `id` until it answers `input_required`; the key of its first
/// input request.
async fn asked_key(c: &mut StdioClient, companion: &str, id: &str, caps: &Option<Value>) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    let asked = loop {
        let r = call(c, companion, json!({ "taskId": id }), caps).await;
        if r["resultType"] == "input_required" {
            break r;
        }
        assert!(tokio::time::Instant::now() < deadline, "never asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let requests = asked["inputRequests"].as_object().expect("input requests");
    requests.keys().next().expect("one input request").clone()
}

fn names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

/// `initialize` at `version`, then `notifications/initialized`.
async fn initialize_at(c: &mut StdioClient, version: &str, capabilities: Value) -> Value {
    let init = c
        .result(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": { "name": "mcp-tasks-tests", "version": "0" }
            }),
        )
        .await;
    c.notify("notifications/initialized", json!({})).await;
    init
}

/// The answers a client gives `research`'s questions: 4 sources, and the model's sentence.
fn research_answer(ask: &Value) -> Value {
    match ask["method"].as_str() {
        Some("elicitation/create") => json!({ "action": "accept", "content": { "sources": 4 } }),
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": { "type": "text", "text": "Tides follow the moon." },
            "model": "test",
        }),
        other => panic!("an unexpected request {other:?}: {ask}"),
    }
}

/// Sessions at 2025-06-18 and 2025-03-26 are served as those versions define them: `initialize`
/// without `tasks`, `tools/list` without `execution`, no `tasks/*` methods, a `task` param that
/// means nothing; `research` (a task-only tool) runs through the fallback to its result; and no
/// reply names a `task` param. (Even a session that claims a `tasks` capability its version
/// lacks.)
#[tokio::test]
async fn older_sessions_are_served_as_their_version_and_research_goes_through_the_fallback() {
    for (version, capabilities, asks) in [
        (
            "2025-06-18",
            json!({ "elicitation": {}, "sampling": {}, "tasks": { "requests": { "tools": { "call": {} } } } }),
            vec!["elicitation/create", "sampling/createMessage"],
        ),
        // 2025-03-26 has no elicitation: research reads its default number of sources.
        (
            "2025-03-26",
            json!({ "sampling": {} }),
            vec!["sampling/createMessage"],
        ),
    ] {
        let mut c = StdioClient::example();
        let mut replies = Vec::new();
        let init = initialize_at(&mut c, version, capabilities).await;
        assert_eq!(init["protocolVersion"], version, "{init}");
        assert!(init["capabilities"].get("tasks").is_none(), "{init}");
        assert!(init["capabilities"].get("tools").is_some(), "{init}");
        let list = c.result("tools/list", json!({})).await;
        let tools = list["tools"].as_array().unwrap();
        assert!(tools.iter().all(|t| t.get("execution").is_none()), "{list}");
        // `add` declares an output schema, which 2025-03-26 has no field for.
        let add = tools.iter().find(|t| t["name"] == "add").unwrap();
        assert_eq!(
            add.get("outputSchema").is_some(),
            version == "2025-06-18",
            "{version}: {add}"
        );
        let listed = names(&list);
        assert!(
            listed.contains(&"research") && listed.contains(&"tasks_result"),
            "{list}"
        );
        // A `task` param means nothing at this version: the tool runs as if it were not sent.
        let greet = c
            .result(
                "tools/call",
                json!({ "name": "greet", "arguments": { "name": "Ada" }, "task": { "ttl": 1000 } }),
            )
            .await;
        assert!(greet.get("task").is_none(), "{greet}");
        replies.push(greet);
        let started = c
            .result(
                "tools/call",
                json!({ "name": "research", "arguments": { "topic": "tides" }, "task": {} }),
            )
            .await;
        let id = started_id(&started);
        replies.push(started);
        let (result, asked) = wait_result(&mut c, &id, &None, research_answer).await;
        assert_eq!(asked, asks, "{version}");
        assert_ne!(result["isError"], json!(true), "{result}");
        let sources = if version == "2025-06-18" { 4 } else { 3 };
        assert_eq!(
            result["structuredContent"],
            json!({ "topic": "tides", "sources": sources, "summary": "Tides follow the moon." }),
            "{version}: {result}"
        );
        replies.push(result);
        // No `tasks/*` methods at this version.
        let err = c.error("tasks/get", json!({ "taskId": id })).await;
        assert_eq!(err["code"], -32601, "{err}");
        replies.push(err);
        for reply in &replies {
            let text = reply.to_string();
            assert!(
                !text.contains("`task`") && !text.contains("taskSupport"),
                "{text}"
            );
        }
        c.close().await;
    }
}

/// With the fallback off, a 2025-06-18 session cannot run a task-only tool at all: it is left
/// out of the listing, and a call of it anyway is refused without naming a `task` param.
#[tokio::test]
async fn with_the_fallback_off_an_older_session_is_not_offered_task_only_tools() {
    let mut c = StdioClient::spawn_with(&example_bin("fallback_server"), &["--no-task-fallback"]);
    initialize_at(&mut c, "2025-06-18", json!({ "tasks": {} })).await;
    let list = c.result("tools/list", json!({})).await;
    assert_eq!(names(&list), ["tally", "greet"]);
    let err = c
        .error(
            "tools/call",
            json!({ "name": "report", "arguments": { "steps": 1, "step_ms": 1 }, "task": {} }),
        )
        .await;
    let message = err["message"].as_str().unwrap();
    assert!(!message.contains("task"), "{err}");
    c.close().await;
}

/// `research` completes for a client that declares elicitation but not sampling (most hosts):
/// the tool matches `InputError::NotSupported` and reports without the model's summary. A
/// 2026-07-28 client without the tasks extension, through the fallback and MRTR.
#[tokio::test]
async fn research_completes_for_a_client_without_sampling() {
    let mut c = StdioClient::example();
    let caps = Some(json!({ "elicitation": {} }));
    let id = started_id(&call(&mut c, "research", json!({ "topic": "tides" }), &caps).await);
    let key = asked_key(&mut c, "tasks_result", &id, &caps).await;
    let mut retry = call_params("tasks_result", json!({ "taskId": id }), &caps);
    retry["inputResponses"] = json!({ key: { "action": "accept", "content": { "sources": 5 } } });
    let answered = c.result("tools/call", retry).await;
    assert_ne!(answered["isError"], json!(true), "{answered}");
    let report = &answered["structuredContent"];
    assert_eq!(report["sources"], 5, "{answered}");
    let summary = report["summary"].as_str().unwrap();
    assert!(summary.contains("no summary"), "{summary}");
    c.close().await;
}
/// Without any fallback setting, a taskless client's call of a `required` tool starts a fallback
/// task (the fallback is on by default).
#[tokio::test]
async fn the_fallback_is_on_by_default() {
    let mut c = StdioClient::spawn(&example_bin("fallback_server"));
    c.initialize(json!({})).await;
    let list = c.result("tools/list", json!({})).await;
    assert_eq!(
        names(&list),
        [
            "report",
            "interview",
            "tally",
            "greet",
            "tasks_status",
            "tasks_result",
            "tasks_cancel"
        ]
    );
    let id = started_id(&call(&mut c, "report", json!({ "steps": 1, "step_ms": 1 }), &None).await);
    let (done, _) = wait_result(&mut c, &id, &None, |ask| panic!("asked {ask}")).await;
    assert_ne!(done["isError"], json!(true), "{done}");
    assert_eq!(done["structuredContent"]["steps"], 1, "{done}");
    c.close().await;
}

/// The companion call that delivers an answer replies with what the answer led to: `interview`
/// ends at once after it, so the `tasks_result` retry carrying the answer is the tool's result
/// (not "still running"), and a `tasks_status` retry says the task has completed.
#[tokio::test]
async fn the_companion_reply_to_an_answer_shows_the_tasks_new_state() {
    let mut c = fallback_server();
    let caps = Some(json!({ "elicitation": {} }));
    for companion in ["tasks_result", "tasks_status"] {
        let id = started_id(&call(&mut c, "interview", json!({}), &caps).await);
        let key = asked_key(&mut c, companion, &id, &caps).await;
        let mut retry = call_params(companion, json!({ "taskId": id }), &caps);
        retry["inputResponses"] =
            json!({ key: { "action": "accept", "content": { "name": "Ada" } } });
        let answered = c.result("tools/call", retry).await;
        if companion == "tasks_result" {
            assert_eq!(
                answered["content"][0]["text"], "Nice to meet you, Ada.",
                "{answered}"
            );
        } else {
            assert_eq!(
                answered["structuredContent"]["status"], "completed",
                "{answered}"
            );
        }
    }
    c.close().await;
}

/// With `--no-task-fallback`: the old errors, no companion tools, and a client that cannot take
/// a task (2026-07-28 without the extension) is not offered the tools that run only as tasks
/// (`report`, `interview`); a client that takes tasks still sees and runs them, in both eras. A
/// 2025-11-25 session sees them as `execution.taskSupport: "required"` (it may send `task`
/// without declaring a `tasks` capability, which is about requests sent to it).
#[tokio::test]
async fn with_the_fallback_off_a_taskless_client_is_not_offered_task_only_tools() {
    let mut c = StdioClient::spawn_with(&example_bin("fallback_server"), &["--no-task-fallback"]);
    c.initialize(json!({})).await;
    let list = c.result("tools/list", json!({})).await;
    assert_eq!(names(&list), ["report", "interview", "tally", "greet"]);
    let report = &list["tools"][0];
    assert_eq!(report["execution"]["taskSupport"], "required", "{report}");
    let args = json!({ "steps": 1, "step_ms": 1 });
    let legacy = call_err(&mut c, "report", args.clone(), &None).await;
    assert_eq!(legacy["code"], -32601, "{legacy}");
    let modern = call_err(&mut c, "report", args, &Some(json!({}))).await;
    assert_eq!(modern["code"], -32021, "{modern}");
    let companion = call_err(&mut c, "tasks_status", json!({ "taskId": "x" }), &None).await;
    assert_eq!(
        companion["message"], "Unknown tool: `tasks_status`",
        "{companion}"
    );
    let list = c
        .result("tools/list", json!({ "_meta": modern_meta(json!({})) }))
        .await;
    assert_eq!(names(&list), ["tally", "greet"]);
    // A 2026-07-28 client that declares the extension sees and runs them.
    let tasks = Some(json!({ "extensions": { TASKS: {} } }));
    let list = c
        .result(
            "tools/list",
            json!({ "_meta": modern_meta(tasks.clone().unwrap()) }),
        )
        .await;
    assert_eq!(names(&list), ["report", "interview", "tally", "greet"]);
    let report = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "report")
        .unwrap()
        .clone();
    assert!(report.get("outputSchema").is_some(), "{report}");
    let created = call(
        &mut c,
        "report",
        json!({ "steps": 1, "step_ms": 1 }),
        &tasks,
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    c.close().await;
    // A 2025-11-25 session that declared tasks sees them, and runs one as a task.
    let mut t = StdioClient::spawn_with(&example_bin("fallback_server"), &["--no-task-fallback"]);
    t.initialize(json!({ "tasks": { "requests": { "tools": { "call": {} } } } }))
        .await;
    let list = t.result("tools/list", json!({})).await;
    assert_eq!(names(&list), ["report", "interview", "tally", "greet"]);
    let created = t
        .result(
            "tools/call",
            json!({ "name": "report", "arguments": { "steps": 1, "step_ms": 1 }, "task": {} }),
        )
        .await;
    assert!(created["task"]["taskId"].is_string(), "{created}");
    t.close().await;
}

/// Runs `tests/peers/langchain.py <args>` with the LangChain venv (`install.sh langchain`) and
/// asserts its `PASS` verdict.
fn langchain(args: &[&std::ffi::OsStr]) {
    let peers = mcp_tasks_tests::workspace_root().join("tests/peers");
    let install = std::process::Command::new("bash")
        .arg(peers.join("install.sh"))
        .arg("langchain")
        .output()
        .expect("install.sh runs");
    assert!(
        install.status.success(),
        "tests/peers/install.sh langchain failed:\n{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let python = mcp_tasks_tests::peers::peers_dir().join("langchain/bin/python");
    let out = std::process::Command::new(python)
        .current_dir(&peers)
        .arg("langchain.py")
        .args(args)
        .env("MCP_PEERS_TRACE", "0")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().any(|l| l.starts_with("PASS ")),
        "langchain.py {args:?} {}:\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// LangChain's default `get_tools()` (langchain-mcp-adapters 0.3.2, pinned), whose every call
/// opens a session of its own, completes `research` through the fallback: over HTTP with a bearer
/// token (the task is the principal's, in every session), and over stdio on one SQLite file (a
/// server process per call; the stdio client's tasks are its one owner's). Without a token, the
/// answer in the next session says that tasks belong to the session, and how to keep one.
#[test]
fn langchain_default_get_tools_completes_research_through_the_fallback() {
    let with_token = HttpServer::start_bin("example_server", &["--token", "T=alice"]);
    langchain(&["http".as_ref(), with_token.url.as_ref(), "T".as_ref()]);
    let anonymous = HttpServer::start_bin("example_server", &[]);
    langchain(&["http-anonymous".as_ref(), anonymous.url.as_ref()]);
    let dir = std::env::temp_dir().join(format!("mcp-tasks-langchain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("tasks.db");
    langchain(&[
        "stdio".as_ref(),
        example_bin("example_server").as_os_str(),
        db.as_os_str(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `confirm` asks.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirmation {
    /// Go on?
    ok: bool,
}

/// Asks once, then moves on at once to a short last step (300 ms) and ends.
#[mcp_tasks_runtime::tool(task_support = "required")]
async fn confirm(
    ctx: mcp_tasks_runtime::ToolContext,
) -> Result<String, mcp_tasks_runtime::ToolError> {
    match ctx.elicit::<Confirmation>("Go on?").await? {
        mcp_tasks_runtime::ElicitOutcome::Accept(c) if c.ok => {}
        _ => return Ok("stopped".into()),
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok("confirmed".into())
}

/// The companion reply to an answer waits (up to 2 s) for the task to act on it: the
/// `tasks_result` retry carrying the answer to `confirm` (which ends 300 ms after it) is the
/// tool's result, not "still running". In process, 2026-07-28 without the tasks extension.
#[tokio::test]
async fn the_companion_reply_waits_for_the_task_to_act_on_the_answer() {
    let server = mcp_tasks_runtime::Server::builder("t", "1")
        .tool::<confirm>()
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();
    let caps = json!({ "elicitation": {} });
    let call = |name: &str, args: Value| json!({ "name": name, "arguments": args });
    let started = mcp_tasks_tests::in_memory_request(
        &mut c,
        1,
        "tools/call",
        call("confirm", json!({})),
        caps.clone(),
    )
    .await;
    let id = started_id(&started["result"]);
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut n = 2;
    let asked = loop {
        let r = mcp_tasks_tests::in_memory_request(
            &mut c,
            n,
            "tools/call",
            call("tasks_result", json!({ "taskId": id })),
            caps.clone(),
        )
        .await;
        n += 1;
        if r["result"]["resultType"] == "input_required" {
            break r["result"].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "never asked: {r}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let key = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = call("tasks_result", json!({ "taskId": id }));
    retry["inputResponses"] = json!({ key: { "action": "accept", "content": { "ok": true } } });
    let answered = mcp_tasks_tests::in_memory_request(&mut c, n, "tools/call", retry, caps).await;
    assert_eq!(
        answered["result"]["content"][0]["text"], "confirmed",
        "{answered}"
    );
}
