#[allow(clippy::unused_async)]
pub(crate) async fn ping() {}
/// MCP tool descriptor for [`ping`](fn@ping).
#[allow(non_camel_case_types)]
pub(crate) struct ping {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const __mcp_tasks_output: __mcp_tasks::Output<()> = __mcp_tasks::output::<(), _>();
    #[automatically_derived]
    impl __mcp_tasks::Tool for ping {
        const INFO: __mcp_tasks::ToolInfo = __mcp_tasks::ToolInfo {
            name: "ping",
            title: __mcp_tasks::None,
            description: __mcp_tasks::None,
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
        fn describe(_: &mut __mcp_tasks::ParamsBuilder) {}
        fn output_schema() -> __mcp_tasks::Option<__mcp_tasks::serde_json::Value> {
            (__mcp_tasks_output.schema)()
        }
        fn call(
            _: __mcp_tasks::ToolContext,
            _: __mcp_tasks::Arguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::ToolFuture, __mcp_tasks::ArgumentError> {
            __mcp_tasks::Ok(__mcp_tasks::run_tool(ping(), __mcp_tasks_output))
        }
    }
};
