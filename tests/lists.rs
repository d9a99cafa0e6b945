//! The server's lists in pages (2025-11-25 and 2026-07-28 `utilities/pagination`): a server with
//! 1,000 tools, 1,000 resources and 1,000 prompts serves `tools/list`, `resources/list` and
//! `prompts/list` in pages of
//! `ServerConfig::page_size`, each but the last with a `nextCursor`, over real HTTP on 127.0.0.1
//! (the server runs in this process), in both eras; a cursor that is not one of the list's is
//! `-32602`.

use mcp_tasks_runtime::resource::ListedResource;
use mcp_tasks_runtime::{Server, ServerConfig, ToolContext, prompt, resource, tool};
use mcp_tasks_tests::modern_meta;
use serde_json::{Value, json};
use std::time::Duration;

seq_macro::seq!(N in 0..1000 {
    /// One of a thousand.
    #[tool]
    async fn tool_~N() -> String {
        String::new()
    }
});

seq_macro::seq!(N in 0..1000 {
    /// One prompt of a thousand.
    #[prompt]
    async fn prompt_~N() -> String {
        String::new()
    }
});

/// One of a thousand resources, by number: a template whose `list` names all of them.
#[resource(uri = "many://r/{n}", list = "thousand")]
async fn numbered(n: u32) -> String {
    n.to_string()
}

async fn thousand(_: ToolContext) -> Vec<ListedResource> {
    (0..1000)
        .map(|n| ListedResource::new(format!("many://r/{n}"), format!("r{n}")))
        .collect()
}

/// The server with its 1,000 tools and 1,000 resources, serving HTTP on a free loopback port;
/// its URL.
async fn start(config: ServerConfig) -> String {
    let mut builder = Server::builder("many", "0")
        .config(config)
        .resource::<numbered>();
    seq_macro::seq!(N in 0..1000 {
        builder = builder.tool::<tool_~N>().prompt::<prompt_~N>();
    });
    let server = builder.build().expect("set up");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { server.serve_http(listener).await });
    url
}

/// One JSON-RPC exchange; `session` makes it a 2025-11-25 session's request, else a 2026-07-28 one.
async fn request(
    url: &str,
    session: Option<&str>,
    method: &str,
    mut params: Value,
) -> (Value, Option<String>) {
    let mut b = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    match session {
        Some("") => {}
        Some(id) => {
            b = b
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-11-25");
        }
        None => {
            params["_meta"] = modern_meta(json!({}));
            b = b
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method);
            if let Some(uri) = params["uri"].as_str() {
                b = b.header("mcp-name", uri);
            }
        }
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let response = b
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.expect("a body");
    let message = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no response in {text}"))
    });
    (message, session)
}

/// A legacy session's id, after `initialize` and `notifications/initialized`.
async fn legacy_session(url: &str) -> String {
    let (init, session) = request(
        url,
        Some(""),
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
    )
    .await;
    assert!(init.get("result").is_some(), "{init}");
    let session = session.expect("a session id");
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string())
        .send()
        .await
        .expect("the server answers");
    session
}

/// Follows `tools/list` from the first page to the last: each page's names.
async fn all_pages(url: &str, session: Option<&str>) -> Vec<Vec<String>> {
    pages_of(url, session, "tools/list", "tools", "name").await
}

/// Follows `method` from the first page to the last: each page's `field` of the items under `key`.
async fn pages_of(
    url: &str,
    session: Option<&str>,
    method: &str,
    key: &str,
    field: &str,
) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let (reply, _) = request(url, session, method, params).await;
        let result = &reply["result"];
        if session.is_none() {
            // 2026-07-28: every page is a CacheableResult.
            assert_eq!(result["cacheScope"], "private", "{method}: {reply}");
            assert!(result["ttlMs"].is_u64(), "{method}: {reply}");
        }
        let names = result[key]
            .as_array()
            .unwrap_or_else(|| panic!("a list: {reply}"))
            .iter()
            .map(|t| t[field].as_str().expect("a name").to_owned())
            .collect();
        pages.push(names);
        match result.get("nextCursor") {
            Some(Value::String(next)) => cursor = Some(next.clone()),
            None => return pages,
            Some(other) => panic!("nextCursor is not a string: {other}"),
        }
        assert!(pages.len() <= 1000, "the pages never end");
    }
}

fn expected() -> Vec<String> {
    (0..1000).map(|n| format!("tool_{n}")).collect()
}

#[tokio::test]
async fn a_thousand_tools_are_listed_in_pages_of_the_default_size_in_both_eras() {
    let url = start(ServerConfig::default()).await;
    let session = legacy_session(&url).await;
    for session in [None, Some(session.as_str())] {
        let pages = all_pages(&url, session).await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [500, 500], "{session:?}");
        assert_eq!(
            pages.concat(),
            expected(),
            "{session:?}: every tool once, in order"
        );
    }
}

#[tokio::test]
async fn a_thousand_resources_are_listed_in_pages_in_both_eras_and_each_reads() {
    let url = start(ServerConfig::default().page_size(300)).await;
    let session = legacy_session(&url).await;
    let expected: Vec<String> = (0..1000).map(|n| format!("many://r/{n}")).collect();
    for session in [None, Some(session.as_str())] {
        let pages = pages_of(&url, session, "resources/list", "resources", "uri").await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [300, 300, 300, 100], "{session:?}");
        assert_eq!(
            pages.concat(),
            expected,
            "{session:?}: every resource once, in order"
        );
        let (reply, _) = request(
            &url,
            session,
            "resources/read",
            json!({ "uri": "many://r/999" }),
        )
        .await;
        assert_eq!(reply["result"]["contents"][0]["text"], "999", "{reply}");
        let (reply, _) = request(
            &url,
            session,
            "resources/list",
            json!({ "cursor": "not-ours" }),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        // A variable that does not fit its parameter (`n: u32`): `-32602` naming it.
        let (reply, _) = request(
            &url,
            session,
            "resources/read",
            json!({ "uri": "many://r/abc" }),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(reply["error"]["data"]["variable"], "n", "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("template variable `n` = `abc` does not fit"),
            "{reply}"
        );
    }
}

#[tokio::test]
async fn a_smaller_page_size_gives_more_pages_and_a_bad_cursor_is_invalid_params() {
    let url = start(ServerConfig::default().page_size(64)).await;
    let pages = all_pages(&url, None).await;
    assert_eq!(pages.len(), 16);
    assert!(pages[..15].iter().all(|p| p.len() == 64));
    assert_eq!(pages[15].len(), 1000 - 15 * 64);
    assert_eq!(pages.concat(), expected());

    let session = legacy_session(&url).await;
    for session in [None, Some(session.as_str())] {
        for cursor in [json!("not-ours"), json!("AAAAAAAAA-g"), json!(7)] {
            let (reply, _) =
                request(&url, session, "tools/list", json!({ "cursor": cursor })).await;
            assert_eq!(
                reply["error"]["code"], -32602,
                "{session:?} {cursor}: {reply}"
            );
        }
        // The server goes on serving.
        assert_eq!(all_pages(&url, session).await.concat(), expected());
    }
}

#[tokio::test]
async fn a_page_size_of_zero_stops_start_up() {
    let err = Server::builder("t", "0")
        .config(ServerConfig::default().page_size(0))
        .build()
        .expect_err("refused");
    assert!(err.to_string().contains("page_size"), "{err}");
}

#[tokio::test]
async fn a_thousand_prompts_are_listed_in_pages_in_both_eras() {
    let expected: Vec<String> = (0..1000).map(|n| format!("prompt_{n}")).collect();
    let url = start(ServerConfig::default()).await;
    let session = legacy_session(&url).await;
    for session in [None, Some(session.as_str())] {
        let pages = pages_of(&url, session, "prompts/list", "prompts", "name").await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [500, 500], "{session:?}");
        assert_eq!(
            pages.concat(),
            expected,
            "{session:?}: every prompt once, in order"
        );
    }
    let url = start(ServerConfig::default().page_size(300)).await;
    let session = legacy_session(&url).await;
    for session in [None, Some(session.as_str())] {
        let pages = pages_of(&url, session, "prompts/list", "prompts", "name").await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [300, 300, 300, 100], "{session:?}");
        assert_eq!(pages.concat(), expected);
        let (reply, _) = request(
            &url,
            session,
            "prompts/list",
            json!({ "cursor": "not-ours" }),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{session:?}: {reply}");
    }
}
