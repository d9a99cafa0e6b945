//! The task commands: `task get`, `task cancel`, `task watch` and `tasks list`.

use crate::call::finish_task;
use crate::out::outln;
use crate::outcome::Outcome;
use crate::ui::Ui;
use mcp_tasks_client::{Client, Error};
use serde_json::{Value, json};
use std::sync::Arc;

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

/// `task watch ID`: the task followed to its end, as `call` follows the task it starts.
pub async fn task_watch(client: &Client, ui: &Arc<Ui>, id: &str, json: bool) -> Outcome {
    match client.task(id).await {
        Ok(task) => {
            ui.info(&format!("following task {id}"));
            finish_task(ui, &task, json).await
        }
        Err(e) => task_error(id, &e),
    }
}

/// `task get ID`: the task's state, one line (or the server's JSON).
pub async fn task_get(client: &Client, id: &str, json: bool) -> Outcome {
    let task = match client.request("tasks/get", json!({ "taskId": id })).await {
        Ok(t) => t,
        Err(e) => return task_error(id, &e),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&task).expect("JSON"));
    } else {
        outln!("{}", task_line(&task));
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
pub async fn task_cancel(client: &Client, id: &str) -> Outcome {
    match client
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
    {
        Ok(answer) => {
            // 2025-11-25 answers with the task; 2026-07-28 with an empty ack.
            if answer.get("status").is_some() {
                outln!("{}", task_line(&answer));
            } else {
                outln!("{id}  cancel requested");
            }
            Outcome::Success
        }
        Err(e) => task_error(id, &e),
    }
}

/// `tasks list`: every page of legacy `tasks/list`; a precise error where there is none.
pub async fn tasks_list(client: &Client, json: bool) -> Outcome {
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
    // A joined session (`--session`) skipped `initialize`: its capabilities are unknown here,
    // so the server is asked, and its answer says whether it offers the method.
    let known =
        !client.server().capabilities.is_null() && client.server().capabilities != json!({});
    if known
        && client
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
            Err(e) if e.rpc_error().is_some_and(|rpc| rpc.code == -32601) => {
                eprintln!("mcp-tasks: the server does not offer tasks/list: {e}");
                return Outcome::Failure;
            }
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
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tasks": all })).expect("JSON")
        );
    } else if all.is_empty() {
        eprintln!("(no tasks)");
    } else {
        for task in &all {
            outln!("{}", task_line(task));
        }
    }
    Outcome::Success
}
