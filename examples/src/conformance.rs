//! The fixture tools the official conformance suite calls (`@modelcontextprotocol/conformance`,
//! tasks and input-required-result scenarios; the rest are in [`crate::everything`]), written with `#[tool]` like any user's tools. Also used by this project's own
//! stdio tests.

use mcp_tasks_runtime::{
    CompletionContext, Content, CreateMessageParams, ElicitOutcome, InputError, PromptMessage,
    ResourceContents, Server, ServerBuilder, ToolContext, ToolError, prompt, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

/// Greet someone; never a task.
#[tool]
pub async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Compute slowly: sleeps `seconds`, then answers. A task when the client supports tasks.
#[tool(task_support = "optional", poll_interval = "200ms")]
pub async fn slow_compute(
    ctx: ToolContext,
    /// How long to work, in seconds.
    seconds: u64,
    /// A label to echo back.
    label: Option<String>,
) -> Result<String, ToolError> {
    let label = label.unwrap_or_else(|| "result".into());
    ctx.status(format!("computing for {seconds}s"));
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(seconds)) => Ok(format!("{label}: computed after {seconds}s")),
        _ = ctx.cancelled() => {
            tracing::info!("slow_compute: saw cancellation");
            Err(ToolError::new("cancelled"))
        }
    }
}

/// A job that fails with a tool error (`isError: true`) after a second. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed: upstream said no"))
}

/// A job that fails with a JSON-RPC error, so its task ends `failed`. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn protocol_error_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ToolError::internal("the job hit an internal error"))
}

/// A yes/no answer.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Whether to go ahead.
    pub confirm: bool,
}

/// Delete a file, after the user confirms. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn confirm_delete(
    ctx: ToolContext,
    /// The file to delete.
    filename: String,
) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Confirm>(format!("Delete {filename}?")).await;
    match answer {
        Ok(ElicitOutcome::Accept(Confirm { confirm: true })) => Ok(format!("Deleted {filename}")),
        Ok(_) => Ok(format!("Kept {filename}")),
        Err(e) => {
            tracing::info!("confirm_delete: stopped waiting for confirmation: {e}");
            Err(e.into())
        }
    }
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Name {
    /// The name.
    pub name: String,
}

/// A colour.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Colour {
    /// The colour.
    pub colour: String,
}

/// Ask two questions at once. Only runs as a task.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn multi_input(ctx: ToolContext) -> Result<String, ToolError> {
    let (name, colour) = tokio::join!(
        ctx.elicit::<Name>("Your name?"),
        ctx.elicit::<Colour>("Your favourite colour?")
    );
    let name = name?.accepted().map_or("nobody".into(), |n| n.name);
    let colour = colour?.accepted().map_or("none".into(), |c| c.colour);
    Ok(format!("{name} likes {colour}"))
}

// Fixtures of the `input-required-result-*` scenarios (MRTR, SEP-2322): inline calls in the
// modern era whose input goes out as `InputRequiredResult`. The suite looks requests up by the
// keys it names, hence `.key(...)`.

/// A name, as `input-required-result-*` asks it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UserName {
    /// The name.
    pub name: String,
}

/// A yes/no confirmation, as `input-required-result-*` asks it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirmation {
    /// Whether it is ok.
    pub ok: bool,
}

/// A colour, as `input-required-result-multi-round` asks it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Color {
    /// The colour.
    pub color: String,
}

fn text_of(answer: &mcp_tasks_runtime::CreateMessageResult) -> String {
    answer.text().unwrap_or("(not text)").to_owned()
}

/// Asks the user's name (key `user_name`) and greets them.
#[tool]
pub async fn test_input_required_result_elicitation(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx
        .elicit::<UserName>("What is your name?")
        .key("user_name")
        .await?
    {
        ElicitOutcome::Accept(UserName { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Asks the client's model (key `capital_question`) and answers with what it said.
#[tool]
pub async fn test_input_required_result_sampling(ctx: ToolContext) -> Result<String, ToolError> {
    let question = CreateMessageParams::user_text("What is the capital of France?", 100);
    let answer = ctx.sample_keyed("capital_question", question).await?;
    Ok(format!("The model said: {}", text_of(&answer)))
}

/// Asks the client's roots (key `client_roots`) and lists them.
#[tool]
pub async fn test_input_required_result_list_roots(ctx: ToolContext) -> Result<String, ToolError> {
    let roots = ctx.roots_keyed("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

/// Asks for a confirmation (key `confirm`); the answer comes back with the sealed
/// `requestState`, which the runtime verifies before the tool runs again.
#[tool]
pub async fn test_input_required_result_request_state(
    ctx: ToolContext,
) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<Confirmation>("Please confirm")
        .key("confirm")
        .await?;
    let ok = answer.accepted().is_some_and(|a| a.ok);
    Ok(format!("state-ok: confirmed={ok}"))
}

/// Asks three things at once: the user's name, the model, and the roots.
#[tool]
pub async fn test_input_required_result_multiple_inputs(
    ctx: ToolContext,
) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit::<UserName>("What is your name?")
            .key("user_name"),
        ctx.sample_keyed(
            "greeting",
            CreateMessageParams::user_text("Generate a greeting", 50)
        ),
        ctx.roots_keyed("client_roots"),
    );
    let name = name?.accepted().map_or("stranger".into(), |n| n.name);
    let greeting = text_of(&greeting?);
    let roots = roots?.len();
    Ok(format!("{greeting} {name} ({roots} roots)"))
}

/// Asks in two rounds: a name (`step1`), then a colour (`step2`).
#[tool]
pub async fn test_input_required_result_multi_round(ctx: ToolContext) -> Result<String, ToolError> {
    let name = ctx
        .elicit::<UserName>("Step 1: What is your name?")
        .key("step1")
        .await?
        .accepted()
        .map_or("stranger".into(), |n| n.name);
    let color = ctx
        .elicit::<Color>("Step 2: What is your favorite color?")
        .key("step2")
        .await?
        .accepted()
        .map_or("none".into(), |c| c.color);
    Ok(format!("{name} likes {color}"))
}

/// Asks for a confirmation; a tampered `requestState` on the retry is refused with `-32602`
/// by the runtime before this tool runs again.
#[tool]
pub async fn test_input_required_result_tampered_state(
    ctx: ToolContext,
) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<Confirmation>("Please confirm")
        .key("confirm")
        .await?;
    Ok(format!(
        "confirmed={}",
        answer.accepted().is_some_and(|a| a.ok)
    ))
}

/// Asks the user and the model at once, but only what the client declared it can answer: a
/// request the client cannot take is never sent (`InputError::NotSupported`).
#[tool]
pub async fn test_input_required_result_capabilities(
    ctx: ToolContext,
) -> Result<String, ToolError> {
    let (name, greeting) = tokio::join!(
        ctx.elicit::<UserName>("What is your name?")
            .key("user_name"),
        ctx.sample_keyed(
            "greeting",
            CreateMessageParams::user_text("Generate a greeting", 50)
        ),
    );
    let name = match name {
        Ok(outcome) => outcome.accepted().map_or("stranger".into(), |n| n.name),
        Err(InputError::NotSupported { .. }) => "(not asked)".into(),
        Err(e) => return Err(e.into()),
    };
    let greeting = match greeting {
        Ok(answer) => text_of(&answer),
        Err(InputError::NotSupported { .. }) => "(not asked)".into(),
        Err(e) => return Err(e.into()),
    };
    Ok(format!("{greeting} {name}"))
}

/// Asks for a name through MRTR *before* it becomes a task, then greets as a task: the
/// composition the `tasks-mrtr-composition` scenario checks. `defer_task` starts the call inline;
/// `ctx.start_task()` is where it becomes a task.
#[tool(task_support = "required", defer_task = true, poll_interval = "200ms")]
pub async fn test_tool_with_task(ctx: ToolContext) -> Result<String, ToolError> {
    let name = match ctx.elicit::<Name>("What is your name?").await? {
        ElicitOutcome::Accept(Name { name }) => name,
        _ => return Err(ToolError::new("a name is needed to continue")),
    };
    ctx.start_task().await;
    ctx.status(format!("greeting {name}"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!(
        "Hello, {name}! (from task {})",
        ctx.task_id().unwrap_or("?")
    ))
}

// Fixtures for this project's own tests (not called by the conformance suite).

/// Ask the user's name and greet them. A task when the client supports tasks; inline otherwise,
/// where the question goes out as MRTR (`InputRequiredResult`) or, in a legacy session, as a plain
/// `elicitation/create` request.
#[tool(task_support = "optional", poll_interval = "200ms")]
pub async fn ask_name(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("What is your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        ElicitOutcome::Decline => Ok("Hello, stranger!".into()),
        ElicitOutcome::Cancel => Err(ToolError::new("no name given")),
    }
}

/// Panics inside its task: the task fails, the server lives on.
#[tool(task_support = "required", poll_interval = "200ms")]
pub async fn panicking_job() -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    panic!("the job exploded")
}

/// Works longer than its one-second TTL and still finishes: `ttl` is how long the record is kept
/// (here, one second after the task ended), not how long the task may run.
#[tool(task_support = "required", ttl = "1s", poll_interval = "100ms")]
pub async fn short_lived(ctx: ToolContext) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(1500)) => Ok("finished".into()),
        _ = ctx.cancelled() => Err(ToolError::new("cancelled")),
    }
}

// ---------------------------------------------------------------------------------------------
// Prompts and completions, as the `prompts-*`, `completion-complete` and
// `input-required-result-non-tool-request` scenarios name them.

/// A simple prompt without arguments.
#[prompt]
pub async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// A prompt with two required arguments.
#[prompt]
pub async fn test_prompt_with_arguments(
    /// First test argument.
    #[complete(values = ["paris", "park", "party", "test", "testing"])]
    arg1: String,
    /// Second test argument.
    #[complete(with = complete_arg2)]
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// Completes `arg2`: the chosen `arg1` followed by a suffix, for what was typed.
pub async fn complete_arg2(value: String, context: CompletionContext) -> Vec<String> {
    let arg1 = context.get("arg1").unwrap_or("value");
    ["-one", "-two", "-three"]
        .iter()
        .map(|suffix| format!("{arg1}{suffix}"))
        .filter(|v| v.starts_with(&value))
        .collect()
}

/// A prompt that embeds a resource.
#[prompt]
pub async fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource(ResourceContents::text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        ))),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
pub async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(
            crate::everything::RED_PIXEL_PNG,
            "image/png",
        )),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// What `test_input_required_result_prompt` asks.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PromptContextAnswer {
    /// The context.
    pub context: String,
}

/// A prompt that asks the user first (key `user_context`): MRTR in the 2026-07-28 era.
#[prompt]
pub async fn test_input_required_result_prompt(ctx: ToolContext) -> Result<String, ToolError> {
    let context = match ctx
        .elicit::<PromptContextAnswer>("What context should the prompt use?")
        .key("user_context")
        .await?
    {
        ElicitOutcome::Accept(answer) => answer.context,
        _ => "no context".into(),
    };
    Ok(format!("Write with this context in mind: {context}"))
}

/// The conformance fixture server: the tools above, and the everything-server tools of
/// [`crate::everything`]. A tool without arguments comes first: `http-header-validation` calls the
/// first listed tool with `{}` and expects it to succeed.
pub fn conformance_server() -> ServerBuilder {
    use crate::everything::*;
    Server::builder("mcp-tasks-conformance", env!("CARGO_PKG_VERSION"))
        // The suite checks a 2026-07-28 server's `-32021` for a task-only tool called without
        // the tasks extension (`tasks-required-task-error`), which the fallback would serve.
        .task_fallback(false)
        .resource::<crate::resources::static_text>()
        .resource::<crate::resources::static_binary>()
        .resource::<crate::resources::watched_resource>()
        .resource::<crate::resources::template_data>()
        .skills(crate::skills::conformance_skills())
        .tool::<test_simple_text>()
        .tool::<greet>()
        .tool::<slow_compute>()
        .tool::<failing_job>()
        .tool::<protocol_error_job>()
        .tool::<confirm_delete>()
        .tool::<multi_input>()
        .tool::<test_input_required_result_elicitation>()
        .tool::<test_input_required_result_sampling>()
        .tool::<test_input_required_result_list_roots>()
        .tool::<test_input_required_result_request_state>()
        .tool::<test_input_required_result_multiple_inputs>()
        .tool::<test_input_required_result_multi_round>()
        .tool::<test_input_required_result_tampered_state>()
        .tool::<test_input_required_result_capabilities>()
        .tool::<test_tool_with_task>()
        .tool::<ask_name>()
        .tool::<panicking_job>()
        .tool::<short_lived>()
        .tool::<test_image_content>()
        .tool::<test_audio_content>()
        .tool::<test_embedded_resource>()
        .tool::<test_multiple_content_types>()
        .tool::<test_tool_with_logging>()
        .tool::<test_reconnection>()
        .tool::<test_error_handling>()
        .tool::<test_tool_with_progress>()
        .tool::<test_sampling>()
        .tool::<test_elicitation>()
        .tool::<test_elicitation_sep1034_defaults>()
        .tool::<test_elicitation_sep1330_enums>()
        .tool::<json_schema_2020_12_tool>()
        .tool::<test_missing_capability>()
        .tool::<test_streaming_elicitation>()
        .tool::<test_logging_tool>()
        .tool::<regional_lookup>()
        .prompt::<test_simple_prompt>()
        .prompt::<test_prompt_with_arguments>()
        .prompt::<test_prompt_with_embedded_resource>()
        .prompt::<test_prompt_with_image>()
        .prompt::<test_input_required_result_prompt>()
}
