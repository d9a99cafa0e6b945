//! The example server as an OAuth 2.1 resource server (`--oauth-issuer`, `--oauth-audience`), over
//! real HTTP, against a real third-party authorization server (oauth2-mock-server, pinned by
//! `tests/oauth/install.sh`): its metadata, its challenges, every kind of bad token, key rotation,
//! the issuer's keys unreachable, scopes per tool, introspection, and task owners across
//! instances. After every refusal the server goes on serving a good token.

use mcp_tasks_tests::modern_meta;
use mcp_tasks_tests::oauth::{Issuer, ProtectedServer, free_port};
use mcp_tasks_tests::redis::RedisServer;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

fn caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// What a request got: the HTTP status, the `WWW-Authenticate` header, the JSON body.
#[derive(Debug)]
struct Answer {
    status: u16,
    challenge: String,
    body: Value,
}

impl Answer {
    fn result(&self) -> &Value {
        assert_eq!(self.status, 200, "{self:?}");
        self.body
            .get("result")
            .unwrap_or_else(|| panic!("an error: {self:?}"))
    }

    fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_default()
    }
}

/// A 2026-07-28 request to `url` with `token` (none: no `Authorization`).
async fn request(url: &str, token: Option<&str>, method: &str, mut params: Value) -> Answer {
    params["_meta"] = modern_meta(caps());
    let mut b = client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        b = b.header("mcp-name", name);
    }
    if let Some(token) = token {
        b = b.bearer_auth(token);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let response = b.body(body.to_string()).send().await.expect("an answer");
    let status = response.status().as_u16();
    let challenge = (response.headers().get("www-authenticate"))
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        // An SSE body: its last message.
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    });
    Answer {
        status,
        challenge,
        body,
    }
}

async fn greet(url: &str, token: Option<&str>) -> Answer {
    request(
        url,
        token,
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "Ada" } }),
    )
    .await
}

/// A good token still works: whatever came before left the server serving.
async fn still_serves(server: &ProtectedServer, good: &str) {
    let answer = greet(&server.url, Some(good)).await;
    assert_eq!(
        answer.result()["content"][0]["text"],
        "Hello, Ada!",
        "{answer:?}"
    );
}

/// `resource_metadata="..."` of a challenge.
fn metadata_url(server: &ProtectedServer) -> String {
    server
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
}

#[tokio::test]
async fn metadata_is_published_at_both_well_known_paths() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let root = server
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource");
    for url in [root, metadata_url(&server)] {
        let response = client().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        let metadata: Value = response.json().await.unwrap();
        assert_eq!(metadata["resource"], server.url.as_str(), "{metadata}");
        assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
        assert_eq!(metadata["scopes_supported"], json!(["research"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
}

#[tokio::test]
async fn no_token_gets_401_pointing_at_the_metadata() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let answer = greet(&server.url, None).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert!(
        answer.challenge.starts_with(&format!(
            "Bearer resource_metadata=\"{}\"",
            metadata_url(&server)
        )),
        "{answer:?}"
    );
    assert!(!answer.challenge.contains("error="), "{answer:?}");
    assert!(answer.message().contains("access token"), "{answer:?}");
    let good = issuer.token(json!({ "aud": server.url }));
    still_serves(&server, &good).await;
}

/// Every kind of bad token gets 401 `invalid_token` with the reason, and leaves the server serving.
#[tokio::test]
async fn bad_tokens_get_401_invalid_token_saying_why() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let aud = json!(server.url);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let good = issuer.token(json!({ "aud": aud }));
    still_serves(&server, &good).await;
    let cases: Vec<(&str, String, &str)> = vec![
            ("garbage", "not-a-jwt".into(), "not a JWT"),
            ("garbage in three parts", "a.b.c".into(), "not a JWT"),
            (
                "signed by another key",
                issuer.token_with(json!({ "foreign": true, "claims": { "aud": aud } })),
                "signature does not verify",
            ),
            (
                "the wrong audience",
                issuer.token(json!({ "aud": "http://127.0.0.1:1/other" })),
                "not for this resource",
            ),
            (
                "no audience",
                issuer.token_with(json!({ "drop": ["aud"] })),
                "no `aud` claim",
            ),
            (
                "the wrong issuer",
                issuer.token(json!({ "aud": aud, "iss": "http://127.0.0.1:1" })),
                "not issued by",
            ),
            (
                "expired",
                issuer.token(json!({ "aud": aud, "exp": now - 120 })),
                "expired",
            ),
            (
                "not yet valid",
                issuer.token(json!({ "aud": aud, "nbf": now + 600 })),
                "not valid yet",
            ),
            (
                "alg none",
                issuer.command(json!({ "cmd": "forge", "alg": "none", "claims": { "aud": aud } }))
                    ["token"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                "algorithm `none` is not accepted",
            ),
            (
                "HMAC made with the public key",
                issuer.command(json!({ "cmd": "forge", "alg": "HS256", "claims": { "aud": aud } }))
                    ["token"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                "algorithm `HS256` is not accepted",
            ),
            (
                "no subject",
                issuer.token_with(json!({ "claims": { "aud": aud }, "drop": ["sub"] })),
                "no `sub` claim",
            ),
        ];
    for (case, token, says) in cases {
        let answer = greet(&server.url, Some(&token)).await;
        assert_eq!(answer.status, 401, "{case}: {answer:?}");
        assert!(
            answer.challenge.contains("error=\"invalid_token\"")
                && answer
                    .challenge
                    .contains(&format!("resource_metadata=\"{}\"", metadata_url(&server))),
            "{case}: {answer:?}"
        );
        assert!(
            answer.message().contains(says),
            "{case}: wanted {says:?} in {answer:?}"
        );
        still_serves(&server, &good).await;
    }
}

/// A token signed with a new key (a new `kid`) makes the server fetch the keys once; a flood of
/// tokens naming an unknown key costs no more fetches (the cooldown).
#[tokio::test]
async fn a_rotated_key_is_fetched_once() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let aud = json!({ "aud": server.url });
    still_serves(&server, &issuer.token(aud.clone())).await;
    assert_eq!(issuer.stats()["jwks"], 1);
    issuer.command(json!({ "cmd": "rotate" }));
    let rotated = issuer.token(aud.clone());
    for _ in 0..5 {
        still_serves(&server, &rotated).await;
    }
    assert_eq!(issuer.stats()["jwks"], 2, "the new key was fetched once");
    for i in 0..5 {
        let unknown = issuer.token_with(
            json!({ "foreign": true, "kid": format!("made-up-{i}"), "claims": { "aud": server.url } }),
        );
        let answer = greet(&server.url, Some(&unknown)).await;
        assert_eq!(answer.status, 401, "{answer:?}");
        assert!(answer.message().contains("does not publish"), "{answer:?}");
    }
    assert_eq!(
        issuer.stats()["jwks"],
        2,
        "unknown key ids within the cooldown fetch nothing"
    );
    still_serves(&server, &rotated).await;
}

/// The issuer's keys unreachable: a clear 503 (retry later), fast, not a hang; requests that need
/// no keys are answered meanwhile.
#[tokio::test]
async fn the_jwks_endpoint_down_gets_a_clear_503_without_hanging() {
    let issuer = Issuer::start();
    for mode in ["down", "hang"] {
        issuer.command(json!({ "cmd": "jwks", "mode": mode }));
        let server = ProtectedServer::start(&issuer.url, &[]);
        let token = issuer.token(json!({ "aud": server.url }));
        let started = Instant::now();
        let answer = greet(&server.url, Some(&token)).await;
        let took = started.elapsed();
        assert_eq!(answer.status, 503, "{mode}: {answer:?}");
        assert!(
            answer.message().contains("could not be checked now")
                && answer.message().contains("/jwks"),
            "{mode}: {answer:?}"
        );
        assert!(took < Duration::from_secs(8), "{mode}: took {took:?}");
        // Within the cooldown: answered at once, without asking the issuer again.
        let fetches = issuer.stats()["jwks"].clone();
        let started = Instant::now();
        assert_eq!(greet(&server.url, Some(&token)).await.status, 503);
        assert!(started.elapsed() < Duration::from_secs(1), "{mode}");
        assert_eq!(issuer.stats()["jwks"], fetches, "{mode}");
        // The server serves what needs no key.
        assert_eq!(greet(&server.url, None).await.status, 401, "{mode}");
        let health = server.url.replace("/mcp", "/healthz");
        assert_eq!(client().get(&health).send().await.unwrap().status(), 200);
        issuer.command(json!({ "cmd": "jwks", "mode": "up" }));
    }
}

/// `research` needs the scope `research`: a token without it gets 403 `insufficient_scope` naming
/// it (a client can step up); with it, the task starts; other tools need only a valid token.
#[tokio::test]
async fn a_missing_scope_gets_403_naming_it() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let plain = issuer.token(json!({ "aud": server.url, "scope": "profile" }));
    let research = json!({ "name": "research", "arguments": { "topic": "owls" } });
    let answer = request(&server.url, Some(&plain), "tools/call", research.clone()).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        answer.challenge.contains("error=\"insufficient_scope\"")
            && answer.challenge.contains("scope=\"research\"")
            && answer
                .challenge
                .contains(&format!("resource_metadata=\"{}\"", metadata_url(&server))),
        "{answer:?}"
    );
    assert_eq!(
        answer.body["error"]["data"]["scope"], "research",
        "{answer:?}"
    );
    assert!(answer.message().contains("`research`"), "{answer:?}");
    still_serves(&server, &plain).await;
    let stepped_up = issuer.token(json!({ "aud": server.url, "scope": "profile research" }));
    // tools/list shows each caller the tools its token may call.
    let listed = |token: String| {
        let url = server.url.clone();
        async move {
            let answer = request(&url, Some(&token), "tools/list", json!({})).await;
            let tools = answer.result()["tools"].as_array().unwrap().clone();
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let plain_sees = listed(plain.clone()).await;
    assert!(plain_sees.contains(&"greet".to_owned()), "{plain_sees:?}");
    assert!(
        !plain_sees.contains(&"research".to_owned()),
        "{plain_sees:?}"
    );
    let stepped_up_sees = listed(stepped_up.clone()).await;
    assert!(
        stepped_up_sees.contains(&"research".to_owned()),
        "{stepped_up_sees:?}"
    );
    let answer = request(&server.url, Some(&stepped_up), "tools/call", research).await;
    let id = answer.result()["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    // The task's requests need its tool's scope too: the same principal with a token without it
    // gets 403; with it, the task.
    let get = json!({ "taskId": id });
    let answer = request(&server.url, Some(&plain), "tasks/get", get.clone()).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        answer.challenge.contains("scope=\"research\""),
        "{answer:?}"
    );
    let answer = request(&server.url, Some(&stepped_up), "tasks/get", get.clone()).await;
    assert_eq!(answer.result()["taskId"], id.as_str(), "{answer:?}");
    // Another principal without the scope learns nothing: the answer to an unknown id.
    let bob = issuer.token(json!({ "aud": server.url, "sub": "bob", "scope": "profile" }));
    let answer = request(&server.url, Some(&bob), "tasks/get", get).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["error"]["code"], -32602, "{answer:?}");
}

/// A token from the issuer's token endpoint (client credentials, with `resource` = the server):
/// the client is the principal.
#[tokio::test]
async fn a_client_credentials_token_from_the_issuer_is_accepted() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let response: Value = client()
        .post(format!("{}/token", issuer.url))
        .basic_auth("robot", Some("robot-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", "research"),
            ("resource", server.url.as_str()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = response["access_token"].as_str().expect("a token");
    still_serves(&server, token).await;
}

/// Opaque tokens checked at the issuer's introspection endpoint (RFC 7662): active with this
/// audience passes, inactive or for another audience is refused, and answers are cached.
#[tokio::test]
async fn opaque_tokens_are_introspected_and_cached() {
    let issuer = Issuer::start();
    let introspect = format!("{}/introspect", issuer.url);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let server = ProtectedServer::start_at(
        &format!("127.0.0.1:{port}"),
        &issuer.url,
        &url,
        &[
            "--oauth-introspection",
            &introspect,
            "--oauth-client",
            "mcp-server:s3cret",
        ],
    );
    let far = 4_000_000_000u64;
    let opaque = |token: &str, answer: Value| {
        issuer.command(json!({ "cmd": "opaque", "token": token, "answer": answer }));
    };
    opaque(
        "opaque-good",
        json!({ "active": true, "sub": "carol", "aud": url, "scope": "research", "exp": far }),
    );
    opaque(
        "opaque-other-audience",
        json!({ "active": true, "sub": "carol", "aud": "http://elsewhere/mcp", "exp": far }),
    );
    still_serves(&server, "opaque-good").await;
    still_serves(&server, "opaque-good").await;
    assert_eq!(issuer.stats()["introspect"], 1, "the second was cached");
    for (token, says) in [
        ("opaque-unknown", "not active"),
        ("opaque-other-audience", "not for this resource"),
    ] {
        let answer = greet(&server.url, Some(token)).await;
        assert_eq!(answer.status, 401, "{answer:?}");
        assert!(
            answer.challenge.contains("error=\"invalid_token\""),
            "{answer:?}"
        );
        assert!(answer.message().contains(says), "{answer:?}");
        still_serves(&server, "opaque-good").await;
    }
}

/// Two principals on two instances sharing a Redis store: each sees its own tasks from either
/// instance, and the other's task id answers exactly as an unknown id.
#[tokio::test]
async fn two_principals_on_two_instances_see_only_their_own_tasks() {
    let issuer = Issuer::start();
    let redis = RedisServer::start();
    let (port_a, port_b) = (free_port(), free_port());
    // Both instances serve one resource (behind one load balancer, say): the same audience.
    let resource = format!("http://127.0.0.1:{port_a}/mcp");
    let store = ["--store", redis.url.as_str()];
    let a = ProtectedServer::start_at(
        &format!("127.0.0.1:{port_a}"),
        &issuer.url,
        &resource,
        &store,
    );
    let b = ProtectedServer::start_at(
        &format!("127.0.0.1:{port_b}"),
        &issuer.url,
        &resource,
        &store,
    );
    let url_b = format!("http://127.0.0.1:{port_b}/mcp");
    let alice = issuer.token(json!({ "aud": resource, "sub": "alice" }));
    let bob = issuer.token(json!({ "aud": resource, "sub": "bob" }));
    let started = request(
        &a.url,
        Some(&alice),
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": 30 } }),
    )
    .await;
    let id = started.result()["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    for url in [&a.url, &url_b] {
        let seen = request(url, Some(&alice), "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(seen.result()["taskId"], id.as_str(), "{seen:?}");
    }
    let unknown = request(
        &url_b,
        Some(&bob),
        "tasks/get",
        json!({ "taskId": "00000000000000000000000000000000" }),
    )
    .await;
    for url in [&a.url, &url_b] {
        for method in ["tasks/get", "tasks/cancel"] {
            let other = request(url, Some(&bob), method, json!({ "taskId": id })).await;
            assert_eq!(other.status, unknown.status, "{other:?}");
            assert_eq!(
                other.body["error"]["code"], unknown.body["error"]["code"],
                "{other:?}"
            );
            assert_eq!(
                other.message().replace(&id, "ID"),
                unknown
                    .message()
                    .replace("00000000000000000000000000000000", "ID"),
                "{method} at {url}: {other:?}"
            );
        }
    }
    // Bob's cancel did nothing: Alice's task still runs.
    let seen = request(&url_b, Some(&alice), "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(seen.result()["status"], "working", "{seen:?}");
    drop(b);
}

/// `mcp-tasks-client` with client credentials: on the first `401` it reads the server's metadata,
/// finds the issuer's token endpoint, gets a token for this server, and retries; a `403`
/// `insufficient_scope` gets a token with the missing scope added (step-up).
#[tokio::test]
async fn the_client_gets_tokens_with_client_credentials_and_steps_up() {
    use mcp_tasks_client::Client;
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let client = Client::builder()
        .client_credentials("robot", "robot-secret")
        .oauth_scopes("profile")
        .connect_http(&server.url)
        .await
        .expect("connects, getting a token on the way");
    let greeting = client
        .call_tool("greet", json!({ "name": "Ada" }))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&greeting), "Hello, Ada!");
    assert_eq!(
        issuer.stats()["token"],
        1,
        "one token for the connection and the call"
    );
    // `research` needs `research`, which a `profile` token lacks: 403, step-up, retry.
    let call = client
        .call_tool("research", json!({ "topic": "owls" }))
        .await
        .expect("research starts after the step-up");
    assert!(call.task().is_some(), "research runs as a task");
    assert_eq!(
        issuer.stats()["token"],
        2,
        "one more token, with `research`"
    );

    // A static token that is not valid: the server's refusal, as an HTTP error.
    let refused = Client::builder()
        .bearer_token("not-a-token")
        .connect_http(&server.url)
        .await
        .expect_err("a bad static token is refused");
    assert!(
        matches!(refused, mcp_tasks_client::Error::Http { status: 401, .. }),
        "{refused:?}"
    );
}

/// The `mcp-tasks` command: `--client-id/--client-secret` get a token by themselves; `--token`
/// takes one given.
#[tokio::test]
async fn the_command_calls_a_protected_server() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let bin = mcp_tasks_tests::cli::mcp_tasks_bin();
    let run = |args: Vec<String>| {
        let out = std::process::Command::new(&bin)
            .args(&args)
            .output()
            .expect("mcp-tasks runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = server.url.clone();
    let strs = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (code, out, err) = run(strs(&[
        "tools",
        "--url",
        &url,
        "--client-id",
        "robot",
        "--client-secret",
        "s",
    ]));
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("research") && out.contains("greet"), "{out}");
    let token = issuer.token(json!({ "aud": url, "scope": "" }));
    let (code, out, err) = run(strs(&[
        "call",
        "greet",
        "--args",
        r#"{"name":"Ada"}"#,
        "--url",
        &url,
        "--token",
        &token,
    ]));
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("Hello, Ada!"), "{out}");
    let (code, out, err) = run(strs(&["tools", "--url", &url, "--token", "garbage"]));
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("401"), "{err}");
}

/// A 2025-11-25 session over OAuth: `initialize` gets the token, later requests in the session
/// (the GET stream, the calls, the DELETE at the end) carry it, and tasks are the principal's.
#[tokio::test]
async fn a_legacy_session_runs_on_a_client_credentials_token() {
    use mcp_tasks_client::{Client, EraChoice};
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let client = Client::builder()
        .era(EraChoice::Legacy)
        .client_credentials("robot", "robot-secret")
        .connect_http(&server.url)
        .await
        .expect("a legacy session opens");
    assert!(!client.era().is_modern(), "{:?}", client.era());
    let greeting = client
        .call_tool("greet", json!({ "name": "Ada" }))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&greeting), "Hello, Ada!");
    // No scope configured and none challenged: the client asked for what the server supports.
    let call = client
        .call_tool("research", json!({ "topic": "owls" }))
        .await
        .expect("research starts");
    assert!(call.task().is_some(), "research runs as a task");
    assert_eq!(
        issuer.stats()["token"],
        1,
        "one token for the whole session"
    );
}
