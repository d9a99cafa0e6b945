// Descriptions come from doc comments (the tool's and each parameter's); `description`, `title`
// and `annotations(...)` override or add to them.
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::tool;

///
/// Searches the docs.
///
/// Matches are ranked:
///   best first.
///
#[tool]
async fn search(
    /// What to look for.
    query: String,
    /// How many results,
    /// at most.
    limit: Option<u32>,
    #[allow(unused_variables)] unused: Option<bool>,
) -> Vec<String> {
    vec![query; limit.unwrap_or(1) as usize]
}

/** Block comment docs
    are dedented. */
#[tool(
    name = "block.docs",
    title = "Block docs",
    annotations(read_only, destructive = false, idempotent = true, open_world = false)
)]
async fn block_docs() {}

/// Not this: the attribute wins.
#[tool(description = "From the attribute.")]
async fn overridden() {}

#[tool]
async fn undocumented() {}

fn main() {
    let search = RegisteredTool::of::<search>();
    assert_eq!(
        search.info.description,
        Some("Searches the docs.\n\nMatches are ranked:\n  best first.")
    );
    let props = &search.input_schema["properties"];
    assert_eq!(props["query"]["description"], "What to look for.");
    assert_eq!(props["limit"]["description"], "How many results,\nat most.");
    assert!(props["unused"].get("description").is_none());

    let block = RegisteredTool::of::<block_docs>();
    assert_eq!(block.info.name, "block.docs");
    assert_eq!(block.info.description, Some("Block comment docs\nare dedented."));
    assert_eq!(block.info.title, Some("Block docs"));
    let hints = block.info.annotations;
    assert_eq!(hints.title, Some("Block docs"));
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.destructive_hint, Some(false));
    assert_eq!(hints.idempotent_hint, Some(true));
    assert_eq!(hints.open_world_hint, Some(false));

    assert_eq!(RegisteredTool::of::<overridden>().info.description, Some("From the attribute."));
    assert_eq!(RegisteredTool::of::<undocumented>().info.description, None);
}
