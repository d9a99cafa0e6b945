//! `call` and `task watch`: a tool called, its task followed to its end (progress, questions),
//! Ctrl-C or `--task-timeout` cancelling it, and how it ended.

use crate::args::ArgSpec;
use crate::duration::show_duration;
use crate::outcome::{Outcome, timeout_hint};
use crate::render::print_result;
use crate::ui::{Stop, Ui};
use mcp_tasks_client::{
    CallToolResult, Client, Error, TaskHandle, TaskStatus, TaskUpdate, ToolCall,
};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long Ctrl-C waits for the server to confirm a cancellation.
const CANCEL_WAIT: Duration = Duration::from_secs(3);

/// How a task started by this command can be followed again if the command stops.
fn rewatch(client: &Client, id: &str) -> String {
    if client.era().is_modern() {
        return format!("if this command stops, `mcp-tasks task watch {id}` follows it again");
    }
    // A 2025-11-25 server may know a task only in the session that created it.
    match client.session_id() {
        Some(session) => format!(
            "if this command stops, `mcp-tasks task watch {id} --session {session}` follows it \
             again"
        ),
        None => "it lives in this command's session (2025-11-25)".into(),
    }
}

/// How a command that stopped early ends (the task, if any, already cancelled).
fn stopped(stop: Stop) -> Outcome {
    match stop {
        Stop::Interrupted => Outcome::Interrupted,
        Stop::Usage(why) => {
            eprintln!("mcp-tasks: {why}");
            Outcome::Failure
        }
        Stop::TimedOut(limit) => {
            eprintln!(
                "mcp-tasks: the call did not end within {} (--task-timeout)",
                show_duration(limit)
            );
            Outcome::Failure
        }
    }
}

pub async fn call(client: &Client, ui: &Arc<Ui>, tool: &str, args: ArgSpec, json: bool) -> Outcome {
    let args = match resolve_args(client, tool, &args).await {
        Ok(a) => a,
        Err(why) => {
            eprintln!("mcp-tasks: {why}");
            return Outcome::Failure;
        }
    };
    listen_for_ctrl_c(ui);
    ui.inline_call(Some(tool));
    let started = client.call_tool(tool, Value::Object(args));
    let call = tokio::select! {
        c = started => c,
        stop = interrupt(ui) => {
            ui.finish();
            if stop == Stop::Interrupted {
                eprintln!("mcp-tasks: interrupted");
            }
            return stopped(stop);
        }
    };
    ui.inline_call(None);
    let call = match call {
        Ok(c) => c,
        Err(e) => return report_error(&e),
    };
    match call {
        ToolCall::Done(result) => {
            ui.finish();
            print_result(&result, json)
        }
        ToolCall::Task(task) => {
            ui.info(&format!(
                "task {} started; {}",
                task.id(),
                rewatch(client, task.id())
            ));
            finish_task(ui, &task, json).await
        }
    }
}

/// `--args`: `KEY=VALUE` pairs are typed by the tool's input schema (from `tools/list`, read
/// only when there are pairs).
async fn resolve_args(
    client: &Client,
    tool: &str,
    args: &ArgSpec,
) -> Result<Map<String, Value>, String> {
    if args.pairs.is_empty() {
        return args.resolve(None);
    }
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list (to type --args KEY=VALUE) failed: {e}"))?;
    let schema = tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| &t.input_schema);
    args.resolve(schema)
}

/// Follows a task to its end and prints how it ended.
pub async fn finish_task(ui: &Arc<Ui>, task: &TaskHandle, json: bool) -> Outcome {
    let result = match follow(ui, task).await {
        Ok(r) => r,
        Err(stop) => return stopped(stop),
    };
    ui.finish();
    match result {
        Ok(result) => print_result(&result, json),
        Err(e) => report_error(&e),
    }
}

/// Follows a task to its end, showing its state; `Err` when the command stopped first (Ctrl-C, or
/// an `--answers` value that does not fit), after cancelling the task.
async fn follow(ui: &Arc<Ui>, task: &TaskHandle) -> Result<Result<CallToolResult, Error>, Stop> {
    let mut updates = task.updates();
    let shown = ui.clone();
    let show = tokio::spawn(async move {
        while let Some(event) = updates.next().await {
            match event {
                TaskUpdate::Updated(s) => shown.task_state(&s),
                TaskUpdate::Stuck { unchanged_for, .. } => shown.say(&format!(
                    "(no change for {}s; Ctrl-C cancels the task)",
                    unchanged_for.as_secs()
                )),
                TaskUpdate::Unanswered { method, .. } => shown.say(&format!(
                    "(the {method} request was declined; the task cannot be told, so it waits \
                     for an answer; Ctrl-C cancels it)"
                )),
            }
        }
    });
    let outcome = tokio::select! {
        r = task.result() => Ok(r),
        stop = interrupt(ui) => Err(stop),
    };
    if let Err(stop) = &outcome {
        let why = match stop {
            Stop::Interrupted => "^C",
            Stop::Usage(_) => "--answers does not fit the question",
            Stop::TimedOut(_) => "--task-timeout ran out",
        };
        cancel(ui, task, why).await;
    }
    // Let the last state reach the screen.
    let _ = tokio::time::timeout(Duration::from_millis(200), show).await;
    outcome
}

/// Ctrl-C: `tasks/cancel`, then a short wait for the task to say `cancelled`.
async fn cancel(ui: &Arc<Ui>, task: &TaskHandle, why: &str) {
    ui.say(&format!("{why}: cancelling task {} ...", task.id()));
    let confirmed = tokio::time::timeout(CANCEL_WAIT, async {
        if let Err(e) = task.cancel().await {
            return Err(e.to_string());
        }
        let mut updates = task.updates();
        while let Some(event) = updates.next().await {
            if let TaskUpdate::Updated(s) = event
                && s.status.is_terminal()
            {
                return Ok(s.status);
            }
        }
        Ok(task.snapshot().status)
    })
    .await;
    ui.finish();
    match confirmed {
        Ok(Ok(TaskStatus::Cancelled)) => eprintln!("mcp-tasks: task {} cancelled", task.id()),
        Ok(Ok(other)) => eprintln!(
            "mcp-tasks: task {} ended {} before the cancellation took effect",
            task.id(),
            other.as_str()
        ),
        Ok(Err(e)) => eprintln!("mcp-tasks: tasks/cancel failed: {e}"),
        Err(_) => eprintln!(
            "mcp-tasks: the server did not confirm the cancellation within {}s",
            CANCEL_WAIT.as_secs()
        ),
    }
}

/// Listens for Ctrl-C for the rest of the command: one listener, which stops the command
/// ([`Stop::Interrupted`]). A listener made anew around each wait would lose a Ctrl-C that came
/// between two waits: once the first one has replaced the default action, a signal nobody
/// listens for is dropped, and the command ran on to the task's end.
fn listen_for_ctrl_c(ui: &Arc<Ui>) {
    let ui = ui.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ui.stop(Stop::Interrupted);
        }
    });
}

/// Resolves on Ctrl-C (the signal, see [`listen_for_ctrl_c`], or the key pressed while a prompt
/// had the terminal), or when the command must stop for another reason (see [`Stop`]).
async fn interrupt(ui: &Arc<Ui>) -> Stop {
    ui.stopped().await
}

fn report_error(e: &Error) -> Outcome {
    let outcome = Outcome::of_error(e);
    match e {
        Error::Tool(result) => return print_result(result, false),
        _ => eprintln!("mcp-tasks: {e}{}", timeout_hint(e)),
    }
    outcome
}
