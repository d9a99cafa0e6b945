//! The example server as an OAuth 2.1 resource server (`--oauth-issuer`, `--oauth-audience`), over
//! real HTTP, against a real third-party authorization server (oauth2-mock-server, pinned by
//! `tests/oauth/install.sh`): its metadata, its challenges, every kind of bad token, key rotation,
//! the issuer's keys unreachable, scopes per tool, introspection, and task owners across
//! instances. After every refusal the server goes on serving a good token.

use mcp_tasks_tests::modern_meta;
use mcp_tasks_tests::oauth::{Issuer, ProtectedServer, free_port, research_refused};
use mcp_tasks_tests::redis::RedisServer;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[path = "support/tls.rs"]
mod tls;
use tls::TlsListener;

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
    /// The `Retry-After` header, if any.
    retry_after: Option<String>,
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
    let named = (params["name"].as_str())
        .or(params["taskId"].as_str())
        .or(params["uri"].as_str());
    if let Some(name) = named {
        b = b.header("mcp-name", name);
    }
    if let Some(token) = token {
        b = b.bearer_auth(token);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    answer_of(b.body(body.to_string()).send().await.expect("an answer")).await
}

/// The status, challenge and JSON body (or an SSE body's last message) of a response.
async fn answer_of(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let challenge = (response.headers().get("www-authenticate"))
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let retry_after =
        (response.headers().get("retry-after")).map(|v| v.to_str().unwrap().to_owned());
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
        retry_after,
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
    // The scope to ask for: the example sets no `challenge_scopes`, so its `scopes_supported`.
    assert_eq!(
        answer.challenge,
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"research\"",
            metadata_url(&server)
        ),
        "{answer:?}"
    );
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
        // When to come back: the validator's refresh cooldown.
        assert_eq!(
            answer.retry_after.as_deref(),
            Some("10"),
            "{mode}: {answer:?}"
        );
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
    // The JSON-RPC error every other path answers too (`every_path_refuses_...` below).
    assert_eq!(answer.body["error"], research_refused(), "{answer:?}");
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
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    // The example's tools, with a 401 challenge that asks for `profile` only (by default it
    // names `scopes_supported`, `research` included, and the client would ask for it at once).
    let url = serve_in_process(mcp_tasks_examples::example_server(), |url| {
        ResourceServer::new(url, JwtValidator::new(&issuer.url, url))
            .unwrap()
            .authorization_server(&issuer.url)
            .scopes_supported(["research"])
            .challenge_scopes(["profile"])
    })
    .await;
    let client = Client::builder()
        .client_credentials("robot", "robot-secret")
        .connect_http(&url)
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
        .connect_http(&url)
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
    // The challenge names the scope the server supports, and the client asked for it.
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

/// Resources and prompts declaring scopes (`#[resource(scope)]`, `#[prompt(scope)]`), served in
/// this process for the issuer's tokens.
mod scoped {
    use mcp_tasks_runtime::resource::ListedResource;
    use mcp_tasks_runtime::{ToolContext, prompt, resource};

    /// Open to any valid token.
    #[resource(uri = "notes://welcome")]
    pub async fn welcome() -> String {
        "welcome".into()
    }

    /// The plan (needs `secrets`).
    #[resource(uri = "secret://plan", scope = "secrets")]
    pub async fn plan() -> String {
        "the plan".into()
    }

    /// A secret document (needs `secrets`).
    #[resource(uri = "secret://docs/{name}", scope = "secrets", list = "list_docs")]
    pub async fn doc(#[complete(values = ["alpha", "beta"])] name: String) -> String {
        format!("document {name}")
    }

    /// The secret documents.
    pub async fn list_docs(_ctx: ToolContext) -> Vec<ListedResource> {
        vec![ListedResource::new("secret://docs/alpha", "alpha")]
    }

    /// Says hello.
    #[prompt]
    pub async fn hello(#[complete(values = ["Ada", "Alan"])] name: String) -> String {
        format!("Say hello to {name}")
    }

    /// Tells the secret (needs `secrets`).
    #[prompt(scope = "secrets")]
    pub async fn confess(#[complete(values = ["all", "some"])] how: String) -> String {
        format!("Tell {how} of it")
    }
}

/// `server` on a free loopback port, protected by the resource server `oauth` makes for its
/// endpoint URL (also the resource URI, the tokens' audience); that URL.
async fn serve_in_process(
    server: mcp_tasks_runtime::ServerBuilder,
    oauth: impl FnOnce(&str) -> mcp_tasks_runtime::server::oauth::ResourceServer,
) -> String {
    use mcp_tasks_runtime::server::HttpConfig;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let oauth = oauth(&url);
    let server = server.build().unwrap();
    tokio::spawn(async move {
        server
            .serve_http(listener)
            .config(HttpConfig::default().authenticator(oauth))
            .await
    });
    url
}

/// The scoped server for `issuer`'s tokens; `list_all`: lists everything to everyone
/// (`ServerConfig::list_only_permitted_tools(false)`).
async fn scoped_server(issuer: &Issuer, list_all: bool) -> String {
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    use mcp_tasks_runtime::{Server, ServerConfig};
    let server = Server::builder("scoped", "1.0.0")
        .config(ServerConfig::default().list_only_permitted_tools(!list_all))
        .resource::<scoped::welcome>()
        .resource::<scoped::plan>()
        .resource::<scoped::doc>()
        .prompt::<scoped::hello>()
        .prompt::<scoped::confess>();
    serve_in_process(server, |url| {
        ResourceServer::new(url, JwtValidator::new(&issuer.url, url))
            .unwrap()
            .authorization_server(&issuer.url)
            .scopes_supported(["secrets"])
    })
    .await
}

/// The 403 a request for something needing `secrets` gets, as tools get it.
fn assert_needs_secrets(answer: &Answer, url: &str, what: &str) {
    assert_eq!(answer.status, 403, "{what}: {answer:?}");
    let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert!(
        answer.challenge.starts_with(&format!(
            "Bearer resource_metadata=\"{metadata}\", error=\"insufficient_scope\", scope=\"secrets\""
        )),
        "{what}: {answer:?}"
    );
    assert_eq!(answer.body["error"]["data"]["scope"], "secrets", "{what}");
    assert!(
        answer.message().contains(what) && answer.message().contains("`secrets`"),
        "{what}: {answer:?}"
    );
}

/// The names (or URIs) under `key` of a list's result.
fn names(answer: &Answer, list: &str, key: &str) -> Vec<String> {
    answer.result()[list]
        .as_array()
        .unwrap_or_else(|| panic!("{answer:?}"))
        .iter()
        .map(|item| item[key].as_str().unwrap().to_owned())
        .collect()
}

/// `#[resource(scope)]` and `#[prompt(scope)]`: a token without the scope gets 403
/// `insufficient_scope` naming it on a read, a get and a completion, as for a tool, and does not
/// see them listed; with the scope, all of it works; listing everything is the same switch as
/// for tools.
#[tokio::test]
async fn resources_and_prompts_need_their_scopes() {
    let issuer = Issuer::start();
    let url = scoped_server(&issuer, false).await;
    let plain = issuer.token(json!({ "aud": url, "scope": "profile" }));
    let secrets = issuer.token(json!({ "aud": url, "scope": "profile secrets" }));
    let read = |uri: &str| json!({ "uri": uri });
    let get =
        |name: &str, arg: &str, value: &str| json!({ "name": name, "arguments": { arg: value } });
    let complete = |reference: Value, arg: &str| json!({ "ref": reference, "argument": { "name": arg, "value": "" } });
    let confess_ref = json!({ "type": "ref/prompt", "name": "confess" });
    let doc_ref = json!({ "type": "ref/resource", "uri": "secret://docs/{name}" });

    // Without `secrets`: 403 naming it, for each way in.
    for (method, params, what) in [
        (
            "resources/read",
            read("secret://plan"),
            "the resource `secret://plan`",
        ),
        (
            "resources/read",
            read("secret://docs/alpha"),
            "the resource `secret://docs/{name}`",
        ),
        (
            "prompts/get",
            get("confess", "how", "all"),
            "the prompt `confess`",
        ),
        (
            "completion/complete",
            complete(confess_ref.clone(), "how"),
            "the prompt `confess`",
        ),
        (
            "completion/complete",
            complete(doc_ref.clone(), "name"),
            "the resource `secret://docs/{name}`",
        ),
    ] {
        let answer = request(&url, Some(&plain), method, params).await;
        assert_needs_secrets(&answer, &url, what);
    }
    // What needs no scope is served to the same token.
    let answer = request(
        &url,
        Some(&plain),
        "resources/read",
        read("notes://welcome"),
    )
    .await;
    assert_eq!(
        answer.result()["contents"][0]["text"],
        "welcome",
        "{answer:?}"
    );
    let answer = request(
        &url,
        Some(&plain),
        "prompts/get",
        get("hello", "name", "Ada"),
    )
    .await;
    assert!(answer.result()["messages"].is_array(), "{answer:?}");
    let hello_ref = json!({ "type": "ref/prompt", "name": "hello" });
    let answer = request(
        &url,
        Some(&plain),
        "completion/complete",
        complete(hello_ref, "name"),
    )
    .await;
    assert_eq!(
        answer.result()["completion"]["values"],
        json!(["Ada", "Alan"])
    );
    // An unknown name or URI is answered as unknown, not 403.
    let answer = request(
        &url,
        Some(&plain),
        "resources/read",
        read("secret://nothing"),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["error"]["code"], -32602, "{answer:?}");

    // The lists show the token only what it may use.
    let lists = |url: String, token: String| async move {
        let resources = request(&url, Some(&token), "resources/list", json!({})).await;
        let templates = request(&url, Some(&token), "resources/templates/list", json!({})).await;
        let prompts = request(&url, Some(&token), "prompts/list", json!({})).await;
        (
            names(&resources, "resources", "uri"),
            names(&templates, "resourceTemplates", "uriTemplate"),
            names(&prompts, "prompts", "name"),
        )
    };
    let (resources, templates, prompts) = lists(url.clone(), plain.clone()).await;
    assert_eq!(resources, ["notes://welcome"]);
    assert!(templates.is_empty(), "{templates:?}");
    assert_eq!(prompts, ["hello"]);
    let (resources, templates, prompts) = lists(url.clone(), secrets.clone()).await;
    assert_eq!(
        resources,
        ["notes://welcome", "secret://plan", "secret://docs/alpha"]
    );
    assert_eq!(templates, ["secret://docs/{name}"]);
    assert_eq!(prompts, ["hello", "confess"]);

    // With `secrets`: all of it.
    let answer = request(
        &url,
        Some(&secrets),
        "resources/read",
        read("secret://plan"),
    )
    .await;
    assert_eq!(
        answer.result()["contents"][0]["text"],
        "the plan",
        "{answer:?}"
    );
    let answer = request(
        &url,
        Some(&secrets),
        "resources/read",
        read("secret://docs/beta"),
    )
    .await;
    assert_eq!(
        answer.result()["contents"][0]["text"],
        "document beta",
        "{answer:?}"
    );
    let answer = request(
        &url,
        Some(&secrets),
        "prompts/get",
        get("confess", "how", "all"),
    )
    .await;
    assert_eq!(
        answer.result()["messages"][0]["content"]["text"],
        "Tell all of it",
        "{answer:?}"
    );
    let answer = request(
        &url,
        Some(&secrets),
        "completion/complete",
        complete(confess_ref, "how"),
    )
    .await;
    assert_eq!(
        answer.result()["completion"]["values"],
        json!(["all", "some"])
    );
    let answer = request(
        &url,
        Some(&secrets),
        "completion/complete",
        complete(doc_ref, "name"),
    )
    .await;
    assert_eq!(
        answer.result()["completion"]["values"],
        json!(["alpha", "beta"])
    );

    // The switch that lists every tool lists every resource and prompt too; reads still need
    // the scope.
    let url = scoped_server(&issuer, true).await;
    let plain = issuer.token(json!({ "aud": url, "scope": "profile" }));
    let (resources, templates, prompts) = lists(url.clone(), plain.clone()).await;
    assert_eq!(resources.len(), 3, "{resources:?}");
    assert_eq!(templates, ["secret://docs/{name}"]);
    assert_eq!(prompts, ["hello", "confess"]);
    let answer = request(&url, Some(&plain), "resources/read", read("secret://plan")).await;
    assert_needs_secrets(&answer, &url, "the resource `secret://plan`");
}

/// A request in the 2025-11-25 session `session` (none: `initialize`, which opens one) with
/// `token`; the answer, and the session's id.
async fn legacy(
    url: &str,
    token: &str,
    session: Option<&str>,
    method: &str,
    params: Value,
) -> (Answer, String) {
    let mut b = client()
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(id) = session {
        b = b
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
    let response = b.body(body.to_string()).send().await.expect("an answer");
    let id = (response.headers().get("mcp-session-id"))
        .map(|v| v.to_str().unwrap().to_owned())
        .or(session.map(str::to_owned))
        .unwrap_or_default();
    (answer_of(response).await, id)
}

/// A 2025-11-25 session's tasks are its own (owned by the session, not the principal), and their
/// requests need their tool's scope too: the same principal with a token without it gets 403
/// naming it, as a 2026-07-28 task's requests do.
#[tokio::test]
async fn a_legacy_sessions_task_needs_its_tools_scope() {
    let issuer = Issuer::start();
    let server = ProtectedServer::start(&issuer.url, &[]);
    let url = &server.url;
    let research = issuer.token(json!({ "aud": url, "scope": "research" }));
    let plain = issuer.token(json!({ "aud": url, "scope": "profile" }));
    let capabilities = json!({ "elicitation": {}, "sampling": {},
        "tasks": { "requests": { "elicitation": { "create": {} }, "sampling": { "createMessage": {} } } } });
    let (answer, session) = legacy(
        url,
        &research,
        None,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": { "name": "oauth-tests", "version": "0" },
        }),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(!session.is_empty(), "a session id");
    let session = Some(session.as_str());
    let (answer, _) = legacy(
        url,
        &research,
        session,
        "notifications/initialized",
        json!({}),
    )
    .await;
    assert!(answer.status < 300, "{answer:?}");
    let call =
        json!({ "name": "research", "arguments": { "topic": "owls" }, "task": { "ttl": 60000 } });
    let (answer, _) = legacy(url, &research, session, "tools/call", call).await;
    let id = answer.result()["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer:?}"))
        .to_owned();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let (answer, _) = legacy(url, &plain, session, method, json!({ "taskId": id })).await;
        assert_eq!(answer.status, 403, "{method}: {answer:?}");
        assert!(
            answer.challenge.contains("error=\"insufficient_scope\"")
                && answer.challenge.contains("scope=\"research\""),
            "{method}: {answer:?}"
        );
        assert!(
            answer.message().contains("`research`"),
            "{method}: {answer:?}"
        );
    }
    // With the scope, the session's task as before.
    let (answer, _) = legacy(
        url,
        &research,
        session,
        "tasks/get",
        json!({ "taskId": id }),
    )
    .await;
    assert_eq!(answer.result()["taskId"], id.as_str(), "{answer:?}");
    // Another principal naming this session and task learns nothing from a 403: it is not let
    // into the session at all.
    let bob = issuer.token(json!({ "aud": url, "sub": "bob", "scope": "profile" }));
    let (answer, _) = legacy(url, &bob, session, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(answer.status, 404, "{answer:?}");
}

/// A private CA and a certificate for `localhost` it signed.
struct PrivateCa {
    /// The CA's certificate, PEM: what a client is told to trust.
    ca: String,
    /// The `localhost` certificate and its private key, PEM: what a server presents.
    leaf: String,
    key: String,
    /// A TLS acceptor presenting `leaf`.
    tls: tokio_rustls::TlsAcceptor,
}

fn private_ca() -> PrivateCa {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mcp-tasks OAuth test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    PrivateCa {
        ca: ca.pem(),
        leaf: leaf.pem(),
        key: key.serialize_pem(),
        tls: tls::acceptor(leaf.der().clone(), key.serialize_der()),
    }
}

/// Echoes its text.
#[mcp_tasks_runtime::tool]
async fn echo(text: String) -> String {
    text
}

/// HTTPS (rustls): a protected server behind a certificate of a private CA. The client, told to
/// trust that CA, gets a token with client credentials and calls a tool; so does the `mcp-tasks`
/// command with `--ca-cert`; without the CA both refuse the certificate, saying so.
// Multi-threaded: the command runs as a blocking child process while this process serves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_and_the_command_call_a_protected_server_over_https() {
    use mcp_tasks_client::Client;
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::HttpConfig;
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    let PrivateCa { ca, tls, .. } = private_ca();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://localhost:{}/mcp", tcp.local_addr().unwrap().port());
    let oauth = ResourceServer::new(&url, JwtValidator::new(&issuer.url, &url))
        .unwrap()
        .authorization_server(&issuer.url);
    let server = Server::builder("tls", "1.0.0")
        .tool::<echo>()
        .build()
        .unwrap();
    let router = server.http_router(
        HttpConfig::default()
            .allowed_hosts(["localhost"])
            .authenticator(oauth),
    );
    tokio::spawn(async move { axum::serve(TlsListener { tcp, tls }, router).await });

    let client = Client::builder()
        .client_credentials("robot", "robot-secret")
        .root_certificate_pem(ca.clone())
        .connect_http(&url)
        .await
        .expect("connects over TLS, getting a token on the way");
    let echoed = client
        .call_tool("echo", json!({ "text": "over TLS" }))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&echoed), "over TLS");
    assert_eq!(issuer.stats()["token"], 1);
    let refused = Client::builder()
        .client_credentials("robot", "robot-secret")
        .connect_http(&url)
        .await
        .expect_err("a certificate of a CA nobody was told of");
    assert!(
        matches!(&refused, mcp_tasks_client::Error::Transport(why) if why.to_lowercase().contains("certificate")),
        "{refused:?}"
    );

    let dir = std::env::temp_dir().join(format!("mcp-tasks-oauth-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca).unwrap();
    let not_pem = dir.join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let bin = mcp_tasks_tests::cli::mcp_tasks_bin();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(&bin)
            .args(["call", "echo", "--args", r#"{"text":"from the command"}"#])
            .args([
                "--url",
                &url,
                "--client-id",
                "robot",
                "--client-secret",
                "s",
            ])
            .args(extra)
            .output()
            .expect("mcp-tasks runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let ca_arg = ca_file.to_str().unwrap();
    let (code, out, err) = run(&["--ca-cert", ca_arg]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("from the command"), "{out}");
    let (code, out, err) = run(&[]);
    assert_ne!(code, Some(0), "{out}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let (code, out, err) = run(&["--ca-cert", not_pem.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("no PEM certificate"), "{err}");
    let (code, out, err) = run(&["--ca-cert", "/nonexistent/ca.pem"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("--ca-cert /nonexistent/ca.pem"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// HTTPS to the issuer (rustls): an issuer behind a private CA, as an in-house Keycloak is. A
/// `JwtValidator` told to trust that CA fetches the metadata and keys over TLS and takes the
/// issuer's tokens, and `mcp-tasks-client`, trusting it too, gets its token there with client
/// credentials; the same server without the CA answers 503 (with `Retry-After`) saying the
/// certificate is why, and goes on serving. `Introspection` likewise. A PEM text without a
/// usable certificate is refused when configured, not at the first token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_trusting_a_private_ca_takes_tokens_of_an_issuer_behind_it() {
    use mcp_tasks_client::Client;
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{
        Introspection, JwtValidator, ResourceServer, TokenError, TokenValidator,
    };
    let pki = private_ca();
    let issuer = Issuer::start_https(&pki.leaf, &pki.key);
    assert!(
        issuer.url.starts_with("https://localhost:"),
        "{}",
        issuer.url
    );
    let echo = json!({ "name": "echo", "arguments": { "text": "hi" } });

    let trusting = serve_in_process(Server::builder("trusting", "1.0.0").tool::<echo>(), |url| {
        let validator = JwtValidator::new(&issuer.url, url)
            .root_certificate_pem(&pki.ca)
            .expect("a CA certificate");
        ResourceServer::new(url, validator)
            .unwrap()
            .authorization_server(&issuer.url)
    })
    .await;
    let token = issuer.token(json!({ "aud": trusting }));
    let answer = request(&trusting, Some(&token), "tools/call", echo.clone()).await;
    assert_eq!(answer.result()["content"][0]["text"], "hi", "{answer:?}");
    let stats = issuer.stats();
    assert!(stats["metadata"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["jwks"], 1, "{stats}");

    // The client finds the issuer in the server's metadata and gets a token from it over TLS.
    let mcp = Client::builder()
        .client_credentials("robot", "robot-secret")
        .root_certificate_pem(pki.ca.clone())
        .connect_http(&trusting)
        .await
        .expect("connects, getting a token from the issuer over TLS");
    let echoed = mcp
        .call_tool("echo", json!({ "text": "end to end" }))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&echoed), "end to end");
    assert_eq!(issuer.stats()["token"], 1);

    // Without the CA the issuer cannot be asked: 503, the certificate named, and the server
    // goes on serving.
    let doubting = serve_in_process(Server::builder("doubting", "1.0.0").tool::<echo>(), |url| {
        ResourceServer::new(url, JwtValidator::new(&issuer.url, url))
            .unwrap()
            .authorization_server(&issuer.url)
    })
    .await;
    let token = issuer.token(json!({ "aud": doubting }));
    for _ in 0..2 {
        let answer = request(&doubting, Some(&token), "tools/call", echo.clone()).await;
        assert_eq!(answer.status, 503, "{answer:?}");
        assert_eq!(answer.retry_after.as_deref(), Some("10"), "{answer:?}");
        let message = answer.message();
        assert!(
            message.contains("could not be checked now")
                && message.contains(&issuer.url)
                && message.to_lowercase().contains("certificate"),
            "{answer:?}"
        );
    }
    assert_eq!(
        request(&doubting, None, "tools/call", echo.clone())
            .await
            .status,
        401
    );
    let health = doubting.replace("/mcp", "/healthz");
    assert_eq!(client().get(&health).send().await.unwrap().status(), 200);

    // Introspection: the metadata and the endpoint over TLS, with the CA and without.
    let active =
        json!({ "active": true, "sub": "carol", "aud": trusting, "exp": 4_000_000_000u64 });
    issuer.command(json!({ "cmd": "opaque", "token": "opaque-1", "answer": active }));
    let introspection = Introspection::discover(&issuer.url, &trusting)
        .client("mcp-server", "s3cret")
        .root_certificate_pem(pki.ca.as_bytes())
        .expect("a CA certificate");
    let claims = (introspection.validate("opaque-1").await).expect("introspected over TLS");
    assert_eq!(claims.subject, "carol");
    assert_eq!(issuer.stats()["introspect"], 1);
    match Introspection::discover(&issuer.url, &trusting)
        .validate("opaque-1")
        .await
    {
        Err(TokenError::Unavailable(why)) if why.to_lowercase().contains("certificate") => {}
        other => panic!("{other:?}"),
    }

    // PEM texts that trust nothing: refused at once, saying what is wrong.
    let block =
        |body: &str| format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n");
    let (not_der, not_base64) = (block("AAAA"), block("!!!!"));
    let cut = "-----BEGIN CERTIFICATE-----\nAAAA\n";
    for (pem, says) in [
        ("hello", "holds no certificate"),
        (pki.key.as_str(), "holds no certificate"),
        (&not_der, "cannot be a trusted root"),
        (&not_base64, "not valid base64"),
        (cut, "a block has no `-----END CERTIFICATE-----` line"),
    ] {
        let jwt = JwtValidator::new(&issuer.url, &trusting).root_certificate_pem(pem);
        let why = jwt.expect_err(pem).to_string();
        assert!(why.contains(says), "{pem}: {why}");
        let introspection =
            Introspection::discover(&issuer.url, &trusting).root_certificate_pem(pem);
        let why = introspection.expect_err(pem).to_string();
        assert!(why.contains(says), "{pem}: {why}");
    }
}

/// The example server with `--oauth-issuer https://...`: `--oauth-ca-cert FILE` makes it trust
/// the issuer's CA; without it, a token gets 503 naming the certificate; a file that cannot be
/// read or holds no certificate stops it at start, naming the file.
#[tokio::test]
async fn the_example_server_trusts_the_issuers_ca_with_oauth_ca_cert() {
    let pki = private_ca();
    let issuer = Issuer::start_https(&pki.leaf, &pki.key);
    let dir = std::env::temp_dir().join(format!("mcp-tasks-oauth-ca-cert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &pki.ca).unwrap();
    let not_pem = dir.join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let ca_arg = ca_file.to_str().unwrap();

    let server = ProtectedServer::start(&issuer.url, &["--oauth-ca-cert", ca_arg]);
    let token = issuer.token(json!({ "aud": server.url }));
    still_serves(&server, &token).await;

    let without = ProtectedServer::start(&issuer.url, &[]);
    let token = issuer.token(json!({ "aud": without.url }));
    let answer = greet(&without.url, Some(&token)).await;
    assert_eq!(answer.status, 503, "{answer:?}");
    assert!(
        answer.message().to_lowercase().contains("certificate"),
        "{answer:?}"
    );
    assert_eq!(greet(&without.url, None).await.status, 401);

    // The example server's stderr once it has stopped, as it must within 10 s.
    let refused = |args: &[&str]| {
        let mut child = std::process::Command::new(mcp_tasks_tests::example_bin("example_server"))
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("example_server runs");
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("example_server {args:?} went on serving");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (file, says) in [
        (not_pem.to_str().unwrap(), "holds no certificate"),
        ("/nonexistent/ca.pem", "No such file"),
    ] {
        let err = refused(&[
            "--oauth-issuer",
            &issuer.url,
            "--oauth-audience",
            "http://127.0.0.1:1/mcp",
            "--oauth-ca-cert",
            file,
        ]);
        assert!(
            err.contains(&format!("--oauth-ca-cert {file}: ")) && err.contains(says),
            "{file}: {err}"
        );
    }
    // Without an issuer to trust it for, the flag is a mistake, not ignored.
    let err = refused(&["--oauth-ca-cert", ca_arg]);
    assert!(
        err.contains("--oauth-ca-cert goes with --oauth-issuer"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The 401 challenge names the scopes a client should ask for (the MCP authorization spec: a
/// server SHOULD send `scope`): `challenge_scopes` when set, else `scopes_supported` (what a
/// client would fall back to), else none.
#[tokio::test]
async fn the_401_challenge_names_the_scopes_to_ask_for() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    let cases: [(&[&str], &[&str], &str); 3] = [
        (&[], &[], ""),
        (&["research", "notes"], &[], ", scope=\"research notes\""),
        (&["research", "notes"], &["notes"], ", scope=\"notes\""),
    ];
    for (supported, challenged, scope) in cases {
        let server = Server::builder("challenges", "1.0.0").tool::<echo>();
        let url = serve_in_process(server, |url| {
            ResourceServer::new(url, JwtValidator::new(&issuer.url, url))
                .unwrap()
                .authorization_server(&issuer.url)
                .scopes_supported(supported.iter().copied())
                .challenge_scopes(challenged.iter().copied())
        })
        .await;
        let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        let echo = json!({ "name": "echo", "arguments": { "text": "hi" } });
        let answer = request(&url, None, "tools/call", echo.clone()).await;
        assert_eq!(answer.status, 401, "{answer:?}");
        assert_eq!(
            answer.challenge,
            format!("Bearer resource_metadata=\"{metadata}\"{scope}"),
            "{supported:?} {challenged:?}"
        );
        // A bad token's challenge names them too, before the error.
        let answer = request(&url, Some("garbage"), "tools/call", echo).await;
        assert!(
            answer.challenge.starts_with(&format!(
                "Bearer resource_metadata=\"{metadata}\"{scope}, error=\"invalid_token\""
            )),
            "{answer:?}"
        );
    }
}

/// `Introspection::discover`: the introspection endpoint comes from the issuer's metadata, read
/// once; an issuer whose metadata cannot be read gets a clear 503 with `Retry-After`, and is not
/// asked again on every token.
#[tokio::test]
async fn the_introspection_endpoint_is_found_in_the_issuers_metadata() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{Introspection, ResourceServer};
    let issuer = Issuer::start();
    let server = Server::builder("introspected", "1.0.0").tool::<echo>();
    let url = serve_in_process(server, |url| {
        let validator = Introspection::discover(&issuer.url, url).client("mcp-server", "s3cret");
        ResourceServer::new(url, validator)
            .unwrap()
            .authorization_server(&issuer.url)
    })
    .await;
    let far = 4_000_000_000u64;
    for token in ["opaque-1", "opaque-2"] {
        let answer = json!({ "active": true, "sub": "carol", "aud": url, "exp": far });
        issuer.command(json!({ "cmd": "opaque", "token": token, "answer": answer }));
    }
    let echo = json!({ "name": "echo", "arguments": { "text": "hi" } });
    let mut metadata_reads = Vec::new();
    for token in ["opaque-1", "opaque-2"] {
        let answer = request(&url, Some(token), "tools/call", echo.clone()).await;
        assert_eq!(answer.result()["content"][0]["text"], "hi", "{answer:?}");
        metadata_reads.push(issuer.stats()["metadata"].as_u64().unwrap());
    }
    let stats = issuer.stats();
    assert_eq!(stats["introspect"], 2, "{stats}");
    // Read for the first token (RFC 8414, then OpenID Connect Discovery), not again.
    assert!(metadata_reads[0] >= 1, "{stats}");
    assert_eq!(metadata_reads[0], metadata_reads[1], "{stats}");
    let answer = request(&url, Some("opaque-unknown"), "tools/call", echo.clone()).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert!(answer.message().contains("not active"), "{answer:?}");

    // An issuer that does not answer: 503 naming it, Retry-After, and no second try at once.
    let gone = format!("http://127.0.0.1:{}", free_port());
    let server = Server::builder("introspected", "1.0.0").tool::<echo>();
    let url = serve_in_process(server, |url| {
        ResourceServer::new(url, Introspection::discover(&gone, url))
            .unwrap()
            .authorization_server(&gone)
    })
    .await;
    for _ in 0..2 {
        let started = Instant::now();
        let answer = request(&url, Some("opaque-1"), "tools/call", echo.clone()).await;
        assert_eq!(answer.status, 503, "{answer:?}");
        assert!(
            answer.message().contains("metadata could not be read")
                && answer.message().contains(&gone),
            "{answer:?}"
        );
        assert_eq!(answer.retry_after.as_deref(), Some("10"), "{answer:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

/// The header `typ` (RFC 9068 section 4): by default an untyped or `JWT`-typed token passes (as
/// Keycloak, Auth0 and Entra ID issue them) and so does `at+jwt`, while a `typ` naming another
/// kind of JWT is refused; with `require_access_token_typ(true)` only `at+jwt` passes.
#[tokio::test]
async fn the_token_type_is_checked() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    for require in [false, true] {
        let server = Server::builder("typed", "1.0.0").tool::<echo>();
        let url = serve_in_process(server, |url| {
            let validator = JwtValidator::new(&issuer.url, url).require_access_token_typ(require);
            ResourceServer::new(url, validator)
                .unwrap()
                .authorization_server(&issuer.url)
        })
        .await;
        let echo = json!({ "name": "echo", "arguments": { "text": "hi" } });
        let cases = [
            (Value::Null, !require, "has no `typ`"),
            (json!("JWT"), !require, "not `at+jwt`"),
            (json!("at+jwt"), true, ""),
            (json!("application/AT+JWT"), true, ""),
            (
                json!("logout+jwt"),
                false,
                "`logout+jwt` says it is not an access token",
            ),
            (
                json!("dpop+jwt"),
                false,
                "`dpop+jwt` says it is not an access token",
            ),
            (json!(7), false, "`typ` is not a string"),
        ];
        for (typ, passes, says) in cases {
            let token = issuer.token_with(json!({ "claims": { "aud": url }, "typ": typ }));
            let answer = request(&url, Some(&token), "tools/call", echo.clone()).await;
            if passes {
                assert_eq!(
                    answer.result()["content"][0]["text"],
                    "hi",
                    "{typ} {require}"
                );
            } else {
                assert_eq!(answer.status, 401, "{typ} {require}: {answer:?}");
                assert!(
                    answer.challenge.contains("error=\"invalid_token\"")
                        && answer.message().contains(says),
                    "{typ} {require}: {answer:?}"
                );
            }
        }
    }
}

/// Publishes the plan as the task's output (needs `secrets`).
#[mcp_tasks_runtime::tool(task_support = "required", scope = "secrets")]
async fn export_plan(
    ctx: mcp_tasks_runtime::ToolContext,
) -> Result<mcp_tasks_runtime::CallToolResult, mcp_tasks_runtime::ToolError> {
    let link = ctx
        .publish_text("plan.md", "text/markdown", "the plan".to_owned())
        .await?;
    Ok(mcp_tasks_runtime::CallToolResult::from_content(vec![link]))
}

/// A task's outputs (`task://{taskId}/{name}`, read with `resources/read`) need the scopes of the
/// tool that made them, as the task's own requests do.
#[tokio::test]
async fn a_tasks_outputs_need_its_tools_scope() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    let server = Server::builder("outputs", "1.0.0").tool::<export_plan>();
    let url = serve_in_process(server, |url| {
        ResourceServer::new(url, JwtValidator::new(&issuer.url, url))
            .unwrap()
            .authorization_server(&issuer.url)
    })
    .await;
    let secrets = issuer.token(json!({ "aud": url, "scope": "secrets" }));
    let plain = issuer.token(json!({ "aud": url, "scope": "profile" }));
    let answer = request(
        &url,
        Some(&secrets),
        "tools/call",
        json!({ "name": "export_plan" }),
    )
    .await;
    let id = answer.result()["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer:?}"))
        .to_owned();
    let uri = format!("task://{id}/plan.md");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = request(
            &url,
            Some(&secrets),
            "resources/read",
            json!({ "uri": uri }),
        )
        .await;
        if answer.status == 200 && answer.body.get("result").is_some() {
            assert_eq!(
                answer.result()["contents"][0]["text"],
                "the plan",
                "{answer:?}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the output never appeared: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answer = request(&url, Some(&plain), "resources/read", json!({ "uri": uri })).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        answer.challenge.contains("error=\"insufficient_scope\"")
            && answer.challenge.contains("scope=\"secrets\""),
        "{answer:?}"
    );
    assert!(
        answer.message().contains("the tool `export_plan`"),
        "{answer:?}"
    );
}

/// A token that passed is kept, so that the same token again (a client sends it with every
/// request) costs no signature check; kept never past its `exp`: once expired it is refused like
/// any expired token, and the issuer's key is fetched once for all of it.
#[tokio::test]
async fn a_token_that_passed_is_kept_but_not_past_its_expiry() {
    use mcp_tasks_runtime::server::oauth::{JwtValidator, TokenValidator};
    let issuer = Issuer::start();
    let audience = "https://mcp.example.test/mcp";
    let validator = JwtValidator::new(&issuer.url, audience).leeway(Duration::ZERO);
    let token = issuer.token_with(json!({ "claims": { "aud": audience }, "expiresIn": 2 }));
    let mut expires_at = None;
    for _ in 0..50 {
        let claims = validator.validate(&token).await.expect("a good token");
        assert_eq!(claims.subject, "alice");
        expires_at = claims.expires_at;
    }
    assert_eq!(issuer.stats()["jwks"], 1, "the key fetched once");
    // `exp` counts whole seconds and a token is good through that second: it is refused once
    // the clock is past it (a fixed sleep of 2.5 s after minting fell inside it at times).
    let expired = expires_at.expect("an exp") + Duration::from_millis(1_200);
    if let Ok(wait) = expired.duration_since(std::time::SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let refused = validator
        .validate(&token)
        .await
        .expect_err("expired, kept or not");
    assert!(refused.to_string().contains("expired"), "{refused}");
    // A fresh token of the same subject passes.
    let fresh = issuer.token(json!({ "aud": audience }));
    validator.validate(&fresh).await.expect("a fresh token");
}

// ---------------------------------------------------------------------------------------------
// The same refusal on the paths without HTTP: authorization is a step of dispatch, not of a
// transport (`server/authz.rs`), so a principal with scopes named by the application
// (`ServeIo::principal`, `ClientBuilder::connect_in_process_as`) is checked as a token's is.

/// The example server's tools (`research` needs the scope `research`).
fn example_server() -> mcp_tasks_runtime::Server {
    mcp_tasks_examples::example_server()
        .build()
        .expect("the example server")
}

/// `id` with `scopes` (`None`: not limited by scopes).
fn principal(id: &str, scopes: Option<&[&str]>) -> mcp_tasks_runtime::Principal {
    let p = mcp_tasks_runtime::Principal::new(id);
    match scopes {
        Some(scopes) => p.with_scopes(scopes.iter().copied()),
        None => p,
    }
}

/// A client of `server.serve_io(..)` over an in-memory duplex pipe, as `principal`: newline-
/// delimited JSON-RPC, as over stdio.
struct PipeClient {
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
}

impl PipeClient {
    fn serve(server: &mcp_tasks_runtime::Server, principal: mcp_tasks_runtime::Principal) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (client, served) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(served);
        let serving = server
            .serve_io(read, write)
            .principal(principal)
            .with_graceful_shutdown(std::future::pending());
        tokio::spawn(async move { serving.await });
        let (read, writer) = tokio::io::split(client);
        PipeClient {
            writer,
            lines: tokio::io::BufReader::new(read).lines(),
            next: 1,
        }
    }

    /// A 2026-07-28 request (declaring the tasks extension); the response to it.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        use tokio::io::AsyncWriteExt;
        let id = self.next;
        self.next += 1;
        let params = mcp_tasks_tests::modern(params, caps());
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let answer = async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == id {
                    return message;
                }
            }
            panic!("the server closed the pipe");
        };
        tokio::time::timeout(Duration::from_secs(30), answer)
            .await
            .expect("answered in time")
    }
}

/// The tools a `tools/list` answer lists.
fn listed(answer: &Value) -> Vec<String> {
    (answer["result"]["tools"].as_array())
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `serve_io` with a principal limited by scopes: `research` refuses it without the scope, with
/// the error HTTP answers, and does not list it; with the scope it runs (a task), and that task's
/// requests need the scope too (the same principal on another connection, its token without
/// it); another principal learns nothing of the task.
#[tokio::test]
async fn serve_io_checks_a_scoped_principal() {
    let server = example_server();
    let call = json!({ "name": "research", "arguments": { "topic": "owls" } });
    let mut plain = PipeClient::serve(&server, principal("alice", Some(&["profile"])));
    let refused = plain.request("tools/call", call.clone()).await;
    assert_eq!(refused["error"], research_refused(), "{refused}");
    let tools = listed(&plain.request("tools/list", json!({})).await);
    assert!(tools.contains(&"greet".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"research".to_owned()), "{tools:?}");

    let mut scoped = PipeClient::serve(&server, principal("alice", Some(&["research"])));
    let tools = listed(&scoped.request("tools/list", json!({})).await);
    assert!(tools.contains(&"research".to_owned()), "{tools:?}");
    let created = scoped.request("tools/call", call).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let task = json!({ "taskId": id });
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = plain.request(method, task.clone()).await;
        assert_eq!(refused["error"], research_refused(), "{method}: {refused}");
    }
    let got = scoped.request("tasks/get", task.clone()).await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    let mut bob = PipeClient::serve(&server, principal("bob", Some(&["profile"])));
    let unknown = bob.request("tasks/get", task.clone()).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // Not limited by scopes (the application's own principal): everything, as before.
    let mut trusted = PipeClient::serve(&server, principal("alice", None));
    let got = trusted.request("tasks/get", task).await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
}

/// The in-process client as a principal limited by scopes: `research` refuses it without the
/// scope, with the error HTTP answers, and is not listed to it; with the scope it runs.
#[tokio::test]
async fn the_in_process_client_is_checked_as_its_principal() {
    use mcp_tasks_client::{Client, EraChoice, Error};
    let server = example_server();
    let connect = |scopes: &'static [&'static str]| {
        Client::builder()
            .era(EraChoice::Modern)
            .connect_in_process_as(&server, principal("alice", Some(scopes)))
    };
    let plain = connect(&["profile"]).await.expect("connected");
    let topic = json!({ "topic": "owls" });
    match plain.call_tool("research", topic.clone()).await {
        Err(Error::Rpc { error, .. }) => {
            assert_eq!(serde_json::to_value(&error).unwrap(), research_refused());
        }
        other => panic!("not refused: {:?}", other.map(drop)),
    }
    let tools: Vec<String> = (plain.list_tools().await.expect("tools").into_iter())
        .map(|t| t.name)
        .collect();
    assert!(tools.contains(&"greet".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"research".to_owned()), "{tools:?}");
    let scoped = connect(&["research"]).await.expect("connected");
    let call = scoped.call_tool("research", topic).await.expect("runs");
    let task = call.task().expect("research is a task");
    assert!(!task.id().is_empty());
    plain.close().await;
    scoped.close().await;
}

/// The fallback's companion tools follow a task as `tasks/get` does, so they need the scopes of
/// the task's tool: the same principal without `research` is refused `tasks_status` and
/// `tasks_result` of its `research` task, with the same error.
#[tokio::test]
async fn the_companion_tools_need_their_tasks_scope() {
    let server = mcp_tasks_examples::example_server()
        .task_fallback(true)
        .build()
        .expect("the example server");
    let mut scoped = PipeClient::serve(&server, principal("alice", Some(&["research"])));
    let call = json!({ "name": "research", "arguments": { "topic": "owls" } });
    let created = scoped.request("tools/call", call).await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let mut plain = PipeClient::serve(&server, principal("alice", Some(&["profile"])));
    for tool in ["tasks_status", "tasks_result", "tasks_cancel"] {
        let follow = json!({ "name": tool, "arguments": { "taskId": id } });
        let refused = plain.request("tools/call", follow).await;
        assert_eq!(refused["error"], research_refused(), "{tool}: {refused}");
    }
    let status = json!({ "name": "tasks_status", "arguments": { "taskId": id } });
    let answered = scoped.request("tools/call", status).await;
    assert!(answered["result"]["content"].is_array(), "{answered}");
}

/// A stand-in introspection endpoint on a free loopback port that answers every request with
/// `status` and `body`; its URL.
async fn introspection_answering(status: u16, body: Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/introspect",
        axum::routing::post(move || {
            let body = body.to_string();
            async move {
                (
                    axum::http::StatusCode::from_u16(status).unwrap(),
                    [("content-type", "application/json")],
                    body,
                )
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// What the issuer's introspection endpoint answers decides the status (RFC 7662, RFC 6750): a
/// token it refuses to introspect (node-oidc-provider's `400 unsupported_token_type` for a JWT)
/// is a bad token, 401 `invalid_token`, so the client gets a fresh one; an endpoint that is down
/// or answers 5xx is the issuer's trouble, 503 with `Retry-After`. Either way the server goes on
/// serving.
#[tokio::test]
async fn introspection_refused_is_401_and_an_issuer_down_or_failing_is_503() {
    use mcp_tasks_runtime::Server;
    use mcp_tasks_runtime::server::oauth::{Introspection, ResourceServer};
    let echo = json!({ "name": "echo", "arguments": { "text": "hi" } });
    let refusing = introspection_answering(
        400,
        json!({ "error": "unsupported_token_type", "error_description": "unsupported" }),
    )
    .await;
    let failing = introspection_answering(500, json!({ "error": "server_error" })).await;
    let down = format!("http://127.0.0.1:{}/introspect", free_port());
    let served = |endpoint: String| async move {
        let server = Server::builder("introspected", "1.0.0").tool::<echo>();
        serve_in_process(server, move |url| {
            ResourceServer::new(
                url,
                Introspection::new(&endpoint, url).client("mcp", "s3cret"),
            )
            .unwrap()
            .authorization_server("http://127.0.0.1:1")
        })
        .await
    };

    let url = served(refusing).await;
    for _ in 0..2 {
        let answer = request(&url, Some("a.jwt.token"), "tools/call", echo.clone()).await;
        assert_eq!(answer.status, 401, "{answer:?}");
        assert!(
            answer.challenge.contains("error=\"invalid_token\""),
            "{answer:?}"
        );
        assert!(answer.message().contains("HTTP 400"), "{answer:?}");
        assert_eq!(answer.retry_after, None, "{answer:?}");
    }

    for (endpoint, says) in [(failing, "HTTP 500"), (down.clone(), "could not connect")] {
        let url = served(endpoint).await;
        for _ in 0..2 {
            let answer = request(&url, Some("opaque-1"), "tools/call", echo.clone()).await;
            assert_eq!(answer.status, 503, "{answer:?}");
            assert!(answer.message().contains(says), "{answer:?}");
            assert_eq!(answer.retry_after.as_deref(), Some("10"), "{answer:?}");
        }
    }
}

/// A `JwtValidator` cloned and then configured is the validator it was configured to be: a CA
/// certificate, a timeout or a stricter check given to the clone applies to it,
/// though the original already fetched keys over its own HTTP client and let tokens pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloned_jwt_validator_takes_its_own_settings() {
    use mcp_tasks_runtime::server::oauth::{JwtValidator, TokenError, TokenValidator};
    let pki = private_ca();
    let issuer = Issuer::start_https(&pki.leaf, &pki.key);
    let audience = "https://mcp.example.com/mcp";
    let token = issuer.token(json!({ "aud": audience }));

    // The original trusts only the built-in roots: its client cannot reach the issuer.
    let original = JwtValidator::new(&issuer.url, audience);
    match original.validate(&token).await {
        Err(TokenError::Unavailable(why)) if why.to_lowercase().contains("certificate") => {}
        other => panic!("{other:?}"),
    }
    // A clone told to trust the CA reaches it.
    let trusting = original
        .clone()
        .root_certificate_pem(&pki.ca)
        .expect("a CA certificate");
    let claims = trusting.validate(&token).await.expect("checked over TLS");
    assert_eq!(claims.subject, "alice");

    // A clone requiring `typ: at+jwt` refuses the untyped token the trusting one let pass.
    let strict = trusting.clone().require_access_token_typ(true);
    match strict.validate(&token).await {
        Err(TokenError::Invalid(why)) if why.contains("at+jwt") => {}
        other => panic!("{other:?}"),
    }

    // The issuer's keys stop answering: a clone with a short timeout says so within it, though
    // the original's client waits 5 s and already holds the keys.
    issuer.command(json!({ "cmd": "jwks", "mode": "hang" }));
    let started = Instant::now();
    let hasty = trusting.clone().timeout(Duration::from_millis(300));
    match hasty.validate(&token).await {
        Err(TokenError::Unavailable(why)) => assert!(why.contains("timeout"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// A client credentials token that expires while the client is connected is renewed, and the
/// call goes through: when the token endpoint said when (`expires_in`, here shorter than the
/// client's usual 30 s margin) the client renews before sending it, once per token; when it did
/// not, the server's 401 for the expired token gets a new one and the call is sent again.
#[tokio::test]
async fn a_client_token_that_expires_mid_session_is_renewed() {
    use mcp_tasks_client::Client;
    use mcp_tasks_runtime::server::oauth::{JwtValidator, ResourceServer};
    let issuer = Issuer::start();
    let url = serve_in_process(mcp_tasks_examples::example_server(), |url| {
        let strict = JwtValidator::new(&issuer.url, url).leeway(Duration::ZERO);
        ResourceServer::new(url, strict)
            .unwrap()
            .authorization_server(&issuer.url)
    })
    .await;
    let greet = async |client: &Client| {
        let greeting = (client.call_tool("greet", json!({ "name": "Ada" })).await)
            .expect("the call goes through")
            .result()
            .await
            .unwrap();
        assert_eq!(mcp_tasks_client::text(&greeting), "Hello, Ada!");
    };

    for (reported, says) in [(json!(4), "expires_in said"), (Value::Null, "not said")] {
        issuer.command(json!({ "cmd": "lifetime", "seconds": 4, "reported": reported }));
        let before = issuer.stats()["token"].as_u64().unwrap();
        let client = Client::builder()
            .client_credentials("robot", "robot-secret")
            .connect_http(&url)
            .await
            .unwrap_or_else(|e| panic!("{says}: connects with a short-lived token: {e}"));
        greet(&client).await;
        greet(&client).await;
        assert_eq!(
            issuer.stats()["token"],
            before + 1,
            "{says}: one token so far"
        );
        // Past `exp` by more than a second: the server compares whole seconds.
        tokio::time::sleep(Duration::from_millis(5_500)).await;
        greet(&client).await;
        greet(&client).await;
        assert_eq!(issuer.stats()["token"], before + 2, "{says}: renewed once");
    }
}
