//! The example server binary over real stdio pipes, in both protocol eras, with bad input.

use mcp_tasks_tests::{StdioClient, modern, modern_meta};
use serde_json::{Value, json};

fn no_caps() -> Value {
    json!({})
}

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn legacy_session_lists_and_calls_tools() {
    let mut c = StdioClient::example();
    let init = c.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "mcp-tasks-example");
    assert_eq!(init["serverInfo"]["version"], "0.1.0");
    assert!(init["capabilities"]["tools"].is_object());
    assert!(
        init.get("resultType").is_none(),
        "legacy results carry no resultType: {init}"
    );
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|s| s.contains("greet"))
    );

    let pong = c.result("ping", json!({})).await;
    assert_eq!(pong, json!({}));

    let tools = c.result("tools/list", json!({})).await;
    assert!(tools.get("resultType").is_none());
    let greet = tool(&tools, "greet");
    assert_eq!(greet["description"], "Say hello to someone.");
    assert_eq!(greet["inputSchema"]["type"], "object");
    assert_eq!(greet["inputSchema"]["properties"]["name"]["type"], "string");
    assert_eq!(
        greet["inputSchema"]["properties"]["name"]["description"],
        "Who to greet."
    );
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    assert_eq!(
        greet["execution"]["taskSupport"], "forbidden",
        "legacy tools/list publishes execution.taskSupport"
    );
    let add = tool(&tools, "add");
    assert_eq!(add["outputSchema"]["type"], "object");
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");
    assert_eq!(add["annotations"]["readOnlyHint"], true);
    for t in tools["tools"].as_array().unwrap() {
        assert_eq!(
            t["inputSchema"]["type"], "object",
            "every input schema is an object: {t}"
        );
    }

    let hello = c
        .result(
            "tools/call",
            json!({ "name": "greet", "arguments": { "name": "Ada" } }),
        )
        .await;
    assert_eq!(
        hello,
        json!({ "content": [{ "type": "text", "text": "Hello, Ada!" }] })
    );

    let sum = c
        .result(
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 2, "b": 3.5 } }),
        )
        .await;
    assert_eq!(sum["structuredContent"], json!({ "sum": 5.5 }));
    assert_eq!(sum["content"][0]["type"], "text");
    assert_eq!(
        serde_json::from_str::<Value>(sum["content"][0]["text"].as_str().unwrap()).unwrap(),
        json!({ "sum": 5.5 })
    );

    let failed = c
        .result(
            "tools/call",
            json!({ "name": "always_fails", "arguments": {} }),
        )
        .await;
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["content"][0]["text"], "this tool always fails");

    assert!(c.close().await.success());
}

#[tokio::test]
async fn modern_requests_are_stateless_and_carry_result_type() {
    let mut c = StdioClient::example();
    let discover = c
        .result(
            "server/discover",
            json!({ "_meta": modern_meta(no_caps()) }),
        )
        .await;
    assert_eq!(discover["resultType"], "complete");
    assert!(
        discover["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(
        discover["capabilities"].get("tasks").is_none(),
        "no legacy tasks capability in the modern era"
    );
    assert!(discover["capabilities"]["tools"].is_object());
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-tasks-example"
    );
    assert!(discover["ttlMs"].as_u64().is_some());
    assert!(["public", "private"].contains(&discover["cacheScope"].as_str().unwrap()));
    assert!(discover.get("serverInfo").is_none());

    // No initialize: every request stands on its own _meta.
    let tools = c.result("tools/list", modern(json!({}), no_caps())).await;
    assert_eq!(tools["resultType"], "complete");
    assert_eq!(
        tools["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "0.1.0"
    );
    let greet = tool(&tools, "greet");
    assert_eq!(greet["description"], "Say hello to someone.");
    assert_eq!(greet["inputSchema"]["type"], "object");
    assert!(
        greet.get("execution").is_none(),
        "no execution.taskSupport in the modern era"
    );

    let hello = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "Grace" } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(hello["resultType"], "complete");
    assert_eq!(
        hello["content"],
        json!([{ "type": "text", "text": "Hello, Grace!" }])
    );
    assert!(hello["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    // A legacy `task` param means nothing in the modern era.
    let hello = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "x" }, "task": { "ttl": 60000 } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(hello["resultType"], "complete");
    assert!(hello.get("taskId").is_none());

    // ping does not exist in 2026-07-28.
    let err = c.error("ping", modern(json!({}), no_caps())).await;
    assert_eq!(err["code"], -32601);
    assert!(c.close().await.success());
}

#[tokio::test]
async fn both_eras_on_one_connection() {
    let mut c = StdioClient::example();
    c.initialize(json!({})).await;
    let legacy = c
        .result(
            "tools/call",
            json!({ "name": "greet", "arguments": { "name": "L" } }),
        )
        .await;
    assert!(legacy.get("resultType").is_none());
    let modern_res = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "M" } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(modern_res["resultType"], "complete");
    assert_eq!(modern_res["content"][0]["text"], "Hello, M!");
}

#[tokio::test]
async fn bad_input_gets_precise_errors_and_the_server_keeps_serving() {
    let mut c = StdioClient::example();

    c.send_raw("{ this is not json").await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert_eq!(r["id"], Value::Null);

    c.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("batch"));

    c.send_raw("42").await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32600, "{r}");

    c.send_raw(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#)
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{r}"
    );

    c.send_raw(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1,2]}"#)
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(8), json!(-32600)),
        "{r}"
    );

    let err = c
        .error("no/such/method", modern(json!({}), no_caps()))
        .await;
    assert_eq!(err["code"], -32601);

    let err = c
        .error(
            "tools/call",
            modern(json!({ "name": "nope", "arguments": {} }), no_caps()),
        )
        .await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("nope"), "{err}");

    // Arguments that do not fit the tool's input are tool errors (`isError: true`, the message
    // naming the argument), which the model can read; only a malformed `arguments` is -32602.
    let bad = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "add", "arguments": { "a": "two", "b": 1 } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(bad["resultType"], "complete", "{bad}");
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("invalid argument `a`: invalid type: string \"two\""),
        "names the argument: {bad}"
    );

    let bad = c
        .result(
            "tools/call",
            modern(json!({ "name": "greet", "arguments": {} }), no_caps()),
        )
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(
        bad["content"][0]["text"], "missing required argument `name`",
        "{bad}"
    );

    let err = c
        .error(
            "tools/call",
            modern(json!({ "name": "greet", "arguments": "Ada" }), no_caps()),
        )
        .await;
    assert_eq!(err["code"], -32602);

    let mut meta = modern_meta(no_caps());
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let err = c.error("tools/list", json!({ "_meta": meta })).await;
    assert_eq!(err["code"], -32022);
    assert_eq!(err["data"]["requested"], "1900-01-01");
    assert!(
        err["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );

    let err = c
        .error(
            "tools/list",
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }),
        )
        .await;
    assert_eq!(err["code"], -32602);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities"),
        "{err}"
    );

    let err = c
        .error(
            "tools/list",
            json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } }),
        )
        .await;
    assert_eq!(err["code"], -32602);
    assert!(
        err["message"].as_str().unwrap().contains("protocolVersion"),
        "{err}"
    );

    // Neither per-request _meta nor a session.
    let err = c.error("tools/list", json!({})).await;
    assert_eq!(err["code"], -32602);

    // A panicking tool: an error for that call, nothing else breaks.
    let err = c
        .error(
            "tools/call",
            modern(json!({ "name": "explode", "arguments": {} }), no_caps()),
        )
        .await;
    assert_eq!(err["code"], -32603);
    assert!(err["message"].as_str().unwrap().contains("kaboom"), "{err}");

    // Still serving.
    let hello = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "still here" } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(hello["content"][0]["text"], "Hello, still here!");
    assert!(c.close().await.success());
}

#[tokio::test]
async fn a_slow_tool_does_not_block_other_requests() {
    let mut c = StdioClient::example();
    let slow_id = c.id();
    c.send(
        &json!({ "jsonrpc": "2.0", "id": slow_id, "method": "tools/call",
        "params": modern(json!({ "name": "sleep", "arguments": { "ms": 3000 } }), no_caps()) }),
    )
    .await;
    let started = std::time::Instant::now();
    let hello = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "fast" } }),
                no_caps(),
            ),
        )
        .await;
    assert_eq!(hello["content"][0]["text"], "Hello, fast!");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(2500),
        "greet waited for sleep: {:?}",
        started.elapsed()
    );
    let slow = c.response(&slow_id).await;
    assert_eq!(slow["result"]["content"][0]["text"], "slept 3000 ms");
}

#[tokio::test]
async fn notifications_cancelled_cancels_an_inline_call() {
    let mut c = StdioClient::example();
    c.initialize(json!({})).await;
    let id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "sleep", "arguments": { "ms": 60000 } } }))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    c.notify(
        "notifications/cancelled",
        json!({ "requestId": id, "reason": "test" }),
    )
    .await;
    // No response for the cancelled request; the next one is answered at once.
    let pong = c.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    let (rest, status) = c.close_and_drain().await;
    assert!(status.success());
    assert!(
        rest.iter().all(|m| m["id"] != id),
        "a cancelled request gets no response: {rest:?}"
    );
}

#[tokio::test]
async fn eof_lets_in_flight_requests_finish() {
    let mut c = StdioClient::example();
    let id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": modern(json!({ "name": "sleep", "arguments": { "ms": 300 } }), no_caps()) }))
        .await;
    let (rest, status) = c.close_and_drain().await;
    assert!(status.success());
    let resp = rest
        .iter()
        .find(|m| m["id"] == id)
        .expect("the in-flight call was answered before exit");
    assert_eq!(resp["result"]["content"][0]["text"], "slept 300 ms");
}

/// A request that reuses the id of one in flight is refused with `-32600`; the first one is
/// untouched and still answers, and once it has, the id can be used again.
#[tokio::test]
async fn a_request_reusing_an_in_flight_id_is_refused_and_the_first_still_answers() {
    let mut c = StdioClient::example();
    let id = c.id();
    let sleep = |ms: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": modern(json!({ "name": "sleep", "arguments": { "ms": ms } }), no_caps()) })
    };
    // Long enough to be in flight still when the second comes, on a loaded machine.
    c.send(&sleep(2000)).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    c.send(&sleep(2000)).await;
    let refused = c.response(&id).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in flight")),
        "{refused}"
    );
    let first = c.response(&id).await;
    assert_eq!(
        first["result"]["content"][0]["text"], "slept 2000 ms",
        "{first}"
    );
    // Done: the id is free again.
    c.send(&sleep(10)).await;
    let again = c.response(&id).await;
    assert_eq!(again["result"]["content"][0]["text"], "slept 10 ms");
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly() {
    let mut c = StdioClient::example();
    // An answer (to anything) proves the serve loop runs, and so has set up its SIGTERM
    // handler: a signal before that would stop the process the default way (signal 15).
    let answer = c.request("tools/list", modern(json!({}), no_caps())).await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    let id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": modern(json!({ "name": "sleep", "arguments": { "ms": 60000 } }), no_caps()) }))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &c.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (_, status) = c.close_and_drain().await;
    assert!(status.success(), "exit status after SIGTERM: {status:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn the_readme_quick_start_is_the_compiled_example() {
    let root = mcp_tasks_tests::workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    // The first Rust block (all of them are compiled as doc tests of tests/support).
    let fence = "```rust,no_run\n";
    let start = readme.find(fence).expect("a rust block in the README") + fence.len();
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let example = std::fs::read_to_string(root.join("examples/src/bin/quickstart.rs")).unwrap();
    let body = example.split_once("\n\n").expect("doc line, then code").1;
    assert_eq!(
        block.trim(),
        body.trim(),
        "README quick start and examples/src/bin/quickstart.rs differ"
    );
}

/// The levels of the log messages received so far (taken out of the backlog).
fn logged_levels(c: &mut StdioClient) -> Vec<String> {
    let mut levels = Vec::new();
    while let Some(m) = c.try_take(|m| m["method"] == "notifications/message") {
        assert_eq!(m["params"]["logger"], "test_logging_tool", "{m}");
        levels.push(m["params"]["level"].as_str().unwrap().to_owned());
    }
    levels
}

#[tokio::test]
async fn log_messages_follow_the_level_the_client_asked_for_in_each_era() {
    let call = json!({ "name": "test_logging_tool", "arguments": {} });

    // 2025-11-25: every level until logging/setLevel, then that level and above.
    let mut c = StdioClient::conformance();
    let init = c.initialize(json!({})).await;
    assert_eq!(init["capabilities"]["logging"], json!({}));
    c.result("tools/call", call.clone()).await;
    assert_eq!(logged_levels(&mut c).len(), 8);
    let set = c
        .result("logging/setLevel", json!({ "level": "error" }))
        .await;
    assert_eq!(set, json!({}));
    c.result("tools/call", call.clone()).await;
    assert_eq!(
        logged_levels(&mut c),
        ["error", "critical", "alert", "emergency"]
    );
    let err = c
        .error("logging/setLevel", json!({ "level": "loud" }))
        .await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("`loud`"), "{err}");
    c.close().await;

    // 2026-07-28: nothing unless the request's _meta names a level; no logging/setLevel.
    let mut c = StdioClient::conformance();
    c.result("tools/call", modern(call.clone(), no_caps()))
        .await;
    assert_eq!(logged_levels(&mut c), Vec::<String>::new());
    let mut params = modern(call.clone(), no_caps());
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("critical");
    c.result("tools/call", params.clone()).await;
    assert_eq!(logged_levels(&mut c), ["critical", "alert", "emergency"]);
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(5);
    let err = c.error("tools/call", params).await;
    assert_eq!(err["code"], -32602);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol/logLevel"),
        "{err}"
    );
    let err = c
        .error(
            "logging/setLevel",
            modern(json!({ "level": "info" }), no_caps()),
        )
        .await;
    assert_eq!(err["code"], -32601);
    let discover = c
        .result("server/discover", modern(json!({}), no_caps()))
        .await;
    assert_eq!(discover["capabilities"]["logging"], json!({}));
    c.close().await;
}

/// The requests of [`stdin_and_stdout_may_be_files_pipes_or_sockets`], one per line, and a check
/// of the answers the server wrote before it exited at the end of its input.
const SCRIPTED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"file"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}"#,
    "\n",
);

fn check_scripted_answers(output: &[u8]) {
    let answers: Vec<Value> = String::from_utf8_lossy(output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
        .collect();
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id} in {answers:?}"))
    };
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(by_id(2)["result"]["content"][0]["text"], "Hello, file!");
    // Sent just before the end of input: still answered before the server exits.
    assert_eq!(by_id(3)["result"]["content"][0]["text"], "slept 200 ms");
}

/// `serve_stdio` drives pipes and sockets from the reactor and falls back to tokio's blocking
/// streams for anything else: the same session works with stdin and stdout as regular files and
/// as a socket pair (what Node's `child_process` gives a server), as the other tests show for
/// pipes.
#[test]
fn stdin_and_stdout_may_be_files_pipes_or_sockets() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let bin = mcp_tasks_tests::example_bin("example_server");
    let dir = std::env::temp_dir().join(format!("mcp-tasks-stdio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // Regular files.
    let input = dir.join("in.jsonl");
    let output = dir.join("out.jsonl");
    std::fs::write(&input, SCRIPTED).unwrap();
    let status = Command::new(&bin)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    check_scripted_answers(&std::fs::read(&output).unwrap());

    // One socket of a pair as both stdin and stdout.
    let (mut ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut child = Command::new(&bin)
        .stdin(std::os::fd::OwnedFd::from(theirs.try_clone().unwrap()))
        .stdout(std::os::fd::OwnedFd::from(theirs))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ours.write_all(SCRIPTED.as_bytes()).unwrap();
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    ours.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut out = Vec::new();
    ours.read_to_end(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    check_scripted_answers(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that counts how often the server polls it.
struct CountingReader {
    inner: tokio::io::DuplexStream,
    polls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl tokio::io::AsyncRead for CountingReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.polls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// Polls of the server's input during `d`.
async fn polls_during(polls: &std::sync::atomic::AtomicUsize, d: std::time::Duration) -> usize {
    let before = polls.load(std::sync::atomic::Ordering::Relaxed);
    tokio::time::sleep(d).await;
    polls.load(std::sync::atomic::Ordering::Relaxed) - before
}

/// `ServerConfig::stdio_spin`: after a reply, the stdio loop keeps polling its input for that
/// long, then sleeps until input comes; with zero, the default, it sleeps at once.
#[tokio::test]
async fn the_stdio_loop_polls_its_input_for_stdio_spin_after_a_reply() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    // `None`: the default configuration, which does not spin.
    for set in [
        Some(std::time::Duration::from_millis(40)),
        Some(std::time::Duration::ZERO),
        None,
    ] {
        let spin = set.unwrap_or_default();
        let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, from_server) = tokio::io::duplex(64 * 1024);
        let polls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let reader = CountingReader {
            inner: server_in,
            polls: polls.clone(),
        };
        let mut config = mcp_tasks_runtime::ServerConfig::default();
        if let Some(spin) = set {
            config = config.stdio_spin(spin);
        }
        let server = mcp_tasks_examples::example_server()
            .config(config)
            .build()
            .expect("set up");
        let serving = tokio::spawn(
            server
                .serve_io(reader, server_out)
                .with_graceful_shutdown(std::future::pending())
                .into_future(),
        );
        let mut replies = tokio::io::BufReader::new(from_server).lines();
        // A slow call: its reply is written 100 ms after its request was read.
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": modern(json!({ "name": "sleep", "arguments": { "ms": 100 } }), no_caps()) });
        to_server
            .write_all(format!("{call}\n").as_bytes())
            .await
            .unwrap();
        let reply = replies.next_line().await.unwrap().expect("a reply");
        assert!(reply.contains("slept 100 ms"), "{reply}");
        let after_reply = polls_during(&polls, std::time::Duration::from_millis(10)).await;
        tokio::time::sleep(spin).await;
        let idle = polls_during(&polls, std::time::Duration::from_millis(100)).await;
        if spin.is_zero() {
            assert_eq!(
                after_reply, 0,
                "{set:?}: no spin, the input is not polled after a reply"
            );
        } else {
            assert!(
                after_reply > 3,
                "polled {after_reply} times after the reply"
            );
        }
        assert_eq!(
            idle, 0,
            "{set:?}: the input was polled {idle} times while idle"
        );
        drop(to_server);
        serving.await.unwrap().unwrap();
    }
}

/// Spinning is bounded: a real server process left idle after its messages uses next to no CPU,
/// even with `stdio_spin` on (50 µs, as the bench serves; the default is off).
#[tokio::test]
async fn an_idle_server_process_uses_no_cpu_after_its_last_message() {
    let mut c = StdioClient::spawn_with(
        &mcp_tasks_tests::example_bin("example_server"),
        &["--stdio-spin-us", "50"],
    );
    for _ in 0..200 {
        c.request(
            "tools/call",
            modern(
                json!({ "name": "greet", "arguments": { "name": "Ada" } }),
                no_caps(),
            ),
        )
        .await;
    }
    // A reply written long after its request, which starts the spin again.
    c.request(
        "tools/call",
        modern(
            json!({ "name": "sleep", "arguments": { "ms": 100 } }),
            no_caps(),
        ),
    )
    .await;
    let cpu = || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", c.pid())).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // utime and stime, in clock ticks (usually 10 ms).
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let before = cpu();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let ticks = cpu() - before;
    assert!(
        ticks <= 5,
        "an idle server used {ticks} clock ticks of CPU in one second"
    );
}
