//! The dual-path decision of a `tools/call`, as data: [`plan`] reads what the tool declares, the
//! era, what the client declared and what the request asks, and returns a [`CallPlan`] (run
//! inline, maybe becoming a task; run as a task; or refuse with a precise error). It is a pure
//! function, so the whole `task_support` table of DESIGN.md (both eras, every row) and the order
//! of the promotion thresholds are checked in one place, by the tests below. `dispatch.rs` carries
//! the plan out: a task goes to the task engine (`TaskEngine::launch`), an inline call runs under
//! MRTR (modern) or with plain server-to-client requests (legacy), and one that may become a task
//! part-way hands its running future to the engine when it does.

use crate::protocol::Era;
use crate::protocol::TASKS_EXTENSION;
use crate::protocol::jsonrpc::RpcError;
use crate::tool::TaskSupport;
use serde_json::json;
use std::time::Duration;

/// What the decision depends on, read from the tool, the server and the request.
#[derive(Debug, Clone)]
pub(crate) struct CallFacts {
    /// The tool's `task_support`.
    pub(crate) support: TaskSupport,
    /// The era the request is served in.
    pub(crate) era: Era,
    /// 2026-07-28: the request declares the tasks extension in its client capabilities.
    pub(crate) declared: bool,
    /// 2025-11-25: the request carries a `task` param (augmented call). Means nothing in the
    /// modern era, where it is an unknown field, nor at 2025-06-18 or 2025-03-26.
    pub(crate) task_param: bool,
    /// The request's protocol version has tasks ([`has_tasks`](super::era::has_tasks)): not
    /// 2025-06-18 or 2025-03-26, whose clients cannot ask for one.
    pub(crate) version_has_tasks: bool,
    /// The tool starts inline and becomes a task when it says so (`defer_task = true`).
    pub(crate) defers: bool,
    /// The server's task fallback is on ([`ServerBuilder::task_fallback`](super::ServerBuilder::task_fallback)):
    /// a call that cannot take a task may still start one, and be answered with its id.
    pub(crate) fallback: bool,
    /// Promotion thresholds from every place one can be set.
    pub(crate) promotion: Promotion,
}

/// After how long a still-running inline call becomes a task, from the three places that can say
/// so. The most specific one wins: [`ServerBuilder::promote_after`](super::ServerBuilder::promote_after) (the
/// builder, per tool) over `#[tool(promote_after = "...")]` (the attribute) over
/// [`ServerConfig::promote_after`](super::ServerConfig::promote_after) (server-wide).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Promotion {
    pub(crate) builder: Option<Duration>,
    pub(crate) attribute: Option<Duration>,
    pub(crate) server: Option<Duration>,
}

impl Promotion {
    /// The threshold that applies, if any.
    pub(crate) fn threshold(&self) -> Option<Duration> {
        self.builder.or(self.attribute).or(self.server)
    }
}

/// How a `tools/call` runs.
#[derive(Debug)]
pub(crate) enum CallPlan {
    /// Runs inline: the response is the tool's result (or, modern era, an `InputRequiredResult`).
    Inline { becomes: Becomes },
    /// Runs as a task: the response is the era's `CreateTaskResult`.
    Task,
    /// Runs as a task the client cannot follow with the task protocol (the task fallback): the
    /// response is an ordinary `CallToolResult` naming the task and its companion tools.
    Fallback,
    /// Not allowed as asked: the response is this error.
    Refuse(RpcError),
}

/// Whether an inline call may turn into a task part-way (modern era only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Becomes {
    /// It runs inline to its end.
    Never,
    /// When the tool asks (`ctx.start_task()`, `defer_task`).
    WhenAsked,
    /// When the tool asks, or once it has run this long (promotion).
    WhenAskedOrAfter(Duration),
    /// As `WhenAskedOrAfter`, for a client without tasks: it then gets the task fallback's
    /// answer instead of a `CreateTaskResult`.
    FallbackAfter(Duration),
}

/// The `task_support` table of DESIGN.md, with deferral and promotion on top: a call that would
/// run as a task in the modern era starts inline instead when the tool defers (`defer_task`) or
/// is promoted (only `optional` tools are: promotion is for calls that may run either way).
///
/// With the task fallback on, a call that cannot take a task (2026-07-28: no tasks extension;
/// 2025-11-25: no `task` param) of a `required` tool becomes [`CallPlan::Fallback`] instead of
/// being refused, and one of an `optional` tool with a promotion threshold starts inline and
/// becomes a fallback task at the threshold (2025-11-25: not for a tool that defers).
pub(crate) fn plan(facts: &CallFacts) -> CallPlan {
    let taskless = match facts.era {
        Era::Modern => !facts.declared,
        Era::Legacy => !facts.task_param,
    };
    if facts.fallback && taskless {
        match facts.support {
            TaskSupport::Required => return CallPlan::Fallback,
            TaskSupport::Optional if facts.era == Era::Modern || !facts.defers => {
                if let Some(after) = facts.promotion.threshold() {
                    return CallPlan::Inline {
                        becomes: Becomes::FallbackAfter(after),
                    };
                }
            }
            _ => {}
        }
    }
    match facts.era {
        Era::Modern => match (facts.support, facts.declared) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => CallPlan::Inline {
                becomes: Becomes::Never,
            },
            (TaskSupport::Required, false) => CallPlan::Refuse(requires_tasks_extension()),
            (support, true) => {
                let promote_after = match support {
                    TaskSupport::Optional => facts.promotion.threshold(),
                    _ => None,
                };
                match (facts.defers, promote_after) {
                    (false, None) => CallPlan::Task,
                    (true, None) => CallPlan::Inline {
                        becomes: Becomes::WhenAsked,
                    },
                    (_, Some(after)) => CallPlan::Inline {
                        becomes: Becomes::WhenAskedOrAfter(after),
                    },
                }
            }
        },
        Era::Legacy => match (facts.support, facts.task_param) {
            (TaskSupport::Forbidden, true) => CallPlan::Refuse(RpcError::new(
                RpcError::METHOD_NOT_FOUND,
                "This tool does not support task-augmented invocation (execution.taskSupport is \"forbidden\")",
            )),
            (TaskSupport::Required, false) if !facts.version_has_tasks => {
                CallPlan::Refuse(RpcError::new(
                    RpcError::METHOD_NOT_FOUND,
                    "This tool runs only in the background, which this server does not offer to this client; it cannot be called here",
                ))
            }
            (TaskSupport::Required, false) => CallPlan::Refuse(RpcError::new(
                RpcError::METHOD_NOT_FOUND,
                "This tool requires task-augmented invocation (execution.taskSupport is \"required\"); send `task` in the params",
            )),
            (_, true) => CallPlan::Task,
            (_, false) => CallPlan::Inline {
                becomes: Becomes::Never,
            },
        },
    }
}

fn requires_tasks_extension() -> RpcError {
    RpcError::new(
        RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: this tool runs only as a task; declare the `{TASKS_EXTENSION}` extension in the request's clientCapabilities"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(support: TaskSupport, era: Era, declared: bool, task_param: bool) -> CallFacts {
        CallFacts {
            support,
            era,
            declared,
            task_param,
            version_has_tasks: true,
            defers: false,
            fallback: false,
            promotion: Promotion::default(),
        }
    }

    /// A plan, written the way DESIGN.md's table writes it.
    fn cell(plan: CallPlan) -> String {
        match plan {
            CallPlan::Inline {
                becomes: Becomes::Never,
            } => "run inline".into(),
            CallPlan::Inline { becomes } => format!("inline, then a task {becomes:?}"),
            CallPlan::Task => "run as a task".into(),
            CallPlan::Fallback => "a fallback task".into(),
            CallPlan::Refuse(e) => {
                let data = e.data.as_ref().map(|d| d.to_string()).unwrap_or_default();
                format!("{} {data}", e.code).trim_end().to_owned()
            }
        }
    }

    #[test]
    fn the_task_support_table_of_the_design() {
        use Era::{Legacy, Modern};
        use TaskSupport::{Forbidden, Optional, Required};
        let required_caps = format!(
            r#"-32021 {{"requiredCapabilities":{{"extensions":{{"{TASKS_EXTENSION}":{{}}}}}}}}"#
        );
        // Columns: modern, extension declared | modern, not declared | legacy, `task` sent |
        // legacy, no `task`. (`declared` means nothing in the legacy era, `task` nothing in the
        // modern one: each cell is checked both ways.)
        let table = [
            (
                Forbidden,
                ["run inline", "run inline", "-32601", "run inline"],
            ),
            (
                Optional,
                ["run as a task", "run inline", "run as a task", "run inline"],
            ),
            (
                Required,
                ["run as a task", &required_caps, "run as a task", "-32601"],
            ),
        ];
        for (support, row) in table {
            for other in [false, true] {
                let got = [
                    cell(plan(&facts(support, Modern, true, other))),
                    cell(plan(&facts(support, Modern, false, other))),
                    cell(plan(&facts(support, Legacy, other, true))),
                    cell(plan(&facts(support, Legacy, other, false))),
                ];
                assert_eq!(got, row, "{support:?} (the ignored input: {other})");
            }
        }
    }

    #[test]
    fn refusals_say_why() {
        let CallPlan::Refuse(e) = plan(&facts(TaskSupport::Required, Era::Legacy, false, false))
        else {
            panic!("a required tool without `task` is refused");
        };
        assert!(e.message.contains("send `task`"), "{}", e.message);
        let CallPlan::Refuse(e) = plan(&facts(TaskSupport::Forbidden, Era::Legacy, false, true))
        else {
            panic!("a forbidden tool with `task` is refused");
        };
        assert!(e.message.contains("\"forbidden\""), "{}", e.message);
        // 2025-06-18 has no `task` param: the refusal (fallback off) names nothing it lacks.
        let mut old = facts(TaskSupport::Required, Era::Legacy, false, false);
        old.version_has_tasks = false;
        let CallPlan::Refuse(e) = plan(&old) else {
            panic!("a required tool is refused to a 2025-06-18 client without the fallback");
        };
        assert!(!e.message.contains("task"), "{}", e.message);
        old.fallback = true;
        assert!(matches!(plan(&old), CallPlan::Fallback));
    }

    #[test]
    fn promotion_thresholds_the_builder_over_the_attribute_over_the_server() {
        let s = Duration::from_secs;
        let p = |builder, attribute, server| Promotion {
            builder,
            attribute,
            server,
        };
        assert_eq!(
            p(Some(s(1)), Some(s(2)), Some(s(3))).threshold(),
            Some(s(1))
        );
        assert_eq!(p(None, Some(s(2)), Some(s(3))).threshold(), Some(s(2)));
        assert_eq!(p(Some(s(1)), None, Some(s(3))).threshold(), Some(s(1)));
        assert_eq!(p(None, None, Some(s(3))).threshold(), Some(s(3)));
        assert_eq!(p(None, None, None).threshold(), None);
        // And the plan uses the one that wins.
        let mut f = facts(TaskSupport::Optional, Era::Modern, true, false);
        f.promotion = p(None, Some(s(2)), Some(s(3)));
        assert_eq!(
            cell(plan(&f)),
            format!("inline, then a task {:?}", Becomes::WhenAskedOrAfter(s(2)))
        );
    }

    #[test]
    fn only_a_call_that_would_be_a_task_of_an_optional_tool_is_promoted() {
        let promoted = Promotion {
            server: Some(Duration::from_secs(1)),
            ..Promotion::default()
        };
        let after = Becomes::WhenAskedOrAfter(Duration::from_secs(1));
        for (support, era, declared, task_param, expected) in [
            (
                TaskSupport::Optional,
                Era::Modern,
                true,
                false,
                format!("inline, then a task {after:?}"),
            ),
            // The client did not declare the extension: inline, as without promotion.
            (
                TaskSupport::Optional,
                Era::Modern,
                false,
                false,
                "run inline".into(),
            ),
            // Legacy clients chose for themselves with `task`.
            (
                TaskSupport::Optional,
                Era::Legacy,
                false,
                true,
                "run as a task".into(),
            ),
            (
                TaskSupport::Optional,
                Era::Legacy,
                false,
                false,
                "run inline".into(),
            ),
            // A required tool is a task from the start; a forbidden one never becomes one.
            (
                TaskSupport::Required,
                Era::Modern,
                true,
                false,
                "run as a task".into(),
            ),
            (
                TaskSupport::Forbidden,
                Era::Modern,
                true,
                false,
                "run inline".into(),
            ),
        ] {
            let mut f = facts(support, era, declared, task_param);
            f.promotion = promoted;
            assert_eq!(
                cell(plan(&f)),
                expected,
                "{support:?} {era:?} {declared} {task_param}"
            );
        }
    }

    #[test]
    fn a_deferring_tool_starts_inline_in_the_modern_era_only() {
        let deferring = |support, era, declared, task_param| {
            let mut f = facts(support, era, declared, task_param);
            f.defers = true;
            cell(plan(&f))
        };
        let asked = format!("inline, then a task {:?}", Becomes::WhenAsked);
        assert_eq!(
            deferring(TaskSupport::Required, Era::Modern, true, false),
            asked
        );
        assert_eq!(
            deferring(TaskSupport::Optional, Era::Modern, true, false),
            asked
        );
        assert_eq!(
            deferring(TaskSupport::Optional, Era::Modern, false, false),
            "run inline"
        );
        assert_eq!(
            deferring(TaskSupport::Required, Era::Legacy, false, true),
            "run as a task"
        );
        // Promotion and deferral together: either makes it a task.
        let mut f = facts(TaskSupport::Optional, Era::Modern, true, false);
        f.defers = true;
        f.promotion.attribute = Some(Duration::from_millis(10));
        assert_eq!(
            cell(plan(&f)),
            format!(
                "inline, then a task {:?}",
                Becomes::WhenAskedOrAfter(Duration::from_millis(10))
            )
        );
    }

    /// With the task fallback on, only the cells where a call cannot take a task change: a
    /// `required` tool starts a fallback task instead of being refused, and an `optional` one
    /// with a threshold is promoted into a fallback task (2025-11-25: unless it defers).
    #[test]
    fn the_fallback_changes_only_the_calls_that_cannot_take_a_task() {
        use Era::{Legacy, Modern};
        use TaskSupport::{Forbidden, Optional, Required};
        let with = |support, era, declared, task_param, threshold: Option<u64>, defers| {
            cell(plan(&CallFacts {
                fallback: true,
                defers,
                promotion: Promotion {
                    server: threshold.map(Duration::from_millis),
                    ..Promotion::default()
                },
                ..facts(support, era, declared, task_param)
            }))
        };
        let promoted = "inline, then a task FallbackAfter(5ms)";
        // Columns as in the table above: modern declared | modern not | legacy `task` | legacy not.
        let cases: [(TaskSupport, Option<u64>, bool, [&str; 4]); 6] = [
            (
                Forbidden,
                None,
                false,
                ["run inline", "run inline", "-32601", "run inline"],
            ),
            (
                Optional,
                None,
                false,
                ["run as a task", "run inline", "run as a task", "run inline"],
            ),
            (
                Optional,
                Some(5),
                false,
                [
                    "inline, then a task WhenAskedOrAfter(5ms)",
                    promoted,
                    "run as a task",
                    promoted,
                ],
            ),
            (
                Optional,
                Some(5),
                true,
                [
                    "inline, then a task WhenAskedOrAfter(5ms)",
                    promoted,
                    "run as a task",
                    "run inline",
                ],
            ),
            (
                Required,
                None,
                false,
                [
                    "run as a task",
                    "a fallback task",
                    "run as a task",
                    "a fallback task",
                ],
            ),
            (
                Required,
                Some(5),
                true,
                [
                    "inline, then a task WhenAsked",
                    "a fallback task",
                    "run as a task",
                    "a fallback task",
                ],
            ),
        ];
        for (support, threshold, defers, row) in cases {
            let got = [
                with(support, Modern, true, false, threshold, defers),
                with(support, Modern, false, false, threshold, defers),
                with(support, Legacy, false, true, threshold, defers),
                with(support, Legacy, false, false, threshold, defers),
            ];
            assert_eq!(
                got, row,
                "{support:?} threshold {threshold:?} defers {defers}"
            );
        }
    }
}
