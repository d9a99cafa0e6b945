//! Every form a resource takes: fixed and template, injected context and state, typed and
//! optional variables (completed with a fixed list and with a function), every return type, a
//! `list` function; with user types that shadow the
//! prelude's names, which the expansion must not use.

use mcp_tasks_runtime::resource::{Blob, ListedResource, Resource};
use mcp_tasks_runtime::{CompletionContext, Json, ResourceContents, Server, State, ToolContext, ToolError, resource};

#[allow(dead_code)]
struct Box;
#[allow(dead_code)]
struct Option;
#[allow(dead_code)]
struct Result;

struct Greeting(&'static str);

/// Fixed text.
#[resource(uri = "app://readme", title = "Read me", mime_type = "text/markdown", size = 7)]
async fn readme() -> &'static str {
    "# Hello"
}

/// Bytes.
#[resource(uri = "app://logo")]
async fn logo() -> Vec<u8> {
    vec![1, 2, 3]
}

/// A blob with context and state.
#[resource(uri = "app://state")]
async fn state(_ctx: ToolContext, greeting: State<Greeting>) -> Blob {
    Blob(greeting.0.as_bytes().to_vec())
}

/// Typed and optional variables, several operators.
#[resource(uri = "items://{id}{?lang}", list = "all_items")]
async fn item(
    #[complete(values = ["1", "2"])] id: u32,
    #[complete(with = complete_lang)] lang: std::option::Option<String>,
) -> Json<(u32, String)> {
    Json((id, lang.unwrap_or_default()))
}

/// A completion function may fail; it is told the variables already chosen.
async fn complete_lang(
    typed: String,
    context: CompletionContext,
) -> std::result::Result<Vec<&'static str>, ToolError> {
    let _ = context.get("id");
    Ok(["en", "fr"].into_iter().filter(|l| l.starts_with(&typed)).collect())
}

async fn all_items(_: ToolContext) -> Vec<ListedResource> {
    vec![ListedResource::new("items://1", "one")]
}

/// Several items, or an error.
#[resource(uri = "dirs://{+path}", name = "directory")]
async fn dir(path: String) -> std::result::Result<Vec<ResourceContents>, ToolError> {
    if path.is_empty() {
        return Err(ToolError::new("no path"));
    }
    Ok(vec![ResourceContents::text(format!("dirs://{path}/a"), "text/plain", "a")])
}

fn main() {
    assert_eq!(readme::INFO.size, Some(7));
    assert_eq!(readme::INFO.title, Some("Read me"));
    assert!(!logo::INFO.template);
    assert!(item::INFO.template);
    assert_eq!(item::COMPLETERS.len(), 2);
    assert_eq!(item::COMPLETERS[0].0, "id");
    assert!(readme::COMPLETERS.is_empty());
    assert_eq!(dir::INFO.name, "directory");
    let server = Server::builder("s", "1")
        .state(Greeting("hi"))
        .resource::<readme>()
        .resource::<logo>()
        .resource::<state>()
        .resource::<item>()
        .resource::<dir>()
        .build();
    assert!(server.is_ok());
    // Still an ordinary function.
    let _ = readme();
}
