//! Prompts and completions at the level a client meets them: the conformance fixture server's
//! prompts over real stdio pipes and real HTTP, in both protocol eras, with bad input (an unknown
//! prompt, a missing argument, a completion for an unknown reference) answered with the precise
//! error while the server keeps serving.

use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{StdioClient, modern};
use serde_json::{Value, json};
use std::time::Duration;

const PROMPTS: [&str; 5] = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
];

fn prompt<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["prompts"]
        .as_array()
        .expect("prompts array")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no prompt {name} in {list}"))
}

/// A client of either era over stdio: `params` become modern params when `modern_caps` is set.
struct Client {
    stdio: StdioClient,
    modern_caps: Option<Value>,
}

impl Client {
    async fn legacy(capabilities: Value) -> (Client, Value) {
        let mut stdio = StdioClient::conformance();
        let init = stdio.initialize(capabilities).await;
        (
            Client {
                stdio,
                modern_caps: None,
            },
            init,
        )
    }

    fn modern(capabilities: Value) -> Client {
        Client {
            stdio: StdioClient::conformance(),
            modern_caps: Some(capabilities),
        }
    }

    fn modern_bin(stdio: StdioClient) -> Client {
        Client {
            stdio,
            modern_caps: Some(json!({})),
        }
    }

    fn params(&self, params: Value) -> Value {
        match &self.modern_caps {
            Some(caps) => modern(params, caps.clone()),
            None => params,
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let params = self.params(params);
        self.stdio.result(method, params).await
    }

    async fn error(&mut self, method: &str, params: Value) -> Value {
        let params = self.params(params);
        self.stdio.error(method, params).await
    }
}

/// What both eras answer alike: the list, the four plain prompts, completions, and every kind of
/// bad input, each followed by a request that still works.
async fn serves_prompts_and_completions(c: &mut Client) {
    let list = c.result("prompts/list", json!({})).await;
    let names: Vec<&str> = list["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PROMPTS, "{list}");
    assert!(list.get("nextCursor").is_none(), "{list}");
    let simple = prompt(&list, "test_simple_prompt");
    assert_eq!(simple["description"], "A simple prompt without arguments.");
    assert!(simple.get("arguments").is_none(), "no arguments: {simple}");
    assert_eq!(
        prompt(&list, "test_prompt_with_arguments")["arguments"],
        json!([
            { "name": "arg1", "description": "First test argument.", "required": true },
            { "name": "arg2", "description": "Second test argument.", "required": true },
        ])
    );
    // `#[arg(rename = "resourceUri")]` is the name on the wire.
    assert_eq!(
        prompt(&list, "test_prompt_with_embedded_resource")["arguments"][0]["name"],
        "resourceUri"
    );

    let got = c
        .result("prompts/get", json!({ "name": "test_simple_prompt" }))
        .await;
    assert_eq!(
        got["messages"],
        json!([{ "role": "user", "content": { "type": "text", "text": "This is a simple prompt for testing." } }])
    );
    let got = c
        .result(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "hello", "arg2": "world" } }),
        )
        .await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
    let got = c
        .result(
            "prompts/get",
            json!({ "name": "test_prompt_with_embedded_resource", "arguments": { "resourceUri": "test://r" } }),
        )
        .await;
    assert_eq!(
        got["messages"][0]["content"],
        json!({ "type": "resource", "resource": {
            "uri": "test://r", "mimeType": "text/plain", "text": "Embedded resource content for testing." } })
    );
    let got = c
        .result("prompts/get", json!({ "name": "test_prompt_with_image" }))
        .await;
    assert_eq!(got["messages"][0]["content"]["type"], "image");
    assert_eq!(got["messages"][0]["content"]["mimeType"], "image/png");
    assert!(
        got["messages"][0]["content"]["data"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );

    // Bad input: the precise error, and the server goes on.
    let err = c
        .error("prompts/get", json!({ "name": "no_such_prompt" }))
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(
        err["message"],
        "Invalid params: unknown prompt `no_such_prompt`"
    );
    assert_eq!(err["data"]["prompt"], "no_such_prompt");
    let err = c
        .error(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "only one" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["message"], "missing required argument `arg2`");
    assert_eq!(err["data"]["argument"], "arg2");
    let err = c
        .error(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": 1, "arg2": "x" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["data"]["argument"], "arg1");
    let err = c
        .error(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": ["x"] }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");

    // Completions: a fixed list, filtered by what was typed; a function that sees the other
    // arguments already chosen.
    let done = c
        .result(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                    "argument": { "name": "arg1", "value": "PA" } }),
        )
        .await;
    assert_eq!(
        done["completion"],
        json!({ "values": ["paris", "park", "party"], "total": 3, "hasMore": false })
    );
    let done = c
        .result(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                    "argument": { "name": "arg2", "value": "rome-t" },
                    "context": { "arguments": { "arg1": "rome" } } }),
        )
        .await;
    assert_eq!(
        done["completion"]["values"],
        json!(["rome-two", "rome-three"])
    );
    // An argument with no completion declared completes to nothing.
    let done = c
        .result(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_embedded_resource" },
                    "argument": { "name": "resourceUri", "value": "" } }),
        )
        .await;
    assert_eq!(done["completion"]["values"], json!([]));
    let err = c
        .error(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "nope" },
                    "argument": { "name": "arg1", "value": "" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["message"], "Invalid params: unknown prompt `nope`");
    let err = c
        .error(
            "completion/complete",
            json!({ "ref": { "type": "ref/resource", "uri": "file:///{path}" },
                    "argument": { "name": "path", "value": "" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    let err = c
        .error(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                    "argument": { "name": "arg9", "value": "" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["data"]["argument"], "arg9");
    let err = c
        .error(
            "completion/complete",
            json!({ "ref": { "type": "ref/tool", "name": "greet" },
                    "argument": { "name": "name", "value": "" } }),
        )
        .await;
    assert_eq!(err["code"], -32602, "{err}");
    // Still serving.
    let got = c
        .result("prompts/get", json!({ "name": "test_simple_prompt" }))
        .await;
    assert_eq!(got["messages"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_2025_session_lists_gets_and_completes_prompts_and_a_prompt_asks_with_a_plain_request() {
    let (mut c, init) = Client::legacy(json!({ "elicitation": {} })).await;
    assert_eq!(
        init["capabilities"]["prompts"],
        json!({ "listChanged": false })
    );
    assert_eq!(init["capabilities"]["completions"], json!({}));
    serves_prompts_and_completions(&mut c).await;
    let list = c.result("prompts/list", json!({})).await;
    assert!(
        list.get("ttlMs").is_none() && list.get("resultType").is_none(),
        "{list}"
    );

    // The prompt asks the user: in a session, a plain `elicitation/create` request.
    let id = c.stdio.id();
    c.stdio
        .send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "prompts/get",
            "params": { "name": "test_input_required_result_prompt" } }),
        )
        .await;
    let ask = c
        .stdio
        .wait_for(|m| m["method"] == "elicitation/create")
        .await;
    assert_eq!(
        ask["params"]["message"],
        "What context should the prompt use?"
    );
    c.stdio
        .send(&json!({ "jsonrpc": "2.0", "id": ask["id"],
            "result": { "action": "accept", "content": { "context": "tea" } } }))
        .await;
    let done = c.stdio.response(&id).await;
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"], "Write with this context in mind: tea",
        "{done}"
    );
}

#[tokio::test]
async fn a_2026_client_gets_caching_hints_and_a_prompt_that_asks_answers_input_required() {
    let caps = json!({ "elicitation": {} });
    let mut c = Client::modern(caps.clone());
    let discover = c.result("server/discover", json!({})).await;
    assert_eq!(
        discover["capabilities"]["prompts"],
        json!({ "listChanged": false })
    );
    assert_eq!(discover["capabilities"]["completions"], json!({}));
    serves_prompts_and_completions(&mut c).await;
    let list = c.result("prompts/list", json!({})).await;
    assert_eq!(list["resultType"], "complete", "{list}");
    assert_eq!(
        (&list["ttlMs"], &list["cacheScope"]),
        (&json!(0), &json!("private"))
    );

    // MRTR: the first round answers the question, the retry the messages.
    let get = json!({ "name": "test_input_required_result_prompt" });
    let first = c.result("prompts/get", get.clone()).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let ask = &first["inputRequests"]["user_context"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["context"])
    );
    let state = first["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    let mut retry = get.clone();
    retry["inputResponses"] =
        json!({ "user_context": { "action": "accept", "content": { "context": "tea" } } });
    retry["requestState"] = json!(state);
    let done = c.result("prompts/get", retry.clone()).await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(
        done["messages"][0]["content"]["text"],
        "Write with this context in mind: tea"
    );
    // A tampered `requestState`, and one carried to another prompt, are refused.
    let mut tampered = retry.clone();
    tampered["requestState"] = json!(format!("{state}x"));
    assert_eq!(c.error("prompts/get", tampered).await["code"], -32602);
    let mut elsewhere = retry.clone();
    elsewhere["name"] = json!("test_simple_prompt");
    assert_eq!(c.error("prompts/get", elsewhere).await["code"], -32602);
    // An answer that does not fit its question is the client's error.
    let mut misfit = retry;
    misfit["inputResponses"] = json!({ "user_context": { "nope": true } });
    assert_eq!(c.error("prompts/get", misfit).await["code"], -32602);
    // Without the elicitation capability, the prompt's question is `-32021` naming it.
    let mut bare = Client::modern(json!({}));
    let err = bare.error("prompts/get", get).await;
    assert_eq!(err["code"], -32021, "{err}");
    assert_eq!(
        err["data"]["requiredCapabilities"],
        json!({ "elicitation": {} })
    );
}

#[tokio::test]
async fn the_example_server_completes_its_prompt_in_both_eras() {
    let complete = |value: &str, language: Option<&str>, argument: &str| {
        let mut params = json!({ "ref": { "type": "ref/prompt", "name": "review_code" },
            "argument": { "name": argument, "value": value } });
        if let Some(language) = language {
            params["context"] = json!({ "arguments": { "language": language } });
        }
        params
    };
    let mut legacy = StdioClient::example();
    let init = legacy.initialize(json!({})).await;
    assert_eq!(init["capabilities"]["completions"], json!({}), "{init}");
    let mut clients = vec![
        Client {
            stdio: legacy,
            modern_caps: None,
        },
        Client::modern_bin(StdioClient::example()),
    ];
    for c in &mut clients {
        let list = c.result("prompts/list", json!({})).await;
        let review = prompt(&list, "review_code");
        assert_eq!(review["title"], "Review code");
        assert_eq!(
            review["arguments"][2],
            json!({ "name": "focus",
            "description": "What to look at most (depends on the language).", "required": false })
        );
        let done = c
            .result("completion/complete", complete("ty", None, "language"))
            .await;
        assert_eq!(done["completion"]["values"], json!(["typescript"]));
        let done = c
            .result("completion/complete", complete("", Some("rust"), "focus"))
            .await;
        assert_eq!(
            done["completion"]["values"],
            json!(["ownership", "unsafe", "error handling", "performance"])
        );
        let err = c
            .error("completion/complete", complete("", None, "code2"))
            .await;
        assert_eq!(err["code"], -32602, "{err}");
        let got = c
            .result(
                "prompts/get",
                json!({ "name": "review_code", "arguments": { "code": "fn main() {}", "language": "rust" } }),
            )
            .await;
        assert_eq!(got["messages"][1]["role"], "assistant");
        assert_eq!(
            got["messages"][0]["content"]["text"],
            "Please review this rust code:\n\nfn main() {}"
        );
    }
}

#[tokio::test]
async fn a_server_without_prompts_declares_neither_capability_and_answers_32601() {
    let mut c = StdioClient::spawn(&mcp_tasks_tests::example_bin("inventory_server"));
    let init = c.initialize(json!({})).await;
    assert!(init["capabilities"].get("prompts").is_none(), "{init}");
    assert!(init["capabilities"].get("completions").is_none(), "{init}");
    let err = c.error("prompts/list", json!({})).await;
    assert_eq!(err["code"], -32601, "{err}");
    let err = c
        .error(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "x" }, "argument": { "name": "a", "value": "" } }),
        )
        .await;
    assert_eq!(err["code"], -32601, "{err}");
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

async fn post(b: reqwest::RequestBuilder) -> (reqwest::StatusCode, Value) {
    let r = b.send().await.expect("the server answers");
    let status = r.status();
    let text = r.text().await.expect("a body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn modern_post(
    c: &reqwest::Client,
    url: &str,
    method: &str,
    params: Value,
) -> reqwest::RequestBuilder {
    mcp_tasks_tests::http::modern_post(c, url, method, params, json!({ "elicitation": {} }))
}

#[tokio::test]
async fn over_http_both_eras_get_and_complete_prompts_and_bad_input_is_32602() {
    let s = HttpServer::start(&[]);
    let c = http();
    // 2026-07-28.
    let (status, body) = post(modern_post(
        &c,
        &s.url,
        "prompts/get",
        json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "a", "arg2": "b" } }),
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    let (_, body) = post(modern_post(
        &c,
        &s.url,
        "prompts/get",
        json!({ "name": "test_input_required_result_prompt" }),
    ))
    .await;
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    let (_, body) = post(modern_post(
        &c,
        &s.url,
        "prompts/get",
        json!({ "name": "missing" }),
    ))
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (status, body) = post(modern_post(
        &c,
        &s.url,
        "completion/complete",
        json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                "argument": { "name": "arg1", "value": "te" } }),
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["completion"]["values"],
        json!(["test", "testing"])
    );

    // 2025-11-25, in a session.
    let r = c
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
        .expect("answer");
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        body["result"]["capabilities"]["prompts"],
        json!({ "listChanged": false })
    );
    let legacy = |body: Value| {
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
    };
    let (_, body) = post(legacy(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "prompts/get",
        "params": { "name": "test_simple_prompt" } }),
    ))
    .await;
    assert_eq!(
        body["result"]["messages"][0]["content"]["text"], "This is a simple prompt for testing.",
        "{body}"
    );
    let (_, body) = post(legacy(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "completion/complete",
        "params": { "ref": { "type": "ref/prompt", "name": "unknown" },
                    "argument": { "name": "a", "value": "" } } }),
    ))
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (_, body) = post(legacy(
        json!({ "jsonrpc": "2.0", "id": 4, "method": "prompts/list" }),
    ))
    .await;
    assert_eq!(
        body["result"]["prompts"].as_array().map(Vec::len),
        Some(5),
        "{body}"
    );
}
