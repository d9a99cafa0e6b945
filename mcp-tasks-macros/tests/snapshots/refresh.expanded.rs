/// Refreshes the forecast the weather app shows.
#[allow(clippy::unused_async)]
async fn refresh(city: String) -> String {
    city
}
/// MCP tool descriptor for [`refresh`](fn@refresh).
#[allow(non_camel_case_types)]
struct refresh {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const __mcp_tasks_arg0: __mcp_tasks::Param<String> = __mcp_tasks::param::<
        String,
        _,
    >();
    const __mcp_tasks_output: __mcp_tasks::Output<String> = __mcp_tasks::output::<
        String,
        _,
    >();
    #[automatically_derived]
    impl __mcp_tasks::Tool for refresh {
        const INFO: __mcp_tasks::ToolInfo = __mcp_tasks::ToolInfo {
            name: "refresh",
            title: __mcp_tasks::None,
            description: __mcp_tasks::Some(
                "Refreshes the forecast the weather app shows.",
            ),
            task_support: __mcp_tasks::TaskSupport::Forbidden,
            ttl: __mcp_tasks::None,
            poll_interval: __mcp_tasks::None,
            defer_task: false,
            durable: false,
            promote_after: __mcp_tasks::None,
            ui: __mcp_tasks::Some(__mcp_tasks::ToolUi {
                resource_uri: "ui://weather/view.html",
                visibility: __mcp_tasks::UiVisibility::App,
            }),
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
            (__mcp_tasks_arg0.describe)(params, "city", __mcp_tasks::None);
        }
        fn output_schema() -> __mcp_tasks::Option<__mcp_tasks::serde_json::Value> {
            (__mcp_tasks_output.schema)()
        }
        fn call(
            ctx: __mcp_tasks::ToolContext,
            mut args: __mcp_tasks::Arguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::ToolFuture, __mcp_tasks::ArgumentError> {
            let __mcp_tasks_a0 = (__mcp_tasks_arg0.extract)(&ctx, &mut args, "city")?;
            __mcp_tasks::Ok(
                __mcp_tasks::run_tool(refresh(__mcp_tasks_a0), __mcp_tasks_output),
            )
        }
    }
};
