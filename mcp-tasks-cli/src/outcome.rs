//! How a command ends: its exit code, and what an error says about it.

use mcp_tasks_client::Error;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    ToolError,
    Failure,
    Interrupted,
}

impl Outcome {
    pub fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::ToolError => 1,
            Outcome::Failure => 2,
            Outcome::Interrupted => 130,
        }
    }

    /// A call that ended in an error: the tool's own failures are 1, everything else 2.
    pub fn of_error(e: &Error) -> Outcome {
        match e {
            Error::Tool(_) | Error::TaskFailed { .. } | Error::TaskCancelled { .. } => {
                Outcome::ToolError
            }
            _ => Outcome::Failure,
        }
    }
}

/// After a request timeout: what to do about it.
pub(crate) fn timeout_hint(e: &Error) -> &'static str {
    match e {
        Error::Timeout { .. } => "; the server is stuck or slow (--timeout DURATION waits longer)",
        _ => "",
    }
}

#[cfg(test)]
mod tests;
