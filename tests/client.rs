//! mcp-tasks-client against the example servers: tasks that elicit and sample in both eras over
//! stdio and Streamable HTTP, cancellation, MRTR inline input, plain legacy requests, typed
//! errors; and in-process (no process, no socket): a tool that elicits, and stuck detection.

use mcp_tasks_client::{
    Asked, Client, Completion, CompletionRef, EraChoice, Error, GetPromptResult, InputCapabilities,
    ListedTool, PromptMessage, Role, Scripted, TaskMode, TaskStatus, TaskSupport, TaskUpdate,
    ToolCall,
};
use mcp_tasks_runtime::{ElicitOutcome, Server, ServerConfig, ToolContext, ToolError, tool};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{WAIT, example_bin};
use serde::Deserialize;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::time::timeout;

#[path = "support/tls.rs"]
mod tls;
use tls::TlsListener;

async fn stdio(bin: &str, era: EraChoice, script: &Scripted) -> Client {
    let mut command = tokio::process::Command::new(example_bin(bin));
    command.env("RUST_LOG", "warn");
    timeout(
        WAIT,
        Client::builder()
            .era(era)
            .handler(script.clone())
            .connect_stdio(command),
    )
    .await
    .expect("connects in time")
    .expect("connects")
}

async fn http(url: &str, era: EraChoice, script: &Scripted) -> Client {
    timeout(
        WAIT,
        Client::builder()
            .era(era)
            .handler(script.clone())
            .connect_http(url),
    )
    .await
    .expect("connects in time")
    .expect("connects")
}

#[derive(Debug, Deserialize, PartialEq)]
struct Report {
    topic: String,
    sources: u32,
    summary: String,
}

fn research_script() -> Scripted {
    Scripted::new()
        .accept(json!({ "sources": 3 }))
        .sample_text("Tides follow the moon.")
}

/// `research` asks the user (elicitation), then the client's model (sampling), then reports.
async fn research_to_completion(client: &Client, script: &Scripted, modern: bool) {
    assert_eq!(client.era().is_modern(), modern, "{:?}", client.era());
    let call = client
        .call_tool("research", json!({ "topic": "tides" }))
        .await
        .expect("research starts");
    let task = call.task().expect("research runs as a task").clone();
    let mut updates = task.updates();
    let events = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(e) = updates.next().await {
            events.push(e);
        }
        events
    });
    let report: Report = timeout(WAIT, call.structured())
        .await
        .expect("research ends in time")
        .expect("research succeeds");
    assert_eq!(
        report,
        Report {
            topic: "tides".into(),
            sources: 3,
            summary: "Tides follow the moon.".into()
        }
    );

    // Both questions reached the one handler, tagged with the task, whatever the route.
    let asked = script.asked();
    let [Asked::Elicit(question), Asked::Sample(sampling)] = &asked[..] else {
        panic!("expected an elicitation then a sampling, got {asked:?}");
    };
    assert!(question.message.contains("tides"), "{question:?}");
    assert_eq!(question.fields(), ["sources"]);
    assert_eq!(question.context.task_id.as_deref(), Some(task.id()));
    assert!(sampling.text().contains("Summarise"), "{sampling:?}");
    assert_eq!(sampling.context.task_id.as_deref(), Some(task.id()));
    assert_eq!(script.remaining(), 0);

    // The update stream: the state at subscription, changes, and the end.
    let events = timeout(WAIT, events).await.expect("stream ends").unwrap();
    let statuses: Vec<TaskStatus> = events
        .iter()
        .map(|e| match e {
            TaskUpdate::Updated(s) => s.status,
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    assert_eq!(statuses.last(), Some(&TaskStatus::Completed), "{events:?}");
    if modern {
        // The stored input request is only seen (and answered) through input_required.
        assert!(statuses.contains(&TaskStatus::InputRequired), "{events:?}");
    }
    let history = task.history();
    assert_eq!(history.first().map(|s| s.status), Some(TaskStatus::Working));
    assert_eq!(
        history.last().map(|s| s.status),
        Some(TaskStatus::Completed)
    );
    client.close().await;
}

#[tokio::test]
async fn a_modern_task_elicits_and_samples_to_completion_over_stdio() {
    let script = research_script();
    let client = stdio("example_server", EraChoice::Auto, &script).await;
    research_to_completion(&client, &script, true).await;
}

#[tokio::test]
async fn a_legacy_task_elicits_and_samples_to_completion_over_stdio() {
    let script = research_script();
    let client = stdio("example_server", EraChoice::Legacy, &script).await;
    research_to_completion(&client, &script, false).await;
}

#[tokio::test]
async fn a_modern_task_elicits_and_samples_to_completion_over_http() {
    let server = HttpServer::start_bin("example_server", &[]);
    let script = research_script();
    let client = http(&server.url, EraChoice::Auto, &script).await;
    research_to_completion(&client, &script, true).await;
}

#[tokio::test]
async fn a_legacy_task_elicits_and_samples_to_completion_over_http() {
    let server = HttpServer::start_bin("example_server", &[]);
    let script = research_script();
    let client = http(&server.url, EraChoice::Legacy, &script).await;
    research_to_completion(&client, &script, false).await;
}

/// `countdown` runs for 30 s unless cancelled; `cancel()` ends it as `cancelled`, quickly.
async fn cancel_countdown(client: &Client) {
    let call = client
        .call_tool("countdown", json!({ "seconds": 30 }))
        .await
        .expect("countdown starts");
    let task = call.task().expect("countdown runs as a task").clone();
    let started = Instant::now();
    task.cancel().await.expect("tasks/cancel is accepted");
    let outcome = timeout(WAIT, task.result()).await.expect("ends in time");
    match outcome {
        Err(Error::TaskCancelled { task_id, .. }) => assert_eq!(task_id, task.id()),
        other => panic!("expected a cancelled task, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(task.snapshot().status, TaskStatus::Cancelled);
    // Cancelling again is harmless.
    task.cancel().await.expect("a second cancel does nothing");
    client.close().await;
}

#[tokio::test]
async fn cancel_ends_a_modern_task_over_stdio() {
    let client = stdio("example_server", EraChoice::Modern, &Scripted::new()).await;
    cancel_countdown(&client).await;
}

#[tokio::test]
async fn cancel_ends_a_legacy_task_over_http() {
    let server = HttpServer::start_bin("example_server", &[]);
    let client = http(&server.url, EraChoice::Legacy, &Scripted::new()).await;
    cancel_countdown(&client).await;
}

/// A legacy task followed by another client that joined its session (`legacy_session`): the
/// joined client gets the task's result; closing it leaves the session to its owner, which
/// goes on working. An unknown session fails the connection; over stdio there is none to join.
#[tokio::test]
async fn a_legacy_task_is_followed_from_a_client_that_joined_its_session() {
    let server = HttpServer::start_bin("example_server", &[]);
    let owner = http(&server.url, EraChoice::Legacy, &Scripted::new()).await;
    let session = owner.session_id().expect("a legacy HTTP session");
    let call = owner
        .call_tool("countdown", json!({ "seconds": 1 }))
        .await
        .unwrap();
    let id = call.task().expect("a task").id().to_owned();
    let joined = timeout(
        WAIT,
        Client::builder()
            .legacy_session(&session)
            .connect_http(&server.url),
    )
    .await
    .expect("joins in time")
    .expect("joins");
    assert!(!joined.era().is_modern());
    assert_eq!(joined.session_id().as_deref(), Some(session.as_str()));
    let task = joined.task(&id).await.expect("the task, in its session");
    let result = timeout(WAIT, task.result()).await.expect("ends in time");
    assert_eq!(mcp_tasks_client::text(&result.unwrap()), "liftoff");
    joined.close().await;
    owner
        .ping()
        .await
        .expect("the session is still the owner's");
    owner.close().await;

    let error = Client::builder()
        .legacy_session("no-such-session")
        .connect_http(&server.url)
        .await
        .expect_err("no such session");
    assert!(error.to_string().contains("Session not found"), "{error}");
    let error = Client::builder()
        .legacy_session(&session)
        .connect_http(&server.url)
        .await
        .expect_err("the owner ended it");
    assert!(error.to_string().contains("Session not found"), "{error}");
    let error = Client::builder()
        .legacy_session("s")
        .connect_stdio(tokio::process::Command::new(example_bin("example_server")))
        .await
        .expect_err("stdio");
    assert!(
        matches!(&error, Error::Transport(why) if why.contains("over HTTP only")),
        "{error:?}"
    );
}

fn two_rounds() -> Scripted {
    Scripted::new()
        .accept(json!({ "name": "Ada" }))
        .accept(json!({ "color": "green" }))
}

#[tokio::test]
async fn mrtr_inline_input_is_answered_over_two_rounds() {
    let script = two_rounds();
    let client = stdio("conformance_server", EraChoice::Auto, &script).await;
    assert!(client.era().is_modern());
    let call = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .expect("the call ends");
    let ToolCall::Done(result) = call else {
        panic!("an inline tool answers inline, got {call:?}");
    };
    assert_eq!(mcp_tasks_client::text(&result), "Ada likes green");
    let keys: Vec<Option<String>> = script
        .asked()
        .iter()
        .map(|a| match a {
            Asked::Elicit(q) => q.context.key.clone(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(keys, [Some("step1".into()), Some("step2".into())]);
    client.close().await;
}

#[tokio::test]
async fn legacy_inline_input_comes_as_plain_requests() {
    let script = two_rounds();
    let client = stdio("conformance_server", EraChoice::Legacy, &script).await;
    let result = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .expect("the call ends")
        .result()
        .await
        .expect("a result");
    assert_eq!(mcp_tasks_client::text(&result), "Ada likes green");
    assert_eq!(script.asked().len(), 2);
    assert!(script.asked().iter().all(|a| matches!(a,
        Asked::Elicit(q) if q.context.task_id.is_none() && q.context.key.is_none())));
    client.close().await;
}

/// A server's message longer than the client's limit is not buffered: the client cuts the
/// connection off and the call waiting for it fails with a transport error (it does not hang);
/// under the limit the same answer arrives.
#[tokio::test]
async fn a_message_over_the_clients_limit_closes_the_connection_instead_of_growing_the_buffer() {
    let name = "n".repeat(2 * 1024 * 1024);
    let connect = |limit: usize| async move {
        Client::builder()
            .max_message(limit)
            .connect_stdio(tokio::process::Command::new(example_bin("example_server")))
            .await
            .unwrap()
    };
    let roomy = connect(4 * 1024 * 1024).await;
    let result = roomy
        .call_tool("greet", json!({ "name": name }))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert!(mcp_tasks_client::text(&result).contains(&name));

    let tight = connect(1024 * 1024).await;
    let outcome = timeout(WAIT, tight.call_tool("greet", json!({ "name": name })))
        .await
        .expect("the call fails instead of hanging");
    assert!(
        matches!(outcome, Err(Error::Transport(_))),
        "expected a transport error, got {:?}",
        outcome.map(|_| "a result")
    );
}

#[tokio::test]
async fn errors_are_typed() {
    let client = stdio("example_server", EraChoice::Auto, &Scripted::new()).await;
    // An unknown tool: the server's JSON-RPC error.
    match client.call_tool("no_such_tool", json!({})).await {
        Err(Error::Rpc { method, error }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(error.code, -32602, "{error:?}");
        }
        other => panic!("expected an Rpc error, got {other:?}"),
    }
    // URLs this client cannot speak to are refused before anything is sent (`https://` is spoken:
    // see `https_works_with_rustls_and_a_root_the_caller_adds`).
    for url in ["ftp://127.0.0.1/mcp", "127.0.0.1:1"] {
        match Client::builder().connect_http(url).await {
            Err(Error::Transport(why)) => assert!(why.starts_with(url), "{why}"),
            other => panic!("{url}: expected a transport error, got {other:?}"),
        }
    }
    match Client::builder()
        .connect_stdio(tokio::process::Command::new("/nonexistent/mcp-server"))
        .await
    {
        Err(Error::Transport(why)) => assert!(why.contains("could not start"), "{why}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    // Nobody listening: a transport error, not an era question.
    assert!(matches!(
        Client::builder()
            .connect_http("http://127.0.0.1:1/mcp")
            .await,
        Err(Error::Transport(_))
    ));
    // Arguments that are not an object never reach the server.
    assert!(matches!(
        client.call_tool("greet", json!([1])).await,
        Err(Error::Decode(_))
    ));
    client.close().await;

    // A tool that can only run as a task, from a client that does not take tasks, on a server
    // with the fallback off.
    for (era, code) in [(EraChoice::Modern, -32021), (EraChoice::Legacy, -32601)] {
        let mut server = tokio::process::Command::new(example_bin("example_server"));
        server.arg("--no-task-fallback");
        let client = Client::builder()
            .era(era)
            .tasks(TaskMode::Never)
            .connect_stdio(server)
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        match client.call_tool("research", json!({ "topic": "x" })).await {
            Err(Error::TaskCreation { tool, error, .. }) => {
                assert_eq!(tool, "research");
                assert_eq!(error.map(|e| e.code), Some(code), "{era:?}");
            }
            other => panic!("{era:?}: expected a TaskCreation error, got {other:?}"),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn http_bearer_tokens_are_sent_and_refusals_are_typed() {
    let server = HttpServer::start_bin("example_server", &["--token", "s3cret=alice"]);
    let client = Client::builder()
        .bearer_token("s3cret")
        .connect_http(&server.url)
        .await
        .expect("connects with the token");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "research"));
    for era in [EraChoice::Auto, EraChoice::Legacy] {
        let refused = Client::builder()
            .era(era)
            .bearer_token("wrong")
            .connect_http(&server.url)
            .await;
        match refused {
            Err(Error::Http { status, .. }) => assert_eq!(status, 401, "{era:?}"),
            other => panic!("{era:?}: expected HTTP 401, got {other:?}"),
        }
    }
}

// ---- In-process: no process, no socket. ----

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Pin {
    /// The four digits.
    pin: String,
}

/// Asks for a PIN twice at most; elicits as a task when it can.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn unlock(ctx: ToolContext) -> Result<String, ToolError> {
    for attempt in 1..=2 {
        ctx.status(format!("attempt {attempt}"));
        match ctx.elicit::<Pin>("Your PIN?").await? {
            ElicitOutcome::Accept(Pin { pin }) if pin == "1234" => {
                return Ok(format!("unlocked on attempt {attempt}"));
            }
            ElicitOutcome::Accept(_) => continue,
            _ => return Err(ToolError::new("no PIN given")),
        }
    }
    Err(ToolError::new("locked out"))
}

fn unlock_server() -> Server {
    Server::builder("vault", "1.0.0")
        .tool::<unlock>()
        .build()
        .expect("set up")
}

#[tokio::test]
async fn in_process_a_tool_that_elicits_gets_scripted_answers_in_both_eras() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let script = Scripted::new()
            .accept(json!({ "pin": "0000" }))
            .accept(json!({ "pin": "1234" }));
        let client = Client::builder()
            .era(era)
            .handler(script.clone())
            .connect_in_process(&unlock_server())
            .await
            .unwrap();
        let call = client.call_tool("unlock", ()).await.unwrap();
        let task = call.task().expect("a task").clone();
        let result = call.result().await.unwrap();
        assert_eq!(mcp_tasks_client::text(&result), "unlocked on attempt 2");
        assert_eq!(script.asked().len(), 2, "{era:?}");
        let messages: Vec<Option<String>> = task
            .history()
            .iter()
            .map(|s| s.status_message.clone())
            .collect();
        assert!(
            messages.contains(&Some("attempt 2".into())),
            "{era:?}: {messages:?}"
        );

        // A declined question: the tool's own error, as a result (isError).
        let script = Scripted::new().decline();
        let client = Client::builder()
            .era(era)
            .handler(script.clone())
            .connect_in_process(&unlock_server())
            .await
            .unwrap();
        let result = client.call_tool("unlock", ()).await.unwrap().result().await;
        let result = result.expect("a tool error is a result");
        assert!(result.is_error, "{era:?}");
        assert_eq!(mcp_tasks_client::text(&result), "no PIN given");
    }
}

#[tokio::test]
async fn in_process_inline_calls_take_the_mrtr_route_when_tasks_are_off() {
    let script = Scripted::new().accept(json!({ "pin": "1234" }));
    let client = Client::builder()
        .tasks(TaskMode::Never)
        .handler(script.clone())
        .connect_in_process(&unlock_server())
        .await
        .unwrap();
    let call = client.call_tool("unlock", ()).await.unwrap();
    assert!(call.task().is_none());
    let result = call.result().await.unwrap();
    assert_eq!(mcp_tasks_client::text(&result), "unlocked on attempt 1");
    assert!(matches!(&script.asked()[..], [Asked::Elicit(q)] if q.context.key.is_some()));

    // Without the elicitation capability the server cannot ask: it names what is missing.
    let client = Client::builder()
        .tasks(TaskMode::Never)
        .handler(Scripted::new().capabilities(InputCapabilities::none()))
        .connect_in_process(&unlock_server())
        .await
        .unwrap();
    match client.call_tool("unlock", ()).await {
        Err(Error::Rpc { error, .. }) => assert_eq!(error.code, -32021, "{error:?}"),
        other => panic!("expected -32021, got {other:?}"),
    }
}

/// A person who never answers: records that a question came, then keeps it open forever.
#[derive(Clone, Default)]
struct NeverAnswers(std::sync::Arc<tokio::sync::Notify>);

impl mcp_tasks_client::InputHandler for NeverAnswers {
    async fn elicit(&self, _: mcp_tasks_client::ElicitRequest) -> mcp_tasks_client::ElicitResponse {
        self.0.notify_one();
        std::future::pending().await
    }
}

/// Asks once; polled every 5 s, so only a wake-up makes the client look sooner.
#[tool(task_support = "required", poll_interval = "5s")]
async fn ask_slowly(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Pin>("Your PIN?").await? {
        ElicitOutcome::Accept(Pin { pin }) => Ok(pin),
        _ => Err(ToolError::new("no PIN given")),
    }
}

/// A task cancelled while its question is still open (a person thinking, a prompt on screen)
/// ends as `cancelled` for the caller at once: the client keeps watching the task while the
/// handler answers, and drops the question when the task ends. Both eras.
#[tokio::test]
async fn cancelling_while_a_question_is_open_ends_the_task_at_once() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let person = NeverAnswers::default();
        let server = Server::builder("vault", "1.0.0")
            .tool::<ask_slowly>()
            .build()
            .expect("set up");
        let client = Client::builder()
            .era(era)
            .handler(person.clone())
            .connect_in_process(&server)
            .await
            .unwrap();
        let call = client.call_tool("ask_slowly", ()).await.unwrap();
        let task = call.task().expect("a task").clone();
        timeout(WAIT, person.0.notified())
            .await
            .expect("the question reaches the handler");
        let started = Instant::now();
        task.cancel().await.expect("tasks/cancel is accepted");
        let outcome = timeout(Duration::from_secs(10), task.result())
            .await
            .unwrap_or_else(|_| panic!("{era:?}: the task's end was not seen while asking"));
        assert!(
            matches!(outcome, Err(Error::TaskCancelled { .. })),
            "{era:?}: {outcome:?}"
        );
        // Sooner than the next poll, 5 s after the one that found the question (with room for
        // a loaded machine).
        assert!(
            started.elapsed() < Duration::from_millis(3500),
            "{era:?}: seen only after {:?}",
            started.elapsed()
        );
    }
}

/// A test fixture: says it is waiting, then never changes again until cancelled.
#[tool(task_support = "required", poll_interval = "20ms")]
async fn frozen(ctx: ToolContext) -> Result<String, ToolError> {
    ctx.status("waiting for a lock");
    ctx.cancelled().await;
    Err(ToolError::new("cancelled"))
}

/// A test fixture: changes its status message every 40 ms for 0.8 s, then finishes.
#[tool(task_support = "required", poll_interval = "20ms")]
async fn ticking(ctx: ToolContext) -> Result<String, ToolError> {
    for tick in 0..20 {
        ctx.status(format!("tick {tick}"));
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    Ok("done".into())
}

fn stuck_server() -> Server {
    Server::builder("fixtures", "1.0.0")
        .config(ServerConfig::default())
        .tool::<frozen>()
        .tool::<ticking>()
        .build()
        .expect("set up")
}

#[tokio::test]
async fn stuck_detection_fires_on_a_task_that_never_changes_and_not_on_one_that_does() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = Client::builder()
            .era(era)
            .stuck_after(Duration::from_secs(1))
            .connect_in_process(&stuck_server())
            .await
            .unwrap();

        let task = client.call_tool("frozen", ()).await.unwrap();
        let task = task.task().expect("a task").clone();
        let mut updates = task.updates();
        let started = Instant::now();
        let stuck = timeout(WAIT, async {
            loop {
                match updates.next().await {
                    Some(TaskUpdate::Stuck {
                        unchanged_for,
                        snapshot,
                    }) => break (unchanged_for, snapshot),
                    Some(TaskUpdate::Updated(_)) => continue,
                    Some(other) => panic!("{era:?}: {other:?}"),
                    None => panic!("the stream ended without a Stuck event"),
                }
            }
        })
        .await
        .expect("Stuck comes in time");
        assert!(stuck.0 >= Duration::from_secs(1), "{era:?}: {stuck:?}");
        assert!(started.elapsed() < Duration::from_secs(6), "{era:?}");
        assert_eq!(
            stuck.1.status_message.as_deref(),
            Some("waiting for a lock")
        );
        assert!(
            task.stuck_for()
                .is_some_and(|d| d >= Duration::from_secs(1))
        );
        // The caller acts on it.
        task.cancel().await.unwrap();
        assert!(matches!(
            timeout(WAIT, task.result()).await.unwrap(),
            Err(Error::TaskCancelled { .. })
        ));

        let task = client.call_tool("ticking", ()).await.unwrap();
        let task = task.task().expect("a task").clone();
        let mut updates = task.updates();
        let mut changes = 0;
        while let Some(event) = timeout(WAIT, updates.next()).await.expect("events in time") {
            match event {
                TaskUpdate::Updated(_) => changes += 1,
                other => panic!("{era:?}: a ticking task is not stuck: {other:?}"),
            }
        }
        assert!(changes >= 5, "{era:?}: saw only {changes} changes");
        assert_eq!(task.stuck_for(), None);
        assert_eq!(
            task.result().await.map(|r| mcp_tasks_client::text(&r)),
            Ok("done".into())
        );
    }
}

// ---- A scripted HTTP server (loopback, one request per connection), for what our servers do not do. ----

/// One request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
    at: Instant,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// Starts a server that answers each request with `answer(request)`: the raw HTTP response.
async fn fake_http(
    answer: impl Fn(&Seen) -> String + Send + Sync + 'static,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Seen>>>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let answer = std::sync::Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (log, answer) = (log.clone(), answer.clone());
            tokio::spawn(async move {
                let mut reader = BufReader::new(socket);
                let mut line = String::new();
                reader.read_line(&mut line).await.unwrap();
                let method = line.split(' ').next().unwrap_or("").to_owned();
                let mut headers = Vec::new();
                loop {
                    line.clear();
                    reader.read_line(&mut line).await.unwrap();
                    let Some((k, v)) = line.trim_end().split_once(':') else {
                        break;
                    };
                    headers.push((k.trim().to_owned(), v.trim().to_owned()));
                }
                let length = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
                let mut body = vec![0; length];
                reader.read_exact(&mut body).await.unwrap();
                let seen = Seen {
                    method,
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or_default(),
                    at: Instant::now(),
                };
                let response = answer(&seen);
                log.lock().unwrap().push(seen);
                let mut socket = reader.into_inner();
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, seen)
}

fn http_json(status: &str, extra: &str, body: serde_json::Value) -> String {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn http_sse(events: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
        events.len()
    )
}

#[tokio::test]
async fn a_legacy_only_server_gets_initialize_and_a_broken_sse_response_is_resumed() {
    let (url, seen) = fake_http(|req| {
        let id = req.body["id"].clone();
        match (req.method.as_str(), req.rpc_method()) {
            // A 2025-11-25 server: no server/discover, no session yet.
            ("POST", "server/discover") => http_json(
                "400 Bad Request",
                "",
                json!({ "jsonrpc": "2.0", "id": null,
                        "error": { "code": -32000, "message": "Bad Request: No valid session ID provided" } }),
            ),
            ("POST", "initialize") => http_json(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                json!({ "jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": "old", "version": "1" } } }),
            ),
            ("POST", "tools/list") => http_json(
                "200 OK",
                "",
                json!({ "jsonrpc": "2.0", "id": id, "result": { "tools": [
                    { "name": "slow", "inputSchema": { "type": "object" } } ] } }),
            ),
            // The response stream primes an event id, then breaks before the response.
            ("POST", "tools/call") => http_sse("id: ev-1\nretry: 300\ndata: \n\n"),
            ("POST", _) => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            ("GET", _) if req.header("last-event-id") == Some("ev-1") => http_sse(
                &format!(
                    "id: ev-2\ndata: {}\n\n",
                    json!({ "jsonrpc": "2.0", "id": 4, "result": {
                        "content": [{ "type": "text", "text": "resumed" }] } })
                ),
            ),
            _ => "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
        }
    })
    .await;
    let client = timeout(WAIT, Client::builder().connect_http(&url))
        .await
        .unwrap()
        .expect("falls back to initialize");
    assert_eq!(client.era(), mcp_tasks_client::Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server().name, "old");
    let result = timeout(WAIT, client.call_tool("slow", json!({})))
        .await
        .expect("in time")
        .expect("the resumed stream brings the response")
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&result), "resumed");

    let seen = seen.lock().unwrap().clone();
    // The session's GET stream was asked for before any request that could need it.
    let first_get = seen
        .iter()
        .position(|s| s.method == "GET")
        .expect("a GET stream");
    let first_list = seen
        .iter()
        .position(|s| s.rpc_method() == "tools/list")
        .unwrap();
    assert!(first_get < first_list, "{seen:?}");
    let call = seen
        .iter()
        .find(|s| s.rpc_method() == "tools/call")
        .unwrap();
    assert_eq!(call.body["id"], 4, "the fake server answers id 4");
    assert_eq!(call.header("mcp-session-id"), Some("s-1"));
    assert_eq!(call.header("mcp-protocol-version"), Some("2025-11-25"));
    let resume = seen
        .iter()
        .find(|s| s.header("last-event-id").is_some())
        .expect("a GET with Last-Event-ID");
    assert_eq!(resume.method, "GET");
    assert_eq!(resume.header("mcp-session-id"), Some("s-1"));
    assert!(
        resume.at.duration_since(call.at) >= Duration::from_millis(300),
        "waited the server's retry: {:?}",
        resume.at.duration_since(call.at)
    );
}

// ---- In-process: declines, progress, expired tasks. ----

/// Asks the client's model, as a task when it can.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn ask_model(ctx: ToolContext) -> Result<String, ToolError> {
    let params = mcp_tasks_runtime::CreateMessageParams::user_text("Say hi", 10);
    match ctx.sample(params).await {
        Ok(answer) => Ok(answer.text().unwrap_or_default().to_owned()),
        Err(e) => Err(ToolError::new(format!("no answer: {e}"))),
    }
}

/// Reports progress three times, as a task when it can.
#[tool(task_support = "optional", poll_interval = "500ms")]
async fn with_progress(ctx: ToolContext) -> Result<String, ToolError> {
    for step in 1..=3 {
        ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    Ok("done".into())
}

/// Runs past the server's task deadline (`deadline_server` sets 100 ms).
#[tool(task_support = "required", poll_interval = "90ms")]
async fn outlives(ctx: ToolContext) -> Result<String, ToolError> {
    ctx.cancelled().await;
    Err(ToolError::new("cancelled"))
}

fn misc_server() -> Server {
    Server::builder("misc", "1.0.0")
        .config(ServerConfig::default().sweep_every(Duration::from_millis(20)))
        .tool::<ask_model>()
        .tool::<with_progress>()
        .build()
        .expect("set up")
}

#[tokio::test]
async fn a_declined_sampling_is_said_by_each_route_as_it_can() {
    // Legacy (a task, and inline): the server gets a JSON-RPC error and the tool goes on.
    let client = Client::builder()
        .era(EraChoice::Legacy)
        .handler(Scripted::new())
        .connect_in_process(&misc_server())
        .await
        .unwrap();
    let result = client
        .call_tool("ask_model", ())
        .await
        .unwrap()
        .result()
        .await;
    let result = result.expect("the tool's own error");
    assert!(
        mcp_tasks_client::text(&result).starts_with("no answer"),
        "{result:?}"
    );

    // A modern task cannot be told no: the question is left open and the caller is told; the
    // client does not cancel the task behind its back (it did, and the user read "cancelled by
    // request").
    let client = Client::builder()
        .handler(Scripted::new())
        .connect_in_process(&misc_server())
        .await
        .unwrap();
    let call = client.call_tool("ask_model", ()).await.unwrap();
    let task = call.task().expect("a task").clone();
    let mut updates = task.updates();
    let unanswered = timeout(WAIT, async {
        while let Some(event) = updates.next().await {
            if let TaskUpdate::Unanswered { method, key } = event {
                return (method, key);
            }
        }
        panic!("the task ended without a word: {:?}", task.history());
    })
    .await
    .expect("the caller is told in time");
    assert_eq!(unanswered.0, "sampling/createMessage");
    assert!(!unanswered.1.is_empty());
    // Many polls later (10 ms apart) the task still waits for its answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!task.is_finished(), "{:?}", task.history());
    assert_eq!(task.snapshot().status, TaskStatus::InputRequired);
    assert!(
        task.history()
            .iter()
            .all(|s| s.status != TaskStatus::Cancelled)
    );
    // The caller decides: here, to cancel.
    task.cancel().await.expect("cancel");
    assert!(
        matches!(
            timeout(WAIT, call.result()).await.unwrap(),
            Err(Error::TaskCancelled { .. })
        ),
        "cancelled by the caller"
    );

    // Modern inline (MRTR): the call is abandoned.
    let client = Client::builder()
        .tasks(TaskMode::Never)
        .handler(Scripted::new())
        .connect_in_process(&misc_server())
        .await
        .unwrap();
    match client.call_tool("ask_model", ()).await {
        Err(Error::InputDeclined { method }) => assert_eq!(method, "sampling/createMessage"),
        other => panic!("expected InputDeclined, got {other:?}"),
    }
}

#[tokio::test]
async fn legacy_task_progress_reaches_the_updates() {
    let client = Client::builder()
        .era(EraChoice::Legacy)
        .connect_in_process(&misc_server())
        .await
        .unwrap();
    let call = client.call_tool("with_progress", ()).await.unwrap();
    let task = call.task().expect("a task").clone();
    assert_eq!(
        call.result().await.map(|r| mcp_tasks_client::text(&r)),
        Ok("done".into())
    );
    let progress: Vec<(f64, Option<String>)> = task
        .history()
        .iter()
        .filter_map(|s| s.progress.as_ref())
        .map(|p| (p.progress, p.message.clone()))
        .collect();
    assert!(
        progress.contains(&(3.0, Some("step 3".into()))),
        "progress seen: {progress:?}"
    );
}

fn deadline_server() -> Server {
    Server::builder("deadline", "1.0.0")
        .config(
            ServerConfig::default()
                .sweep_every(Duration::from_millis(20))
                .task_deadline(Duration::from_millis(100)),
        )
        .tool::<outlives>()
        .build()
        .expect("set up")
}

#[tokio::test]
async fn a_task_past_its_deadline_fails_with_the_servers_error() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = Client::builder()
            .era(era)
            .connect_in_process(&deadline_server())
            .await
            .unwrap();
        let call = client.call_tool("outlives", ()).await.unwrap();
        match timeout(WAIT, call.result()).await.expect("ends in time") {
            Err(Error::TaskFailed { error, .. }) => {
                assert_eq!(error.code, -32603, "{era:?}: {error:?}");
                assert!(error.message.contains("deadline"), "{era:?}: {error:?}");
            }
            other => panic!("{era:?}: expected a failed task, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_tasks_get_failure_is_a_typed_error_and_modern_requests_carry_their_headers() {
    let (url, seen) = fake_http(|req| {
        let id = req.body["id"].clone();
        let result = match req.rpc_method() {
            "server/discover" => json!({ "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } },
                "ttlMs": 0, "cacheScope": "private" }),
            "tools/list" => json!({ "resultType": "complete", "tools": [
                { "name": "job", "inputSchema": { "type": "object" } } ] }),
            "tools/call" => json!({ "resultType": "task", "taskId": "t-1", "status": "working",
                "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z",
                "ttlMs": 60000, "pollIntervalMs": 50 }),
            _ => {
                return http_json("200 OK", "", json!({ "jsonrpc": "2.0", "id": id,
                    "error": { "code": -32602, "message": "Failed to retrieve task: Task has expired" } }));
            }
        };
        http_json("200 OK", "", json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    })
    .await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    assert!(client.era().is_modern() && client.server().supports_tasks);
    let call = client.call_tool("job", json!({})).await.unwrap();
    match timeout(WAIT, call.result()).await.expect("ends in time") {
        Err(Error::TaskGet { task_id, error }) => {
            assert_eq!(task_id, "t-1");
            assert_eq!(error.code, -32602);
        }
        other => panic!("expected a tasks/get error, got {other:?}"),
    }
    let seen = seen.lock().unwrap().clone();
    let get = seen
        .iter()
        .find(|s| s.rpc_method() == "tasks/get")
        .expect("polled");
    assert_eq!(get.header("mcp-method"), Some("tasks/get"));
    assert_eq!(get.header("mcp-name"), Some("t-1"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2026-07-28"));
    let meta = &get.body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(
        meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some()
    );
    let call = seen
        .iter()
        .find(|s| s.rpc_method() == "tools/call")
        .unwrap();
    assert_eq!(call.header("mcp-name"), Some("job"));
}

static GAVE_UP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets [`GAVE_UP`] when the tool stops, however it stops (the server drops a cancelled call).
struct SetOnDrop;

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        GAVE_UP.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Waits until the call is cancelled.
#[tool]
async fn wait_for_cancel(ctx: ToolContext) -> Result<String, ToolError> {
    let _stopped = SetOnDrop;
    ctx.cancelled().await;
    Err(ToolError::new("cancelled"))
}

#[tokio::test]
async fn an_inline_call_the_caller_stops_waiting_for_is_cancelled_on_the_server() {
    let server = Server::builder("waits", "1.0.0")
        .tool::<wait_for_cancel>()
        .build()
        .expect("set up");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        GAVE_UP.store(false, std::sync::atomic::Ordering::SeqCst);
        let client = Client::builder()
            .era(era)
            .connect_in_process(&server)
            .await
            .unwrap();
        let call = timeout(
            Duration::from_millis(200),
            client.call_tool("wait_for_cancel", ()),
        )
        .await;
        assert!(call.is_err(), "{era:?}: the call is still running");
        let started = Instant::now();
        while !GAVE_UP.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{era:?}: the tool was not cancelled"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[tokio::test]
async fn a_refused_tasks_update_is_retried_at_the_poll_interval_then_given_up() {
    let (url, seen) = fake_http(|req| {
        let id = req.body["id"].clone();
        let task = json!({ "taskId": "t-2", "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 100 });
        let mut result = match req.rpc_method() {
            "server/discover" => json!({ "supportedVersions": ["2026-07-28"],
                "capabilities": { "extensions": { "io.modelcontextprotocol/tasks": {} } },
                "ttlMs": 0, "cacheScope": "private" }),
            "tools/list" => json!({ "tools": [] }),
            "tools/call" => {
                let mut t = task.clone();
                t["resultType"] = json!("task");
                t["status"] = json!("working");
                t
            }
            "tasks/get" => {
                let mut t = task.clone();
                t["status"] = json!("input_required");
                t["inputRequests"] = json!({ "q": { "method": "elicitation/create", "params": {
                    "message": "Name?", "requestedSchema": { "type": "object",
                        "properties": { "name": { "type": "string" } } } } } });
                t
            }
            _ => {
                return http_json(
                    "200 OK",
                    "",
                    json!({ "jsonrpc": "2.0", "id": id,
                    "error": { "code": -32603, "message": "storage is down" } }),
                );
            }
        };
        if result.get("resultType").is_none() {
            result["resultType"] = json!("complete");
        }
        http_json(
            "200 OK",
            "",
            json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        )
    })
    .await;
    let script = Scripted::new().accept(json!({ "name": "Ada" }));
    let client = Client::builder()
        .handler(script.clone())
        .connect_http(&url)
        .await
        .unwrap();
    let call = client.call_tool("job", json!({})).await.unwrap();
    match timeout(WAIT, call.result())
        .await
        .expect("gives up in time")
    {
        Err(Error::Rpc { method, error }) => {
            assert_eq!(method, "tasks/update");
            assert_eq!(error.message, "storage is down");
        }
        other => panic!("expected the tasks/update refusal, got {other:?}"),
    }
    // The user was asked once; the same answer was sent three times, a poll interval apart.
    assert_eq!(script.asked().len(), 1);
    let updates: Vec<Seen> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.rpc_method() == "tasks/update")
        .cloned()
        .collect();
    assert_eq!(updates.len(), 3);
    for pair in updates.windows(2) {
        assert_eq!(
            pair[0].body["params"]["inputResponses"],
            pair[1].body["params"]["inputResponses"]
        );
        assert!(pair[1].at.duration_since(pair[0].at) >= Duration::from_millis(90));
    }
    assert_eq!(
        updates[0].body["params"]["inputResponses"]["q"],
        json!({ "action": "accept", "content": { "name": "Ada" } })
    );
}

#[tokio::test]
async fn an_http_answer_over_the_clients_limit_fails_its_request_instead_of_growing_the_buffer() {
    // A modern server whose `tools/list` answer is a 2 MiB JSON body and whose `tools/call`
    // answer is one 2 MiB SSE event.
    const BIG: usize = 2 * 1024 * 1024;
    let big = "x".repeat(BIG);
    let (url, _) = fake_http(move |req| {
        let id = req.body["id"].clone();
        let result = match req.rpc_method() {
            "server/discover" => json!({ "resultType": "complete",
                "supportedVersions": ["2026-07-28"], "capabilities": { "tools": {} },
                "ttlMs": 0, "cacheScope": "private" }),
            "tools/list" => json!({ "resultType": "complete", "tools": [
                { "name": "big", "description": big, "inputSchema": { "type": "object" } } ] }),
            "tools/call" => {
                let event = json!({ "jsonrpc": "2.0", "id": id, "result": { "resultType": "complete",
                    "content": [{ "type": "text", "text": big }] } });
                return http_sse(&format!("data: {event}\n\n"));
            }
            _ => json!({}),
        };
        http_json("200 OK", "", json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    })
    .await;
    let connect = |limit: usize| {
        let url = url.clone();
        async move {
            Client::builder()
                .max_message(limit)
                .connect_http(&url)
                .await
                .unwrap()
        }
    };
    // Roomy enough: both answers are read whole.
    let roomy = connect(4 * 1024 * 1024).await;
    let tools = roomy.list_tools().await.unwrap();
    assert_eq!(tools[0].description.as_deref().map(str::len), Some(BIG));
    let result = roomy
        .call_tool("big", json!({}))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(mcp_tasks_client::text(&result).len(), BIG);

    // Too tight: each request fails with a transport error naming the limit.
    let tight = connect(1024 * 1024).await;
    for outcome in [
        timeout(WAIT, tight.list_tools())
            .await
            .expect("in time")
            .map(|_| ()),
        timeout(WAIT, tight.call_tool("big", json!({})))
            .await
            .expect("in time")
            .map(|_| ()),
    ] {
        match outcome {
            Err(Error::Transport(why)) => assert!(why.contains("1048576 bytes"), "{why}"),
            other => panic!("expected a transport error, got {other:?}"),
        }
    }
}

// ---- Request timeouts. ----

/// Inline only: works 2.7 s, reporting progress every 100 ms.
#[tool(task_support = "forbidden")]
async fn slow_with_progress(ctx: ToolContext) -> Result<String, ToolError> {
    for step in 1..=27 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        ctx.progress(f64::from(step), Some(27.0), None);
    }
    Ok("done".into())
}

static SILENT_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `SILENT_STOPPED` when the tool's future ends or is dropped (cancelled).
struct SilentStopped;

impl Drop for SilentStopped {
    fn drop(&mut self) {
        SILENT_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Inline only: never answers, and never says anything, until cancelled.
#[tool(task_support = "forbidden")]
async fn silent(ctx: ToolContext) -> Result<String, ToolError> {
    let _stopped = SilentStopped;
    ctx.cancelled().await;
    Err(ToolError::new("cancelled"))
}

#[tokio::test]
async fn a_request_without_an_answer_times_out_naming_the_method_but_progress_keeps_it_alive() {
    let server = Server::builder("slow", "1.0.0")
        .tool::<slow_with_progress>()
        .tool::<silent>()
        .build()
        .expect("set up");
    // Nine progress intervals: a loaded machine may hold one back for several.
    let limit = Duration::from_millis(900);
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        SILENT_STOPPED.store(false, std::sync::atomic::Ordering::SeqCst);
        let client = Client::builder()
            .era(era)
            .request_timeout(Some(limit))
            .connect_in_process(&server)
            .await
            .unwrap();
        // 2.7 s of work, three times the timeout, with progress all along: it ends.
        let result = timeout(WAIT, async {
            client
                .call_tool("slow_with_progress", ())
                .await?
                .result()
                .await
        })
        .await
        .expect("the call ends");
        assert_eq!(
            mcp_tasks_client::text(&result.expect("done")),
            "done",
            "{era:?}"
        );
        // Silence: the call fails after the timeout, precisely, and the server is told.
        let started = Instant::now();
        let error = timeout(WAIT, client.call_tool("silent", ()))
            .await
            .expect("the call ends")
            .expect_err("no answer");
        assert_eq!(
            error,
            Error::Timeout {
                method: "tools/call".into(),
                after: limit
            },
            "{era:?}"
        );
        assert_eq!(
            error.to_string(),
            "no answer to tools/call within 900 ms (the request timeout)"
        );
        assert!(started.elapsed() >= limit, "{era:?}");
        while !SILENT_STOPPED.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                started.elapsed() < WAIT,
                "{era:?}: the tool was not cancelled"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A process that reads what it is sent and never writes: the handshake times out instead of
/// hanging for ever.
#[tokio::test]
async fn a_server_that_never_answers_times_out_instead_of_hanging() {
    let mut command = tokio::process::Command::new("sh");
    // The shell keeps the pipe to the client open; `cat` swallows what the client sends.
    command.args(["-c", "cat >/dev/null"]);
    let started = Instant::now();
    let error = timeout(
        WAIT,
        Client::builder()
            .era(EraChoice::Legacy)
            .request_timeout(Some(Duration::from_millis(300)))
            .connect_stdio(command),
    )
    .await
    .expect("gives up in time")
    .expect_err("no answer");
    assert_eq!(
        error,
        Error::Timeout {
            method: "initialize".into(),
            after: Duration::from_millis(300)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---- TLS. ----

/// Serves `server` over HTTPS on 127.0.0.1 with a new self-signed certificate for `localhost`;
/// returns the URL and the certificate (PEM).
async fn serve_https(server: &Server) -> (String, String) {
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://localhost:{}/mcp", tcp.local_addr().unwrap().port());
    let router = server
        .http_router(mcp_tasks_runtime::server::HttpConfig::default().allowed_hosts(["localhost"]));
    let listener = TlsListener {
        tcp,
        tls: tls::acceptor(issued.cert.der().clone(), issued.key_pair.serialize_der()),
    };
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, issued.cert.pem())
}

/// An ordinary self-signed certificate, as `openssl req -x509` makes it (it says it is a CA,
/// `basicConstraints CA:TRUE`, which the WebPKI refuses as a server's own: `CaUsedAsEndEntity`),
/// given as a root, is trusted: by the library (`root_certificate_pem`) and by the `mcp-tasks`
/// command (`--ca-cert`). Its name is still checked: the same server at `127.0.0.1`, a name the
/// certificate does not hold, is refused.
#[tokio::test]
async fn https_trusts_an_openssl_self_signed_certificate_given_as_a_root() {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};
    let dir = std::env::temp_dir().join(format!("mcp-tasks-openssl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost"])
        .arg("-keyout")
        .arg(&key_file)
        .arg("-out")
        .arg(&cert_file)
        .output()
        .expect("openssl runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let pem = std::fs::read(&cert_file).unwrap();
    assert!(
        String::from_utf8_lossy(&std::fs::read(&key_file).unwrap()).contains("BEGIN PRIVATE KEY"),
        "a PKCS#8 key"
    );
    let cert = CertificateDer::from_pem_slice(&pem).unwrap();
    let key = PrivatePkcs8KeyDer::from_pem_file(&key_file).unwrap();
    let server = unlock_server();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let router = server.http_router(
        mcp_tasks_runtime::server::HttpConfig::default().allowed_hosts(["localhost", "127.0.0.1"]),
    );
    let listener = TlsListener {
        tcp,
        tls: tls::acceptor(cert.clone(), key.secret_pkcs8_der().to_vec()),
    };
    tokio::spawn(async move { axum::serve(listener, router).await });
    let url = format!("https://localhost:{port}/mcp");

    let client = timeout(
        WAIT,
        Client::builder()
            .root_certificate_pem(pem.clone())
            .connect_http(&url),
    )
    .await
    .expect("connects in time")
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "unlock")
    );
    client.close().await;

    let other_name = format!("https://127.0.0.1:{port}/mcp");
    let error = timeout(
        WAIT,
        Client::builder()
            .root_certificate_pem(pem.clone())
            .connect_http(&other_name),
    )
    .await
    .expect("fails in time")
    .expect_err("a name the certificate does not hold");
    assert!(
        matches!(&error, Error::Transport(why) if why.to_lowercase().contains("certificate")),
        "{error:?}"
    );

    let cli = mcp_tasks_tests::cli::mcp_tasks_bin();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(cli)
            .arg("tools")
            .arg("--ca-cert")
            .arg(&cert_file)
            .args(["--url", &url])
            .env("MCP_TASKS_CACHE_DIR", &dir)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("mcp-tasks runs")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unlock"),
        "{stderr}"
    );
}

#[tokio::test]
async fn https_works_with_rustls_and_a_root_the_caller_adds() {
    let server = unlock_server();
    let (url, cert) = serve_https(&server).await;
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let script = Scripted::new().accept(json!({ "pin": "1234" }));
        let client = timeout(
            WAIT,
            Client::builder()
                .era(era)
                .handler(script.clone())
                .root_certificate_pem(cert.clone())
                .connect_http(&url),
        )
        .await
        .expect("connects in time")
        .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.era().is_modern(), era == EraChoice::Modern);
        let result = timeout(WAIT, async {
            client.call_tool("unlock", ()).await?.result().await
        })
        .await
        .expect("the call ends")
        .expect("unlocked");
        assert_eq!(
            mcp_tasks_client::text(&result),
            "unlocked on attempt 1",
            "{era:?}"
        );
    }

    // A certificate nobody vouches for is refused, with a reason.
    let error = timeout(WAIT, Client::builder().connect_http(&url))
        .await
        .expect("fails in time")
        .expect_err("an untrusted certificate");
    match &error {
        Error::Transport(why) => assert!(why.to_lowercase().contains("certificate"), "{why}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    // Bad input is said at once.
    let error = Client::builder()
        .root_certificate_pem("not a certificate")
        .connect_http(&url)
        .await
        .expect_err("no certificate in it");
    assert!(
        matches!(&error, Error::Transport(why) if why.contains("holds no PEM certificate")),
        "{error:?}"
    );
    let error = Client::builder()
        .connect_http("ftp://localhost/mcp")
        .await
        .expect_err("not http");
    assert!(
        matches!(&error, Error::Transport(why) if why.contains("not an http:// or https:// URL")),
        "{error:?}"
    );
}

/// A legacy-only server that answers nothing before `initialize` (not the era probe, neither
/// `ping` nor `server/discover`), as a few in the wild do; `ping` after it.
const SILENT_UNTIL_INITIALIZE: &str = r#"
import json, sys
initialized = False
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        initialized = True
        result = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "serverInfo": {"name": "quiet", "version": "1"}}
    elif msg.get("method") == "ping" and initialized:
        result = {}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// A request timeout shorter than the era probe's wait: the unanswered probe still counts as
/// "no answer" (and `initialize` follows), not as a failed connection.
#[tokio::test]
async fn a_short_request_timeout_does_not_turn_an_unanswered_probe_into_a_failure() {
    let mut command = tokio::process::Command::new("python3");
    command.args(["-c", SILENT_UNTIL_INITIALIZE]);
    let client = timeout(
        WAIT,
        Client::builder()
            .request_timeout(Some(Duration::from_millis(300)))
            .discover_timeout(Duration::from_secs(2))
            .connect_stdio(command),
    )
    .await
    .expect("connects in time")
    .expect("falls back to initialize");
    assert!(!client.era().is_modern());
    assert_eq!(client.server().name, "quiet");
    client.ping().await.expect("ping");
}

/// Connects with the default era choice (stdio), recording the methods sent.
async fn connect_auto(
    mut command: tokio::process::Command,
) -> (Client, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let client = timeout(
        WAIT,
        Client::builder()
            .on_wire({
                let sent = sent.clone();
                move |direction, text| {
                    if direction == mcp_tasks_client::WireDirection::Sent {
                        let message: serde_json::Value = serde_json::from_str(text).unwrap();
                        if let Some(method) = message["method"].as_str() {
                            sent.lock().unwrap().push(method.to_owned());
                        }
                    }
                }
            })
            .connect_stdio({
                command.kill_on_drop(true);
                command
            }),
    )
    .await
    .expect("connects in time")
    .expect("connects");
    (client, sent)
}

/// The default era choice over stdio probes as the spec says, with `server/discover`: a
/// legacy-only server (Python `mcp` 1.30.0) refuses it and gets `initialize`; a 2026-07-28 server
/// answers it and gets no `initialize`. No `ping` first: a server of both eras answers it as a
/// legacy one does (see `a_dual_era_server_is_spoken_to_in_2026_07_28`).
#[tokio::test]
async fn the_default_era_probe_is_server_discover_then_initialize() {
    mcp_tasks_tests::peers::install_peers("python");
    let mut command = tokio::process::Command::new(mcp_tasks_tests::peers::venv_python());
    command
        .arg(mcp_tasks_tests::workspace_root().join("tests/peers/tasks_server.py"))
        .stderr(std::process::Stdio::null());
    let (client, sent) = connect_auto(command).await;
    assert!(!client.era().is_modern());
    assert_eq!(client.server().name, "python-mcp-1.30-tasks-fixture");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "plan_trip"));
    client.close().await;
    assert_eq!(
        sent.lock().unwrap()[..3],
        ["server/discover", "initialize", "notifications/initialized"]
    );

    let mut command = tokio::process::Command::new(example_bin("example_server"));
    command.env("RUST_LOG", "warn");
    let (client, sent) = connect_auto(command).await;
    assert!(client.era().is_modern());
    assert!(client.server().supports_tasks);
    assert_eq!(sent.lock().unwrap()[..1], ["server/discover"]);
    assert!(!sent.lock().unwrap().iter().any(|m| m == "initialize"));
    client.close().await;
}

/// A server that answers `ping` as a legacy one would (`{}`, no `resultType`, as rmcp's does
/// before anything else, whatever eras it speaks) and `server/discover` as a 2026-07-28 one: the
/// probe asks `server/discover` alone, and the client speaks 2026-07-28.
const MODERN_ONLY_WITH_A_LEGACY_PING: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    method, reply = msg.get("method"), {"jsonrpc": "2.0", "id": msg.get("id")}
    if "id" not in msg:
        continue
    if method == "ping":
        reply["result"] = {}
    elif method == "server/discover":
        reply["result"] = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-only", "version": "1"}}}
    elif method == "initialize":
        reply["error"] = {"code": -32022, "message": "Unsupported protocol version",
                          "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}
    else:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    print(json.dumps(reply), flush=True)
"#;

#[tokio::test]
async fn a_dual_era_server_is_spoken_to_in_2026_07_28() {
    let mut command = tokio::process::Command::new("python3");
    command.args(["-c", MODERN_ONLY_WITH_A_LEGACY_PING]);
    let (client, sent) = connect_auto(command).await;
    assert!(client.era().is_modern());
    assert_eq!(client.server().name, "modern-only");
    assert_eq!(sent.lock().unwrap()[..], ["server/discover"]);
    client.close().await;
}

/// Over HTTP: a server that takes the request and never answers it.
#[tokio::test]
async fn an_http_server_that_never_answers_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            held.push(tokio::spawn(async move {
                let mut sink = Vec::new();
                let _ = tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut sink).await;
            }));
        }
    });
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let started = Instant::now();
        let error = timeout(
            WAIT,
            Client::builder()
                .era(era)
                .request_timeout(Some(Duration::from_millis(300)))
                .connect_http(&url),
        )
        .await
        .expect("gives up in time")
        .expect_err("no answer");
        let method = if era == EraChoice::Modern {
            "server/discover"
        } else {
            "initialize"
        };
        assert_eq!(
            error,
            Error::Timeout {
                method: method.into(),
                after: Duration::from_millis(300)
            },
            "{era:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{era:?}");
    }
}

/// One wire model for both sides: what a prompt returns on the server (`PromptMessage`s, a
/// `Role` each) is what `get_prompt` gives the client, the same types, equal; a completion is the
/// runtime's `Completion`; a listed tool is the runtime's `ListedTool`, with the keys it does not
/// name (`annotations`, `_meta`) kept, and its task support as each era says it.
#[tokio::test]
async fn the_client_reads_the_runtimes_own_wire_types_in_both_eras() {
    let server = mcp_tasks_examples::example_server()
        .build()
        .expect("set up");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = Client::builder()
            .era(era)
            .connect_in_process(&server)
            .await
            .expect("connects");
        let arguments = json!({ "code": "x", "language": "rust" });
        let prompt = client.get_prompt("review_code", arguments).await.unwrap();
        let expected = GetPromptResult::new([
            PromptMessage::user("Please review this rust code:\n\nx"),
            PromptMessage::assistant(
                "I will read it and list what I would change, most important first.",
            ),
        ]);
        assert_eq!(prompt, expected, "{era:?}");
        assert_eq!(prompt.messages[1].role, Role::Assistant);

        let prompts = client.list_prompts().await.unwrap();
        let review = prompts.iter().find(|p| p.name == "review_code").unwrap();
        let arguments: Vec<(&str, bool)> = (review.arguments.iter())
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(
            arguments,
            [("code", true), ("language", true), ("focus", false)]
        );

        let language = CompletionRef::Prompt("review_code".into());
        let completion = client.complete(&language, "language", "ru", &[]).await;
        assert_eq!(completion.unwrap(), Completion::new(["rust"]));

        let tools = client.list_tools().await.unwrap();
        let tool = |name: &str| -> &ListedTool { tools.iter().find(|t| t.name == name).unwrap() };
        let (research, forecast) = (tool("research"), tool("show_forecast"));
        if era == EraChoice::Legacy {
            // The fallback is on by default: a 2025-11-25 session that declared no `tasks`
            // capability sees a required tool as optional (its library may then call it without
            // a task, and get the fallback's task id).
            assert_eq!(research.task_support(), TaskSupport::Optional);
        } else {
            assert_eq!(research.execution, None, "the server decides per call");
        }
        assert!(research.input_schema["properties"]["topic"].is_object());
        assert!(forecast.other["_meta"]["ui"]["resourceUri"].is_string());
        client.close().await;
    }
}
