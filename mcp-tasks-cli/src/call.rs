//! `call` and `task watch`: a tool called, its task followed to its end (progress, questions),
//! Ctrl-C or `--task-timeout` cancelling it, and how it ended.

use crate::args::ArgSpec;
use crate::command::Target;
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

/// How long a task may wait for input with no question reaching this command before it is
/// said that the question went to another client (`task watch` of a task whose caller died:
/// a 2025-11-25 server sends a question once, to the session that was waiting then).
const WAITING_ELSEWHERE: Duration = Duration::from_secs(5);

/// How a task started by this command can be followed again if the command stops: the full
/// command to paste (the server's `--url`, and the 2025-11-25 session a legacy server knows the
/// task in). A stdio server is a process of this command and ends with it, its tasks too unless
/// it keeps them in a durable store: said so.
fn rewatch(client: &Client, target: &Target, id: &str) -> String {
    let session = match (client.era().is_modern(), client.session_id()) {
        (true, _) => String::new(),
        (false, Some(session)) => format!(" --session {}", shell_word(&session)),
        // A 2025-11-25 server may know a task only in the session that created it.
        (false, None) => return "it lives in this command's session (2025-11-25)".into(),
    };
    match target {
        Target::Http {
            url,
            token,
            credentials,
            ..
        } => {
            let auth = match (token, credentials) {
                (Some(_), _) => " --token T",
                (None, Some(_)) => " --client-id ID --client-secret S",
                (None, None) => "",
            };
            format!(
                "if this command stops, `mcp-tasks task watch {id}{session} --url {}{auth}` \
                 follows it again",
                shell_word(url)
            )
        }
        Target::Stdio { program, args, .. } => {
            let command: Vec<String> = std::iter::once(program)
                .chain(args)
                .map(|w| shell_word(w))
                .collect();
            format!(
                "it lives in the server process this command started, and ends with it unless \
                 the server keeps its tasks in a durable store (then `mcp-tasks task watch {id} \
                 -- {}` follows it again)",
                command.join(" ")
            )
        }
    }
}

/// `word` as a POSIX shell reads it back: as it is when it holds nothing special, else quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
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
        Stop::Unanswerable(method) => {
            eprintln!(
                "mcp-tasks: the task waits for an answer to {method}, which nothing here can \
                 give (no terminal, and no --answers for it{})",
                answer_hint(&method)
            );
            Outcome::Failure
        }
    }
}

/// How `--answers` answers a request of `method`, if it can.
fn answer_hint(method: &str) -> &'static str {
    match method {
        "sampling/createMessage" => ": --answers '{\"@sampling\": \"text\"}' replies as the model",
        "elicitation/create" => ": --answers '{\"FIELD\": VALUE}' answers a form",
        _ => "",
    }
}

/// A 2025-11-25 call refused with `-32021` (a client capability missing: the tasks extension),
/// an error only 2026-07-28 has: the server speaks 2026-07-28, and the era this command chose
/// (remembered from an earlier command, say) was wrong. The call was not made.
#[derive(Debug)]
pub struct WrongEra(pub Error);

impl WrongEra {
    /// Said as any other failed call.
    pub fn report(&self) -> Outcome {
        report_error(&self.0)
    }
}

pub async fn call(
    client: &Client,
    ui: &Arc<Ui>,
    target: &Target,
    tool: &str,
    args: &ArgSpec,
    json: bool,
) -> Result<Outcome, WrongEra> {
    let args = match resolve_args(client, tool, args).await {
        Ok(a) => a,
        Err(why) => {
            eprintln!("mcp-tasks: {why}");
            return Ok(Outcome::Failure);
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
            return Ok(stopped(stop));
        }
    };
    ui.inline_call(None);
    let call = match call {
        Ok(c) => c,
        Err(e) if !client.era().is_modern() && e.rpc_error().is_some_and(|r| r.code == -32021) => {
            ui.finish();
            return Err(WrongEra(e));
        }
        Err(e) if unknown_tool(client, tool).await => {
            return Ok(no_such_tool(ui, tool, &e.to_string()));
        }
        Err(e) => return Ok(report_error(&e)),
    };
    Ok(match call {
        ToolCall::Done(result) if result.is_error && unknown_tool(client, tool).await => {
            let said = result
                .content
                .iter()
                .find_map(|c| match c {
                    mcp_tasks_client::Content::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            no_such_tool(ui, tool, &said)
        }
        ToolCall::Done(result) => {
            ui.finish();
            print_result(&result, json)
        }
        ToolCall::Task(task) => {
            ui.info(&format!(
                "task {} started; {}",
                task.id(),
                rewatch(client, target, task.id())
            ));
            finish_task(ui, &task, json).await
        }
    })
}

/// Whether the server lists no tool named `tool` (asked after a call failed: servers answer a
/// call of an unknown tool some with a JSON-RPC error, some with an `isError` result).
async fn unknown_tool(client: &Client, tool: &str) -> bool {
    client
        .list_tools()
        .await
        .is_ok_and(|tools| !tools.iter().any(|t| t.name == tool))
}

/// A call of a tool the server does not have: a usage mistake, exit 2 whatever the server's way
/// of saying it.
fn no_such_tool(ui: &Ui, tool: &str, said: &str) -> Outcome {
    ui.finish();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(" (it says: {said})")
    };
    eprintln!(
        "mcp-tasks: the server has no tool named {tool:?}{said}; `mcp-tasks tools` lists its tools"
    );
    Outcome::Failure
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
    let shown_id = task.id().to_owned();
    let show = tokio::spawn(async move {
        // Since when the task waits for input, and how many questions had reached this
        // command then (see `WAITING_ELSEWHERE`).
        let mut waiting: Option<(tokio::time::Instant, usize)> = None;
        let mut hinted = false;
        loop {
            let quiet = async {
                match waiting {
                    Some((since, _)) if !hinted => {
                        tokio::time::sleep_until(since + WAITING_ELSEWHERE).await;
                    }
                    _ => std::future::pending().await,
                }
            };
            let event = tokio::select! {
                event = updates.next() => match event {
                    Some(event) => event,
                    None => break,
                },
                () = quiet => {
                    hinted = true;
                    let (asked, open) = shown.questions();
                    if !open && waiting.is_some_and(|(_, before)| before == asked) {
                        shown.say(&format!(
                            "(the task waits for input that was asked of another client, the \
                             command that started it perhaps, and is not asked here; Ctrl-C or \
                             `mcp-tasks task cancel {shown_id}` cancels it)"
                        ));
                    }
                    continue;
                }
            };
            match event {
                TaskUpdate::Updated(s) => {
                    if s.status == TaskStatus::InputRequired {
                        if waiting.is_none() {
                            waiting = Some((tokio::time::Instant::now(), shown.questions().0));
                        }
                    } else {
                        waiting = None;
                        hinted = false;
                    }
                    shown.task_state(&s);
                }
                TaskUpdate::Stuck { unchanged_for, .. } => shown.say(&format!(
                    "(no change for {}s; Ctrl-C cancels the task)",
                    unchanged_for.as_secs()
                )),
                // Headless, nobody will ever answer it: the command ends instead of waiting.
                TaskUpdate::Unanswered { method, .. } if !shown.interactive => {
                    shown.stop(Stop::Unanswerable(method));
                }
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
    let mut said = None;
    if let Err(stop) = &outcome {
        let why = match stop {
            Stop::Interrupted => "^C",
            Stop::Usage(_) => "--answers does not fit the question",
            Stop::TimedOut(_) => "--task-timeout ran out",
            Stop::Unanswerable(_) => "no answer to give",
        };
        said = Some(cancel(ui, task, why).await);
    }
    // Let the last state reach the screen, before how the cancellation went (lines in the order
    // things happened, piped too).
    let _ = tokio::time::timeout(Duration::from_millis(200), show).await;
    if let Some(line) = said {
        eprintln!("{line}");
    }
    outcome
}

/// Ctrl-C: `tasks/cancel`, then a short wait for the task to say `cancelled`; the line that
/// says how it went.
async fn cancel(ui: &Arc<Ui>, task: &TaskHandle, why: &str) -> String {
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
        Ok(Ok(TaskStatus::Cancelled)) => format!("mcp-tasks: task {} cancelled", task.id()),
        Ok(Ok(other)) => format!(
            "mcp-tasks: task {} ended {} before the cancellation took effect",
            task.id(),
            other.as_str()
        ),
        Ok(Err(e)) => format!("mcp-tasks: tasks/cancel failed: {e}"),
        Err(_) => format!(
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
