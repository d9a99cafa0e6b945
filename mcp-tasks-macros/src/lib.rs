//! Internal: the `#[tool]` attribute of mcp-tasks. Depend on `mcp-tasks-runtime`, which re-exports it.

use proc_macro::TokenStream;

/// Turns an `async fn` into an MCP tool. See `mcp_tasks_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
