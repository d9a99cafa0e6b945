/// One note, by title.
#[allow(clippy::unused_async)]
pub async fn note(
    notes: State<Notes>,
    title: String,
    rev: Option<u32>,
) -> Result<String, ToolError> {
    notes.get(&title, rev)
}
/// MCP resource descriptor for [`note`](fn@note).
#[allow(non_camel_case_types)]
pub struct note {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const __mcp_tasks_arg0: __mcp_tasks::ResourceParam<State<Notes>> = __mcp_tasks::resource_injected::<
        State<Notes>,
        _,
    >();
    const __mcp_tasks_arg1: __mcp_tasks::ResourceParam<String> = __mcp_tasks::resource_var::<
        String,
    >();
    const __mcp_tasks_arg2: __mcp_tasks::ResourceParam<Option<u32>> = __mcp_tasks::resource_var::<
        Option<u32>,
    >();
    const __mcp_tasks_output: __mcp_tasks::ResourceOutput<Result<String, ToolError>> = __mcp_tasks::resource_output::<
        Result<String, ToolError>,
    >();
    #[automatically_derived]
    impl __mcp_tasks::Resource for note {
        const INFO: __mcp_tasks::ResourceInfo = __mcp_tasks::ResourceInfo {
            uri: "notes://{title}{?rev}",
            template: true,
            name: "note",
            title: __mcp_tasks::None,
            description: __mcp_tasks::Some("One note, by title."),
            mime_type: __mcp_tasks::Some("text/markdown"),
            size: __mcp_tasks::None,
            scopes: &[],
        };
        const COMPLETERS: &'static [(&'static str, __mcp_tasks::Completer)] = &[
            (
                "title",
                __mcp_tasks::Completer::With(|value, context| __mcp_tasks::complete_with(
                    complete_title(value, context),
                )),
            ),
            ("rev", __mcp_tasks::Completer::Values(&["1", "2"])),
        ];
        fn describe(params: &mut __mcp_tasks::ParamsBuilder) {
            (__mcp_tasks_arg0.describe)(params);
            (__mcp_tasks_arg1.describe)(params);
            (__mcp_tasks_arg2.describe)(params);
        }
        fn read(
            ctx: __mcp_tasks::ToolContext,
            request: __mcp_tasks::ResourceRequest,
        ) -> __mcp_tasks::Result<__mcp_tasks::ResourceFuture, __mcp_tasks::RpcError> {
            let __mcp_tasks_a0 = (__mcp_tasks_arg0.extract)(&ctx, &request, "notes")?;
            let __mcp_tasks_a1 = (__mcp_tasks_arg1.extract)(&ctx, &request, "title")?;
            let __mcp_tasks_a2 = (__mcp_tasks_arg2.extract)(&ctx, &request, "rev")?;
            __mcp_tasks::Ok(
                __mcp_tasks::run_resource(
                    note(__mcp_tasks_a0, __mcp_tasks_a1, __mcp_tasks_a2),
                    __mcp_tasks_output,
                    request,
                    <Self as __mcp_tasks::Resource>::INFO.mime_type,
                ),
            )
        }
        fn list(
            ctx: __mcp_tasks::ToolContext,
        ) -> __mcp_tasks::Option<__mcp_tasks::ListFuture> {
            __mcp_tasks::run_list(all_notes(ctx))
        }
    }
};
