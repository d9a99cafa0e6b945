//! What goes to stdout: the `tools` table, and a call's result.

use crate::out::outln;
use crate::outcome::Outcome;
use mcp_tasks_client::{CallToolResult, Client, Content, TaskSupport};
use serde_json::{Value, json};

pub async fn tools(client: &Client, json: bool) -> Outcome {
    let tools = match client.list_tools().await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp-tasks: tools/list failed: {e}");
            return Outcome::Failure;
        }
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tools": tools })).expect("JSON")
        );
        return Outcome::Success;
    }
    let modern = client.era().is_modern();
    let tasks = client.server().supports_tasks;
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    outln!("{:width$}  {:14}  DESCRIPTION", "TOOL", "RUNS AS");
    for t in &tools {
        let support = runs_as(modern, tasks, (!modern).then(|| t.task_support()));
        let description = t
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or("");
        outln!("{:width$}  {support:14}  {description}", t.name);
    }
    if modern && tasks {
        eprintln!(
            "(protocol {}: the server decides per call which tools run as tasks)",
            client.protocol_version()
        );
    } else if !tasks {
        eprintln!(
            "(protocol {}: the server runs no tool calls as tasks)",
            client.protocol_version()
        );
    }
    Outcome::Success
}

/// What `call` will do with a tool: `task`, `inline`, or `task or inline` (the server decides).
/// Legacy: the client asks for a task when the server runs `tools/call` as tasks and the tool
/// allows one; without that capability every call is inline, whatever the tool says (one that
/// requires a task then cannot be called: `no (needs a task)`). Modern: the server decides.
fn runs_as(modern: bool, server_tasks: bool, support: Option<TaskSupport>) -> &'static str {
    match (modern, server_tasks, support) {
        (true, true, _) => "task or inline",
        (true, false, _) => "inline",
        (false, true, Some(TaskSupport::Optional | TaskSupport::Required)) => "task",
        (false, false, Some(TaskSupport::Required)) => "no (needs task)",
        (false, _, _) => "inline",
    }
}

/// Prints a result (the JSON, or its content as text) and says how the call ended.
pub fn print_result(result: &CallToolResult, json: bool) -> Outcome {
    if json {
        outln!("{}", serde_json::to_string_pretty(result).expect("JSON"));
    } else {
        for block in &result.content {
            outln!("{}", render(block));
        }
        if result.content.is_empty()
            && let Some(s) = &result.structured_content
        {
            outln!("{}", serde_json::to_string_pretty(s).expect("JSON"));
        }
    }
    if result.is_error {
        eprintln!("mcp-tasks: the tool reported an error");
        Outcome::ToolError
    } else {
        Outcome::Success
    }
}

fn render(block: &Content) -> String {
    match block {
        Content::Text { text } => text.clone(),
        other => match serde_json::to_value(other) {
            Ok(v) => {
                let kind = v.get("type").and_then(Value::as_str).unwrap_or("content");
                let what = ["mimeType", "uri", "name"]
                    .iter()
                    .find_map(|k| v.get(k).and_then(Value::as_str))
                    .unwrap_or("");
                format!("[{kind} {what}]")
            }
            Err(_) => "[content]".into(),
        },
    }
}

#[cfg(test)]
mod tests;
