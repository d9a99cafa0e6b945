//! Calls that start inline and become tasks part-way (`#[tool(defer_task = true)]` +
//! `ctx.start_task()`): the backend routes input through MRTR until the switch, and through the
//! task's stored input requests after it.

use crate::protocol::{InputRequest, ResourceContents};
use crate::tool::{ContextBackend, InputFuture, PublishFuture};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use tokio::sync::oneshot;

/// The backend of a deferred call: MRTR first, then the task's.
pub(crate) struct Deferred {
    current: RwLock<Arc<dyn ContextBackend>>,
    task_id: OnceLock<String>,
    requested: AtomicBool,
    resume: Mutex<Option<oneshot::Sender<()>>>,
}

impl Deferred {
    pub(crate) fn new(inline: Arc<dyn ContextBackend>) -> Self {
        Deferred {
            current: RwLock::new(inline),
            task_id: OnceLock::new(),
            requested: AtomicBool::new(false),
            resume: Mutex::new(None),
        }
    }

    fn current(&self) -> Arc<dyn ContextBackend> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the tool has asked to become a task and waits for it.
    pub(crate) fn wants_task(&self) -> bool {
        self.requested.load(Ordering::SeqCst) && self.task_id.get().is_none()
    }

    /// Switches to the task's backend and lets the tool go on.
    pub(crate) fn switch_to(&self, task_id: &str, backend: Arc<dyn ContextBackend>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = backend;
        let _ = self.task_id.set(task_id.to_owned());
        if let Some(resume) = self.resume.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = resume.send(());
        }
    }
}

impl ContextBackend for Deferred {
    fn input(&self, request: InputRequest) -> InputFuture {
        self.current().input(request)
    }

    fn status(&self, message: String) {
        self.current().status(message);
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.current().progress(progress, total, message);
    }

    fn log(&self, params: Value) {
        self.current().log(params);
    }

    fn task_id(&self) -> Option<&str> {
        self.task_id.get().map(String::as_str)
    }

    fn publish(&self, name: String, contents: ResourceContents) -> PublishFuture {
        self.current().publish(name, contents)
    }

    fn is_replay(&self) -> bool {
        // Once a task, it never replays; before, the MRTR phase may.
        self.task_id.get().is_none() && self.current().is_replay()
    }

    fn start_task(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send>>> {
        if self.task_id.get().is_some() {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        *self.resume.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        self.requested.store(true, Ordering::SeqCst);
        Some(Box::pin(async move {
            let _ = rx.await;
        }))
    }
}
