//! Resources at the level a client meets them: the example server binary over real stdio pipes
//! and over Streamable HTTP, in both eras. Listing (fixed resources, then what a template's
//! `list` function names), templates, reads of text, JSON and bytes, bad input (an unknown URI, a
//! URI that matches no template, a template variable that does not fit its parameter) with the
//! precise error while the server goes on serving, and subscriptions: a task that changes a note
//! tells the subscribed client, in both eras. Completion of a template's variables
//! (`#[complete]`), with the variables already chosen, and `-32602` for an unknown template or
//! variable.

use mcp_tasks_tests::{StdioClient, modern};
use serde_json::{Value, json};
use std::time::Duration;

fn no_caps() -> Value {
    json!({})
}

fn tasks_caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

fn uris(list: &Value) -> Vec<&str> {
    list["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("a resources array: {list}"))
        .iter()
        .map(|r| r["uri"].as_str().expect("a uri"))
        .collect()
}

#[tokio::test]
async fn a_legacy_session_lists_reads_and_is_told_of_bad_uris() {
    let mut c = StdioClient::example();
    let init = c.initialize(json!({})).await;
    assert_eq!(
        init["capabilities"]["resources"],
        json!({ "subscribe": true, "listChanged": true })
    );

    let list = c.result("resources/list", json!({})).await;
    // Fixed resources first (the notes' index, the MCP App's view), then what `list` names, then
    // the files of the skill the example ships (SEP-2640: each a `skill://` resource).
    assert_eq!(
        uris(&list),
        [
            "notes://index",
            "ui://forecast/view.html",
            "notes://welcome",
            "skill://research-notes/SKILL.md",
            "skill://research-notes/references/TOOLS.md"
        ]
    );
    assert_eq!(list["resources"][0]["name"], "note-index");
    assert_eq!(list["resources"][0]["title"], "All notes");
    assert_eq!(
        list["resources"][0]["description"],
        "The titles of all notes, as JSON."
    );
    // A resource a template's `list` names gets the template's MIME type.
    assert_eq!(list["resources"][2]["mimeType"], "text/markdown");
    assert!(
        list.get("ttlMs").is_none(),
        "no caching hints in 2025-11-25"
    );
    assert!(list.get("nextCursor").is_none());

    let templates = c.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"],
        json!([{
            "uriTemplate": "notes://{title}", "name": "note",
            "description": "One note, by title.", "mimeType": "text/markdown"
        }])
    );

    let index = c
        .result("resources/read", json!({ "uri": "notes://index" }))
        .await;
    assert_eq!(
        index["contents"],
        json!([{ "uri": "notes://index", "mimeType": "application/json", "text": "[\"welcome\"]" }])
    );
    let note = c
        .result("resources/read", json!({ "uri": "notes://welcome" }))
        .await;
    assert_eq!(note["contents"][0]["uri"], "notes://welcome");
    assert_eq!(note["contents"][0]["mimeType"], "text/markdown");
    assert!(
        note["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes://welcome")
    );

    // A URI no resource or template names: the 2025-11-25 code, with the URI.
    let err = c
        .error("resources/read", json!({ "uri": "other://x" }))
        .await;
    assert_eq!(err["code"], -32002, "{err}");
    assert_eq!(err["data"], json!({ "uri": "other://x" }));
    // The template matches but the note does not exist: the function's own "not found".
    let err = c
        .error("resources/read", json!({ "uri": "notes://nothing" }))
        .await;
    assert_eq!(err["code"], -32002, "{err}");
    assert_eq!(err["data"], json!({ "uri": "notes://nothing" }));
    // A template variable's text must be one an expansion can produce (`/` is not, in `{title}`).
    let err = c
        .error("resources/read", json!({ "uri": "notes://a/b" }))
        .await;
    assert_eq!(err["code"], -32002, "{err}");
    let err = c.error("resources/read", json!({})).await;
    assert_eq!(err["code"], -32602);
    assert_eq!(err["message"], "missing required parameter `uri`");
    let err = c.error("resources/read", json!({ "uri": 7 })).await;
    assert_eq!(err["message"], "`uri` must be a string");
    let err = c
        .error("resources/list", json!({ "cursor": "nonsense" }))
        .await;
    assert_eq!(err["code"], -32602);

    // And the server goes on serving.
    let again = c
        .result("resources/read", json!({ "uri": "notes://index" }))
        .await;
    assert_eq!(again["contents"][0]["text"], "[\"welcome\"]");
    assert!(c.close().await.success());
}

#[tokio::test]
async fn modern_lists_and_reads_carry_caching_hints_and_unknown_uris_are_32602() {
    let mut c = StdioClient::example();
    let discover = c
        .result("server/discover", modern(json!({}), no_caps()))
        .await;
    assert_eq!(
        discover["capabilities"]["resources"],
        json!({ "subscribe": true, "listChanged": true })
    );
    for method in ["resources/list", "resources/templates/list"] {
        let list = c.result(method, modern(json!({}), no_caps())).await;
        assert_eq!(list["resultType"], "complete");
        assert_eq!(list["ttlMs"], 0, "{method}: {list}");
        assert_eq!(list["cacheScope"], "private", "{method}: {list}");
    }
    let read = c
        .result(
            "resources/read",
            modern(json!({ "uri": "notes://welcome" }), no_caps()),
        )
        .await;
    assert_eq!(read["resultType"], "complete");
    assert_eq!(read["cacheScope"], "private");
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");

    for uri in ["other://x", "notes://nothing"] {
        let err = c
            .error("resources/read", modern(json!({ "uri": uri }), no_caps()))
            .await;
        assert_eq!(err["code"], -32602, "{err}");
        assert_eq!(err["data"]["uri"], uri, "{err}");
    }
    // `resources/subscribe` is not a 2026-07-28 method (`subscriptions/listen` replaces it).
    let err = c
        .error(
            "resources/subscribe",
            modern(json!({ "uri": "notes://welcome" }), no_caps()),
        )
        .await;
    assert_eq!(err["code"], -32601);
    assert!(c.close().await.success());
}

/// The acceptance test: a legacy client subscribes to a note; a task changes it; the client hears
/// of it. After unsubscribing it hears nothing more.
#[tokio::test]
async fn a_legacy_task_that_changes_a_note_tells_the_subscribed_session() {
    let mut c = StdioClient::example();
    c.initialize(json!({})).await;
    let ok = c
        .result("resources/subscribe", json!({ "uri": "notes://welcome" }))
        .await;
    assert_eq!(ok, json!({}));
    let err = c
        .error("resources/subscribe", json!({ "uri": "other://x" }))
        .await;
    assert_eq!(err["code"], -32002);
    assert_eq!(err["data"]["uri"], "other://x");

    let created = c
        .result(
            "tools/call",
            json!({
                "name": "revise_note",
                "arguments": { "title": "welcome", "text": "revised", "delay_ms": 50 },
                "task": { "ttl": 60000 }
            }),
        )
        .await;
    assert!(created["task"]["taskId"].is_string(), "a task: {created}");
    let updated = c
        .wait_for(|m| m["method"] == "notifications/resources/updated")
        .await;
    assert_eq!(updated["params"], json!({ "uri": "notes://welcome" }));
    let note = c
        .result("resources/read", json!({ "uri": "notes://welcome" }))
        .await;
    assert_eq!(note["contents"][0]["text"], "revised");

    // A new note changes the list: every session that uses resources hears it.
    c.result(
        "tools/call",
        json!({ "name": "write_note", "arguments": { "title": "second", "text": "2" } }),
    )
    .await;
    c.wait_for(|m| m["method"] == "notifications/resources/list_changed")
        .await;

    assert_eq!(
        c.result("resources/unsubscribe", json!({ "uri": "notes://welcome" }))
            .await,
        json!({})
    );
    c.result(
        "tools/call",
        json!({ "name": "write_note", "arguments": { "title": "welcome", "text": "again" } }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.result("tools/list", json!({})).await;
    assert!(
        c.try_take(|m| m["method"] == "notifications/resources/updated")
            .is_none(),
        "no update after unsubscribing"
    );
    assert!(c.close().await.success());
}

/// The same in 2026-07-28: `subscriptions/listen` with `resourceSubscriptions`; the task runs
/// because the client declared the tasks extension.
#[tokio::test]
async fn a_modern_task_that_changes_a_note_reaches_the_listening_client() {
    let mut c = StdioClient::example();
    let listen = c.id();
    c.send(&json!({
        "jsonrpc": "2.0", "id": listen, "method": "subscriptions/listen",
        "params": modern(
            json!({ "notifications": {
                "resourceSubscriptions": ["notes://welcome", "other://x"],
                "resourcesListChanged": true
            } }),
            no_caps(),
        ),
    }))
    .await;
    let ack = c
        .wait_for(|m| m["method"] == "notifications/subscriptions/acknowledged")
        .await;
    // Only URIs that name a resource are agreed to.
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "taskIds": [], "resourceSubscriptions": ["notes://welcome"], "resourcesListChanged": true }),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );

    let created = c
        .result(
            "tools/call",
            modern(
                json!({
                    "name": "revise_note",
                    "arguments": { "title": "welcome", "text": "modern", "delay_ms": 50 }
                }),
                tasks_caps(),
            ),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let updated = c
        .wait_for(|m| m["method"] == "notifications/resources/updated")
        .await;
    assert_eq!(updated["params"]["uri"], "notes://welcome");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    c.result(
        "tools/call",
        modern(
            json!({ "name": "write_note", "arguments": { "title": "third", "text": "3" } }),
            no_caps(),
        ),
    )
    .await;
    let changed = c
        .wait_for(|m| m["method"] == "notifications/resources/list_changed")
        .await;
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    assert!(c.close().await.success());
}

mod http {
    use super::tasks_caps;
    use mcp_tasks_tests::http::{HttpServer, SseEvents as Events};
    use serde_json::{Value, json};
    use std::time::Duration;

    const WAIT: Duration = Duration::from_secs(10);

    fn modern_post(url: &str, method: &str, params: Value) -> reqwest::RequestBuilder {
        let client = reqwest::Client::new();
        mcp_tasks_tests::http::modern_post(&client, url, method, params, tasks_caps())
    }

    fn legacy(url: &str, session: &str, body: Value) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
    }

    async fn body(b: reqwest::RequestBuilder) -> Value {
        b.send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON")
    }

    #[tokio::test]
    async fn modern_http_reads_and_a_task_reaches_the_listen_stream() {
        let s = HttpServer::start_bin("example_server", &[]);
        let read = body(modern_post(
            &s.url,
            "resources/read",
            json!({ "uri": "notes://welcome" }),
        ))
        .await;
        assert_eq!(
            read["result"]["contents"][0]["uri"], "notes://welcome",
            "{read}"
        );
        let missing = body(modern_post(
            &s.url,
            "resources/read",
            json!({ "uri": "other://x" }),
        ))
        .await;
        assert_eq!(missing["error"]["code"], -32602, "{missing}");
        assert_eq!(missing["error"]["data"]["uri"], "other://x");

        let mut stream = Events::open(modern_post(
            &s.url,
            "subscriptions/listen",
            json!({ "notifications": { "resourceSubscriptions": ["notes://welcome"] } }),
        ))
        .await;
        let ack = stream.next(WAIT).await.expect("an acknowledgement");
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"],
            json!(["notes://welcome"]),
            "{ack}"
        );
        let created = body(modern_post(
            &s.url,
            "tools/call",
            json!({ "name": "revise_note", "arguments": { "title": "welcome", "text": "http" } }),
        ))
        .await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let updated = stream.next(WAIT).await.expect("the update");
        assert_eq!(
            updated["method"], "notifications/resources/updated",
            "{updated}"
        );
        assert_eq!(updated["params"]["uri"], "notes://welcome");
    }

    #[tokio::test]
    async fn a_legacy_http_session_hears_of_a_task_change_on_its_stream() {
        let s = HttpServer::start_bin("example_server", &[]);
        let r = reqwest::Client::new()
            .post(&s.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "t", "version": "1" } } })
                .to_string(),
            )
            .send()
            .await
            .expect("answered");
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let mut stream = Events::open(
            reqwest::Client::new()
                .get(&s.url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", "2025-11-25"),
        )
        .await;
        let ok = body(legacy(
            &s.url,
            &session,
            json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                    "params": { "uri": "notes://welcome" } }),
        ))
        .await;
        assert_eq!(ok["result"], json!({}), "{ok}");
        let created = body(legacy(
            &s.url,
            &session,
            json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "revise_note", "arguments": { "title": "welcome", "text": "legacy" },
                "task": { "ttl": 60000 } } }),
        ))
        .await;
        assert!(created["result"]["task"]["taskId"].is_string(), "{created}");
        let updated = loop {
            let n = stream.next(WAIT).await.expect("a notification");
            if n["method"] == "notifications/resources/updated" {
                break n;
            }
        };
        assert_eq!(updated["params"], json!({ "uri": "notes://welcome" }));
    }
}

/// A server without resources advertises none, and the resource methods do not exist on it; a
/// resource whose `list` function panics is `-32603` and the server goes on.
#[tokio::test]
async fn without_resources_there_is_no_capability_and_a_panicking_list_is_an_error() {
    use mcp_tasks_runtime::resource::ListedResource;
    use mcp_tasks_runtime::{Server, ToolContext, resource, tool};
    use mcp_tasks_tests::in_memory_request;

    /// A tool.
    #[tool]
    async fn plain() -> &'static str {
        "plain"
    }

    /// Items.
    #[resource(uri = "items://{id}", list = "broken_list")]
    async fn item(id: u32) -> String {
        id.to_string()
    }

    async fn broken_list(_: ToolContext) -> Vec<ListedResource> {
        panic!("the list is broken")
    }

    let bare = Server::builder("bare", "0")
        .tool::<plain>()
        .build()
        .unwrap();
    let mut c = bare.connect_in_memory();
    let discover = in_memory_request(&mut c, 1, "server/discover", json!({}), no_caps()).await;
    assert!(
        discover["result"]["capabilities"]
            .get("resources")
            .is_none(),
        "{discover}"
    );
    let err = in_memory_request(&mut c, 2, "resources/list", json!({}), no_caps()).await;
    assert_eq!(err["error"]["code"], -32601, "{err}");

    let server = Server::builder("items", "0")
        .resource::<item>()
        .build()
        .unwrap();
    let mut c = server.connect_in_memory();
    let err = in_memory_request(&mut c, 1, "resources/list", json!({}), no_caps()).await;
    assert_eq!(err["error"]["code"], -32603, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`list` function of resource template `items://{id}` panicked"),
        "{err}"
    );
    let read = in_memory_request(
        &mut c,
        2,
        "resources/read",
        json!({ "uri": "items://7" }),
        no_caps(),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "7", "{read}");
}

/// `completion/complete` for the `title` of `notes://{title}` (`#[complete(with = ...)]` on the
/// variable's parameter): the titles of the notes there are now, read from the server's state,
/// in both eras; an unknown template or variable is `-32602`.
#[tokio::test]
async fn the_note_template_completes_its_title_from_the_notes_in_both_eras() {
    let complete = |uri: &str, variable: &str, value: &str| {
        json!({ "ref": { "type": "ref/resource", "uri": uri },
            "argument": { "name": variable, "value": value },
            "context": { "arguments": {} } })
    };
    let mut legacy = StdioClient::example();
    let init = legacy.initialize(json!({})).await;
    assert_eq!(init["capabilities"]["completions"], json!({}), "{init}");
    let mut modern_c = StdioClient::example();
    let discover = modern_c
        .result("server/discover", modern(json!({}), no_caps()))
        .await;
    assert_eq!(
        discover["capabilities"]["completions"],
        json!({}),
        "{discover}"
    );
    for (c, era) in [(&mut legacy, false), (&mut modern_c, true)] {
        let wrap = |params: Value| {
            if era {
                modern(params, no_caps())
            } else {
                params
            }
        };
        let done = c
            .result(
                "completion/complete",
                wrap(complete("notes://{title}", "title", "we")),
            )
            .await;
        assert_eq!(done["completion"]["values"], json!(["welcome"]), "{done}");
        // A note written since is offered too: the completion reads the notes as they are.
        c.result(
            "tools/call",
            wrap(json!({ "name": "write_note", "arguments": { "title": "weekly", "text": "w" } })),
        )
        .await;
        let done = c
            .result(
                "completion/complete",
                wrap(complete("notes://{title}", "title", "we")),
            )
            .await;
        assert_eq!(
            done["completion"],
            json!({ "values": ["weekly", "welcome"], "total": 2, "hasMore": false }),
            "{done}"
        );
        let done = c
            .result(
                "completion/complete",
                wrap(complete("notes://{title}", "title", "x")),
            )
            .await;
        assert_eq!(done["completion"]["values"], json!([]), "{done}");

        let err = c
            .error(
                "completion/complete",
                wrap(complete("notes://{name}", "name", "we")),
            )
            .await;
        assert_eq!(err["code"], -32602, "{err}");
        assert_eq!(
            err["data"]["ref"],
            json!({ "type": "ref/resource", "uri": "notes://{name}" }),
            "{err}"
        );
        let err = c
            .error(
                "completion/complete",
                wrap(complete("notes://{title}", "rev", "1")),
            )
            .await;
        assert_eq!(err["code"], -32602, "{err}");
        assert_eq!(err["data"], json!({ "argument": "rev" }), "{err}");
        // A concrete URI is not a template.
        let err = c
            .error(
                "completion/complete",
                wrap(complete("notes://welcome", "title", "we")),
            )
            .await;
        assert_eq!(err["code"], -32602, "{err}");
    }
}

mod two_variables {
    use mcp_tasks_runtime::{CompletionContext, Server, resource};
    use mcp_tasks_tests::in_memory_request;
    use serde_json::json;

    /// A file, by folder and name.
    #[resource(uri = "files://{folder}/{name}")]
    pub async fn file(
        #[complete(values = ["docs", "drafts", "src"])] folder: String,
        #[complete(with = complete_name)] name: String,
    ) -> String {
        format!("{folder}/{name}")
    }

    /// The names in the folder already chosen (`context.arguments.folder`).
    async fn complete_name(typed: String, context: CompletionContext) -> Vec<String> {
        let names: &[&str] = match context.get("folder") {
            Some("docs") => &["guide.md", "api.md"],
            Some("src") => &["lib.rs", "main.rs"],
            _ => &[],
        };
        names
            .iter()
            .filter(|n| n.starts_with(&typed))
            .map(|n| (*n).to_owned())
            .collect()
    }

    /// A server whose only completions are a resource template's declares `completions`, and a
    /// `with` function is given the variables already chosen.
    #[tokio::test]
    async fn a_with_function_gets_the_variables_already_chosen() {
        let server = Server::builder("files", "1")
            .resource::<file>()
            .build()
            .expect("builds");
        let mut c = server.connect_in_memory();
        let caps = json!({});
        let discover =
            in_memory_request(&mut c, 1, "server/discover", json!({}), caps.clone()).await;
        assert_eq!(
            discover["result"]["capabilities"]["completions"],
            json!({}),
            "{discover}"
        );
        let complete = |variable: &str, value: &str, folder: Option<&str>| {
            let mut params = json!({ "ref": { "type": "ref/resource", "uri": "files://{folder}/{name}" },
                "argument": { "name": variable, "value": value } });
            if let Some(folder) = folder {
                params["context"] = json!({ "arguments": { "folder": folder } });
            }
            params
        };
        let done = in_memory_request(
            &mut c,
            2,
            "completion/complete",
            complete("folder", "d", None),
            caps.clone(),
        )
        .await;
        assert_eq!(
            done["result"]["completion"]["values"],
            json!(["docs", "drafts"]),
            "{done}"
        );
        let done = in_memory_request(
            &mut c,
            3,
            "completion/complete",
            complete("name", "", Some("src")),
            caps.clone(),
        )
        .await;
        assert_eq!(
            done["result"]["completion"]["values"],
            json!(["lib.rs", "main.rs"]),
            "{done}"
        );
        let done = in_memory_request(
            &mut c,
            4,
            "completion/complete",
            complete("name", "a", Some("docs")),
            caps.clone(),
        )
        .await;
        assert_eq!(
            done["result"]["completion"]["values"],
            json!(["api.md"]),
            "{done}"
        );
        let done = in_memory_request(
            &mut c,
            5,
            "completion/complete",
            complete("name", "", None),
            caps.clone(),
        )
        .await;
        assert_eq!(done["result"]["completion"]["values"], json!([]), "{done}");
    }

    /// A template with no `#[complete]`: no `completions` capability, and the method is unknown.
    #[tokio::test]
    async fn a_template_without_completions_declares_none() {
        let server = Server::builder("notes", "1")
            .resource::<crate::plain_note>()
            .build()
            .expect("builds");
        let mut c = server.connect_in_memory();
        let discover = in_memory_request(&mut c, 1, "server/discover", json!({}), json!({})).await;
        assert!(
            discover["result"]["capabilities"]
                .get("completions")
                .is_none(),
            "{discover}"
        );
    }
}

/// A template whose variable does not complete.
#[mcp_tasks_runtime::resource(uri = "plain://{title}")]
async fn plain_note(title: String) -> String {
    title
}
