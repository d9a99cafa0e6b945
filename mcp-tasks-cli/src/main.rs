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
//! mcp-tasks skills list [--json] ... | skills get SKILL [--file PATH] [--output FILE] [--json] ...
//! mcp-tasks prompt NAME [--args JSON|@FILE|KEY=VALUE] [--json] ...
//! mcp-tasks complete (--prompt NAME | --resource URI_TEMPLATE) ARGUMENT [VALUE] [--args ...] ...
//! ```
//!
//! A call that runs as a task is followed to its end: a live progress line on a terminal (one
//! line per change elsewhere), the tool's questions asked at the prompt or answered from
//! `--answers`, Ctrl-C cancels it (`tasks/cancel`) and exits 130. Exit codes: 0 success, 1 the
//! tool reported an error, 2 protocol or usage error, 130 interrupted.

mod answers;
mod args;
mod ask;
mod call;
mod catalog;
mod cli;
mod command;
mod connect;
mod duration;
mod era_cache;
mod form;
mod handler;
mod out;
mod outcome;
mod render;
mod skills;
mod tasks;
mod ui;

use answers::Answers;
use call::call;
use clap::Parser;
use command::Command;
use connect::{connect, forget_era};
use outcome::Outcome;
use render::tools;
use std::process::ExitCode;
use std::time::Duration;
use tasks::{task_cancel, task_get, task_watch, tasks_list};
use ui::{Stop, Ui};

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
        | Command::Complete { conn, .. }
        | Command::Skills { conn, .. } => (conn.clone(), Answers::default()),
    };
    let mut client = match connect(&conn, &ui, answers.clone()).await {
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
        } => match call(&client, &ui, &conn.target, &tool, &args, json).await {
            Ok(outcome) => outcome,
            // The era was remembered wrong: forgotten, found again, and the call made again.
            Err(wrong) if forget_era(&conn) => {
                client.close().await;
                client = match connect(&conn, &ui, answers).await {
                    Ok(c) => c,
                    Err(o) => return o,
                };
                match call(&client, &ui, &conn.target, &tool, &args, json).await {
                    Ok(outcome) => outcome,
                    Err(again) => {
                        drop(wrong);
                        again.report()
                    }
                }
            }
            Err(wrong) => wrong.report(),
        },
        Command::TaskGet { id, json, .. } => task_get(&client, &id, json).await,
        Command::TaskCancel { id, .. } => task_cancel(&client, &id).await,
        Command::TaskWatch { id, json, .. } => task_watch(&client, &ui, &id, json).await,
        Command::TasksList { json, .. } => tasks_list(&client, json).await,
        Command::Resources { json, .. } => catalog::resources(&client, json).await,
        Command::Read {
            uri, output, json, ..
        } => catalog::read(&client, &uri, output.as_deref(), json).await,
        Command::Prompts { json, .. } => catalog::prompts(&client, json).await,
        Command::Skills { action, .. } => skills::run(&client, action).await,
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
