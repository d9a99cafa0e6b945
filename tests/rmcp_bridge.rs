//! The rmcp bridge (`mcp_tasks_runtime::rmcp::TaskTools`, feature `rmcp`) against
//! `rmcp_bridge_server`, an rmcp 3.11 server with two tools of its own and `research` /
//! `countdown` from mcp-tasks: the three delegated task methods, `get_info`, the project's own
//! client and the rmcp client over stdio and HTTP, owners over HTTP with tokens, and inline input
//! (MRTR, and an `initialize` session) in an rmcp server in this process.

use mcp_tasks_client::{Asked, Client, EraChoice, Error, Scripted, TaskStatus, ToolCall};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::instances::{self, Instance};
use mcp_tasks_tests::{StdioClient, WAIT, example_bin, modern};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::time::timeout;

const BIN: &str = "rmcp_bridge_server";

fn task_caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} }, "elicitation": {}, "sampling": {} })
}

fn bridge() -> StdioClient {
    StdioClient::spawn_logging(&example_bin(BIN), &[], "warn")
}

/// The whole answer to a modern request sent over raw stdio.
async fn ask(c: &mut StdioClient, method: &str, params: Value, caps: Value) -> Value {
    timeout(WAIT, c.request(method, modern(params, caps)))
        .await
        .expect("answered in time")
}

/// Polls `tasks/get` until the task is no longer `working`.
async fn settled(c: &mut StdioClient, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let got = ask(c, "tasks/get", json!({ "taskId": id }), task_caps()).await;
        if got["result"]["status"] != "working" {
            return got["result"].clone();
        }
        assert!(started.elapsed() < WAIT, "still working: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `research` started as a task over raw stdio by a client that declares the tasks extension:
/// its task id.
async fn start_research(c: &mut StdioClient, topic: &str) -> String {
    let call = json!({ "name": "research", "arguments": { "topic": topic } });
    let created = ask(c, "tools/call", call, task_caps()).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id in {created}"))
        .to_owned()
}

/// The one outstanding input request of a task read with `tasks/get`: its key and the request.
fn only_question(task: &Value) -> (String, Value) {
    let requests = task["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests in {task}"));
    assert_eq!(requests.len(), 1, "{task}");
    let (key, request) = requests.iter().next().expect("one request");
    (key.clone(), request.clone())
}

/// The guard on `rmcp_task_methods!` (and on any hand-written delegation): each of the three task
/// methods reaches the engine. rmcp answers a method its handler does not implement with
/// `-32601`, so dropping any one of the three delegations fails here, on that method.
#[tokio::test]
async fn the_three_task_methods_are_delegated_to_the_engine() {
    let mut c = bridge();
    // get_info advertises the tasks extension (server/discover is rmcp's, from get_info).
    let found = ask(&mut c, "server/discover", json!({}), task_caps()).await;
    assert!(
        found["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{found}"
    );

    let id = start_research(&mut c, "owls").await;

    // tasks/get: the stored input request.
    let task = settled(&mut c, &id).await;
    assert_eq!(task["status"], "input_required", "{task}");
    let (key, request) = only_question(&task);
    assert_eq!(request["method"], "elicitation/create");

    // tasks/update: the answer resumes the tool, which asks the client's model next.
    let updated = ask(&mut c, "tasks/update", json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "sources": 2 } } } }), task_caps()).await;
    assert_eq!(
        updated["result"]["resultType"], "complete",
        "tasks/update: {updated}"
    );
    let task = settled(&mut c, &id).await;
    assert_eq!(task["statusMessage"], "reading 2 sources", "{task}");

    // tasks/cancel: the task ends cancelled.
    let cancelled = ask(&mut c, "tasks/cancel", json!({ "taskId": id }), task_caps()).await;
    assert_eq!(
        cancelled["result"]["resultType"], "complete",
        "tasks/cancel: {cancelled}"
    );
    let task = settled(&mut c, &id).await;
    assert_eq!(task["status"], "cancelled", "{task}");

    // Each method on an unknown id is the engine's answer, not rmcp's `-32601`.
    for (method, extra) in [
        ("tasks/get", json!({})),
        ("tasks/update", json!({ "inputResponses": {} })),
        ("tasks/cancel", json!({})),
    ] {
        let mut params = json!({ "taskId": "no-such-task" });
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let err = ask(&mut c, method, params, task_caps()).await;
        assert_eq!(err["error"]["code"], -32602, "{method}: {err}");
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not found"),
            "{method}: {err}"
        );
    }
    c.close().await;
}

/// Each `task_support` as mcp-tasks serves it: `research` (required) is refused with `-32021` to
/// a client without the tasks extension, `countdown` (optional) runs inline for it and as a task
/// otherwise, and the rmcp tools run inline for both. Bad input gets a precise error and the
/// server goes on serving.
#[tokio::test]
async fn task_support_is_served_as_mcp_tasks_serves_it() {
    let mut c = bridge();
    let plain = json!({ "elicitation": {} });
    let refused = ask(
        &mut c,
        "tools/call",
        json!({ "name": "research", "arguments": { "topic": "x" } }),
        plain.clone(),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    let inline = ask(
        &mut c,
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": 0 } }),
        plain.clone(),
    )
    .await;
    assert_eq!(
        inline["result"]["content"][0]["text"], "liftoff",
        "{inline}"
    );
    let task = ask(
        &mut c,
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": 0 } }),
        task_caps(),
    )
    .await;
    assert_eq!(task["result"]["resultType"], "task", "{task}");
    for caps in [plain.clone(), task_caps()] {
        let echoed = ask(
            &mut c,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "hi" } }),
            caps.clone(),
        )
        .await;
        assert_eq!(echoed["result"]["content"][0]["text"], "hi", "{echoed}");
        let sum = ask(
            &mut c,
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 2, "b": 3 } }),
            caps,
        )
        .await;
        assert_eq!(sum["result"]["content"][0]["text"], "5", "{sum}");
    }
    // An argument of the wrong type is a tool error (as mcp-tasks answers it), not a crash.
    let wrong = ask(
        &mut c,
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": "soon" } }),
        plain.clone(),
    )
    .await;
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    assert!(
        wrong["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("seconds"),
        "{wrong}"
    );
    // An answer that does not fit its question: -32602, and the question stays open.
    let id = start_research(&mut c, "x").await;
    let (key, _) = only_question(&settled(&mut c, &id).await);
    let bad = ask(
        &mut c,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": { &key: { "action": "maybe" } } }),
        task_caps(),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(settled(&mut c, &id).await["status"], "input_required");
    // The tasks methods without the extension: -32021 (rmcp's gate, the same code).
    let gated = ask(&mut c, "tasks/get", json!({ "taskId": id }), plain).await;
    assert_eq!(gated["error"]["code"], -32021, "{gated}");
    let still = ask(
        &mut c,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "up" } }),
        task_caps(),
    )
    .await;
    assert_eq!(still["result"]["content"][0]["text"], "up");
    c.close().await;
}

/// Malformed `tasks/*` params: rmcp cannot read them into its types and hands the request to
/// `on_custom_request` instead of the task method; the bridge (written there by
/// `rmcp_task_methods!`) answers them as mcp-tasks does: `-32602` naming the parameter, behind the
/// same capability gate (`-32021`) as a well-formed request. Other unknown methods stay rmcp's
/// `-32601`, and the server goes on serving. Over stdio, then over HTTP.
#[tokio::test]
async fn malformed_task_params_are_invalid_params() {
    let cases = [
        (
            "tasks/get",
            json!({}),
            "missing required parameter `taskId`",
        ),
        (
            "tasks/get",
            json!({ "taskId": 7 }),
            "`taskId` must be a string",
        ),
        (
            "tasks/cancel",
            json!({ "taskId": null }),
            "`taskId` must be a string",
        ),
        (
            "tasks/update",
            json!({ "taskId": "no-such-task" }),
            "missing required parameter `inputResponses`",
        ),
    ];
    let mut c = bridge();
    for (method, params, message) in &cases {
        let err = ask(&mut c, method, params.clone(), task_caps()).await;
        assert_eq!(err["error"]["code"], -32602, "{method} {params}: {err}");
        assert_eq!(
            err["error"]["message"], *message,
            "{method} {params}: {err}"
        );
        let gated = ask(&mut c, method, params.clone(), json!({})).await;
        assert_eq!(gated["error"]["code"], -32021, "{method} {params}: {gated}");
    }
    for method in ["tasks/list", "tasks/result", "no/such/method"] {
        let err = ask(&mut c, method, json!({ "taskId": "x" }), task_caps()).await;
        assert_eq!(err["error"]["code"], -32601, "{method}: {err}");
        assert_eq!(err["error"]["message"], method, "{method}: {err}");
    }
    let still = ask(
        &mut c,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "up" } }),
        task_caps(),
    )
    .await;
    assert_eq!(still["result"]["content"][0]["text"], "up", "{still}");
    c.close().await;

    let server = HttpServer::start_bin(BIN, &[]);
    for (method, params, message) in &cases {
        let err = post(&server.url, None, method, params.clone()).await;
        assert_eq!(
            err["error"]["code"], -32602,
            "HTTP {method} {params}: {err}"
        );
        assert_eq!(
            err["error"]["message"], *message,
            "HTTP {method} {params}: {err}"
        );
    }
    let echoed = post(
        &server.url,
        None,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "up" } }),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "up", "{echoed}");
}

/// The bridge's tasks in another store: `--store sqlite:PATH` (as every example server takes it),
/// a task created, answered and read back through the three delegated methods.
#[tokio::test]
async fn tasks_live_in_the_store_the_server_was_built_with() {
    let dir = std::env::temp_dir().join(format!("rmcp-bridge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("tasks.db");
    let store = format!("sqlite:{}", db.display());
    let mut c = StdioClient::spawn_logging(&example_bin(BIN), &["--store", &store], "warn");
    let id = start_research(&mut c, "owls").await;
    let (key, _) = only_question(&settled(&mut c, &id).await);
    let answer = json!({ "taskId": id, "inputResponses": { key: { "action": "decline" } } });
    ask(&mut c, "tasks/update", answer, task_caps()).await;
    let task = settled(&mut c, &id).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["isError"], true,
        "declined: the tool's error, {task}"
    );
    c.close().await;
    assert!(
        std::fs::metadata(&db).is_ok_and(|m| m.len() > 0),
        "the SQLite file holds the tasks"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// The project's own client.

#[derive(Debug, Deserialize, PartialEq)]
struct Report {
    topic: String,
    sources: u32,
    summary: String,
}

fn research_script() -> Scripted {
    Scripted::new()
        .accept(json!({ "sources": 3 }))
        .sample_text("Tides follow the moon.")
}

async fn own_client(connect: impl Future<Output = Result<Client, Error>>) -> Client {
    timeout(WAIT, connect)
        .await
        .expect("connects in time")
        .expect("connects")
}

/// `research` to completion through its two questions, a `countdown` task cancelled, and the
/// rmcp tools inline.
async fn own_client_flow(client: Client, script: &Scripted) {
    assert!(client.era().is_modern(), "{:?}", client.era());
    let call = client
        .call_tool("research", json!({ "topic": "tides" }))
        .await
        .expect("research starts");
    let task = call.task().expect("research runs as a task").clone();
    let report: Report = timeout(WAIT, call.structured())
        .await
        .expect("research ends in time")
        .expect("research succeeds");
    assert_eq!(report.summary, "Tides follow the moon.");
    assert_eq!(report.sources, 3);
    let asked = script.asked();
    let [Asked::Elicit(question), Asked::Sample(_)] = &asked[..] else {
        panic!("expected an elicitation then a sampling, got {asked:?}");
    };
    assert_eq!(question.context.task_id.as_deref(), Some(task.id()));

    let call = client
        .call_tool("countdown", json!({ "seconds": 30 }))
        .await
        .expect("countdown starts");
    let task = call.task().expect("countdown runs as a task").clone();
    task.cancel().await.expect("tasks/cancel is accepted");
    match timeout(WAIT, task.result()).await.expect("ends in time") {
        Err(Error::TaskCancelled { task_id, .. }) => assert_eq!(task_id, task.id()),
        other => panic!("expected a cancelled task, got {other:?}"),
    }
    assert_eq!(task.snapshot().status, TaskStatus::Cancelled);

    let ToolCall::Done(echoed) = client
        .call_tool("echo", json!({ "text": "hi" }))
        .await
        .unwrap()
    else {
        panic!("an rmcp tool answers inline");
    };
    assert_eq!(mcp_tasks_client::text(&echoed), "hi");
    let sum = client
        .call_tool("add", json!({ "a": 40, "b": 2 }))
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&sum.result().await.unwrap()), "42");
    client.close().await;
}

#[tokio::test]
async fn the_projects_client_runs_the_flows_over_stdio() {
    let script = research_script();
    let mut command = tokio::process::Command::new(example_bin(BIN));
    command.env("RUST_LOG", "warn");
    let connect = Client::builder()
        .era(EraChoice::Modern)
        .handler(script.clone())
        .connect_stdio(command);
    own_client_flow(own_client(connect).await, &script).await;
}

#[tokio::test]
async fn the_projects_client_runs_the_flows_over_http() {
    let server = HttpServer::start_bin(BIN, &[]);
    let script = research_script();
    let connect = Client::builder()
        .era(EraChoice::Modern)
        .handler(script.clone())
        .connect_http(&server.url);
    own_client_flow(own_client(connect).await, &script).await;
}

/// Over HTTP with tokens, a task belongs to the principal whose token created it: another
/// principal's `tasks/get`, `tasks/update` and `tasks/cancel` answer as for an unknown id, and
/// the task runs on; a request without a token or with an unknown one is refused.
#[tokio::test]
async fn a_second_principal_cannot_see_the_first_ones_tasks_over_http() {
    let server = HttpServer::start_bin(
        BIN,
        &["--token", "alice-token=alice", "--token", "bob-token=bob"],
    );
    let connect = |token: &str| {
        Client::builder()
            .era(EraChoice::Modern)
            .bearer_token(token)
            .connect_http(&server.url)
    };
    let alice = own_client(connect("alice-token")).await;
    let bob = own_client(connect("bob-token")).await;
    let call = alice
        .call_tool("countdown", json!({ "seconds": 30 }))
        .await
        .unwrap();
    let id = call.task().expect("a task").id().to_owned();
    let err = bob
        .task(&id)
        .await
        .map(drop)
        .expect_err("bob cannot see alice's task");
    assert!(err.to_string().contains("not found"), "{err}");
    let update = json!({ "taskId": id, "inputResponses": {} });
    for (method, params) in [
        ("tasks/cancel", json!({ "taskId": id })),
        ("tasks/update", update),
    ] {
        let err = post(&server.url, Some("bob-token"), method, params).await;
        assert_eq!(err["error"]["code"], -32602, "bob's {method}: {err}");
    }
    let theirs = alice.task(&id).await.expect("alice sees her task");
    assert_eq!(theirs.snapshot().status, TaskStatus::Working);
    theirs.cancel().await.expect("alice cancels her task");

    // The bridge refuses its routes to a caller the authenticator refuses (-32001); rmcp's own
    // tools are the application's to guard (a layer before rmcp).
    for token in [None, Some("mallory-token")] {
        let call = json!({ "name": "countdown", "arguments": { "seconds": 0 } });
        let refused = post(&server.url, token, "tools/call", call).await;
        assert_eq!(refused["error"]["code"], -32001, "{refused}");
    }
    let echoed = post(
        &server.url,
        None,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "x" } }),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "x", "{echoed}");
    alice.close().await;
    bob.close().await;
}

/// Through the bridge over rmcp's Streamable HTTP, with OAuth JWTs of a test issuer
/// (`--oauth-issuer`, `--oauth-audience`, as `example_server` takes them), `research`
/// (`scope = "research"`) refuses a token without the scope with the JSON-RPC error mcp-tasks'
/// own HTTP answers, on the call and on the task's requests, and is not listed to it; a token
/// with the scope runs it. rmcp's own tools are the application's to guard.
#[tokio::test]
async fn a_scoped_tool_needs_its_scope_through_the_bridge_over_http() {
    use mcp_tasks_tests::oauth::{Issuer, ProtectedServer, research_refused};
    let issuer = Issuer::start();
    let server = ProtectedServer::start_bin(BIN, &issuer.url, &[]);
    let url = server.url.as_str();
    let plain = issuer.token(json!({ "aud": url, "scope": "profile" }));
    let research = issuer.token(json!({ "aud": url, "scope": "profile research" }));
    let listed = |answer: Value| -> Vec<String> {
        (answer["result"]["tools"].as_array())
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // The example's `list_tools` leaves out what the token may not call (`permitted_tools`).
    let tools = listed(post(url, Some(&plain), "tools/list", json!({})).await);
    assert!(tools.contains(&"countdown".to_owned()), "{tools:?}");
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"research".to_owned()), "{tools:?}");
    let tools = listed(post(url, Some(&research), "tools/list", json!({})).await);
    assert!(tools.contains(&"research".to_owned()), "{tools:?}");
    let call = json!({ "name": "research", "arguments": { "topic": "owls" } });
    let refused = post(url, Some(&plain), "tools/call", call.clone()).await;
    assert_eq!(refused["error"], research_refused(), "{refused}");
    let created = post(url, Some(&research), "tools/call", call).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id in {created}"))
        .to_owned();
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = post(url, Some(&plain), method, json!({ "taskId": id })).await;
        assert_eq!(refused["error"], research_refused(), "{method}: {refused}");
    }
    let got = post(url, Some(&research), "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    let echoed = post(
        url,
        Some(&plain),
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "x" } }),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "x", "{echoed}");
}

// ---------------------------------------------------------------------------------------------
// The `mcp-tasks` command.

/// `mcp-tasks <args>` to its end: (exit code, stdout, stderr).
async fn mcp_tasks(args: &[&str]) -> (Option<i32>, String, String) {
    let bin = mcp_tasks_tests::cli::mcp_tasks_bin();
    let run = tokio::process::Command::new(bin)
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = timeout(WAIT, run)
        .await
        .expect("ends in time")
        .expect("runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// `research` through its two questions (answered with `--answers`), and the rmcp tools inline,
/// with the command, over stdio and HTTP. `--era modern`: over stdio the command's `auto` opens a
/// 2025-11-25 session with rmcp, where a task-only tool is refused (the bridge's reduced mode).
#[tokio::test]
async fn the_mcp_tasks_command_runs_research_and_the_rmcp_tools() {
    let server = HttpServer::start_bin(BIN, &[]);
    let bin = example_bin(BIN);
    let stdio = ["--", bin.to_str().unwrap()];
    let http = ["--url", server.url.as_str()];
    for target in [&stdio[..], &http[..]] {
        let mut args = vec![
            "call",
            "research",
            "--era",
            "modern",
            "--args",
            "topic=tides",
        ];
        args.extend(["--json", "--answers"]);
        args.push(r#"{"sources": 3, "@sampling": "Tides follow the moon."}"#);
        args.extend_from_slice(target);
        let (code, out, err) = mcp_tasks(&args).await;
        assert_eq!(code, Some(0), "{target:?}: {err}");
        let result: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(
            result["structuredContent"]["summary"], "Tides follow the moon.",
            "{out}"
        );
        let mut args = vec!["call", "add", "--args", "a=40", "--args", "b=2", "--json"];
        args.extend_from_slice(target);
        let (code, out, err) = mcp_tasks(&args).await;
        assert_eq!(code, Some(0), "{target:?}: {err}");
        assert!(out.contains("42"), "{target:?}: {out}");
    }
}

/// `mcp-tasks <args>` with stderr read line by line: once a line satisfies `interrupt_at`, the
/// command gets SIGINT (what Ctrl-C sends). Its end: (exit code, stdout, stderr, which holds the
/// server's log too when the command started the server over stdio).
async fn mcp_tasks_interrupted(
    args: &[&str],
    log_filter: &str,
    interrupt_at: fn(&str) -> bool,
) -> (Option<i32>, String, String) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    let mut child = tokio::process::Command::new(mcp_tasks_tests::cli::mcp_tasks_bin())
        .args(args)
        .env("RUST_LOG", log_filter)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp-tasks starts");
    let pid = child.id().expect("running").to_string();
    let mut stdout = child.stdout.take().expect("piped");
    let out = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text).await;
        text
    });
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let err = tokio::spawn(async move {
        let (mut all, mut sent) = (String::new(), false);
        while let Ok(Some(line)) = lines.next_line().await {
            if !sent && interrupt_at(&line) {
                sent = true;
                let kill = tokio::process::Command::new("kill")
                    .args(["-INT", &pid])
                    .status();
                assert!(kill.await.is_ok_and(|s| s.success()), "kill -INT {pid}");
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let status = timeout(WAIT, child.wait())
        .await
        .expect("mcp-tasks ends in time")
        .expect("mcp-tasks runs");
    let err = timeout(WAIT, err).await.expect("stderr closes").unwrap();
    let out = timeout(WAIT, out).await.expect("stdout closes").unwrap();
    (status.code(), out, err)
}

/// The task id in the command's confirmation `mcp-tasks: task ID cancelled`, which it prints
/// only once the server's `tasks/get` said `cancelled`.
fn confirmed_cancelled(code: Option<i32>, err: &str) -> String {
    assert_eq!(code, Some(130), "Ctrl-C ends the command with 130:\n{err}");
    assert!(err.contains("^C: cancelling task"), "{err}");
    let id = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp-tasks: task ")?
                .strip_suffix(" cancelled")
        })
        .unwrap_or_else(|| panic!("the server did not confirm the cancellation:\n{err}"));
    id.to_owned()
}

/// A line of the command's task display showing the countdown running (`task ID: ... 29s left`).
fn counting_down(line: &str) -> bool {
    line.starts_with("task ") && line.ends_with("s left")
}

/// Ctrl-C on `mcp-tasks call countdown` against the bridge, over stdio: the command sends
/// `tasks/cancel`, the server's `tasks/get` says `cancelled` (the command's confirmation, exit
/// 130), and the server's engine logs that the tool itself stopped (it honoured its cancellation
/// within the grace period, not cut off after it).
#[tokio::test]
async fn the_mcp_tasks_command_cancels_a_countdown_task_over_stdio() {
    let bin = example_bin(BIN);
    let args = [
        "call",
        "countdown",
        "--era",
        "modern",
        "--args",
        "seconds=30",
        "--",
        bin.to_str().unwrap(),
    ];
    // The server inherits the command's stderr and its RUST_LOG.
    let filter = "warn,mcp_tasks_runtime::task=debug";
    let (code, out, err) = mcp_tasks_interrupted(&args, filter, counting_down).await;
    let id = confirmed_cancelled(code, &err);
    assert!(!out.contains("liftoff"), "{out}");
    assert!(
        err.lines()
            .any(|l| l.contains(&id) && l.contains("the tool stopped")),
        "the server's tool did not stop on its own:\n{err}"
    );
}

/// [`the_mcp_tasks_command_cancels_a_countdown_task_over_stdio`] over rmcp's Streamable HTTP
/// server (with a bearer token): and afterwards the server, still running, answers `tasks/get`
/// with `cancelled`.
#[tokio::test]
async fn the_mcp_tasks_command_cancels_a_countdown_task_over_http() {
    let server = Instance::start_bin(BIN, "bridge", "memory", &[]);
    let args = [
        "call",
        "countdown",
        "--era",
        "modern",
        "--args",
        "seconds=30",
        "--url",
        &server.url,
        "--token",
        instances::TOKEN,
    ];
    let (code, out, err) = mcp_tasks_interrupted(&args, "warn", counting_down).await;
    let id = confirmed_cancelled(code, &err);
    assert!(!out.contains("liftoff"), "{out}");
    server.wait_for_log(&[&id, "the tool stopped"]).await;
    let task = instances::result(
        &instances::client(),
        &server.url,
        "tasks/get",
        json!({ "taskId": id }),
    )
    .await;
    assert_eq!(task["status"], "cancelled", "{task}");
}

/// One modern request over HTTP (with a bearer token, if any), answered as JSON or as an SSE
/// stream: the JSON-RPC response.
async fn post(url: &str, token: Option<&str>, method: &str, params: Value) -> Value {
    let client = reqwest::Client::new();
    let task = params["taskId"].as_str().map(str::to_owned);
    let mut request = mcp_tasks_tests::http::modern_post(&client, url, method, params, task_caps());
    if let Some(task) = task {
        request = request.header("mcp-name", task); // rmcp requires it on tasks/*
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let text = timeout(WAIT, async { request.send().await?.text().await })
        .await
        .expect("answered in time")
        .expect("an HTTP answer");
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(message) => vec![message],
        Err(_) => (text.lines())
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    messages
        .into_iter()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or_else(|| panic!("no response in {text:?}"))
}

// ---------------------------------------------------------------------------------------------
// The rmcp 3.11 client.

#[allow(
    deprecated,
    reason = "`research` samples, and rmcp 3.11 marks sampling deprecated (SEP-2577)"
)]
mod with_rmcp {
    use super::*;
    use mcp_tasks_runtime::rmcp::TaskTools;
    use mcp_tasks_runtime::schemars::{self, JsonSchema};
    use mcp_tasks_runtime::{
        ElicitOutcome, Principal, Server, State, ToolContext, ToolError, tool,
    };
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::tool::ToolCallContext;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientConfig,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        GetTaskParams, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
        ServerCapabilities, ServerConfig, TaskPayload, UpdateTaskParams,
    };
    use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
    use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
    use rmcp::{
        ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, ServerHandler, ServiceExt,
    };

    fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).expect("an rmcp type")
    }

    /// An rmcp client that declares the tasks extension, elicitation and sampling, and answers
    /// every question the same way.
    #[derive(Clone)]
    struct Answers {
        version: &'static str,
    }

    impl ClientHandler for Answers {
        async fn create_elicitation(
            &self,
            _request: ElicitRequestParams,
            _context: RequestContext<RoleClient>,
        ) -> Result<ElicitResult, ErrorData> {
            Ok(from(
                json!({ "action": "accept", "content": { "sources": 3, "name": "Ada" } }),
            ))
        }

        async fn create_message(
            &self,
            _params: CreateMessageRequestParams,
            _context: RequestContext<RoleClient>,
        ) -> Result<CreateMessageResult, ErrorData> {
            Ok(from(
                json!({ "model": "m", "role": "assistant", "content": { "type": "text", "text": "Tides follow the moon." } }),
            ))
        }

        fn get_info(&self) -> ClientConfig {
            from(json!({
                "protocolVersion": self.version,
                "capabilities": task_caps(),
                "clientInfo": { "name": "rmcp-test", "version": "0" }
            }))
        }
    }

    fn modern() -> ClientLifecycleMode {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    }

    fn call(name: &str, arguments: Value) -> CallToolRequestParams {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments.as_object().cloned();
        params
    }

    /// The answer a client gives to one stored input request, by its method.
    fn answer(request: &Value) -> Value {
        match request["method"].as_str() {
            Some("elicitation/create") => {
                json!({ "action": "accept", "content": { "sources": 3 } })
            }
            Some("sampling/createMessage") => {
                json!({ "model": "m", "role": "assistant", "content": { "type": "text", "text": "Tides follow the moon." } })
            }
            other => panic!("unexpected input request {other:?}"),
        }
    }

    /// `research` to completion through `tasks/get` and `tasks/update`, a `countdown` task
    /// cancelled, and the server's own tools inline: with rmcp's client API only.
    async fn rmcp_flow(client: RunningService<RoleClient, Answers>) {
        let CallToolResponse::Task(created) = client
            .call_tool_once(call("research", json!({ "topic": "tides" })))
            .await
            .expect("research starts")
        else {
            panic!("research runs as a task");
        };
        let id = created.task.task_id.clone();
        let (mut answered, started) = (0, Instant::now());
        let result = loop {
            assert!(started.elapsed() < WAIT, "research did not end in time");
            let got = client
                .get_task(GetTaskParams::new(id.clone()))
                .await
                .expect("tasks/get");
            match got.task.payload {
                TaskPayload::InputRequired { input_requests } => {
                    let asked = serde_json::to_value(&input_requests).unwrap();
                    let responses: serde_json::Map<String, Value> =
                        (asked.as_object().unwrap().iter())
                            .map(|(k, r)| (k.clone(), answer(r)))
                            .collect();
                    answered += responses.len();
                    let update: UpdateTaskParams =
                        from(json!({ "taskId": id, "inputResponses": responses }));
                    client.update_task(update).await.expect("tasks/update");
                }
                TaskPayload::Completed { result } => break result,
                TaskPayload::Working => tokio::time::sleep(Duration::from_millis(20)).await,
                other => panic!("research ended {other:?}"),
            }
        };
        assert_eq!(answered, 2, "an elicitation, then a sampling");
        assert_eq!(
            result["structuredContent"]["summary"], "Tides follow the moon.",
            "{result:?}"
        );

        let CallToolResponse::Task(created) = client
            .call_tool_once(call("countdown", json!({ "seconds": 30 })))
            .await
            .expect("countdown starts")
        else {
            panic!("countdown runs as a task for a client with the extension");
        };
        let id = created.task.task_id;
        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .expect("tasks/cancel");
        let started = Instant::now();
        loop {
            let got = client
                .get_task(GetTaskParams::new(id.clone()))
                .await
                .unwrap();
            if let TaskPayload::Cancelled = got.task.payload {
                break;
            }
            assert!(started.elapsed() < WAIT, "still {:?}", got.task.payload);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        let echoed = client
            .call_tool(call("echo", json!({ "text": "hi" })))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&echoed).unwrap()["content"][0]["text"],
            "hi"
        );
        let sum = client
            .call_tool(call("add", json!({ "a": 1, "b": 2 })))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&sum).unwrap()["content"][0]["text"],
            "3"
        );
        client.cancel().await.expect("closes");
    }

    #[tokio::test]
    async fn the_rmcp_client_runs_the_flows_over_stdio() {
        let mut command = tokio::process::Command::new(example_bin(BIN));
        command.env("RUST_LOG", "warn");
        let transport = TokioChildProcess::new(command).expect("spawns");
        let answers = Answers {
            version: "2026-07-28",
        };
        let client = timeout(WAIT, answers.serve_with_lifecycle(transport, modern()))
            .await
            .expect("connects in time")
            .expect("connects");
        rmcp_flow(client).await;
    }

    #[tokio::test]
    async fn the_rmcp_client_runs_the_flows_over_http() {
        let server = HttpServer::start_bin(BIN, &[]);
        let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
        let answers = Answers {
            version: "2026-07-28",
        };
        let client = timeout(WAIT, answers.serve_with_lifecycle(transport, modern()))
            .await
            .expect("connects in time")
            .expect("connects");
        rmcp_flow(client).await;
    }

    // -----------------------------------------------------------------------------------------
    // Inline input, in an rmcp server in this process: a tool that asks, run inline.

    #[derive(serde::Deserialize, JsonSchema)]
    struct Name {
        /// Who is asking.
        name: String,
    }

    /// The greeting, as application state.
    struct Greeting(&'static str);

    /// Greets whoever the user says they are, saying who asked; always inline.
    #[tool]
    async fn hello(ctx: ToolContext, greeting: State<Greeting>) -> Result<String, ToolError> {
        let asker = ctx.principal().map_or("nobody", |p| p.as_str()).to_owned();
        match ctx.elicit::<Name>("Who are you?").await? {
            ElicitOutcome::Accept(Name { name }) => {
                Ok(format!("{}, {name}! ({asker} asked)", greeting.0))
            }
            _ => Err(ToolError::new("no name")),
        }
    }

    #[derive(Clone)]
    struct Inline {
        router: ToolRouter<Inline>,
        tasks: TaskTools,
    }

    impl ServerHandler for Inline {
        mcp_tasks_runtime::rmcp_task_methods!(tasks);

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            self.router
                .call(ToolCallContext::new(self, request, context))
                .await
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            Ok(ListToolsResult::with_all_items(self.router.list_all()))
        }

        fn get_info(&self) -> ServerConfig {
            let capabilities = ServerCapabilities::builder().enable_tools().build();
            ServerConfig::new(self.tasks.capabilities(capabilities))
        }
    }

    /// `Inline` with these task tools, served in this process: the client's end.
    fn in_process(tasks: TaskTools) -> tokio::io::DuplexStream {
        let server = Inline {
            router: tasks.router(),
            tasks,
        };
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        client_io
    }

    async fn hello_inline(version: &'static str, lifecycle: ClientLifecycleMode) -> String {
        let server = Server::builder("inline", "0")
            .state(Greeting("Hello"))
            .tool::<hello>();
        let tasks = TaskTools::new(&server.build().unwrap()).principal(Principal::new("alice"));
        let client_io = in_process(tasks);
        let client = timeout(
            WAIT,
            Answers { version }.serve_with_lifecycle(client_io, lifecycle),
        )
        .await
        .expect("connects in time")
        .expect("connects");
        // rmcp's `call_tool` drives MRTR rounds itself (answering through `Answers`).
        let result = timeout(WAIT, client.call_tool(call("hello", json!({}))))
            .await
            .expect("answered in time")
            .expect("a result");
        let _ = client.cancel().await;
        serde_json::to_value(&result).unwrap()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// 2026-07-28: the question is an `InputRequiredResult` (MRTR), rmcp's client answers it and
    /// calls again with the answer. The tool sees its `State<T>` and the bridge's principal.
    #[tokio::test]
    async fn inline_input_is_mrtr_through_rmcps_input_required() {
        assert_eq!(
            hello_inline("2026-07-28", modern()).await,
            "Hello, Ada! (alice asked)"
        );
    }

    /// An `initialize` session (2025-11-25) cannot take an `InputRequiredResult`: the bridge asks
    /// with a plain `elicitation/create` on the session instead, and the client sees one call.
    #[tokio::test]
    async fn inline_input_in_an_initialize_session_is_a_plain_request() {
        assert_eq!(
            hello_inline("2025-11-25", ClientLifecycleMode::Initialize).await,
            "Hello, Ada! (alice asked)"
        );
    }

    /// Reports half way, then ends; always inline.
    #[tool]
    async fn steps(ctx: ToolContext) -> String {
        ctx.progress(1.0, Some(2.0), Some("half way"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        "done".into()
    }

    /// An rmcp client that keeps the progress notifications it gets.
    #[derive(Clone)]
    struct Progress(std::sync::Arc<std::sync::Mutex<Vec<Step>>>);

    /// One `notifications/progress`: progress and total.
    type Step = (f64, Option<f64>);

    impl ClientHandler for Progress {
        async fn on_progress(
            &self,
            params: rmcp::model::ProgressNotificationParam,
            _context: rmcp::service::NotificationContext<RoleClient>,
        ) {
            self.0.lock().unwrap().push((params.progress, params.total));
        }
    }

    /// `ctx.progress` in an inline call reaches the rmcp client as `notifications/progress` for
    /// the call's progress token, on rmcp's connection.
    #[tokio::test]
    async fn progress_of_an_inline_call_reaches_the_rmcp_client() {
        let tasks = TaskTools::new(
            &Server::builder("steps", "0")
                .tool::<steps>()
                .build()
                .unwrap(),
        );
        let seen = Progress(Default::default());
        let client = timeout(
            WAIT,
            seen.clone()
                .serve_with_lifecycle(in_process(tasks), modern()),
        )
        .await
        .expect("connects in time")
        .expect("connects");
        let mut params = call("steps", json!({}));
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_progress_token(rmcp::model::ProgressToken(
            rmcp::model::NumberOrString::String("p1".into()),
        ));
        params.meta = Some(meta);
        let result = timeout(WAIT, client.call_tool(params))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_value(&result).unwrap()["content"][0]["text"],
            "done"
        );
        let started = Instant::now();
        while seen.0.lock().unwrap().is_empty() && started.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(*seen.0.lock().unwrap(), [(1.0, Some(2.0))]);
        let _ = client.cancel().await;
    }
}
