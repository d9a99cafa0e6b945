//! `tools/call` in both eras: the modern call with its `InputRequiredResult` rounds (MRTR, shared
//! with `prompts/get` and `resources/read`), the legacy call with task augmentation, and what a
//! call came to (`ToolCall`).

use super::{Client, lock};
use crate::error::Error;
use crate::handler::answer_all;
use crate::result::structured;
use crate::session::TaskMode;
use crate::task::{TaskHandle, TaskKind};
use mcp_tasks_runtime::__internal::meta;
use mcp_tasks_runtime::TaskSupport;
use mcp_tasks_runtime::protocol::{CallToolResult, RpcError, TASKS_EXTENSION};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// How many `InputRequiredResult` rounds one request may take before the client gives up.
const MAX_INPUT_ROUNDS: usize = 32;

/// What a `tools/call` came to: the result at once, or a task to follow.
#[derive(Debug)]
pub enum ToolCall {
    /// The server answered with the result.
    Done(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

impl ToolCall {
    /// The final result, waiting for the task if it is one. A tool error (`isError: true`) is a
    /// result like any other; a failed or cancelled task is an error.
    pub async fn result(self) -> Result<CallToolResult, Error> {
        match self {
            ToolCall::Done(result) => Ok(result),
            ToolCall::Task(task) => task.result().await,
        }
    }

    /// The final result's structured content as `T` (see [`structured`]).
    pub async fn structured<T: DeserializeOwned>(self) -> Result<T, Error> {
        structured(self.result().await?)
    }

    /// The task, if the call became one.
    pub fn task(&self) -> Option<&TaskHandle> {
        match self {
            ToolCall::Task(t) => Some(t),
            ToolCall::Done(_) => None,
        }
    }
}

fn parse_result(method: &str, value: Value) -> Result<CallToolResult, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::invalid(method, format!("not a CallToolResult: {e}")))
}

impl Client {
    /// Calls a tool with these arguments (anything that serialises to a JSON object; `()` or
    /// `Value::Null` for none). The server may answer at once or run the call as a task; whatever
    /// it asks on the way (elicitation, sampling, roots) goes to the input handler, by whichever
    /// route the era uses.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<ToolCall, Error> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| Error::Decode(format!("the arguments do not serialise: {e}")))?;
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        match arguments {
            Value::Null => {}
            Value::Object(_) => {
                params.insert("arguments".into(), arguments);
            }
            other => {
                return Err(Error::Decode(format!(
                    "tool arguments must be a JSON object, not {other}"
                )));
            }
        }
        if self.inner.peer.http().is_some() && !lock(&self.inner.tools).listed {
            // The tool's x-mcp-header annotations decide the request's headers.
            self.list_tools_for_call().await;
        }
        if let Some(why) = lock(&self.inner.tools).invalid.get(name) {
            return Err(Error::invalid(
                "tools/list",
                format!("the tool `{name}` is not usable: {why}"),
            ));
        }
        if self.inner.era.is_modern() {
            self.call_modern(name, params).await
        } else {
            self.call_legacy(name, params).await
        }
    }

    /// Follows a task that already exists on the server, by its id (one a call of an earlier
    /// connection started, say): one `tasks/get`, then the same driver as a call's task (status,
    /// the task's questions answered by the input handler, the result). An unknown, expired or
    /// someone else's id is [`Error::TaskGet`]. The tool's name is not known
    /// ([`TaskHandle::tool`] is empty). In the legacy era a server may tie tasks to the session
    /// that created them, and then does not know them on another connection.
    pub async fn task(&self, task_id: &str) -> Result<TaskHandle, Error> {
        let task = match self
            .inner
            .request("tasks/get", json!({ "taskId": task_id }))
            .await?
        {
            Ok(task) => task,
            Err(error) => {
                return Err(Error::TaskGet {
                    task_id: task_id.to_owned(),
                    error,
                });
            }
        };
        let kind = if self.inner.era.is_modern() {
            TaskKind::Modern
        } else {
            TaskKind::Legacy {
                progress_token: None,
            }
        };
        TaskHandle::start(self.inner.clone(), "", kind, &task)
    }

    async fn call_modern(&self, name: &str, base: Map<String, Value>) -> Result<ToolCall, Error> {
        let result = match self.request_answering("tools/call", base).await? {
            Ok(result) => result,
            Err(error)
                if error.code == RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY
                    && error
                        .data
                        .as_ref()
                        .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
                        .and_then(|e| e.get(TASKS_EXTENSION))
                        .is_some() =>
            {
                return Err(Error::TaskCreation {
                    tool: name.to_owned(),
                    reason: "the tool runs only as a task, and the client does not take tasks"
                        .into(),
                    error: Some(error),
                });
            }
            Err(error) => {
                return Err(Error::Rpc {
                    method: "tools/call".into(),
                    error,
                });
            }
        };
        match result.get("resultType").and_then(Value::as_str) {
            None | Some("complete") => Ok(ToolCall::Done(parse_result("tools/call", result)?)),
            Some("task") => {
                let task = TaskHandle::start(self.inner.clone(), name, TaskKind::Modern, &result)?;
                Ok(ToolCall::Task(task))
            }
            Some(other) => Err(Error::invalid(
                "tools/call",
                format!("unknown resultType {other:?}"),
            )),
        }
    }

    /// A modern request the server may answer with an `InputRequiredResult` (MRTR: `tools/call`,
    /// `prompts/get`, `resources/read`): each round's `inputRequests` go to the input handler,
    /// and the request is sent again with the `inputResponses` and the `requestState`, until the
    /// server answers otherwise. Each round carries a progress token (progress on the request's
    /// stream keeps its timeout from running out). The last answer is returned as it came (its
    /// `resultType` is the caller's to read); a JSON-RPC error is `Ok(Err(..))`.
    pub(super) async fn request_answering(
        &self,
        method: &str,
        base: Map<String, Value>,
    ) -> Result<Result<Value, RpcError>, Error> {
        let mut retry = Map::new();
        for _ in 0..MAX_INPUT_ROUNDS {
            let mut params = base.clone();
            params.insert(
                "_meta".into(),
                json!({ meta::PROGRESS_TOKEN: format!("mcp-tasks-client-{}", rand_token()) }),
            );
            params.extend(retry.clone());
            let result = match self.inner.request(method, Value::Object(params)).await? {
                Ok(result) => result,
                Err(error) => return Ok(Err(error)),
            };
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(Ok(result));
            }
            let requests = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let state = result.get("requestState").cloned();
            if requests.is_empty() && state.is_none() {
                return Err(Error::invalid(
                    method,
                    "an InputRequiredResult with neither inputRequests nor requestState",
                ));
            }
            let answers = answer_all(self.inner.peer.handler(), &requests, None).await;
            if let Some((_, method)) = answers.declined.into_iter().next() {
                return Err(Error::InputDeclined { method });
            }
            retry.clear();
            retry.insert("inputResponses".into(), Value::Object(answers.responses));
            if let Some(state) = state {
                retry.insert("requestState".into(), state);
            }
        }
        Err(Error::invalid(
            method,
            format!("the server asked for input more than {MAX_INPUT_ROUNDS} times"),
        ))
    }

    async fn call_legacy(
        &self,
        name: &str,
        mut params: Map<String, Value>,
    ) -> Result<ToolCall, Error> {
        let augment = self.inner.task_mode == TaskMode::Auto
            && self.inner.server.supports_tasks
            && matches!(
                self.task_support(name).await,
                Some(TaskSupport::Optional | TaskSupport::Required)
            );
        // Every call carries a progress token: a task's progress is shown in its updates, and an
        // inline call's keeps its request timeout from running out while it comes.
        let progress_token = format!("mcp-tasks-client-{}", rand_token());
        params.insert(
            "_meta".into(),
            json!({ meta::PROGRESS_TOKEN: progress_token }),
        );
        if augment {
            let mut task = Map::new();
            if let Some(ttl) = self.inner.task_ttl {
                task.insert("ttl".into(), Value::from(ttl.as_millis() as u64));
            }
            params.insert("task".into(), Value::Object(task));
        }
        let result = match self
            .inner
            .request("tools/call", Value::Object(params))
            .await?
        {
            Ok(result) => result,
            Err(error) if augment => {
                return Err(Error::TaskCreation {
                    tool: name.to_owned(),
                    reason: "the server refused the task-augmented call".into(),
                    error: Some(error),
                });
            }
            Err(error)
                if error.code == RpcError::METHOD_NOT_FOUND
                    && lock(&self.inner.tools).tools.get(name)
                        == Some(&Some(TaskSupport::Required)) =>
            {
                return Err(Error::TaskCreation {
                    tool: name.to_owned(),
                    reason: "the tool runs only as a task, and the call was not one".into(),
                    error: Some(error),
                });
            }
            Err(error) => {
                return Err(Error::Rpc {
                    method: "tools/call".into(),
                    error,
                });
            }
        };
        match result.get("task") {
            Some(task) if task.is_object() => {
                let kind = TaskKind::Legacy {
                    progress_token: augment.then_some(progress_token),
                };
                Ok(ToolCall::Task(TaskHandle::start(
                    self.inner.clone(),
                    name,
                    kind,
                    task,
                )?))
            }
            _ => Ok(ToolCall::Done(parse_result("tools/call", result)?)),
        }
    }
}

/// A short random token (progress tokens).
fn rand_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{t:x}-{n}")
}
