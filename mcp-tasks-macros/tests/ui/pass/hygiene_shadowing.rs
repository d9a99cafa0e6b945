// The expansion reaches the runtime only through absolute paths: a user crate that shadows the
// prelude, `serde`, and even a module named `mcp_tasks_runtime` changes nothing.
#![allow(dead_code, non_camel_case_types, unused_imports)]

mod mcp_tasks_runtime {}
mod serde {}
mod serde_json {}
mod schemars {}
mod core {}
mod std {}
struct Box;
struct Option;
struct Some;
struct None;
struct Ok;
struct Err;
struct Send;
struct Sync;
struct Sized;
struct Future;
struct Vec;
struct Default;
struct From;
struct Into;
type Result = ();
trait Tool {}
trait ToolParam {}
struct ToolContext;
struct ToolInfo;
struct Duration;
fn millis() {}
fn run_tool() {}
fn param() {}
fn output() {}
const INFO: () = ();

mod tools {
    use ::mcp_tasks_runtime::tool;

    struct Box;
    type Result<T> = ::core::result::Result<T, ()>;

    /// Waits, then answers.
    #[tool(task_support = "optional", ttl = "10m", poll_interval = "2s")]
    pub async fn wait(
        ctx: ::mcp_tasks_runtime::ToolContext,
        /// How long.
        seconds: ::core::option::Option<u64>,
    ) -> ::core::result::Result<::std::string::String, ::mcp_tasks_runtime::ToolError> {
        let _ = (ctx, seconds);
        ::core::result::Result::Ok(::std::string::String::from("done"))
    }
}

fn main() {
    let tool = ::mcp_tasks_runtime::__internal::RegisteredTool::of::<tools::wait>();
    ::std::assert_eq!(tool.info.ttl, ::core::option::Option::Some(::std::time::Duration::from_secs(600)));
    ::std::assert_eq!(tool.info.poll_interval, ::core::option::Option::Some(::std::time::Duration::from_secs(2)));
    ::std::assert_eq!(tool.input_schema["properties"]["seconds"]["description"], "How long.");
}
