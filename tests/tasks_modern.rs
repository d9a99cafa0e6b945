//! Tasks in the modern era (2026-07-28 + `io.modelcontextprotocol/tasks`) and MRTR, against the
//! fixture server over real stdio pipes.

use mcp_tasks_tests::{StdioClient, modern, poll_modern};
use serde_json::{Value, json};

/// A client that declares the tasks extension and elicitation.
fn tasks_caps() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

async fn call(c: &mut StdioClient, name: &str, args: Value, caps: &Value) -> Value {
    c.result(
        "tools/call",
        modern(json!({ "name": name, "arguments": args }), caps.clone()),
    )
    .await
}

async fn get(c: &mut StdioClient, id: &str, caps: &Value) -> Value {
    c.result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
        .await
}

fn is_iso(s: &Value) -> bool {
    let s = s.as_str().unwrap_or("");
    s.len() >= 20 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T' && s.ends_with('Z')
}

#[tokio::test]
async fn a_required_task_asks_for_input_and_completes() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let created = call(
        &mut c,
        "confirm_delete",
        json!({ "filename": "a.txt" }),
        &caps,
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().expect("flat taskId").to_owned();
    assert!(id.len() >= 22, "at least 128 random bits: {id}");
    assert_eq!(created["status"], "working");
    assert!(
        is_iso(&created["createdAt"]) && is_iso(&created["lastUpdatedAt"]),
        "{created}"
    );
    assert!(created["ttlMs"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(created["pollIntervalMs"], 200);
    for absent in [
        "task",
        "ttl",
        "pollInterval",
        "result",
        "error",
        "inputRequests",
        "requestState",
    ] {
        assert!(
            created.get(absent).is_none(),
            "CreateTaskResult has no `{absent}`: {created}"
        );
    }

    // Visible at once (strong consistency).
    let first = get(&mut c, &id, &caps).await;
    assert_eq!(first["taskId"], id.as_str());
    assert_eq!(first["resultType"], "complete");

    let waiting = poll_modern(&mut c, &id, &caps, |t| t["status"] == "input_required").await;
    let requests = waiting["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Delete a.txt?");
    assert_eq!(request["params"]["requestedSchema"]["type"], "object");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );

    let ack = c
        .result(
            "tasks/update",
            modern(
                json!({ "taskId": id, "inputResponses": {
                key: { "action": "accept", "content": { "confirm": true } },
                "unknown-key": { "ignored": true }
            } }),
                caps.clone(),
            ),
        )
        .await;
    assert_eq!(ack["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(absent).is_none(), "the ack is empty: {ack}");
    }
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
    assert!(done.get("inputRequests").is_none());
    assert!(
        done["result"]
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/related-task"))
            .is_none()
    );

    // Cancelling an ended task is acknowledged, not an error.
    let ack = c
        .result(
            "tasks/cancel",
            modern(json!({ "taskId": id }), caps.clone()),
        )
        .await;
    assert_eq!(ack["resultType"], "complete");
    assert_eq!(get(&mut c, &id, &caps).await["status"], "completed");
}

#[tokio::test]
async fn two_outstanding_requests_are_answered_one_at_a_time() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let id = call(&mut c, "multi_input", json!({}), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = poll_modern(&mut c, &id, &caps, |t| {
        t["inputRequests"].as_object().is_some_and(|r| r.len() == 2)
    })
    .await;
    let keys: Vec<String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let (name_key, colour_key) =
        if waiting["inputRequests"][&keys[0]]["params"]["message"] == "Your name?" {
            (keys[0].clone(), keys[1].clone())
        } else {
            (keys[1].clone(), keys[0].clone())
        };
    c.result(
        "tasks/update",
        modern(json!({ "taskId": id, "inputResponses": { &name_key: { "action": "accept", "content": { "name": "Ada" } } } }), caps.clone()),
    )
    .await;
    // Applied before the ack: the very next read shows only the other key.
    let partial = get(&mut c, &id, &caps).await;
    assert_eq!(partial["status"], "input_required", "{partial}");
    let left: Vec<&String> = partial["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, vec![&colour_key]);
    // Answering the same key again is ignored.
    c.result(
        "tasks/update",
        modern(json!({ "taskId": id, "inputResponses": { &name_key: { "action": "accept", "content": { "name": "Eve" } } } }), caps.clone()),
    )
    .await;
    c.result(
        "tasks/update",
        modern(json!({ "taskId": id, "inputResponses": { &colour_key: { "action": "accept", "content": { "colour": "green" } } } }), caps.clone()),
    )
    .await;
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada likes green");
}

#[tokio::test]
async fn cancel_while_waiting_for_input_ends_cancelled_and_the_tool_sees_it() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let id = call(
        &mut c,
        "confirm_delete",
        json!({ "filename": "b.txt" }),
        &caps,
    )
    .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    poll_modern(&mut c, &id, &caps, |t| t["status"] == "input_required").await;
    let ack = c
        .result(
            "tasks/cancel",
            modern(json!({ "taskId": id }), caps.clone()),
        )
        .await;
    assert_eq!(
        ack,
        json!({ "resultType": "complete", "_meta": ack["_meta"].clone() })
    );
    let task = get(&mut c, &id, &caps).await;
    assert_eq!(task["status"], "cancelled");
    assert!(task.get("inputRequests").is_none() && task.get("result").is_none());
    c.wait_for_log("confirm_delete: stopped waiting for confirmation")
        .await;
    // An answer after the cancel changes nothing.
    c.result("tasks/update", modern(json!({ "taskId": id, "inputResponses": { "elicit-0": { "action": "accept", "content": { "confirm": true } } } }), caps.clone())).await;
    assert_eq!(get(&mut c, &id, &caps).await["status"], "cancelled");
}

#[tokio::test]
async fn task_support_decides_the_path() {
    let caps = tasks_caps();
    let none = json!({});
    let mut c = StdioClient::conformance();
    // required + non-declaring client: -32021 with the capability it needs.
    let err = c
        .error(
            "tools/call",
            modern(
                json!({ "name": "failing_job", "arguments": {} }),
                none.clone(),
            ),
        )
        .await;
    assert_eq!(err["code"], -32021);
    assert_eq!(
        err["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    // forbidden: never a task, even for a declaring client.
    let r = call(&mut c, "greet", json!({ "name": "x" }), &caps).await;
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"][0]["text"], "Hello, x!");
    // optional: a task only when declared on *this* request.
    let r = call(&mut c, "slow_compute", json!({ "seconds": 0 }), &none).await;
    assert_eq!(r["resultType"], "complete");
    assert!(r.get("taskId").is_none());
    let r = call(&mut c, "slow_compute", json!({ "seconds": 1 }), &caps).await;
    assert_eq!(r["resultType"], "task");
    // Bad arguments are the call's tool error at once (the server decides whether a call becomes
    // a task, and the declaring client takes a `CallToolResult` too), not a task.
    let r = call(&mut c, "slow_compute", json!({ "seconds": "x" }), &caps).await;
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["content"][0]["text"],
        "invalid argument `seconds`: invalid type: string \"x\", expected u64"
    );
    assert!(r.get("taskId").is_none(), "{r}");
}

#[tokio::test]
async fn tool_errors_complete_and_protocol_errors_and_panics_fail() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let id = call(&mut c, "failing_job", json!({}), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] != "working").await;
    assert_eq!(
        done["status"], "completed",
        "isError is still completed in the modern era: {done}"
    );
    assert_eq!(done["result"]["isError"], true);

    let id = call(&mut c, "protocol_error_job", json!({}), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], -32603);
    assert!(done["error"]["message"].is_string());
    assert!(done.get("result").is_none());
    assert!(
        done["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("internal error")),
        "{done}"
    );

    let id = call(&mut c, "panicking_job", json!({}), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "failed");
    assert!(
        done["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the job exploded"),
        "{done}"
    );
    // The server lives on, and so do other tasks.
    let r = call(&mut c, "greet", json!({ "name": "after" }), &caps).await;
    assert_eq!(r["content"][0]["text"], "Hello, after!");
}

/// `ttl` is how long a task's record is kept, not how long it may run: a task working past its
/// one-second TTL completes, and its record is deleted a TTL after it ended.
#[tokio::test]
async fn a_task_outlives_its_ttl_and_is_kept_a_ttl_after_it_ends() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    // The task ended after the last request that found it working (or the call, at first) was
    // sent: `ended` is no later than its end, however late the answers come on a loaded machine.
    let began = std::time::Instant::now();
    let mut ended = began;
    let created = call(&mut c, "short_lived", json!({}), &caps).await;
    assert_eq!(created["ttlMs"], 1000);
    let id = created["taskId"].as_str().unwrap().to_owned();
    let done = loop {
        let sent = std::time::Instant::now();
        let task = c
            .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
            .await;
        if task["status"] != "working" {
            break task;
        }
        ended = sent;
        assert!(
            began.elapsed() < std::time::Duration::from_secs(20),
            "never ended: {task}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "finished");
    // Kept for one TTL after it ended, then gone.
    let deadline = ended + std::time::Duration::from_secs(10);
    loop {
        let resp = c
            .request("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
            .await;
        if resp.get("error").is_some() {
            assert_eq!(resp["error"]["code"], -32602);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ended task was never removed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        ended.elapsed() >= std::time::Duration::from_millis(800),
        "removed before its TTL ran out"
    );
}

#[tokio::test]
async fn task_methods_errors() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    for method in ["tasks/get", "tasks/cancel"] {
        let err = c
            .error(
                method,
                modern(json!({ "taskId": "no-such-task" }), caps.clone()),
            )
            .await;
        assert_eq!(err["code"], -32602, "{method}: {err}");
    }
    let err = c
        .error(
            "tasks/update",
            modern(
                json!({ "taskId": "no-such-task", "inputResponses": {} }),
                caps.clone(),
            ),
        )
        .await;
    assert_eq!(err["code"], -32602);
    // Without the extension on the request: -32021 before any lookup.
    for (method, params) in [
        ("tasks/get", json!({ "taskId": "gate-test" })),
        (
            "tasks/update",
            json!({ "taskId": "gate-test", "inputResponses": {} }),
        ),
        ("tasks/cancel", json!({ "taskId": "gate-test" })),
    ] {
        let err = c.error(method, modern(params, json!({}))).await;
        assert_eq!(err["code"], -32021, "{method}: {err}");
        assert!(
            err["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
                .is_object()
        );
    }
    for method in ["tasks/result", "tasks/list"] {
        let err = c
            .error(method, modern(json!({ "taskId": "x" }), caps.clone()))
            .await;
        assert_eq!(err["code"], -32601, "{method}: {err}");
    }
    let err = c.error("tasks/get", modern(json!({}), caps.clone())).await;
    assert_eq!(err["code"], -32602);
}

#[tokio::test]
async fn tasks_are_bound_to_their_connection() {
    let caps = tasks_caps();
    let mut a = StdioClient::conformance();
    let id = call(&mut a, "slow_compute", json!({ "seconds": 5 }), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // A second process knows nothing of it (another owner, another store): same -32602 as unknown.
    let mut b = StdioClient::conformance();
    let err = b
        .error("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
        .await;
    assert_eq!(err["code"], -32602);
}

#[tokio::test]
async fn mrtr_inline_elicitation_with_sealed_request_state() {
    let caps = json!({ "elicitation": {} });
    let mut c = StdioClient::conformance();
    let first = call(&mut c, "ask_name", json!({}), &caps).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none());
    let (key, request) = first["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let state = first["requestState"].as_str().unwrap().to_owned();

    let retry = |state: &str, responses: Value| {
        modern(
            json!({ "name": "ask_name", "arguments": {}, "requestState": state, "inputResponses": responses }),
            caps.clone(),
        )
    };
    let done = c
        .result(
            "tools/call",
            retry(
                &state,
                json!({ &key: { "action": "accept", "content": { "name": "Alice" } } }),
            ),
        )
        .await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["content"][0]["text"], "Hello, Alice!");

    // Missing the answer: asked again (not an error).
    let again = c
        .result("tools/call", retry(&state, json!({ "other": {} })))
        .await;
    assert_eq!(again["resultType"], "input_required");

    // A tampered state is refused.
    let mut tampered = state.clone().into_bytes();
    tampered[5] = if tampered[5] == b'A' { b'B' } else { b'A' };
    let err = c
        .error(
            "tools/call",
            retry(
                std::str::from_utf8(&tampered).unwrap(),
                json!({ &key: { "action": "accept", "content": { "name": "Mallory" } } }),
            ),
        )
        .await;
    assert_eq!(err["code"], -32602);
    assert!(
        err["message"].as_str().unwrap().contains("requestState"),
        "{err}"
    );

    // A state for other arguments is refused too.
    let err = c
        .error("tools/call", modern(json!({ "name": "ask_name", "arguments": { "x": 1 }, "requestState": state, "inputResponses": {} }), caps.clone()))
        .await;
    assert_eq!(err["code"], -32602);

    // Without the elicitation capability nothing is asked: the tool's `?` turns that into
    // -32021 naming the capability (SEP-2575), not a tool error.
    let err = c
        .error(
            "tools/call",
            modern(json!({ "name": "ask_name", "arguments": {} }), json!({})),
        )
        .await;
    assert_eq!(err["code"], -32021, "{err}");
    assert_eq!(
        err["data"]["requiredCapabilities"],
        json!({ "elicitation": {} })
    );
    assert!(
        err["message"].as_str().unwrap().contains("`elicitation`"),
        "{err}"
    );
}

#[tokio::test]
async fn mrtr_answers_given_before_being_asked_count_and_unknown_keys_are_ignored() {
    let caps = json!({ "elicitation": {} });
    let mut c = StdioClient::conformance();
    let accept = |content: Value| json!({ "action": "accept", "content": content });

    // The first call already carries the answer, beside keys nobody asked: it completes.
    let done = call_with(
        &mut c,
        "test_input_required_result_elicitation",
        json!({
            "user_name": accept(json!({ "name": "Alice" })),
            "unknown_extra_key": accept(json!({ "foo": "bar" })),
        }),
        None,
        &caps,
    )
    .await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["content"][0]["text"], "Hello, Alice!");

    // Two rounds, the first answered up front: only the second is asked, and the sealed state
    // carries the first answer to the retry, which need not repeat it.
    let round = call_with(
        &mut c,
        "test_input_required_result_multi_round",
        json!({ "step1": accept(json!({ "name": "Bob" })) }),
        None,
        &caps,
    )
    .await;
    assert_eq!(round["resultType"], "input_required", "{round}");
    let keys: Vec<&String> = round["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["step2"]);
    let state = round["requestState"].as_str().unwrap();
    let done = call_with(
        &mut c,
        "test_input_required_result_multi_round",
        json!({ "step2": accept(json!({ "color": "blue" })), "step1": accept(json!({ "name": "Eve" })) }),
        Some(state),
        &caps,
    )
    .await;
    assert_eq!(done["content"][0]["text"], "Bob likes blue", "{done}");

    // Answers of the wrong shape are a protocol error naming what is wrong, not a tool error.
    for (responses, names) in [
        (json!({ "user_name": 12345 }), "`inputResponses.user_name`"),
        (json!(null), "`inputResponses`"),
        (json!(["x"]), "`inputResponses`"),
    ] {
        let err = c
            .error(
                "tools/call",
                modern(
                    json!({ "name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": responses }),
                    caps.clone(),
                ),
            )
            .await;
        assert_eq!(err["code"], -32602, "{err}");
        assert!(err["message"].as_str().unwrap().contains(names), "{err}");
    }
    // The server goes on serving.
    let again = call(
        &mut c,
        "test_input_required_result_elicitation",
        json!({}),
        &caps,
    )
    .await;
    assert_eq!(again["resultType"], "input_required");
}

async fn call_with(
    c: &mut StdioClient,
    name: &str,
    responses: Value,
    state: Option<&str>,
    caps: &Value,
) -> Value {
    let mut params = json!({ "name": name, "arguments": {}, "inputResponses": responses });
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    c.result("tools/call", modern(params, caps.clone())).await
}

#[tokio::test]
async fn input_through_mrtr_before_the_task_then_a_task() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let round1 = call(&mut c, "test_tool_with_task", json!({}), &caps).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert!(round1.get("taskId").is_none());
    let key = round1["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = round1["requestState"].as_str().unwrap().to_owned();
    let round2 = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "test_tool_with_task", "arguments": {}, "requestState": state,
                        "inputResponses": { key: { "action": "accept", "content": { "name": "Alice" } } } }),
                caps.clone(),
            ),
        )
        .await;
    assert_eq!(round2["resultType"], "task", "{round2}");
    assert!(round2.get("requestState").is_none() && round2.get("inputRequests").is_none());
    let id = round2["taskId"].as_str().unwrap().to_owned();
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Alice") && text.contains(&id),
        "the tool runs on as the task: {text}"
    );

    // Without the extension a `required` deferred tool is still refused up front.
    let err = c
        .error(
            "tools/call",
            modern(
                json!({ "name": "test_tool_with_task", "arguments": {} }),
                json!({ "elicitation": {} }),
            ),
        )
        .await;
    assert_eq!(err["code"], -32021);
}

#[tokio::test]
async fn the_example_research_task_elicits_and_samples() {
    let caps = tasks_caps();
    let mut c = StdioClient::example();
    let id = call(&mut c, "research", json!({ "topic": "tides" }), &caps).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ask = poll_modern(&mut c, &id, &caps, |t| t["status"] == "input_required").await;
    assert_eq!(ask["statusMessage"], "planning");
    let (key, req) = ask["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["sources"]["type"],
        "integer"
    );
    c.result("tasks/update", modern(json!({ "taskId": id, "inputResponses": { &key: { "action": "accept", "content": { "sources": 3 } } } }), caps.clone())).await;
    let sample = poll_modern(&mut c, &id, &caps, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    })
    .await;
    assert_eq!(sample["statusMessage"], "reading 3 sources");
    let (skey, sreq) = sample["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    assert_ne!(skey, key, "keys are unique over the task's life");
    assert_eq!(sreq["params"]["maxTokens"], 200);
    c.result(
        "tasks/update",
        modern(json!({ "taskId": id, "inputResponses": { &skey: {
            "role": "assistant", "content": { "type": "text", "text": "Tides follow the moon." }, "model": "test-model" } } }), caps.clone()),
    )
    .await;
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({ "topic": "tides", "sources": 3, "summary": "Tides follow the moon." })
    );
}
