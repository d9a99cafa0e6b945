// A crate that denies the strict rustc lints stays green: generated items carry docs and the
// allowances they need. (clippy::pedantic is checked on mcp-tasks-macros/tests/lints.rs, which
// `cargo clippy --all-targets` sees.)
#![deny(warnings, missing_docs, unused_qualifications, unused_results, unreachable_pub)]
#![deny(missing_debug_implementations, trivial_casts, trivial_numeric_casts)]
#![deny(unused_extern_crates, unused_import_braces, unused_lifetimes, variant_size_differences)]
#![deny(non_ascii_idents, elided_lifetimes_in_paths, let_underscore_drop, single_use_lifetimes)]
//! Lints.

use mcp_tasks_runtime::{ToolContext, ToolError, tool};

/// Public tools need no docs of their own for the descriptor.
pub mod tools {
    use super::{ToolContext, ToolError, tool};

    /// A public tool.
    #[tool(task_support = "optional", ttl = "1h", annotations(read_only))]
    pub async fn public_tool(ctx: ToolContext, r#type: String) -> Result<String, ToolError> {
        let _ = ctx.task_id();
        Ok(r#type)
    }

    /// A crate-visible tool with no parameters.
    #[tool]
    pub(crate) async fn crate_tool() {}
}

/// A private tool: never registered, still no warning.
#[tool]
async fn private_tool(_: ToolContext) {}

fn main() {
    let tool = mcp_tasks_runtime::__internal::RegisteredTool::of::<tools::public_tool>();
    assert_eq!(tool.info.name, "public_tool");
    assert!(tool.input_schema["properties"].get("type").is_some());
    drop(mcp_tasks_runtime::__internal::RegisteredTool::of::<tools::crate_tool>());
}
