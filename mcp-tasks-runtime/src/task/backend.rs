//! The backend of a tool running as a task ([`TaskBackend`], its [`ContextBackend`]): input
//! requests go through the store (and, for a 2025-11-25 task, to the client's session first), the
//! status and progress the tool reports become the task's status message, and an input request the
//! tool stops waiting for is withdrawn.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::protocol::Era;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{Owner, TaskId};
use crate::protocol::{InputRequest, ResourceContents, meta};
use crate::store::{StoreError, TaskStore};
use crate::tool::{ContextBackend, InputError, InputFuture, PublishFuture, ToolError};

/// The way back to a legacy client: server-to-client requests and notifications on its session.
/// Implemented by the server's connections; the engine knows only this trait.
pub trait ClientChannel: Send + Sync + 'static {
    /// Sends a request and waits for the client's answer.
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + '_>>;
    /// Sends a notification.
    fn notify(&self, method: &str, params: Value);
}

/// The backend of a tool running as a task.
pub(crate) struct TaskBackend {
    store: Arc<dyn TaskStore>,
    id: TaskId,
    owner: Owner,
    origin: Era,
    channel: Option<Arc<dyn ClientChannel>>,
    counter: AtomicUsize,
    status: Arc<StatusSlot>,
    progress_token: Option<Value>,
    /// The last status and the last progress the tool reported; the status message shows both.
    shown: Mutex<StatusLine>,
    /// Input requests of this task waiting for an answer, for
    /// [`EngineConfig::max_inputs_per_task`](super::engine::EngineConfig::max_inputs_per_task).
    outstanding: Arc<AtomicUsize>,
    max_outstanding: usize,
    /// How long a store call is retried while the store cannot be reached.
    store_patience: Duration,
    /// The largest checkpoint, in bytes of JSON.
    checkpoint_bytes: usize,
    /// A durable task's run: its number, checkpoint and kept answers.
    durable: Option<Arc<DurableCtx>>,
    /// Cancelled when the server starts draining.
    draining: Option<tokio_util::sync::CancellationToken>,
    /// What this run of the tool published, against the task's output limits.
    published: Arc<Published>,
}

/// What a run of a durable task's body starts from.
#[derive(Debug)]
pub(crate) struct DurableCtx {
    /// Which run this is.
    pub(super) attempt: u32,
    /// The checkpoint kept before this run began.
    pub(super) resumed: Option<Value>,
    /// Answers taken by the runs before, by key: the same questions get them at once.
    pub(super) kept: std::collections::BTreeMap<String, Value>,
    /// Keys answered by the client but not taken before the last run died.
    pub(super) delivered: std::collections::BTreeSet<String>,
    /// Keys asked by the last run and not answered yet: the question stands.
    pub(super) outstanding: std::collections::BTreeSet<String>,
}

/// The size of each output a run of a tool published, by name (text bytes, or base64 bytes for
/// a blob), against [`ToolBounds::max_outputs`] and [`ToolBounds::max_output_bytes`].
struct Published {
    sizes: Mutex<HashMap<String, usize>>,
    max_outputs: usize,
    max_bytes: usize,
}

/// What bounds a task's tool: its outstanding input requests, and how long its store calls
/// ride out an outage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolBounds {
    pub(crate) max_outstanding: usize,
    pub(crate) store_patience: Duration,
    pub(crate) checkpoint_bytes: usize,
    /// How many outputs the task may keep, and how many bytes (text, or base64 for a blob)
    /// all of them together.
    pub(crate) max_outputs: usize,
    pub(crate) max_output_bytes: usize,
}

impl TaskBackend {
    /// The backend of task `id`, which `owner` created in era `origin`; `channel` is the legacy
    /// session (if any) and `progress_token` the token of the creating request. At most
    /// `max_outstanding` input requests may wait at once.
    pub(super) fn new(
        store: Arc<dyn TaskStore>,
        id: TaskId,
        owner: Owner,
        origin: Era,
        channel: Option<Arc<dyn ClientChannel>>,
        progress_token: Option<Value>,
        bounds: ToolBounds,
    ) -> Self {
        TaskBackend {
            store,
            id,
            owner,
            origin,
            channel,
            counter: AtomicUsize::new(0),
            status: Arc::default(),
            progress_token,
            shown: Default::default(),
            outstanding: Arc::new(AtomicUsize::new(0)),
            max_outstanding: bounds.max_outstanding,
            store_patience: bounds.store_patience,
            checkpoint_bytes: bounds.checkpoint_bytes,
            durable: None,
            draining: None,
            published: Arc::new(Published {
                sizes: Mutex::default(),
                max_outputs: bounds.max_outputs,
                max_bytes: bounds.max_output_bytes,
            }),
        }
    }

    /// The backend of a task of a server that may drain (what `ctx.draining()` waits for).
    pub(super) fn with_draining(mut self, draining: tokio_util::sync::CancellationToken) -> Self {
        self.draining = Some(draining);
        self
    }

    /// The backend of a durable task's run.
    pub(super) fn with_durable(mut self, durable: DurableCtx) -> Self {
        self.durable = Some(Arc::new(durable));
        self
    }

    /// Where the status messages the tool sets wait for the task's driver.
    pub(super) fn status_slot(&self) -> Arc<StatusSlot> {
        self.status.clone()
    }

    fn next_key(&self, method: &str) -> String {
        super::input_key(method, self.counter.fetch_add(1, Ordering::SeqCst))
    }
}

impl Published {
    /// Counts output `name` of `size` bytes against the task's output limits (one published
    /// again replaces its earlier size), or says which limit is in the way. Returns the size the
    /// name had, to put back with [`unreserve`](Self::unreserve) if the store does not keep it.
    fn reserve(&self, name: &str, size: usize) -> Result<Option<usize>, RpcError> {
        let mut published = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
        let before = published.get(name).copied();
        if before.is_none() && published.len() >= self.max_outputs {
            return Err(RpcError::limit_reached(
                "outputs_per_task",
                self.max_outputs,
                "the task has as many outputs as it may keep; publish under a name it already \
                 has to replace one",
            ));
        }
        let total: usize = published.values().sum::<usize>() - before.unwrap_or(0) + size;
        if total > self.max_bytes {
            return Err(RpcError::limit_reached(
                "output_bytes_per_task",
                self.max_bytes,
                &format!(
                    "`{name}` ({size} bytes) would make the task's outputs {total} bytes in all"
                ),
            ));
        }
        published.insert(name.to_owned(), size);
        Ok(before)
    }

    /// Puts back what [`reserve`](Self::reserve) counted for `name`.
    fn unreserve(&self, name: &str, before: Option<usize>) {
        let mut published = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
        match before {
            Some(size) => published.insert(name.to_owned(), size),
            None => published.remove(name),
        };
    }
}

/// One outstanding input request of a task, counted while it waits.
struct Asking(Arc<AtomicUsize>);

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a task's `statusMessage` is made of. `ctx.status(..)` replaces the status, `ctx.progress(..)`
/// replaces the progress; neither erases the other. The message is the status alone, the progress
/// alone (`3/10: copying`), or both: `{status} ({progress})`, e.g. `importing (3/10: copying)`.
#[derive(Debug, Default)]
struct StatusLine {
    status: Option<String>,
    progress: Option<String>,
}

impl StatusLine {
    fn message(&self) -> String {
        match (&self.status, &self.progress) {
            (Some(s), Some(p)) => format!("{s} ({p})"),
            (Some(s), None) => s.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => String::new(),
        }
    }
}

/// The newest status message a tool set that is not in the store yet. The task's driver writes
/// it soon after; an input request writes it first, so a client that sees `input_required` also
/// sees the message the tool set before asking. Newest wins: a message overtaken before it
/// reached the store was never visible to anyone.
#[derive(Default)]
pub(crate) struct StatusSlot {
    pending: Mutex<Option<String>>,
    notify: tokio::sync::Notify,
}

impl StatusSlot {
    fn set(&self, message: String) {
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        self.notify.notify_one();
    }

    pub(super) fn take(&self) -> Option<String> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Resolves once a message was set since the last time this resolved.
    pub(super) async fn changed(&self) {
        self.notify.notified().await;
    }
}

fn store_err(e: StoreError) -> InputError {
    match e {
        StoreError::NotFound | StoreError::Terminal(_) => InputError::Cancelled,
        StoreError::Backend(why) => InputError::Store(why.to_string()),
        other => InputError::Store(other.to_string()),
    }
}

/// The longest pause between two tries of a store call ([`persist`]).
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Calls the store until it answers, for at most `patience`: a [`StoreError::Backend`] (the
/// store cannot be reached, or failed) is tried again with a pause that doubles from 50 ms up to
/// [`RETRY_MAX`]; any other answer, or the last failure once `patience` is spent, is returned.
/// So a tool waiting for input, or saying its status, rides out a restart of its store.
async fn persist<'a, T, F>(id: &TaskId, patience: Duration, mut call: F) -> Result<T, StoreError>
where
    F: FnMut() -> crate::store::StoreFuture<'a, T>,
{
    let give_up = tokio::time::Instant::now() + patience;
    let mut pause = Duration::from_millis(50);
    let mut failures = 0u32;
    loop {
        match call().await {
            Err(StoreError::Backend(e)) if tokio::time::Instant::now() + pause < give_up => {
                if failures == 0 {
                    tracing::warn!(task = %id, error = %e, "the task store failed a call of the task's tool; trying again until it answers");
                }
                failures += 1;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(RETRY_MAX);
            }
            answer => {
                if failures > 0 && answer.is_ok() {
                    tracing::info!(task = %id, failures, "the task store answers the task's tool again");
                }
                return answer;
            }
        }
    }
}

/// Adds the input request under `key`, retried like [`persist`]. A try that failed may still
/// have been applied (the store did it, the answer was lost), so a later try that finds the key
/// taken looks for the request it added: there, it is the version after it.
async fn ask(
    store: &dyn TaskStore,
    id: &TaskId,
    key: &str,
    request: InputRequest,
    patience: Duration,
) -> Result<u64, StoreError> {
    let mut tries = 0u32;
    let added = persist(id, patience, || {
        tries += 1;
        store.add_input_request(id, key.to_owned(), request.clone())
    })
    .await;
    match added {
        Err(StoreError::InputKeyReused(reused)) if tries > 1 && reused == key => {
            let record = persist(id, patience, || store.get_unchecked(id)).await?;
            match record {
                Some(record) if record.input_requests.contains_key(key) => Ok(record.version),
                _ => Err(StoreError::InputKeyReused(reused)),
            }
        }
        other => other,
    }
}

/// Withdraws an input request nobody waits for any more (the tool dropped the future).
struct Outstanding {
    store: Arc<dyn TaskStore>,
    id: TaskId,
    key: Option<String>,
    patience: Duration,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let store = self.store.clone();
            let id = self.id.clone();
            let patience = self.patience;
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ =
                        persist(&id, patience, || store.withdraw_input_request(&id, &key)).await;
                });
            }
        }
    }
}

impl ContextBackend for TaskBackend {
    fn input(&self, request: InputRequest) -> InputFuture {
        let key = match &request.key {
            Some(key) => key.clone(),
            None => self.next_key(&request.method),
        };
        let store = self.store.clone();
        let id = self.id.clone();
        if let Some(durable) = &self.durable {
            // A run after the first: the questions the runs before it asked are not asked again.
            if let Some(answer) = durable.kept.get(&key) {
                let answer = answer.clone();
                return Box::pin(async move { Ok(answer) });
            }
            if durable.delivered.contains(&key) || durable.outstanding.contains(&key) {
                let patience = self.store_patience;
                return Box::pin(
                    async move { wait_for_answer(&*store, &id, &key, 0, patience).await },
                );
            }
        }
        let owner = self.owner.clone();
        let origin = self.origin;
        let channel = self.channel.clone();
        let status = self.status.clone();
        let patience = self.store_patience;
        let asking = if self.outstanding.fetch_add(1, Ordering::SeqCst) >= self.max_outstanding {
            self.outstanding.fetch_sub(1, Ordering::SeqCst);
            let max = self.max_outstanding;
            return Box::pin(async move {
                Err(InputError::LimitReached(RpcError::limit_reached(
                    "inputs_per_task",
                    max,
                    "this task already waits on as many input requests as it may",
                )))
            });
        } else {
            Asking(self.outstanding.clone())
        };
        Box::pin(async move {
            let _asking = asking;
            if let Some(message) = status.take() {
                persist(&id, patience, || {
                    store.set_status_message(&id, Some(message.clone()))
                })
                .await
                .map_err(store_err)?;
            }
            // Only the 2025-11-25 path sends the request itself.
            let sent =
                matches!((origin, &channel), (Era::Legacy, Some(_))).then(|| request.clone());
            let timer = crate::telemetry::InputTimer::start(&request.method);
            let _waiting = crate::telemetry::Held::new(crate::telemetry::Gauge::WaitingForInput);
            let version = ask(&*store, &id, &key, request, patience)
                .await
                .map_err(store_err)?;
            let mut guard = Outstanding {
                store: store.clone(),
                id: id.clone(),
                key: Some(key.clone()),
                patience,
            };
            let answer = match (sent, channel) {
                (Some(request), Some(channel)) => {
                    // 2025-11-25: an ordinary server-to-client request tagged with the task.
                    let mut params = request.params;
                    if !params.is_object() {
                        params = json!({});
                    }
                    let meta = params
                        .as_object_mut()
                        .expect("object")
                        .entry("_meta")
                        .or_insert_with(|| json!({}));
                    if let Value::Object(m) = meta {
                        m.insert(meta::RELATED_TASK.into(), json!({ "taskId": id.as_str() }));
                    }
                    let answer = channel
                        .request(&request.method, params)
                        .await
                        .map_err(InputError::from_rpc)?;
                    let mut responses = Map::new();
                    responses.insert(key.clone(), answer);
                    persist(&id, patience, || {
                        store.deliver_responses(&id, &owner, responses.clone())
                    })
                    .await
                    .map_err(store_err)?;
                    wait_for_answer(&*store, &id, &key, version, patience).await?
                }
                _ => wait_for_answer(&*store, &id, &key, version, patience).await?,
            };
            guard.key = None;
            timer.done();
            Ok(answer)
        })
    }

    fn status(&self, message: String) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        shown.status = Some(message);
        self.status.set(shown.message());
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        // Progress notifications are not part of tasks in 2026-07-28; the status message carries
        // it, next to the status the tool set (see `StatusLine`).
        let text = match (total, &message) {
            (Some(t), Some(m)) => format!("{progress}/{t}: {m}"),
            (Some(t), None) => format!("{progress}/{t}"),
            (None, Some(m)) => format!("{progress}: {m}"),
            (None, None) => format!("{progress}"),
        };
        {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            shown.progress = Some(text);
            self.status.set(shown.message());
        }
        if let (Era::Legacy, Some(channel), Some(token)) =
            (self.origin, &self.channel, &self.progress_token)
        {
            let mut params = json!({ "progressToken": token, "progress": progress });
            if let Some(t) = total {
                params["total"] = json!(t);
            }
            if let Some(m) = message {
                params["message"] = json!(m);
            }
            channel.notify("notifications/progress", params);
        }
    }

    fn log(&self, mut params: Value) {
        // 2025-11-25: on the session, tagged with the task. The modern tasks extension has no
        // stream for a task's log messages; they are dropped.
        if let (Era::Legacy, Some(channel)) = (self.origin, &self.channel) {
            params["_meta"] = json!({ meta::RELATED_TASK: { "taskId": self.id.as_str() } });
            channel.notify("notifications/message", params);
        }
    }

    fn task_id(&self) -> Option<&str> {
        Some(self.id.as_str())
    }

    fn attempt(&self) -> u32 {
        self.durable.as_ref().map_or(1, |d| d.attempt)
    }

    fn resumed(&self) -> Option<&Value> {
        self.durable.as_ref()?.resumed.as_ref()
    }

    fn draining(&self) -> Option<tokio_util::sync::CancellationToken> {
        self.draining.clone()
    }

    fn checkpoint(&self, value: Value) -> PublishFuture {
        if self.durable.is_none() {
            return Box::pin(async { Ok(()) });
        }
        let size = serde_json::to_string(&value).map_or(usize::MAX, |text| text.len());
        if size > self.checkpoint_bytes {
            let max = self.checkpoint_bytes;
            return Box::pin(async move {
                Err(ToolError::internal(format!(
                    "the checkpoint is {size} bytes of JSON, more than the {max} the server \
                     keeps (Limits::checkpoint_bytes); the last checkpoint stays"
                )))
            });
        }
        let (store, id) = (self.store.clone(), self.id.clone());
        let patience = self.store_patience;
        Box::pin(async move {
            persist(&id, patience, || store.checkpoint(&id, value.clone()))
                .await
                .map_err(|e| ToolError::internal(format!("the checkpoint was not kept: {e}")))
        })
    }

    fn publish(&self, name: String, contents: ResourceContents) -> PublishFuture {
        let size = match &contents {
            ResourceContents::Text { text, .. } => text.len(),
            ResourceContents::Blob { blob, .. } => blob.len(),
        };
        let before = match self.published.reserve(&name, size) {
            Ok(before) => before,
            Err(limit) => return Box::pin(std::future::ready(Err(ToolError::from(limit)))),
        };
        let (store, id) = (self.store.clone(), self.id.clone());
        let (patience, published) = (self.store_patience, self.published.clone());
        Box::pin(async move {
            let kept = persist(&id, patience, || {
                store.add_output(&id, name.clone(), contents.clone())
            })
            .await;
            kept.map_err(|e| {
                published.unreserve(&name, before);
                ToolError::internal(format!("the task's output `{name}` was not kept: {e}"))
            })
        })
    }
}

/// Waits, through the store's own wake-ups, until `key` is answered; the task ending means the
/// tool was cancelled.
async fn wait_for_answer(
    store: &dyn TaskStore,
    id: &TaskId,
    key: &str,
    mut seen: u64,
    patience: Duration,
) -> Result<Value, InputError> {
    loop {
        let taken = persist(id, patience, || store.take_response(id, key)).await;
        if let Some(answer) = taken.map_err(store_err)? {
            return Ok(answer);
        }
        let changed = persist(id, patience, || store.changed_status(id, seen)).await;
        let (version, status) = changed.map_err(store_err)?;
        if status.is_terminal() {
            tracing::debug!(task = %id, %status, "the task ended while its tool waited for input; stopping the tool");
            return Err(InputError::Cancelled);
        }
        seen = version;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::task::TaskStatus;
    use crate::store::{MemoryTaskStore, NewTask};

    #[test]
    fn the_status_message_shows_the_status_and_the_progress_side_by_side() {
        let mut line = StatusLine {
            status: None,
            progress: Some("3/10: copying".into()),
        };
        assert_eq!(line.message(), "3/10: copying");
        line.status = Some("importing".into());
        assert_eq!(line.message(), "importing (3/10: copying)");
        line.progress = None;
        assert_eq!(line.message(), "importing");
    }

    /// A status message set just before asking for input is in the store by the time the input
    /// request is: a client that sees `input_required` sees the message with it, whether or not
    /// the task's driver got round to writing it (here there is no driver at all).
    #[tokio::test]
    async fn the_status_set_before_an_input_request_lands_with_it() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
        let owner = Owner::new("a");
        let record = store
            .create(NewTask::new(owner.clone(), Era::Modern))
            .await
            .unwrap();
        let backend = TaskBackend::new(
            store.clone(),
            record.id.clone(),
            owner.clone(),
            Era::Modern,
            None,
            None,
            ToolBounds {
                max_outstanding: 8,
                store_patience: Duration::from_secs(1),
                checkpoint_bytes: 1024,
                max_outputs: 100,
                max_output_bytes: 1 << 20,
            },
        );
        backend.status("first".into());
        backend.status("planning".into());
        let asking = tokio::spawn(backend.input(InputRequest::new(
            "elicitation/create",
            serde_json::json!({ "message": "?" }),
        )));
        let mut seen = record.version;
        let now = loop {
            let now = store.changed(&record.id, seen).await.unwrap();
            seen = now.version;
            if now.status == TaskStatus::InputRequired {
                break now;
            }
        };
        assert_eq!(now.status_message.as_deref(), Some("planning"));
        asking.abort();
    }
}
