//! mcp-tasks-client against the example servers: tasks that elicit and sample in both eras over
//! stdio and Streamable HTTP, cancellation, MRTR inline input, plain legacy requests, typed
//! errors; and in-process (no process, no socket): a tool that elicits, and stuck detection.

use mcp_tasks_client::{
    Asked, Client, EraChoice, Error, InputCapabilities, Scripted, TaskEvent, TaskMode, TaskStatus,
    ToolCall,
};
use mcp_tasks_runtime::{ElicitOutcome, Server, ServerConfig, ToolContext, ToolError, tool};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{WAIT, example_bin};
use serde::Deserialize;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::time::timeout;

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
            TaskEvent::Updated(s) => s.status,
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
    // Arguments that are not an object never reach the server.
    assert!(matches!(
        client.call_tool("greet", json!([1])).await,
        Err(Error::Decode(_))
    ));
    client.close().await;

    // A tool that can only run as a task, from a client that does not take tasks.
    let client = Client::builder()
        .tasks(TaskMode::Never)
        .connect_stdio(tokio::process::Command::new(example_bin("example_server")))
        .await
        .unwrap();
    match client.call_tool("research", json!({ "topic": "x" })).await {
        Err(Error::TaskCreation { tool, error, .. }) => {
            assert_eq!(tool, "research");
            assert_eq!(error.map(|e| e.code), Some(-32021));
        }
        other => panic!("expected a TaskCreation error, got {other:?}"),
    }
    client.close().await;
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
    let refused = Client::builder()
        .era(EraChoice::Modern)
        .bearer_token("wrong")
        .connect_http(&server.url)
        .await;
    match refused {
        Err(Error::Negotiation(why)) => assert!(why.contains("401"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
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
    Server::new("vault", "1.0.0").tool::<unlock>()
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
    Server::new("fixtures", "1.0.0")
        .config(ServerConfig::default())
        .tool::<frozen>()
        .tool::<ticking>()
}

#[tokio::test]
async fn stuck_detection_fires_on_a_task_that_never_changes_and_not_on_one_that_does() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = Client::builder()
            .era(era)
            .stuck_after(Duration::from_millis(300))
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
                    Some(TaskEvent::Stuck {
                        unchanged_for,
                        snapshot,
                    }) => break (unchanged_for, snapshot),
                    Some(TaskEvent::Updated(_)) => continue,
                    None => panic!("the stream ended without a Stuck event"),
                }
            }
        })
        .await
        .expect("Stuck comes in time");
        assert!(stuck.0 >= Duration::from_millis(300), "{era:?}: {stuck:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{era:?}");
        assert_eq!(
            stuck.1.status_message.as_deref(),
            Some("waiting for a lock")
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
                TaskEvent::Updated(_) => changes += 1,
                stuck @ TaskEvent::Stuck { .. } => {
                    panic!("{era:?}: a ticking task is not stuck: {stuck:?}")
                }
            }
        }
        assert!(changes >= 5, "{era:?}: saw only {changes} changes");
        assert_eq!(
            task.result().await.map(|r| mcp_tasks_client::text(&r)),
            Ok("done".into())
        );
    }
}
