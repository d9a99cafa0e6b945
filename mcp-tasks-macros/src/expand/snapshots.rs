//! The expansion of representative tools, pretty-printed and checked against
//! `tests/snapshots/*.expanded.rs`. Refresh with `UPDATE_EXPECT=1 cargo test -p mcp-tasks-macros`.

use expect_test::{ExpectFile, expect_file};
use proc_macro2::TokenStream;
use quote::quote;

fn check(attr: TokenStream, item: TokenStream, expected: &ExpectFile) {
    let out = super::tool(attr, item);
    let file: syn::File = syn::parse2(out).expect("the expansion parses as a file");
    expected.assert_eq(&prettyplease::unparse(&file));
}

/// A context, a documented parameter and an optional one.
#[test]
fn greet() {
    check(
        quote!(),
        quote! {
            /// Greets someone.
            async fn greet(
                ctx: ToolContext,
                /// Who to greet.
                name: String,
                times: Option<u32>,
            ) -> Result<String, ToolError> {
                let _ = ctx.is_cancelled();
                Ok(format!("Hello, {name}!").repeat(times.unwrap_or(1) as usize))
            }
        },
        &expect_file!["../../tests/snapshots/greet.expanded.rs"],
    );
}

#[test]
fn task_tool_with_every_key() {
    check(
        quote!(
            name = "crawl.site",
            title = "Crawl a site",
            task_support = "required",
            ttl = "1h",
            poll_interval = "2s",
            annotations(read_only, open_world = true),
            crate = "::my_facade::rt"
        ),
        quote! {
            /// Crawls a site.
            pub async fn crawl(ctx: ToolContext, Args(req): Args<CrawlRequest>) -> Json<Report> {
                Json(run(ctx, req).await)
            }
        },
        &expect_file!["../../tests/snapshots/crawl.expanded.rs"],
    );
}

/// Promotion: an optional tool that becomes a task when an inline call runs long.
#[test]
fn promoted_tool() {
    check(
        quote!(task_support = "optional", promote_after = "1m30s"),
        quote! {
            /// Builds the report.
            async fn report(month: String) -> String {
                month
            }
        },
        &expect_file!["../../tests/snapshots/report.expanded.rs"],
    );
}

/// An MCP Apps tool: its UI resource, called only from the app.
#[test]
fn app_tool() {
    check(
        quote!(ui = "ui://weather/view.html", ui_visibility = "app"),
        quote! {
            /// Refreshes the forecast the weather app shows.
            async fn refresh(city: String) -> String {
                city
            }
        },
        &expect_file!["../../tests/snapshots/refresh.expanded.rs"],
    );
}

#[test]
fn no_parameters_no_return_type() {
    check(
        quote!(),
        quote!(
            pub(crate) async fn ping() {}
        ),
        &expect_file!["../../tests/snapshots/ping.expanded.rs"],
    );
}

#[test]
fn error_emits_the_function_a_stub_and_the_error() {
    check(
        quote!(task_support = "optinal"),
        quote! {
            async fn search(
                /// Stripped: rustc rejects doc comments on parameters.
                query: String,
            ) -> String {
                query
            }
        },
        &expect_file!["../../tests/snapshots/error.expanded.rs"],
    );
}
