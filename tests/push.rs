//! Push notifications of task status. 2026-07-28: `subscriptions/listen` with
//! `notifications.taskIds` (acknowledgement first, then `notifications/tasks` on every change,
//! the subscription id in `_meta`; only the caller's own tasks; `-32021` without the tasks
//! extension). 2025-11-25: `notifications/tasks/status` to the session that owns the task.
//! Over stdio (the conformance fixture server) and Streamable HTTP (the example server).

use mcp_tasks_tests::{StdioClient, modern};
use serde_json::{Value, json};

fn tasks_caps() -> Value {
    json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

fn subscription_of(m: &Value) -> Option<&Value> {
    m["params"]["_meta"].get("io.modelcontextprotocol/subscriptionId")
}

/// The next message of subscription `sub`, in the order the server sent them.
async fn next_of(c: &mut StdioClient, sub: &Value) -> Value {
    let sub = sub.clone();
    c.wait_for(move |m| subscription_of(m) == Some(&sub)).await
}

#[tokio::test]
async fn a_modern_subscription_is_acknowledged_then_reports_every_change_through_completion() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let created = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "confirm_delete", "arguments": { "filename": "a.txt" } }),
                caps.clone(),
            ),
        )
        .await;
    let id = created["taskId"].as_str().expect("taskId").to_owned();

    let listen = c.id();
    c.send(&json!({
        "jsonrpc": "2.0", "id": listen, "method": "subscriptions/listen",
        "params": modern(json!({ "notifications": { "taskIds": [id, "no-such-task"] } }), caps.clone()),
    }))
    .await;

    // The acknowledgement comes first and names only the task the caller owns.
    let ack = next_of(&mut c, &listen).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );

    // Then the task as it is, and each change: it asks for confirmation...
    let mut seen = Vec::new();
    let asking = loop {
        let n = next_of(&mut c, &listen).await;
        assert_eq!(n["method"], "notifications/tasks", "{n}");
        assert_eq!(n["params"]["taskId"], id.as_str(), "{n}");
        assert!(n["params"].get("resultType").is_none(), "{n}");
        seen.push(n["params"]["status"].as_str().unwrap_or("").to_owned());
        if n["params"]["status"] == "input_required" {
            break n;
        }
    };
    let requests = asking["params"]["inputRequests"]
        .as_object()
        .expect("the notification carries the input requests, as tasks/get does");
    let key = requests.keys().next().expect("one request").clone();
    c.result(
        "tasks/update",
        modern(
            json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "confirm": true } } } }),
            caps.clone(),
        ),
    )
    .await;
    // ... and, answered, works on and completes, with its result in the notification.
    let asked_at = seen.len();
    let done = loop {
        let n = next_of(&mut c, &listen).await;
        assert_eq!(n["method"], "notifications/tasks", "{n}");
        seen.push(n["params"]["status"].as_str().unwrap_or("").to_owned());
        if n["params"]["status"] == "completed" {
            break n;
        }
        assert_eq!(n["params"]["status"], "working", "{n}");
    };
    assert!(done["params"]["result"]["content"].is_array(), "{done}");
    // Every change, in order: the state when subscribed (working, or already asking), the
    // question, then working again once answered, then completed.
    assert!(
        matches!(seen[0].as_str(), "working" | "input_required"),
        "{seen:?}"
    );
    assert_eq!(seen[asked_at..], ["working", "completed"], "{seen:?}");

    // What tasks/get says now is what the last notification said.
    let got = c
        .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
        .await;
    let mut expected = done["params"].clone();
    expected.as_object_mut().unwrap().remove("_meta");
    let mut got_task = got.clone();
    got_task.as_object_mut().unwrap().remove("resultType");
    got_task.as_object_mut().unwrap().remove("_meta");
    assert_eq!(got_task, expected);

    // Cancelling the subscription ends it without a response.
    c.notify("notifications/cancelled", json!({ "requestId": listen }))
        .await;
    c.result("tools/list", modern(json!({}), caps.clone()))
        .await;
    let listen_id = listen.clone();
    assert!(c.try_take(|m| m["id"] == listen_id).is_none());
    assert!(
        c.try_take(|m| m.to_string().contains("no-such-task"))
            .is_none()
    );
}

#[tokio::test]
async fn task_notifications_without_the_tasks_extension_are_32021() {
    let mut c = StdioClient::conformance();
    let err = c
        .error(
            "subscriptions/listen",
            modern(
                json!({ "notifications": { "taskIds": ["whatever"] } }),
                json!({ "elicitation": {} }),
            ),
        )
        .await;
    assert_eq!(err["code"], -32021, "{err}");
    assert_eq!(
        err["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{err}"
    );
    // Malformed ids are the caller's error, named.
    let err = c
        .error(
            "subscriptions/listen",
            modern(json!({ "notifications": { "taskIds": [7] } }), tasks_caps()),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert!(
        err["message"].as_str().unwrap().contains("taskIds"),
        "{err}"
    );
}

// ---- Streamable HTTP ---------------------------------------------------------------------------

mod http {
    use super::tasks_caps;
    use mcp_tasks_tests::http::{HttpServer, SseEvents as Events};
    use mcp_tasks_tests::modern_meta;
    use serde_json::{Value, json};
    use std::time::Duration;

    fn post(
        url: &str,
        token: &str,
        method: &str,
        name: Option<&str>,
        mut params: Value,
    ) -> reqwest::RequestBuilder {
        params["_meta"] = modern_meta(tasks_caps());
        let mut b = reqwest::Client::new()
            .post(url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(
                json!({ "jsonrpc": "2.0", "id": "listen-1", "method": method, "params": params })
                    .to_string(),
            );
        if let Some(name) = name {
            b = b.header("mcp-name", name);
        }
        b
    }

    async fn result(b: reqwest::RequestBuilder) -> Value {
        let body: Value = b
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON");
        body.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{body}"))
    }

    const WAIT: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn a_subscription_over_http_reports_the_owners_task_and_nothing_to_anyone_else() {
        let s = HttpServer::start(&["--token", "alice-token=alice", "--token", "bob-token=bob"]);
        let created = result(post(
            &s.url,
            "alice-token",
            "tools/call",
            Some("confirm_delete"),
            json!({ "name": "confirm_delete", "arguments": { "filename": "b.txt" } }),
        ))
        .await;
        let id = created["taskId"].as_str().expect("taskId").to_owned();

        // Bob names Alice's task: acknowledged with no task ids, and nothing about it ever comes.
        let mut bob = Events::open(post(
            &s.url,
            "bob-token",
            "subscriptions/listen",
            None,
            json!({ "notifications": { "taskIds": [id] } }),
        ))
        .await;
        let ack = bob.next(WAIT).await.expect("an acknowledgement");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"]["taskIds"],
            json!([]),
            "{ack}"
        );
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "listen-1"
        );

        // Alice's own subscription: acknowledged, then the task asking, answered, completed.
        let mut alice = Events::open(post(
            &s.url,
            "alice-token",
            "subscriptions/listen",
            None,
            json!({ "notifications": { "taskIds": [id] } }),
        ))
        .await;
        let ack = alice.next(WAIT).await.expect("an acknowledgement");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"]["taskIds"],
            json!([id]),
            "{ack}"
        );
        let mut seen = Vec::new();
        let asking = loop {
            let n = alice.next(WAIT).await.expect("a task notification");
            assert_eq!(n["method"], "notifications/tasks", "{n}");
            assert_eq!(
                n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                "listen-1"
            );
            seen.push(n["params"]["status"].clone());
            if n["params"]["status"] == "input_required" {
                break n;
            }
        };
        let key = asking["params"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        result(post(
            &s.url,
            "alice-token",
            "tasks/update",
            Some(&id),
            json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "confirm": true } } } }),
        ))
        .await;
        let asked_at = seen.len();
        loop {
            let n = alice.next(WAIT).await.expect("a task notification");
            seen.push(n["params"]["status"].clone());
            if n["params"]["status"] == "completed" {
                assert!(n["params"]["result"]["content"].is_array(), "{n}");
                break;
            }
        }
        assert_eq!(
            seen[asked_at..],
            [json!("working"), json!("completed")],
            "{seen:?}"
        );

        // Bob heard nothing of it.
        assert_eq!(bob.next(Duration::from_millis(300)).await, None);
    }

    fn legacy(url: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let mut b = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(id) = session {
            b = b
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-11-25");
        }
        b
    }

    async fn open_session(url: &str) -> (String, Events) {
        let r = legacy(
            url,
            None,
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "1" } } }),
        )
        .send()
        .await
        .expect("answered");
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let stream = Events::open(
            reqwest::Client::new()
                .get(url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", &id)
                .header("mcp-protocol-version", "2025-11-25"),
        )
        .await;
        (id, stream)
    }

    #[tokio::test]
    async fn legacy_status_notifications_go_to_the_session_that_owns_the_task() {
        let s = HttpServer::start(&[]);
        let (owner, mut owner_stream) = open_session(&s.url).await;
        let (_other, mut other_stream) = open_session(&s.url).await;
        let created = result(legacy(
            &s.url,
            Some(&owner),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "slow_compute", "arguments": { "seconds": 1 }, "task": { "ttl": 60000 } } }),
        ))
        .await;
        let id = created["task"]["taskId"]
            .as_str()
            .expect("taskId")
            .to_owned();
        let done = loop {
            let n = owner_stream
                .next(WAIT)
                .await
                .expect("a status notification");
            assert_eq!(n["method"], "notifications/tasks/status", "{n}");
            assert_eq!(n["params"]["taskId"], id.as_str(), "{n}");
            if n["params"]["status"] == "completed" {
                break n;
            }
        };
        assert!(
            done["params"].get("result").is_none(),
            "the status only: {done}"
        );
        assert_eq!(other_stream.next(Duration::from_millis(300)).await, None);
    }
}
