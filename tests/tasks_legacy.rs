//! Tasks in the legacy era (2025-11-25 experimental tasks), against the fixture server over real
//! stdio pipes.

use mcp_tasks_tests::{StdioClient, poll_legacy};
use serde_json::{Value, json};

async fn session() -> StdioClient {
    let mut c = StdioClient::conformance();
    let init = c.initialize(json!({ "elicitation": {} })).await;
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
    );
    c
}

async fn create(c: &mut StdioClient, name: &str, args: Value, task: Value) -> Value {
    let r = c
        .result(
            "tools/call",
            json!({ "name": name, "arguments": args, "task": task }),
        )
        .await;
    assert!(
        r.get("resultType").is_none(),
        "legacy results have no resultType: {r}"
    );
    r["task"].clone()
}

#[tokio::test]
async fn tools_list_publishes_task_support() {
    let mut c = session().await;
    let tools = c.result("tools/list", json!({})).await;
    let support = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["execution"]["taskSupport"]
            .clone()
    };
    assert_eq!(support("greet"), "forbidden");
    assert_eq!(support("slow_compute"), "optional");
    assert_eq!(support("confirm_delete"), "required");
}

#[tokio::test]
async fn a_legacy_task_elicits_through_the_session_and_completes() {
    let mut c = session().await;
    let task = create(
        &mut c,
        "confirm_delete",
        json!({ "filename": "c.txt" }),
        json!({ "ttl": 60000 }),
    )
    .await;
    let id = task["taskId"].as_str().expect("nested task").to_owned();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000, "the requested ttl is honoured");
    assert_eq!(task["pollInterval"], 200);
    assert!(task.get("ttlMs").is_none());

    // The elicitation arrives as a server-to-client request tagged with the task.
    let request = c.wait_for(|m| m["method"] == "elicitation/create").await;
    assert_eq!(
        request["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    assert_eq!(request["params"]["message"], "Delete c.txt?");
    let waiting = poll_legacy(&mut c, &id, |t| t["status"] == "input_required").await;
    assert!(
        waiting.get("inputRequests").is_none(),
        "legacy tasks/get is the bare task: {waiting}"
    );

    // tasks/result blocks until the end.
    let result_id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": result_id, "method": "tasks/result", "params": { "taskId": id } })).await;
    c.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": {
        "action": "accept", "content": { "confirm": true },
        "_meta": { "io.modelcontextprotocol/related-task": { "taskId": id } } } }))
        .await;
    let result = c.response(&result_id).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "Deleted c.txt",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );

    let done = c.result("tasks/get", json!({ "taskId": id })).await;
    assert_eq!(done["status"], "completed");
    assert!(done.get("result").is_none());
    // Status notifications follow every change. The last one is sent once the store holds the
    // outcome, and the answers above wake when the store does, so on a loaded machine it may come
    // after them: wait for it.
    let statuses: Vec<Value> = {
        let mut seen = vec![];
        while let Some(n) = c.try_take(|m| m["method"] == "notifications/tasks/status") {
            seen.push(n["params"]["status"].clone());
        }
        if !seen.contains(&json!("completed")) {
            let n = c
                .wait_for(|m| {
                    m["method"] == "notifications/tasks/status"
                        && m["params"]["status"] == "completed"
                })
                .await;
            seen.push(n["params"]["status"].clone());
        }
        seen
    };
    assert!(
        statuses.contains(&json!("input_required")) && statuses.contains(&json!("completed")),
        "{statuses:?}"
    );

    // Cancelling an ended task is an error in this era.
    let err = c.error("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("completed"));
}

#[tokio::test]
async fn task_support_violations_are_method_not_found() {
    let mut c = StdioClient::conformance();
    // The tasks extension declared at initialize means nothing in a legacy session.
    c.initialize(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }))
        .await;
    let err = c
        .error(
            "tools/call",
            json!({ "name": "failing_job", "arguments": {} }),
        )
        .await;
    assert_eq!(err["code"], -32601, "required without task: {err}");
    let err = c
        .error(
            "tools/call",
            json!({ "name": "greet", "arguments": { "name": "x" }, "task": {} }),
        )
        .await;
    assert_eq!(err["code"], -32601, "forbidden with task: {err}");
    let ok = c
        .result(
            "tools/call",
            json!({ "name": "slow_compute", "arguments": { "seconds": 0 } }),
        )
        .await;
    assert_eq!(ok["content"][0]["text"], "result: computed after 0s");
}

#[tokio::test]
async fn is_error_fails_a_legacy_task_and_results_come_back_verbatim() {
    let mut c = session().await;
    let id = create(&mut c, "failing_job", json!({}), json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = c.result("tasks/result", json!({ "taskId": id })).await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        c.result("tasks/get", json!({ "taskId": id })).await["status"],
        "failed",
        "isError fails a legacy task"
    );

    let id = create(&mut c, "protocol_error_job", json!({}), json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let err = c.error("tasks/result", json!({ "taskId": id })).await;
    assert_eq!(err["code"], -32603);
}

#[tokio::test]
async fn list_paginates_and_cancel_returns_the_task() {
    let mut c = session().await;
    let mut ids = vec![];
    for _ in 0..55 {
        ids.push(
            create(&mut c, "slow_compute", json!({ "seconds": 30 }), json!({})).await["taskId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let page1 = c.result("tasks/list", json!({})).await;
    let cursor = page1["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let page2 = c.result("tasks/list", json!({ "cursor": cursor })).await;
    assert!(page2.get("nextCursor").is_none());
    let listed: Vec<String> = page1["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .chain(page2["tasks"].as_array().unwrap())
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ids, "every task once, oldest first");
    let err = c.error("tasks/list", json!({ "cursor": "bogus" })).await;
    assert_eq!(err["code"], -32602);

    let cancelled = c.result("tasks/cancel", json!({ "taskId": ids[0] })).await;
    assert_eq!(cancelled["taskId"], ids[0].as_str());
    assert_eq!(cancelled["status"], "cancelled");
    c.wait_for_log("slow_compute: saw cancellation").await;
    let err = c.error("tasks/get", json!({ "taskId": "nope" })).await;
    assert_eq!(err["code"], -32602);
    let err = c.error("tasks/result", json!({ "taskId": "nope" })).await;
    assert_eq!(err["code"], -32602);
}

// Another session cannot see, read or cancel a task: over HTTP, where two sessions share a server
// (`tests/hardening.rs`); a stdio connection has one session, and a second `initialize` on it is
// refused.

#[tokio::test]
async fn inline_calls_in_a_legacy_session_send_plain_requests() {
    let mut c = session().await;
    let id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "ask_name", "arguments": {} } })).await;
    let request = c.wait_for(|m| m["method"] == "elicitation/create").await;
    assert!(
        request["params"].get("_meta").is_none(),
        "not tagged with a task: {request}"
    );
    c.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "action": "accept", "content": { "name": "Grace" } } })).await;
    let result = c.response(&id).await;
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Grace!");

    // A client error answer reaches the tool as a clear error.
    let id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "ask_name", "arguments": {} } })).await;
    let request = c.wait_for(|m| m["method"] == "elicitation/create").await;
    c.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "error": { "code": -1, "message": "user closed the dialog" } })).await;
    let result = c.response(&id).await;
    assert_eq!(result["result"]["isError"], true);
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("user closed the dialog")
    );
}

#[tokio::test]
async fn a_legacy_research_task_elicits_and_samples_through_the_session() {
    let mut c = StdioClient::example();
    c.initialize(json!({ "elicitation": {}, "sampling": {} }))
        .await;
    let task = c
        .result(
            "tools/call",
            json!({ "name": "research", "arguments": { "topic": "tides" }, "task": {} }),
        )
        .await["task"]
        .clone();
    let id = task["taskId"].as_str().unwrap().to_owned();
    let result_id = c.id();
    c.send(&json!({ "jsonrpc": "2.0", "id": result_id, "method": "tasks/result", "params": { "taskId": id } })).await;
    let ask = c.wait_for(|m| m["method"] == "elicitation/create").await;
    assert_eq!(
        ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    c.send(&json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "sources": 2 } } })).await;
    let sample = c
        .wait_for(|m| m["method"] == "sampling/createMessage")
        .await;
    assert_eq!(
        sample["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    c.send(&json!({ "jsonrpc": "2.0", "id": sample["id"], "result": {
        "role": "assistant", "content": { "type": "text", "text": "Moon." }, "model": "m" } }))
        .await;
    let result = c.response(&result_id).await;
    assert_eq!(
        result["result"]["structuredContent"]["summary"], "Moon.",
        "{result}"
    );
    assert_eq!(result["result"]["structuredContent"]["sources"], 2);
}

#[tokio::test]
async fn the_create_task_result_comes_before_any_request_naming_the_task() {
    // Over stdio the race this guards against is narrow (it showed over HTTP, where the reply and
    // the elicitation travel on different streams); this checks the order a client sees, repeatedly.
    let mut c = session().await;
    for _ in 0..20 {
        let id = c.id();
        c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "confirm_delete", "arguments": { "filename": "x" }, "task": {} } }))
            .await;
        let first = c.recv().await;
        assert_eq!(
            first["id"], id,
            "the tools/call reply comes first, then the elicitation: {first}"
        );
        let task_id = first["result"]["task"]["taskId"].clone();
        let ask = c.wait_for(|m| m["method"] == "elicitation/create").await;
        assert_eq!(
            ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            task_id
        );
        c.send(&json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "decline" } }))
            .await;
        let result = c.result("tasks/result", json!({ "taskId": task_id })).await;
        assert_eq!(result["content"][0]["text"], "Kept x");
        while c
            .try_take(|m| m["method"] == "notifications/tasks/status")
            .is_some()
        {}
    }
}
