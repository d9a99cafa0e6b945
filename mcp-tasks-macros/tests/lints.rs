//! The expansion under the strictest lints a user might turn on, clippy's included: `cargo clippy
//! --all-targets` compiles this file, so a lint the expansion trips fails the workspace's clippy run.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub)]
#![deny(clippy::all, clippy::pedantic, clippy::nursery, clippy::cargo)]
#![allow(clippy::cargo_common_metadata, clippy::multiple_crate_versions)]

use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{Args, TaskSupport, ToolContext, ToolError, tool};

/// Tools with every parameter and return form.
pub mod tools {
    use super::{Args, ToolContext, ToolError, tool};

    /// The arguments of [`search()`].
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub struct Query {
        /// What to look for.
        pub text: String,
    }

    /// Searches.
    ///
    /// # Errors
    /// Never; the signature shows the form.
    #[tool(task_support = "optional", ttl = "10m", poll_interval = "1s")]
    pub async fn search(ctx: ToolContext, Args(query): Args<Query>) -> Result<String, ToolError> {
        let _ = ctx.task_id();
        Ok(query.text)
    }

    /// Adds.
    #[tool(annotations(read_only, idempotent))]
    pub async fn add(
        /// Left.
        a: i64,
        /// Right.
        b: Option<i64>,
    ) -> i64 {
        a + b.unwrap_or(0)
    }

    /// Nothing.
    #[tool]
    pub async fn nothing() {}
}

#[test]
fn lint_clean_tools_work() {
    let search = RegisteredTool::of::<tools::search>();
    assert_eq!(search.info.task_support, TaskSupport::Optional);
    assert_eq!(RegisteredTool::of::<tools::add>().info.name, "add");
    assert_eq!(
        RegisteredTool::of::<tools::nothing>().info.description,
        Some("Nothing.")
    );
}
