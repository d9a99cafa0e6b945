/// Greets someone.
#[allow(clippy::unused_async)]
async fn greet(
    ctx: ToolContext,
    name: String,
    times: Option<u32>,
) -> Result<String, ToolError> {
    let _ = ctx.is_cancelled();
    Ok(format!("Hello, {name}!").repeat(times.unwrap_or(1) as usize))
}
/// MCP tool descriptor for [`greet`](fn@greet).
#[allow(non_camel_case_types)]
struct greet {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const __mcp_tasks_arg0: __mcp_tasks::Param<ToolContext> = __mcp_tasks::param::<
        ToolContext,
        _,
    >();
    const __mcp_tasks_arg1: __mcp_tasks::Param<String> = __mcp_tasks::param::<
        String,
        _,
    >();
    const __mcp_tasks_arg2: __mcp_tasks::Param<Option<u32>> = __mcp_tasks::param::<
        Option<u32>,
        _,
    >();
    const __mcp_tasks_output: __mcp_tasks::Output<Result<String, ToolError>> = __mcp_tasks::output::<
        Result<String, ToolError>,
        _,
    >();
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
            durable: false,
            promote_after: __mcp_tasks::None,
            ui: __mcp_tasks::None,
            scopes: &[],
            annotations: __mcp_tasks::ToolAnnotations {
                title: __mcp_tasks::None,
                read_only_hint: __mcp_tasks::None,
                destructive_hint: __mcp_tasks::None,
                idempotent_hint: __mcp_tasks::None,
                open_world_hint: __mcp_tasks::None,
            },
        };
        fn describe(params: &mut __mcp_tasks::ParamsBuilder) {
            (__mcp_tasks_arg0.describe)(params, "ctx", __mcp_tasks::None);
            (__mcp_tasks_arg1
                .describe)(params, "name", __mcp_tasks::Some("Who to greet."));
            (__mcp_tasks_arg2.describe)(params, "times", __mcp_tasks::None);
        }
        fn output_schema() -> __mcp_tasks::Option<__mcp_tasks::serde_json::Value> {
            (__mcp_tasks_output.schema)()
        }
        fn call(
            ctx: __mcp_tasks::ToolContext,
            mut args: __mcp_tasks::Arguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::ToolFuture, __mcp_tasks::ArgumentError> {
            let __mcp_tasks_a0 = (__mcp_tasks_arg0.extract)(&ctx, &mut args, "ctx")?;
            let __mcp_tasks_a1 = (__mcp_tasks_arg1.extract)(&ctx, &mut args, "name")?;
            let __mcp_tasks_a2 = (__mcp_tasks_arg2.extract)(&ctx, &mut args, "times")?;
            __mcp_tasks::Ok(
                __mcp_tasks::run_tool(
                    greet(__mcp_tasks_a0, __mcp_tasks_a1, __mcp_tasks_a2),
                    __mcp_tasks_output,
                ),
            )
        }
    }
};
