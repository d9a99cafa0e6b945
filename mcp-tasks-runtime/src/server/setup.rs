//! [`SetupError`]: every reason a server cannot start, found together by
//! [`ServerBuilder::build`](super::ServerBuilder::build).

use std::fmt;

/// One reason a server cannot start as configured (see [`SetupError::problems`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupProblem {
    /// Two registered tools have the same name.
    DuplicateTool {
        /// The name both use.
        name: &'static str,
    },
    /// Two registered prompts have the same name.
    DuplicatePrompt {
        /// The name both use.
        name: &'static str,
    },
    /// A prompt takes `State<T>` but no `T` was registered with
    /// [`ServerBuilder::state`](super::ServerBuilder::state).
    PromptMissingState {
        /// The prompt.
        prompt: &'static str,
        /// The type name of the missing state.
        state: &'static str,
    },
    /// A tool's `x-mcp-header` breaks SEP-2243's rules (clients would drop the tool).
    BadHeader {
        /// The tool.
        tool: &'static str,
        /// What is wrong with the header.
        why: String,
    },
    /// A tool takes `State<T>` but no `T` was registered with
    /// [`ServerBuilder::state`](super::ServerBuilder::state).
    MissingState {
        /// The tool.
        tool: &'static str,
        /// The type name of the missing state.
        state: &'static str,
    },
    /// [`ServerBuilder::promote_after`](super::ServerBuilder::promote_after) names a tool that
    /// is not registered.
    PromotedToolMissing {
        /// The tool.
        tool: &'static str,
    },
    /// [`ServerBuilder::promote_after`](super::ServerBuilder::promote_after) names a tool that is
    /// not `task_support = "optional"`.
    PromotedToolNotOptional {
        /// The tool.
        tool: &'static str,
    },
    /// With [`ServerBuilder::task_fallback`](super::ServerBuilder::task_fallback), a tool has the
    /// name of one of the companion tools (`tasks_status`, `tasks_result`, `tasks_cancel`).
    CompanionToolName {
        /// The tool.
        tool: &'static str,
    },
    /// Two resources have the same URI, or two resource templates match the same URIs.
    DuplicateResource {
        /// The URI (template) registered second.
        uri: &'static str,
        /// The one registered first.
        taken: &'static str,
    },
    /// A resource takes `State<T>` but no `T` was registered.
    MissingResourceState {
        /// The resource's URI (template).
        resource: &'static str,
        /// The type name of the missing state.
        state: &'static str,
    },
    /// A resource's `uri` is not an absolute URI or not a valid URI template.
    BadResourceUri {
        /// The URI (template).
        uri: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// A tool names an MCP Apps view (`#[tool(ui = "ui://...")]`) that no registered resource
    /// serves.
    MissingUiResource {
        /// The tool.
        tool: &'static str,
        /// The `ui://` URI it names.
        uri: &'static str,
    },
    /// A skill file ([`ServerBuilder::skills`](super::ServerBuilder::skills)) that cannot be
    /// served: a `SKILL.md` without frontmatter, a name that breaks the naming rules or differs
    /// from its folder's, a skill over the limits, a folder that cannot be read.
    BadSkill {
        /// The file or folder: its path on disk, or its embedded path.
        file: String,
        /// The rule it breaks.
        rule: String,
    },
    /// A [`ServerConfig`](super::ServerConfig) value the server cannot run with.
    BadConfig {
        /// The setting, as its method is named.
        setting: &'static str,
        /// What is wrong with it.
        why: String,
    },
}

impl fmt::Display for SetupProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupProblem::DuplicateTool { name } => write!(
                f,
                "two tools are named `{name}`; tool names must be unique (rename one with #[tool(name = \"...\")])"
            ),
            SetupProblem::DuplicatePrompt { name } => write!(
                f,
                "two prompts are named `{name}`; prompt names must be unique (rename one with #[prompt(name = \"...\")])"
            ),
            SetupProblem::PromptMissingState { prompt, state } => write!(
                f,
                "prompt `{prompt}` takes `State<{state}>`, but no `{state}` is registered (add `.state(value)` to the server)"
            ),
            SetupProblem::BadHeader { tool, why } => write!(f, "tool `{tool}`: {why}"),
            SetupProblem::MissingUiResource { tool, uri } => write!(
                f,
                "tool `{tool}` shows its results in the MCP App view `{uri}`, but no resource serves it (register one with `.resource::<...>()`, `#[resource(uri = \"{uri}\", mime_type = \"text/html;profile=mcp-app\")]`)"
            ),
            SetupProblem::MissingState { tool, state } => write!(
                f,
                "tool `{tool}` takes `State<{state}>`, but no `{state}` is registered (add `.state(value)` to the server)"
            ),
            SetupProblem::PromotedToolMissing { tool } => write!(
                f,
                "`promote_after` names tool `{tool}`, which is not registered"
            ),
            SetupProblem::PromotedToolNotOptional { tool } => write!(
                f,
                "tool `{tool}` is promoted (`promote_after`), so it must be `task_support = \"optional\"`"
            ),
            SetupProblem::CompanionToolName { tool } => write!(
                f,
                "tool `{tool}` has the name of a companion tool of the task fallback (`task_fallback`); rename the tool or leave the fallback off"
            ),
            SetupProblem::DuplicateResource { uri, taken } if uri == taken => write!(
                f,
                "two resources have the URI `{uri}`; resource URIs must be unique"
            ),
            SetupProblem::DuplicateResource { uri, taken } => write!(
                f,
                "resource template `{uri}` matches the same URIs as `{taken}`, so one of them could never be read; make their literal parts differ"
            ),
            SetupProblem::MissingResourceState { resource, state } => write!(
                f,
                "resource `{resource}` takes `State<{state}>`, but no `{state}` is registered (add `.state(value)` to the server)"
            ),
            SetupProblem::BadResourceUri { uri, why } => write!(f, "resource `{uri}`: {why}"),
            SetupProblem::BadSkill { file, rule } => write!(f, "skill file `{file}`: {rule}"),
            SetupProblem::BadConfig { setting, why } => {
                write!(f, "`ServerConfig::{setting}` {why}")
            }
        }
    }
}

/// Why a server cannot start as configured: every problem
/// [`ServerBuilder::build`](super::ServerBuilder::build) found, not only the first.
///
/// Its `Display` lists them all; [`problems`](Self::problems) gives them one by one. It converts
/// into a [`std::io::Error`] ([`InvalidInput`](std::io::ErrorKind::InvalidInput)), so a
/// `main() -> std::io::Result<()>` can use `?` on `build()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError {
    problems: Vec<SetupProblem>,
}

impl SetupError {
    /// `Err` with these problems, `Ok` when there are none.
    pub(crate) fn check(problems: Vec<SetupProblem>) -> Result<(), SetupError> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(SetupError { problems })
        }
    }

    /// Every problem found, in the order of the checks (tools in registration order first,
    /// then state, promotion, the fallback, the configuration). Never empty.
    pub fn problems(&self) -> &[SetupProblem] {
        &self.problems
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "the server cannot start: {one}"),
            many => {
                write!(f, "the server cannot start ({} problems):", many.len())?;
                for problem in many {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SetupError {}

impl From<SetupError> for std::io::Error {
    fn from(e: SetupError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}
