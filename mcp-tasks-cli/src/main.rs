//! `mcp-tasks`: try an MCP server from the terminal.
//!
//! ```text
//! mcp-tasks tools [--json] (--url URL [--token T | --client-id ID --client-secret S [--scope S]] [--ca-cert FILE] | -- CMD [ARGS...])
//! mcp-tasks call TOOL [--args JSON] [--json] [--answers JSON] (--url URL [--token T] | -- CMD [ARGS...])
//! mcp-tasks task get|cancel|watch ID ...
//! mcp-tasks tasks list ...
//! mcp-tasks resources [--json] ...
//! mcp-tasks read URI [--output FILE] [--json] ...
//! mcp-tasks prompts [--json] ...
//! mcp-tasks prompt NAME [--args JSON|@FILE|KEY=VALUE] [--json] ...
//! mcp-tasks complete (--prompt NAME | --resource URI_TEMPLATE) ARGUMENT [VALUE] [--args ...] ...
//! ```
//!
//! A call that runs as a task is followed to its end: a live progress line on a terminal (one
//! line per change elsewhere), the tool's questions asked at the prompt or answered from
//! `--answers`, Ctrl-C cancels it (`tasks/cancel`) and exits 130. Exit codes: 0 success, 1 the
//! tool reported an error, 2 protocol or usage error, 130 interrupted.

mod catalog;
mod cli;
mod form;
mod ui;

use clap::Parser;
use cli::{Answers, ArgSpec, Command, Conn, EraArg, ServerStderr, Target};
use mcp_tasks_client::{
    CallToolResult, Client, Content, EraChoice, Error, TaskHandle, TaskStatus, TaskSupport,
    TaskUpdate, ToolCall,
};
use serde_json::{Map, Value, json};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use ui::{CliHandler, Stop, Ui};

/// How long Ctrl-C waits for the server to confirm a cancellation.
const CANCEL_WAIT: Duration = Duration::from_secs(3);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    ToolError,
    Failure,
    Interrupted,
}

impl Outcome {
    fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::ToolError => 1,
            Outcome::Failure => 2,
            Outcome::Interrupted => 130,
        }
    }

    /// A call that ended in an error: the tool's own failures are 1, everything else 2.
    fn of_error(e: &Error) -> Outcome {
        match e {
            Error::Tool(_) | Error::TaskFailed { .. } | Error::TaskCancelled { .. } => {
                Outcome::ToolError
            }
            _ => Outcome::Failure,
        }
    }
}

fn main() -> ExitCode {
    let command = match cli::Cli::parse().into_command() {
        Ok(c) => c,
        Err(message) => {
            eprintln!("mcp-tasks: {message}");
            return ExitCode::from(Outcome::Failure.code());
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let outcome = runtime.block_on(run(command));
    // A prompt may still be blocked on stdin; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    ExitCode::from(outcome.code())
}

async fn run(command: Command) -> Outcome {
    let ui = Ui::new(command.conn().shown);
    let (conn, answers) = match &command {
        Command::Call { conn, answers, .. }
        | Command::TaskWatch { conn, answers, .. }
        | Command::Read { conn, answers, .. }
        | Command::Prompt { conn, answers, .. } => (conn.clone(), answers.clone()),
        Command::Tools { conn, .. }
        | Command::TaskGet { conn, .. }
        | Command::TaskCancel { conn, .. }
        | Command::TasksList { conn, .. }
        | Command::Resources { conn, .. }
        | Command::Prompts { conn, .. }
        | Command::Complete { conn, .. } => (conn.clone(), Answers::default()),
    };
    let client = match connect(&conn, &ui, answers).await {
        Ok(c) => c,
        Err(o) => return o,
    };
    if let Some(limit) = conn.task_timeout {
        let ui = ui.clone();
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            ui.stop(Stop::TimedOut(limit));
        });
    }
    let outcome = match command {
        Command::Tools { json, .. } => tools(&client, json).await,
        Command::Call {
            tool, args, json, ..
        } => call(&client, &ui, &tool, args, json).await,
        Command::TaskGet { id, json, .. } => task_get(&client, &id, json).await,
        Command::TaskCancel { id, .. } => task_cancel(&client, &id).await,
        Command::TaskWatch { id, json, .. } => match client.task(&id).await {
            Ok(task) => {
                ui.info(&format!("following task {id}"));
                finish_task(&ui, &task, json).await
            }
            Err(e) => task_error(&id, &e),
        },
        Command::TasksList { json, .. } => tasks_list(&client, json).await,
        Command::Resources { json, .. } => catalog::resources(&client, json).await,
        Command::Read {
            uri, output, json, ..
        } => catalog::read(&client, &uri, output.as_deref(), json).await,
        Command::Prompts { json, .. } => catalog::prompts(&client, json).await,
        Command::Prompt {
            name, args, json, ..
        } => catalog::prompt(&client, &name, &args, json).await,
        Command::Complete {
            reference,
            argument,
            value,
            context,
            json,
            ..
        } => catalog::complete(&client, &reference, &argument, &value, &context, json).await,
    };
    client.close().await;
    outcome
}

/// Connects. With `--era auto`, a server whose era an earlier command found is spoken to in that
/// era at once (see [`EraCache`]): the client's era probe (`ping`, then `server/discover` or
/// `initialize`; see `EraChoice::Auto`) runs once per server, not on every command. A pinned era
/// that no longer works is forgotten and the probe runs again.
async fn connect(conn: &Conn, ui: &Arc<Ui>, answers: Answers) -> Result<Client, Outcome> {
    let cache = EraCache::open();
    let key = cache_key(&conn.target);
    let joins = matches!(
        &conn.target,
        Target::Http {
            session: Some(_),
            ..
        }
    );
    let pinned = match conn.era {
        // A joined session is 2025-11-25 whatever the cache says; nothing to remember either.
        EraArg::Auto if joins => Some(EraChoice::Legacy),
        EraArg::Auto => cache.get(&key),
        EraArg::Legacy => Some(EraChoice::Legacy),
        EraArg::Modern => Some(EraChoice::Modern),
    };
    let mut connected = connect_as(conn, ui, &answers, pinned.unwrap_or(EraChoice::Auto)).await;
    if conn.era == EraArg::Auto && pinned.is_some() && !joins {
        match &connected {
            Ok(Ok(_)) => {}
            _ => {
                // The server changed: probe again.
                cache.forget(&key);
                connected = connect_as(conn, ui, &answers, EraChoice::Auto).await;
            }
        }
    }
    match connected {
        Ok(Ok(client)) => {
            if conn.era == EraArg::Auto && !joins {
                cache.remember(
                    &key,
                    if client.era().is_modern() {
                        EraChoice::Modern
                    } else {
                        EraChoice::Legacy
                    },
                );
            }
            Ok(client)
        }
        Ok(Err(e)) => {
            eprintln!("mcp-tasks: could not connect: {e}{}", timeout_hint(&e));
            Err(Outcome::Failure)
        }
        Err(outcome) => Err(outcome),
    }
}

/// One connection attempt in `era`; the outer `Err` is a usage mistake already reported.
async fn connect_as(
    conn: &Conn,
    ui: &Arc<Ui>,
    answers: &Answers,
    era: EraChoice,
) -> Result<Result<Client, Error>, Outcome> {
    let builder = Client::builder()
        .client_info("mcp-tasks-cli", env!("CARGO_PKG_VERSION"))
        .era(era)
        .handler(CliHandler {
            ui: ui.clone(),
            answers: Arc::new(answers.clone()),
        })
        .on_wire({
            let ui = ui.clone();
            move |direction, text| ui.wire(direction, text)
        });
    // Warnings and worse unless --verbose; --quiet shows none, so asks for the fewest.
    let builder = builder.log_level(match (conn.shown.verbose, conn.shown.quiet) {
        (true, _) => "debug",
        (_, true) => "emergency",
        _ => "warning",
    });
    let builder = match conn.timeout {
        Some(t) => builder.request_timeout(t.0),
        None => builder,
    };
    Ok(match &conn.target {
        Target::Http {
            url,
            token,
            credentials,
            session,
            ca_certs,
        } => {
            let builder =
                (ca_certs.iter()).fold(builder, |b, pem| b.root_certificate_pem(pem.clone()));
            let builder = match (token, credentials) {
                (Some(t), _) => builder.bearer_token(t.clone()),
                (None, Some(c)) => {
                    let builder = builder.client_credentials(&c.client_id, &c.client_secret);
                    match &c.scope {
                        Some(scope) => builder.oauth_scopes(scope.clone()),
                        None => builder,
                    }
                }
                (None, None) => builder,
            };
            let builder = match session {
                Some(id) => builder.legacy_session(id.clone()),
                None => builder,
            };
            builder.connect_http(url.clone()).await
        }
        Target::Stdio {
            program,
            args,
            stderr,
        } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            match stderr {
                ServerStderr::Inherit => {}
                ServerStderr::Null => {
                    command.stderr(std::process::Stdio::null());
                }
                ServerStderr::File(path) => {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path);
                    match file {
                        Ok(f) => {
                            command.stderr(f);
                        }
                        Err(e) => {
                            eprintln!(
                                "mcp-tasks: --server-stderr {}: cannot open it: {e}",
                                path.display()
                            );
                            return Err(Outcome::Failure);
                        }
                    }
                }
            }
            // Its own process group: Ctrl-C at the terminal is ours to handle (by cancelling the
            // task), not a signal that kills the server before it hears `tasks/cancel`.
            command.process_group(0);
            builder.connect_stdio(command).await
        }
    })
}

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

/// The server a command speaks to, as a key of [`EraCache`]: the URL, or the command line.
fn cache_key(target: &Target) -> String {
    match target {
        Target::Http { url, .. } => url.clone(),
        Target::Stdio { program, args, .. } => {
            let mut all = vec![program.clone()];
            all.extend(args.iter().cloned());
            Value::from(all).to_string()
        }
    }
}

/// The era each server (by [`cache_key`]) was last found to speak: `eras.json` in
/// `$MCP_TASKS_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-tasks`, else `~/.cache/mcp-tasks`. Best
/// effort: a cache that cannot be read or written is no cache.
struct EraCache {
    path: Option<std::path::PathBuf>,
}

impl EraCache {
    fn open() -> EraCache {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let dir = env("MCP_TASKS_CACHE_DIR")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                env("XDG_CACHE_HOME").map(|d| std::path::PathBuf::from(d).join("mcp-tasks"))
            })
            .or_else(|| env("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/mcp-tasks")));
        EraCache {
            path: dir.map(|d| d.join("eras.json")),
        }
    }

    fn read(&self) -> Map<String, Value> {
        self.path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Map<String, Value>>(&t).ok())
            .unwrap_or_default()
    }

    fn write(&self, map: &Map<String, Value>) {
        if let Some(p) = &self.path {
            if let Some(dir) = p.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let tmp = p.with_extension(format!("json.{}", std::process::id()));
            if std::fs::write(&tmp, Value::Object(map.clone()).to_string()).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
    }

    fn get(&self, key: &str) -> Option<EraChoice> {
        match self.read().get(key).and_then(Value::as_str) {
            Some("legacy") => Some(EraChoice::Legacy),
            Some("modern") => Some(EraChoice::Modern),
            _ => None,
        }
    }

    fn remember(&self, key: &str, era: EraChoice) {
        let name = if era == EraChoice::Modern {
            "modern"
        } else {
            "legacy"
        };
        let mut map = self.read();
        if map.get(key).and_then(Value::as_str) != Some(name) {
            map.insert(key.to_owned(), Value::from(name));
            self.write(&map);
        }
    }

    fn forget(&self, key: &str) {
        let mut map = self.read();
        if map.remove(key).is_some() {
            self.write(&map);
        }
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

/// `2s`, `1.5s`, `250ms`.
fn show_duration(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// A task command that failed: an unknown id said plainly, anything else as the client says it.
fn task_error(id: &str, e: &Error) -> Outcome {
    match e.rpc_error() {
        Some(rpc) if rpc.code == -32602 => eprintln!(
            "mcp-tasks: the server knows no task {id:?} (unknown, expired, or not yours; a \
             2025-11-25 server may know a task only in the session that created it, which \
             --session ID joins): {}",
            rpc.message
        ),
        _ => eprintln!("mcp-tasks: {e}"),
    }
    Outcome::Failure
}

/// `task get ID`: the task's state, one line (or the server's JSON).
async fn task_get(client: &Client, id: &str, json: bool) -> Outcome {
    let task = match client.request("tasks/get", json!({ "taskId": id })).await {
        Ok(t) => t,
        Err(e) => return task_error(id, &e),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&task).expect("JSON"));
    } else {
        println!("{}", task_line(&task));
    }
    Outcome::Success
}

/// `ID  status  message` for a task object of either era.
fn task_line(task: &Value) -> String {
    let text = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or("");
    let mut line = format!("{}  {}", text("taskId"), text("status"));
    if !text("statusMessage").is_empty() {
        line.push_str(&format!("  {}", text("statusMessage")));
    }
    line
}

/// `task cancel ID`: `tasks/cancel`; the server's word on it.
async fn task_cancel(client: &Client, id: &str) -> Outcome {
    match client
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
    {
        Ok(answer) => {
            // 2025-11-25 answers with the task; 2026-07-28 with an empty ack.
            if answer.get("status").is_some() {
                println!("{}", task_line(&answer));
            } else {
                println!("{id}  cancel requested");
            }
            Outcome::Success
        }
        Err(e) => task_error(id, &e),
    }
}

/// `tasks list`: every page of legacy `tasks/list`; a precise error where there is none.
async fn tasks_list(client: &Client, json: bool) -> Outcome {
    if client.era().is_modern() {
        eprintln!(
            "mcp-tasks: this server speaks {} (the tasks extension), which has no tasks/list: a \
             task id is a capability known only to whoever started the task (each call prints its \
             id; `mcp-tasks task get|watch|cancel ID` takes it). `--era legacy` lists the tasks of \
             a 2025-11-25 session.",
            client.protocol_version()
        );
        return Outcome::Failure;
    }
    if client
        .server()
        .capabilities
        .pointer("/tasks/list")
        .is_none()
    {
        eprintln!(
            "mcp-tasks: the server does not offer tasks/list (no `tasks.list` in its capabilities)"
        );
        return Outcome::Failure;
    }
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = match client.request("tasks/list", params).await {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mcp-tasks: {e}");
                return Outcome::Failure;
            }
        };
        all.extend(
            page.get("tasks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tasks": all })).expect("JSON")
        );
    } else if all.is_empty() {
        eprintln!("(no tasks)");
    } else {
        for task in &all {
            println!("{}", task_line(task));
        }
    }
    Outcome::Success
}

async fn tools(client: &Client, json: bool) -> Outcome {
    let tools = match client.list_tools().await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp-tasks: tools/list failed: {e}");
            return Outcome::Failure;
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tools": tools })).expect("JSON")
        );
        return Outcome::Success;
    }
    let modern = client.era().is_modern();
    let tasks = client.server().supports_tasks;
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    println!("{:width$}  {:14}  DESCRIPTION", "TOOL", "RUNS AS");
    for t in &tools {
        let support = runs_as(modern, tasks, (!modern).then(|| t.task_support()));
        let description = t
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or("");
        println!("{:width$}  {support:14}  {description}", t.name);
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

async fn call(client: &Client, ui: &Arc<Ui>, tool: &str, args: ArgSpec, json: bool) -> Outcome {
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
async fn finish_task(ui: &Arc<Ui>, task: &TaskHandle, json: bool) -> Outcome {
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

/// After a request timeout: what to do about it.
pub(crate) fn timeout_hint(e: &Error) -> &'static str {
    match e {
        Error::Timeout { .. } => "; the server is stuck or slow (--timeout DURATION waits longer)",
        _ => "",
    }
}

/// Prints a result (the JSON, or its content as text) and says how the call ended.
fn print_result(result: &CallToolResult, json: bool) -> Outcome {
    if json {
        println!("{}", serde_json::to_string_pretty(result).expect("JSON"));
    } else {
        for block in &result.content {
            println!("{}", render(block));
        }
        if result.content.is_empty()
            && let Some(s) = &result.structured_content
        {
            println!("{}", serde_json::to_string_pretty(s).expect("JSON"));
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
mod tests {
    use super::*;

    #[test]
    fn the_tools_column_says_what_a_call_will_do() {
        use TaskSupport::*;
        assert_eq!(runs_as(true, true, None), "task or inline");
        assert_eq!(runs_as(true, false, None), "inline");
        assert_eq!(runs_as(false, true, Some(Required)), "task");
        assert_eq!(runs_as(false, true, Some(Optional)), "task");
        assert_eq!(runs_as(false, true, Some(Forbidden)), "inline");
        assert_eq!(runs_as(false, true, None), "inline");
        assert_eq!(runs_as(false, false, Some(Optional)), "inline");
        assert_eq!(runs_as(false, false, Some(Required)), "no (needs task)");
    }

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
}
