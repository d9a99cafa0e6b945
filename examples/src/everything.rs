//! The "everything server" tools of the official conformance suite (`tools-call-*`,
//! `json-schema-2020-12`, `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`), the
//! diagnostic tools of `server-stateless`, and a tool with a custom header parameter for
//! `http-custom-header-server-validation`. Each is an ordinary `#[tool]`; names, texts and schemas
//! are the ones the suite asks for.

use mcp_tasks_runtime::{
    Args, Content, CreateMessageParams, ElicitOutcome, LogLevel, ResourceContents, ToolContext,
    ToolError, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A 1x1 red PNG.
pub(crate) const RED_PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A millisecond of silence: WAV, 8 kHz, 8-bit mono.
const SILENCE_WAV: &[u8] = &[
    0x52, 0x49, 0x46, 0x46, 0x2c, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20,
    0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x40, 0x1f, 0x00, 0x00, 0x40, 0x1f, 0x00, 0x00,
    0x01, 0x00, 0x08, 0x00, 0x64, 0x61, 0x74, 0x61, 0x08, 0x00, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80,
];

fn embedded_text() -> Content {
    Content::resource(ResourceContents::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

// ---- tools-call-* ------------------------------------------------------------------------------

/// Answers with one piece of text.
#[tool]
pub async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Ends its response stream half-way, then answers (SEP-1699 polling): a client resumes the
/// stream with `GET` and `Last-Event-ID` and gets the result there. Where the call has no
/// stream it can end (stdio, the 2026-07-28 protocol), it just answers.
#[tool]
pub async fn test_reconnection(ctx: ToolContext) -> &'static str {
    ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully"
}

/// Answers with an image (a 1x1 red PNG).
#[tool]
pub async fn test_image_content() -> Content {
    Content::image(RED_PIXEL_PNG, "image/png")
}

/// Answers with audio (a short WAV).
#[tool]
pub async fn test_audio_content() -> Content {
    Content::audio(SILENCE_WAV, "audio/wav")
}

/// Answers with an embedded text resource.
#[tool]
pub async fn test_embedded_resource() -> Content {
    embedded_text()
}

/// Answers with text, an image and an embedded resource.
#[tool]
pub async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        embedded_text(),
    ]
}

/// Logs three messages at `info`, 50 ms apart, while it runs.
#[tool]
pub async fn test_tool_with_logging(ctx: ToolContext) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

/// Always fails with a tool error (`isError: true`).
#[tool]
pub async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart (to clients that sent a progress token).
#[tool]
pub async fn test_tool_with_progress(ctx: ToolContext) -> &'static str {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(done, Some(100.0), None);
    }
    "Tool with progress executed successfully"
}

/// Asks the client's model; a client without `sampling` gets `-32021`.
#[tool]
pub async fn test_sampling(
    ctx: ToolContext,
    /// The prompt to send to the model.
    prompt: String,
) -> Result<String, ToolError> {
    let answer = ctx
        .sample(CreateMessageParams::user_text(prompt, 100))
        .await?;
    Ok(format!(
        "LLM response: {}",
        answer.text().unwrap_or("(not text)")
    ))
}

/// What `test_elicitation` asks the user.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UserInfo {
    /// User's response
    pub username: String,
    /// User's email address
    pub email: String,
}

/// Asks the user for a name and an email; a client without `elicitation` gets `-32021`.
#[tool]
pub async fn test_elicitation(
    ctx: ToolContext,
    /// The message to show the user.
    message: String,
) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<UserInfo>(message).await? {
        ElicitOutcome::Accept(info) => format!(
            "User response: action=accept, content={}",
            serde_json::to_string(&info).unwrap_or_default()
        ),
        ElicitOutcome::Decline => "User response: action=decline".into(),
        ElicitOutcome::Cancel => "User response: action=cancel".into(),
    })
}

// ---- elicitation-sep1034-defaults, elicitation-sep1330-enums ---------------------------------------

/// A user's status.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034): `#[serde(default = ...)]` puts it in the form.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WithDefaults {
    /// User name
    #[serde(default = "default_name")]
    pub name: String,
    /// User age
    #[serde(default = "default_age")]
    pub age: i64,
    /// User score
    #[serde(default = "default_score")]
    pub score: f64,
    /// User status
    #[serde(default = "default_status")]
    pub status: Status,
    /// Verification status
    #[serde(default = "default_verified")]
    pub verified: bool,
}

fn default_name() -> String {
    "John Doe".into()
}
fn default_age() -> i64 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_status() -> Status {
    Status::Active
}
fn default_verified() -> bool {
    true
}

/// Asks for a form whose fields all have defaults.
#[tool]
pub async fn test_elicitation_sep1034_defaults(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<WithDefaults>("Please review and update the form fields with defaults")
        .await?;
    Ok(elicitation_completed(answer))
}

/// An untitled single choice.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// A titled single choice: each variant's title is what the user sees.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Titled {
    #[schemars(title = "First Option")]
    Value1,
    #[schemars(title = "Second Option")]
    Value2,
    #[schemars(title = "Third Option")]
    Value3,
}

/// A titled choice the deprecated way (`enumNames`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
pub enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// A titled multiple choice.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TitledChoice {
    #[schemars(title = "First Choice")]
    Value1,
    #[schemars(title = "Second Choice")]
    Value2,
    #[schemars(title = "Third Choice")]
    Value3,
}

/// Every kind of enum an elicitation form may hold (SEP-1330).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnumForms {
    /// Choose an option
    pub untitled_single: Untitled,
    /// Choose a titled option
    pub titled_single: Titled,
    /// Choose a legacy option
    pub legacy_enum: Legacy,
    /// Choose multiple options
    pub untitled_multi: Vec<Untitled>,
    /// Choose multiple titled options
    pub titled_multi: Vec<TitledChoice>,
}

/// Asks for one of each kind of enum.
#[tool]
pub async fn test_elicitation_sep1330_enums(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<EnumForms>("Please select options from the enum fields")
        .await?;
    Ok(elicitation_completed(answer))
}

fn elicitation_completed<T: Serialize>(answer: ElicitOutcome<T>) -> String {
    match answer {
        ElicitOutcome::Accept(content) => format!(
            "Elicitation completed: action=accept, content={}",
            serde_json::to_string(&content).unwrap_or_default()
        ),
        ElicitOutcome::Decline => "Elicitation completed: action=decline, content={}".into(),
        ElicitOutcome::Cancel => "Elicitation completed: action=cancel, content={}".into(),
    }
}

// ---- json-schema-2020-12 ------------------------------------------------------------------------

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    pub street: Option<String>,
    pub city: Option<String>,
}

/// How to reach someone.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    Phone,
    Email,
}

/// A contact: a phone or an email is required, and the one `contactMethod` names. The 2020-12
/// keywords (`$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`,
/// `additionalProperties: false`) are schemars attributes, kept as written in `inputSchema`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
    "if" = { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
    "then" = { "required": ["phone"] },
    "else" = { "required": ["email"] },
))]
pub struct Contact {
    pub name: Option<String>,
    pub address: Option<Address>,
    pub contact_method: Option<ContactMethod>,
    pub phone: Option<String>,
    pub email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features
#[tool]
pub async fn json_schema_2020_12_tool(Args(contact): Args<Contact>) -> String {
    format!(
        "contact {} by {}",
        contact.name.as_deref().unwrap_or("(unnamed)"),
        match contact.contact_method {
            Some(ContactMethod::Phone) => "phone",
            Some(ContactMethod::Email) => "email",
            None => "any means",
        }
    )
}

// ---- server-stateless diagnostics ----------------------------------------------------------------

/// Needs the client's model: a client that did not declare `sampling` gets `-32021`, naming it.
#[tool]
pub async fn test_missing_capability(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .sample(CreateMessageParams::user_text("Say hello", 20))
        .await?;
    Ok(format!(
        "The model said: {}",
        answer.text().unwrap_or("(not text)")
    ))
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Nickname {
    /// What to call you.
    pub nickname: String,
}

/// Asks the user while the call is open: in the 2026-07-28 era the question goes out as an
/// `InputRequiredResult` on the response, never as a request of its own.
#[tool]
pub async fn test_streaming_elicitation(ctx: ToolContext) -> Result<String, ToolError> {
    ctx.progress(0.0, Some(1.0), Some("asking"));
    Ok(
        match ctx.elicit::<Nickname>("What should I call you?").await? {
            ElicitOutcome::Accept(Nickname { nickname }) => format!("Hello, {nickname}!"),
            _ => "Hello, stranger!".into(),
        },
    )
}

/// Logs at every level; the client gets only what it asked for (nothing, unless it set a level).
#[tool]
pub async fn test_logging_tool(ctx: ToolContext) -> &'static str {
    for level in LogLevel::ALL {
        ctx.log_as(
            level,
            Some("test_logging_tool"),
            format!("a {} message", level.as_str()),
        );
    }
    "logged"
}

// ---- http-custom-header-server-validation ------------------------------------------------------

/// Where to look something up: `region` travels in the `Mcp-Param-Region` header too (SEP-2243),
/// so a load balancer can route on it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RegionalQuery {
    /// The region to query.
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// What to look up.
    pub query: Option<String>,
}

/// Looks something up in one region.
#[tool]
pub async fn regional_lookup(Args(q): Args<RegionalQuery>) -> String {
    format!(
        "{} in {}: nothing found",
        q.query.as_deref().unwrap_or("everything"),
        q.region
    )
}
