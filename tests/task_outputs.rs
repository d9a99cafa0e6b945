//! A task's outputs as resources (`ToolContext::publish_text` / `publish_blob`), at the level a
//! client meets them: the example server's `export_notes` over real stdio pipes in both eras and
//! over Streamable HTTP with two principals. The task's result links to its outputs
//! (`resource_link`, with MIME type and size); `resources/read` serves them to the task's owner
//! only; another principal's read, an unknown task and an unknown output name all answer the
//! era's "resource not found" with the URI; inline the outputs are embedded in the result.

use base64::Engine as _;
use mcp_tasks_tests::{StdioClient, modern, poll_legacy, poll_modern};
use serde_json::{Value, json};

fn tasks_caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// The document `export_notes` writes of the seeded notes.
fn seeded_document() -> &'static str {
    "# Notes\n\n## welcome\n\nRead me with resources/read notes://welcome.\n"
}

/// Checks the two links of an `export_notes` result and returns their URIs.
fn links(result: &Value, task_id: &str) -> (String, String) {
    let content = result["content"].as_array().expect("content");
    assert_eq!(
        content[0],
        json!({ "type": "text", "text": "Exported 1 notes." })
    );
    let markdown = json!({
        "type": "resource_link", "uri": format!("task://{task_id}/notes.md"),
        "name": "notes.md", "mimeType": "text/markdown", "size": seeded_document().len(),
    });
    assert_eq!(content[1], markdown, "{result}");
    let titles = json!({
        "type": "resource_link", "uri": format!("task://{task_id}/titles.json"),
        "name": "titles.json", "mimeType": "application/json", "size": 11,
    });
    assert_eq!(content[2], titles, "{result}");
    (
        format!("task://{task_id}/notes.md"),
        format!("task://{task_id}/titles.json"),
    )
}

fn decoded(blob: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(blob.as_str().expect("base64 text"))
        .expect("base64")
}

#[tokio::test]
async fn a_legacy_task_links_its_outputs_and_its_session_reads_them() {
    let mut c = StdioClient::example();
    let init = c.initialize(json!({})).await;
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    let created = c
        .result(
            "tools/call",
            json!({ "name": "export_notes", "arguments": {}, "task": { "ttl": 60000 } }),
        )
        .await;
    let id = created["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let task = poll_legacy(&mut c, &id, |t| t["status"] != "working").await;
    assert_eq!(task["status"], "completed", "{task}");
    let result = c.result("tasks/result", json!({ "taskId": id })).await;
    let (markdown, titles) = links(&result, &id);
    // The task itself never carries what it published.
    assert!(!task.to_string().contains("## welcome"), "{task}");

    let read = c.result("resources/read", json!({ "uri": markdown })).await;
    assert_eq!(
        read["contents"],
        json!([{ "uri": markdown, "mimeType": "text/markdown", "text": seeded_document() }])
    );
    assert!(
        read.get("ttlMs").is_none(),
        "no caching hints in 2025-11-25"
    );
    let read = c.result("resources/read", json!({ "uri": titles })).await;
    assert_eq!(read["contents"][0]["mimeType"], "application/json");
    assert_eq!(decoded(&read["contents"][0]["blob"]), br#"["welcome"]"#);

    // An output the task did not publish, and a task that does not exist: not found, with the URI.
    for uri in [
        format!("task://{id}/other.md"),
        "task://no-such-task/notes.md".to_owned(),
    ] {
        let err = c.error("resources/read", json!({ "uri": uri })).await;
        assert_eq!(err["code"], -32002, "{err}");
        assert_eq!(err["data"], json!({ "uri": uri }));
    }
    // Subscribing is for the server's own resources: a task's output is not one.
    let err = c
        .error("resources/subscribe", json!({ "uri": markdown }))
        .await;
    assert_eq!(err["code"], -32002, "{err}");
    assert!(c.close().await.success());
}

#[tokio::test]
async fn a_modern_task_links_its_outputs_and_reads_carry_caching_hints() {
    let mut c = StdioClient::example();
    let caps = tasks_caps();
    let created = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "export_notes", "arguments": {} }),
                caps.clone(),
            ),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().expect("a task id").to_owned();
    let task = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    let (markdown, titles) = links(&task["result"], &id);

    let read = c
        .result(
            "resources/read",
            modern(json!({ "uri": markdown }), caps.clone()),
        )
        .await;
    assert_eq!(read["contents"][0]["text"], seeded_document(), "{read}");
    assert_eq!(read["resultType"], "complete", "{read}");
    assert!(read.get("ttlMs").is_some(), "caching hints: {read}");
    let read = c
        .result(
            "resources/read",
            modern(json!({ "uri": titles }), caps.clone()),
        )
        .await;
    assert_eq!(decoded(&read["contents"][0]["blob"]), br#"["welcome"]"#);

    let uri = format!("task://{id}/nothing");
    let err = c
        .error(
            "resources/read",
            modern(json!({ "uri": uri }), caps.clone()),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["data"], json!({ "uri": uri }));
    assert!(c.close().await.success());
}

/// Inline (a modern client without the tasks extension) there is no task to keep outputs with:
/// the result embeds them, and their `task:///` URIs name nothing a read finds.
#[tokio::test]
async fn inline_the_outputs_are_embedded_in_the_result() {
    let mut c = StdioClient::example();
    let result = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "export_notes", "arguments": {} }),
                json!({}),
            ),
        )
        .await;
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(
        result["content"][1],
        json!({ "type": "resource", "resource": {
            "uri": "task:///notes.md", "mimeType": "text/markdown", "text": seeded_document() } })
    );
    assert_eq!(
        result["content"][2]["resource"]["uri"],
        "task:///titles.json"
    );
    assert_eq!(
        decoded(&result["content"][2]["resource"]["blob"]),
        br#"["welcome"]"#
    );
    let err = c
        .error(
            "resources/read",
            modern(json!({ "uri": "task:///notes.md" }), json!({})),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert!(c.close().await.success());
}

mod http {
    use super::{links, seeded_document, tasks_caps};
    use mcp_tasks_tests::http::{HttpServer, modern_post};
    use serde_json::{Value, json};
    use std::time::Duration;

    async fn post(url: &str, token: &str, method: &str, params: Value) -> Value {
        let client = reqwest::Client::new();
        modern_post(&client, url, method, params, tasks_caps())
            .bearer_auth(token)
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON")
    }

    /// Outputs are bound to the task's owner: over HTTP with two principals, the one that ran
    /// the task reads its outputs; the other is told exactly what an unknown URI gets.
    #[tokio::test]
    async fn only_the_tasks_principal_reads_its_outputs() {
        let s = HttpServer::start_bin(
            "example_server",
            &["--token", "tok-a=alice", "--token", "tok-b=bob"],
        );
        let created = post(
            &s.url,
            "tok-a",
            "tools/call",
            json!({ "name": "export_notes", "arguments": {} }),
        )
        .await;
        let id = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let task = loop {
            let got = post(&s.url, "tok-a", "tasks/get", json!({ "taskId": id })).await;
            if got["result"]["status"] == "completed" {
                break got["result"].clone();
            }
            assert!(tokio::time::Instant::now() < deadline, "{got}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let (markdown, _) = links(&task["result"], &id);

        let read = post(
            &s.url,
            "tok-a",
            "resources/read",
            json!({ "uri": markdown }),
        )
        .await;
        assert_eq!(
            read["result"]["contents"][0]["text"],
            seeded_document(),
            "{read}"
        );
        // Bob is told what an unknown task's output gets, but for the URI it names.
        let foreign = post(
            &s.url,
            "tok-b",
            "resources/read",
            json!({ "uri": markdown }),
        )
        .await;
        let unknown_uri = format!("task://{id}x/notes.md");
        let unknown = post(
            &s.url,
            "tok-b",
            "resources/read",
            json!({ "uri": unknown_uri }),
        )
        .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        let as_unknown: Value = serde_json::from_str(
            &unknown["error"]
                .to_string()
                .replace(&unknown_uri, &markdown),
        )
        .unwrap();
        assert_eq!(foreign["error"], as_unknown, "{foreign}");
    }
}

/// Publishes `count` outputs `out-0.txt`, `out-1.txt`, ... of `size` bytes each. When one is
/// refused, publishes `out-0.txt` again (a name the task has: replaced, not one more) and fails
/// with the refusal.
#[mcp_tasks_runtime::tool(task_support = "required")]
async fn publish_many(
    ctx: mcp_tasks_runtime::ToolContext,
    count: usize,
    size: usize,
) -> Result<String, mcp_tasks_runtime::ToolError> {
    for i in 0..count {
        let text = "x".repeat(size);
        if let Err(refused) = ctx
            .publish_text(&format!("out-{i}.txt"), "text/plain", text)
            .await
        {
            ctx.publish_text("out-0.txt", "text/plain", "replaced")
                .await?;
            return Err(refused);
        }
    }
    Ok(format!("published {count}"))
}

/// `Limits::outputs_per_task` and `Limits::output_bytes_per_task`, over real HTTP: a tool that
/// publishes one output too many, or one that would make its outputs too large, gets `-32010`
/// naming the limit (and may still replace an output it has); its task fails with that error;
/// what it published before is kept and read; the server goes on serving other tasks.
#[tokio::test]
async fn a_tool_publishing_past_the_output_limits_gets_the_error() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::Limits;
    use mcp_tasks_tests::instances::{client, poll, result};
    let limits = Limits::default()
        .outputs_per_task(3)
        .output_bytes_per_task(1_000);
    let server = Server::builder("outputs", "1.0.0")
        .limits(limits)
        .tool::<publish_many>()
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve_http(listener).await });
    let c = client();
    let run = async |count: usize, size: usize| {
        let arguments = json!({ "count": count, "size": size });
        let created = result(
            &c,
            &url,
            "tools/call",
            json!({ "name": "publish_many", "arguments": arguments }),
        )
        .await;
        let id = created["taskId"].as_str().expect("a task").to_owned();
        (poll(&c, &url, &id, |t| t["status"] != "working").await, id)
    };

    for ((count, size), limit, max, says) in [
        (
            (4, 10),
            "outputs_per_task",
            3,
            "as many outputs as it may keep",
        ),
        (
            (3, 400),
            "output_bytes_per_task",
            1_000,
            "`out-2.txt` (400 bytes) would make the task's outputs 1200 bytes in all",
        ),
    ] {
        let (task, id) = run(count, size).await;
        assert_eq!(task["status"], "failed", "{task}");
        let error = &task["error"];
        assert_eq!(error["code"], -32010, "{task}");
        assert_eq!(
            error["data"],
            json!({ "limit": limit, "max": max }),
            "{task}"
        );
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("Limit reached: "), "{task}");
        assert!(message.contains(says), "{task}");
        // What was published before the refusal is kept, the replacement included.
        let read = result(
            &c,
            &url,
            "resources/read",
            json!({ "uri": format!("task://{id}/out-0.txt") }),
        )
        .await;
        assert_eq!(read["contents"][0]["text"], "replaced", "{read}");
        let read = result(
            &c,
            &url,
            "resources/read",
            json!({ "uri": format!("task://{id}/out-1.txt") }),
        )
        .await;
        assert_eq!(read["contents"][0]["text"].as_str().unwrap().len(), size);
    }

    // Within the limits, and the server still serving.
    let (task, _) = run(3, 300).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "published 3",
        "{task}"
    );
}
