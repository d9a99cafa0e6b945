//! What `#[tool]` expands to, written by hand: keeps the `__private` contract honest even without
#![allow(unused_qualifications)]
//! the macro.

use mcp_tasks_runtime::{ToolContext, ToolError};

/// Greets someone.
async fn greet(ctx: ToolContext, name: String, times: Option<u32>) -> Result<String, ToolError> {
    let _ = ctx.is_cancelled();
    Ok(format!("Hello, {name}!").repeat(times.unwrap_or(1) as usize))
}

#[allow(non_camel_case_types)]
#[doc = "MCP tool descriptor for [`greet`]."]
struct greet {}

const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const _: () = __mcp_tasks::assert_param::<ToolContext, _>();
    const _: () = __mcp_tasks::assert_param::<String, _>();
    const _: () = __mcp_tasks::assert_param::<Option<u32>, _>();
    const _: () = __mcp_tasks::assert_output::<Result<String, ToolError>, _>();

    #[automatically_derived]
    impl __mcp_tasks::Tool for greet {
        const INFO: __mcp_tasks::ToolInfo = __mcp_tasks::ToolInfo {
            name: "greet",
            title: __mcp_tasks::None,
            description: __mcp_tasks::Some("Greets someone."),
            task_support: __mcp_tasks::TaskSupport::Forbidden,
            ttl: __mcp_tasks::None,
            poll_interval: __mcp_tasks::None,
            defer_task: false,
            annotations: __mcp_tasks::ToolAnnotations {
                title: __mcp_tasks::None,
                read_only_hint: __mcp_tasks::None,
                destructive_hint: __mcp_tasks::None,
                idempotent_hint: __mcp_tasks::None,
                open_world_hint: __mcp_tasks::None,
            },
        };
        fn describe(params: &mut __mcp_tasks::ParamsBuilder) {
            __mcp_tasks::describe::<ToolContext, _>(params, "ctx", __mcp_tasks::None);
            __mcp_tasks::describe::<String, _>(params, "name", __mcp_tasks::Some("Who to greet."));
            __mcp_tasks::describe::<Option<u32>, _>(params, "times", __mcp_tasks::None);
        }
        fn output_schema() -> __mcp_tasks::Option<__mcp_tasks::serde_json::Value> {
            __mcp_tasks::output_schema::<Result<String, ToolError>, _>()
        }
        fn call(
            ctx: __mcp_tasks::ToolContext,
            mut args: __mcp_tasks::Arguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::ToolFuture, __mcp_tasks::ArgumentError> {
            let a0 = __mcp_tasks::extract::<ToolContext, _>(&ctx, &mut args, "ctx")?;
            let a1 = __mcp_tasks::extract::<String, _>(&ctx, &mut args, "name")?;
            let a2 = __mcp_tasks::extract::<Option<u32>, _>(&ctx, &mut args, "times")?;
            __mcp_tasks::Ok(__mcp_tasks::run(greet(a0, a1, a2)))
        }
    }
};

#[test]
fn hand_expanded_tool_has_schema() {
    let reg = mcp_tasks_runtime::tool::RegisteredTool::of::<greet>();
    let schema = &*reg.input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
    assert_eq!(schema["required"], serde_json::json!(["name"]));
    assert!(schema["properties"].get("ctx").is_none());
    assert!(reg.output_schema.is_none());
}
