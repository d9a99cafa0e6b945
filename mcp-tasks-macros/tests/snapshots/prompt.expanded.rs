/// Plans a trip.
#[allow(clippy::unused_async)]
async fn plan(
    ctx: ToolContext,
    city: String,
    start: Option<String>,
) -> Result<Vec<PromptMessage>, ToolError> {
    let _ = (ctx, start);
    Ok(vec![PromptMessage::user(city)])
}
/// MCP prompt descriptor for [`plan`](fn@plan).
#[allow(non_camel_case_types)]
struct plan {}
#[allow(non_upper_case_globals, unused_qualifications)]
const _: () = {
    use ::mcp_tasks_runtime::__private as __mcp_tasks;
    const __mcp_tasks_arg0: __mcp_tasks::PromptArg<ToolContext> = __mcp_tasks::prompt_arg::<
        ToolContext,
        _,
    >();
    const __mcp_tasks_arg1: __mcp_tasks::PromptArg<String> = __mcp_tasks::prompt_arg::<
        String,
        _,
    >();
    const _: () = __mcp_tasks::completable::<String>();
    const __mcp_tasks_arg2: __mcp_tasks::PromptArg<Option<String>> = __mcp_tasks::prompt_arg::<
        Option<String>,
        _,
    >();
    const _: () = __mcp_tasks::completable::<Option<String>>();
    const __mcp_tasks_output: __mcp_tasks::PromptOutput<
        Result<Vec<PromptMessage>, ToolError>,
    > = __mcp_tasks::prompt_output::<Result<Vec<PromptMessage>, ToolError>, _>();
    #[automatically_derived]
    impl __mcp_tasks::Prompt for plan {
        const INFO: __mcp_tasks::PromptInfo = __mcp_tasks::PromptInfo {
            name: "plan",
            title: __mcp_tasks::None,
            description: __mcp_tasks::Some("Plans a trip."),
            scopes: &[],
        };
        fn describe(prompt: &mut __mcp_tasks::PromptBuilder) {
            (__mcp_tasks_arg0.describe)(prompt, "ctx", __mcp_tasks::None);
            (__mcp_tasks_arg1.describe)(prompt, "city", __mcp_tasks::Some("Where to."));
            prompt.complete("city", __mcp_tasks::Completer::Values(&["Paris", "Rome"]));
            (__mcp_tasks_arg2.describe)(prompt, "startDate", __mcp_tasks::None);
            prompt
                .complete(
                    "startDate",
                    __mcp_tasks::Completer::With(|value, context| __mcp_tasks::complete_with(
                        dates(value, context),
                    )),
                );
        }
        fn get(
            ctx: __mcp_tasks::ToolContext,
            mut args: __mcp_tasks::PromptArguments,
        ) -> __mcp_tasks::Result<__mcp_tasks::PromptFuture, __mcp_tasks::ArgumentError> {
            let __mcp_tasks_a0 = (__mcp_tasks_arg0.extract)(&ctx, &mut args, "ctx")?;
            let __mcp_tasks_a1 = (__mcp_tasks_arg1.extract)(&ctx, &mut args, "city")?;
            let __mcp_tasks_a2 = (__mcp_tasks_arg2
                .extract)(&ctx, &mut args, "startDate")?;
            __mcp_tasks::Ok(
                __mcp_tasks::run_prompt(
                    plan(__mcp_tasks_a0, __mcp_tasks_a1, __mcp_tasks_a2),
                    __mcp_tasks_output,
                ),
            )
        }
    }
};
