//! Resources: the fixtures of the conformance suite's `resources-*` scenarios (and the resource
//! part of `caching`), and the notes of the example server: a fixed index, a template that reads
//! one note (its `title` completes from the notes there are), and tools that change a note and tell its subscribers.

use mcp_tasks_runtime::resource::{Blob, ListedResource};
use mcp_tasks_runtime::{
    CompletionContext, Json, ResourceNotifier, State, ToolContext, ToolError, resource, tool,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

// ---- the conformance suite's fixtures ------------------------------------------------------------

/// A static text resource (`resources-read-text`).
#[resource(uri = "test://static-text", mime_type = "text/plain")]
pub async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource, a 1x1 red PNG (`resources-read-binary`).
#[resource(uri = "test://static-binary", mime_type = "image/png")]
pub async fn static_binary() -> Blob {
    Blob(crate::everything::RED_PIXEL_PNG.to_vec())
}

/// A resource whose changes a client can subscribe to (`resources-subscribe`).
#[resource(uri = "test://watched-resource", mime_type = "text/plain")]
pub async fn watched_resource() -> &'static str {
    "This resource is watched."
}

/// Data by id (`resources-templates-read`).
#[resource(uri = "test://template/{id}/data", mime_type = "application/json")]
pub async fn template_data(id: String) -> Json<serde_json::Value> {
    Json(json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }))
}

// ---- the example server's notes ----------------------------------------------------------------

/// The notes of the example server, by title.
#[derive(Debug, Default)]
pub struct Notes(Mutex<BTreeMap<String, String>>);

impl Notes {
    /// Some notes to start with.
    pub fn seeded() -> Self {
        let notes = Notes::default();
        notes.put("welcome", "Read me with resources/read notes://welcome.");
        notes
    }

    fn put(&self, title: &str, text: &str) {
        let mut notes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        notes.insert(title.to_owned(), text.to_owned());
    }

    fn get(&self, title: &str) -> Option<String> {
        let notes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        notes.get(title).cloned()
    }

    fn titles(&self) -> Vec<String> {
        let notes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        notes.keys().cloned().collect()
    }
}

/// The titles of all notes, as JSON.
#[resource(uri = "notes://index", name = "note-index", title = "All notes")]
pub async fn note_index(notes: State<Notes>) -> Json<Vec<String>> {
    Json(notes.titles())
}

/// One note, by title.
#[resource(
    uri = "notes://{title}",
    mime_type = "text/markdown",
    list = "list_notes"
)]
pub async fn note(
    notes: State<Notes>,
    #[complete(with = complete_title)] title: String,
) -> Result<String, ToolError> {
    notes
        .get(&title)
        .ok_or_else(|| resource::resource_not_found(&format!("notes://{title}")).into())
}

/// The titles of the notes that start with what was typed (`completion/complete` for the
/// `title` of `notes://{title}`).
pub async fn complete_title(typed: String, context: CompletionContext) -> Vec<String> {
    let Some(notes) = context.state::<Notes>() else {
        return Vec::new();
    };
    notes
        .titles()
        .into_iter()
        .filter(|title| title.starts_with(&typed))
        .collect()
}

/// Every note, for `resources/list`.
pub async fn list_notes(ctx: ToolContext) -> Vec<ListedResource> {
    let Some(notes) = ctx.state::<Notes>() else {
        return Vec::new();
    };
    notes
        .titles()
        .into_iter()
        .map(|title| ListedResource::new(format!("notes://{title}"), title))
        .collect()
}

/// Writes a note (creating it if new), and tells the clients subscribed to it.
#[tool]
pub async fn write_note(
    notes: State<Notes>,
    notifier: State<ResourceNotifier>,
    /// The note's title.
    title: String,
    /// Its new text.
    text: String,
) -> String {
    let new = notes.get(&title).is_none();
    notes.put(&title, &text);
    notifier.updated(format!("notes://{title}"));
    if new {
        notifier.list_changed();
    }
    format!("wrote notes://{title}")
}

/// Rewrites a note slowly, as a task when the client runs tasks: after `delay_ms` the note
/// changes and its subscribers hear of it while the task finishes.
#[tool(task_support = "optional")]
pub async fn revise_note(
    notes: State<Notes>,
    notifier: State<ResourceNotifier>,
    /// The note's title.
    title: String,
    /// Its new text.
    text: String,
    /// How long the revision takes, in milliseconds.
    delay_ms: Option<u64>,
) -> String {
    tokio::time::sleep(Duration::from_millis(delay_ms.unwrap_or(100))).await;
    notes.put(&title, &text);
    notifier.updated(format!("notes://{title}"));
    format!("revised notes://{title}")
}

/// Exports every note as one Markdown document (and their titles as JSON), published as the
/// task's outputs: the result links to them, and the client reads them with `resources/read`
/// (`task://{taskId}/notes.md`, `task://{taskId}/titles.json`). Inline, the documents are
/// embedded in the result instead.
#[tool(task_support = "optional", poll_interval = "100ms")]
pub async fn export_notes(
    ctx: ToolContext,
    notes: State<Notes>,
) -> Result<mcp_tasks_runtime::CallToolResult, ToolError> {
    ctx.status("exporting");
    let titles = notes.titles();
    let mut document = String::from("# Notes\n");
    for title in &titles {
        let text = notes.get(title).unwrap_or_default();
        document.push_str(&format!("\n## {title}\n\n{text}\n"));
    }
    let markdown = ctx
        .publish_text("notes.md", "text/markdown", document)
        .await?;
    let json = serde_json::to_vec(&titles).map_err(|e| ToolError::internal(e.to_string()))?;
    let listing = ctx
        .publish_blob("titles.json", "application/json", json)
        .await?;
    Ok(mcp_tasks_runtime::CallToolResult::from_content(vec![
        mcp_tasks_runtime::Content::text(format!("Exported {} notes.", titles.len())),
        markdown,
        listing,
    ]))
}
