/// Crawls a site.
#[allow(clippy::unused_async)]
pub async fn crawl(ctx: ToolContext, Args(req): Args<CrawlRequest>) -> Json<Report> {
    Json(run(ctx, req).await)
}
/// MCP tool descriptor for [`crawl`](fn@crawl).
#[allow(non_camel_case_types)]
pub struct crawl {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::my_facade::rt::__private as __mcp_tasks;
    const __mcp_tasks_arg0: __mcp_tasks::Param<ToolContext> = __mcp_tasks::param::<
        ToolContext,
        _,
    >();
    const __mcp_tasks_arg1: __mcp_tasks::Param<Args<CrawlRequest>> = __mcp_tasks::param::<
        Args<CrawlRequest>,
        _,
    >();
    const __mcp_tasks_output: __mcp_tasks::Output<Json<Report>> = __mcp_tasks::output::<
        Json<Report>,
        _,
    >();
    #[automatically_derived]
    impl __mcp_tasks::Tool for crawl {
        const INFO: __mcp_tasks::ToolInfo = __mcp_tasks::ToolInfo {
            name: "crawl.site",
            title: __mcp_tasks::Some("Crawl a site"),
            description: __mcp_tasks::Some("Crawls a site."),
            task_support: __mcp_tasks::TaskSupport::Required,
            ttl: __mcp_tasks::Some(__mcp_tasks::millis(3600000)),
            poll_interval: __mcp_tasks::Some(__mcp_tasks::millis(2000)),
            defer_task: false,
            durable: false,
            promote_after: __mcp_tasks::None,
            ui: __mcp_tasks::None,
            scopes: &[],
            annotations: __mcp_tasks::ToolAnnotations {
                title: __mcp_tasks::Some("Crawl a site"),
                read_only_hint: __mcp_tasks::Some(true),
                destructive_hint: __mcp_tasks::None,
                idempotent_hint: __mcp_tasks::None,
                open_world_hint: __mcp_tasks::Some(true),
            },
        };
        fn describe(params: &mut __mcp_tasks::ParamsBuilder) {
            (__mcp_tasks_arg0.describe)(params, "ctx", __mcp_tasks::None);
            (__mcp_tasks_arg1.describe)(params, "arg1", __mcp_tasks::None);
        }
        fn output_schema() -> __mcp_tasks::Option<__mcp_tasks::serde_json::Value> {
            (__mcp_tasks_output.schema)()
        }
        fn call(
            ctx: __mcp_tasks::ToolContext,
            mut args: __mcp_tasks::Arguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::ToolFuture, __mcp_tasks::ArgumentError> {
            let __mcp_tasks_a0 = (__mcp_tasks_arg0.extract)(&ctx, &mut args, "ctx")?;
            let __mcp_tasks_a1 = (__mcp_tasks_arg1.extract)(&ctx, &mut args, "arg1")?;
            __mcp_tasks::Ok(
                __mcp_tasks::run_tool(
                    crawl(__mcp_tasks_a0, __mcp_tasks_a1),
                    __mcp_tasks_output,
                ),
            )
        }
    }
};
