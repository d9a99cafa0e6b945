// Prompts: every parameter kind (arguments, optional arguments, renamed ones, the context,
// state), both completion forms, each return form, registration, and a direct call; with the
// prelude names shadowed, as the tool's hygiene case does.
#![deny(missing_docs, unused_qualifications)]
//! Prompt forms.

#[allow(dead_code)]
struct Box;
#[allow(dead_code)]
struct Option;
#[allow(dead_code)]
type Result = ();

use mcp_tasks_runtime::{
    CompletionContext, Content, GetPromptResult, Prompt, PromptMessage, Server, State,
    ToolContext, ToolError, prompt,
};

struct Languages(Vec<&'static str>);

/// Languages that start with what was typed.
async fn languages(value: String, context: CompletionContext) -> Vec<String> {
    let known = context.state::<Languages>().map(|l| l.0.clone()).unwrap_or_default();
    known.into_iter().filter(|l| l.starts_with(&value)).map(String::from).collect()
}

/// Reviews code.
#[prompt(title = "Review")]
async fn review(
    ctx: ToolContext,
    /// The code.
    code: String,
    /// The language.
    #[complete(with = languages)]
    language: core::option::Option<String>,
    #[arg(rename = "styleGuide")]
    #[complete(values = ["google", "pep8"])]
    style_guide: core::option::Option<String>,
    langs: State<Languages>,
) -> core::result::Result<Vec<PromptMessage>, ToolError> {
    let _ = (ctx, langs.0.len(), style_guide);
    Ok(vec![
        PromptMessage::user(format!("{} in {}", code, language.unwrap_or_default())),
        PromptMessage::assistant(Content::text("Sure.")),
    ])
}

/// A plain string.
#[prompt(name = "hello-world")]
async fn hello() -> String {
    "hello".into()
}

/// With a description.
#[prompt]
async fn described() -> GetPromptResult {
    GetPromptResult::new([PromptMessage::user("x")]).with_description("d")
}

fn main() {
    assert_eq!(review::INFO.title, Some("Review"));
    assert_eq!(hello::INFO.name, "hello-world");
    let server = Server::builder("s", "0")
        .state(Languages(vec!["rust"]))
        .prompt::<review>()
        .prompt::<hello>()
        .prompt::<described>();
    assert!(server.build().is_ok());
    // A prompt that takes state nobody registered stops start-up.
    let err = Server::builder("s", "0").prompt::<review>().build().unwrap_err();
    assert!(err.to_string().contains("prompt `review` takes `State<"), "{err}");
    // The function is still callable as written.
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(hello()), "hello");
}
