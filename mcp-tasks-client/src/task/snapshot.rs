//! A task's state as the server reports it (`tasks/get`, a pushed notification, a
//! `CreateTaskResult`), read into a [`TaskSnapshot`]; and a failed task's error.

use super::Shared;
use crate::error::Error;
use mcp_tasks_runtime::protocol::codes;
use mcp_tasks_runtime::protocol::jsonrpc::RpcError;
use mcp_tasks_runtime::protocol::task::TaskStatus;
use serde_json::Value;
use std::time::Duration;

/// Progress a legacy task reported (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// A task's state as last seen.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Its `statusMessage`.
    pub status_message: Option<String>,
    /// Its latest progress (legacy era; modern tasks carry none).
    pub progress: Option<Progress>,
    /// The poll interval the server suggests.
    pub poll_interval: Option<Duration>,
    /// How long the server keeps the task (`None`: unlimited or not said).
    pub ttl: Option<Duration>,
    /// `createdAt`, as sent.
    pub created_at: Option<String>,
    /// `lastUpdatedAt`, as sent.
    pub last_updated_at: Option<String>,
}

impl TaskSnapshot {
    /// Reads either era's task object (`ttlMs`/`pollIntervalMs` or `ttl`/`pollInterval`).
    pub(super) fn parse(v: &Value) -> Result<TaskSnapshot, String> {
        let task_id = v
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or("no `taskId`")?
            .to_owned();
        let status: TaskStatus =
            serde_json::from_value(v.get("status").cloned().unwrap_or_default()).map_err(|_| {
                format!(
                    "not a task status: {}",
                    v.get("status").unwrap_or(&Value::Null)
                )
            })?;
        let ms = |a: &str, b: &str| {
            v.get(a)
                .or_else(|| v.get(b))
                .and_then(Value::as_f64)
                .filter(|n| *n >= 0.0)
                .map(|n| Duration::from_millis(n as u64))
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(TaskSnapshot {
            task_id,
            status,
            status_message: text("statusMessage"),
            progress: None,
            poll_interval: ms("pollIntervalMs", "pollInterval"),
            ttl: ms("ttlMs", "ttl"),
            created_at: text("createdAt"),
            last_updated_at: text("lastUpdatedAt"),
        })
    }

    pub(super) fn same_state(&self, other: &TaskSnapshot) -> bool {
        self.status == other.status
            && self.status_message == other.status_message
            && self.progress == other.progress
    }
}

pub(super) fn parse_snapshot(
    shared: &Shared,
    method: &str,
    task: &Value,
) -> Result<TaskSnapshot, Error> {
    let snap = TaskSnapshot::parse(task).map_err(|why| Error::invalid(method, why))?;
    if snap.task_id != shared.id {
        return Err(Error::invalid(
            method,
            format!("asked about task {}, got task {}", shared.id, snap.task_id),
        ));
    }
    Ok(snap)
}

pub(super) fn parse_rpc_error(task: &Value, fallback: Option<String>) -> RpcError {
    task.get("error")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_else(|| {
            RpcError::new(
                codes::INTERNAL_ERROR,
                fallback.unwrap_or_else(|| "the task failed".into()),
            )
        })
}
