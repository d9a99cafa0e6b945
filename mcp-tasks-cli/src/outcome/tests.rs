use super::*;
use crate::render::print_result;
use mcp_tasks_client::{CallToolResult, Content};

#[test]
fn exit_codes() {
    assert_eq!(Outcome::Success.code(), 0);
    assert_eq!(Outcome::ToolError.code(), 1);
    assert_eq!(Outcome::Failure.code(), 2);
    assert_eq!(Outcome::Interrupted.code(), 130);
    let tool_error = CallToolResult {
        content: vec![Content::text("no")],
        structured_content: None,
        is_error: true,
        meta: None,
    };
    assert_eq!(
        Outcome::of_error(&Error::Tool(tool_error.clone())),
        Outcome::ToolError
    );
    assert_eq!(
        Outcome::of_error(&Error::Transport("gone".into())),
        Outcome::Failure
    );
    assert_eq!(
        Outcome::of_error(&Error::Negotiation("x".into())),
        Outcome::Failure
    );
    assert_eq!(print_result(&tool_error, true), Outcome::ToolError);
    let ok = CallToolResult {
        is_error: false,
        ..tool_error
    };
    assert_eq!(print_result(&ok, true), Outcome::Success);
}
