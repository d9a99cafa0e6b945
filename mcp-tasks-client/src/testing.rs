//! Testing tools: a [`Scripted`] input handler that answers from a script and records what it was
//! asked. Connect it to a [`Server`](mcp_tasks_runtime::Server) in the same process with
//! [`ClientBuilder::connect_in_process`](crate::ClientBuilder::connect_in_process).

use crate::handler::{
    Asked, ElicitRequest, ElicitResponse, InputCapabilities, InputHandler, RootsRequest,
    SamplingRequest, SamplingResponse,
};
use mcp_tasks_runtime::protocol::Root;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// An [`InputHandler`] that answers from a script, in order (elicitations from one queue,
/// samplings from another), and records every request. When a queue runs dry, elicitations are
/// declined and samplings refused. Clones share the script and the record, so keep one to
/// inspect [`asked`](Self::asked) after handing another to the client.
///
/// ```
/// use mcp_tasks_client::Scripted;
///
/// let script = Scripted::new()
///     .accept(serde_json::json!({ "sources": 3 }))
///     .sample_text("A one-sentence summary.")
///     .decline();
/// assert_eq!(script.remaining(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct Scripted {
    inner: Arc<Mutex<Script>>,
}

#[derive(Debug)]
struct Script {
    capabilities: InputCapabilities,
    elicit: VecDeque<ElicitResponse>,
    sample: VecDeque<SamplingResponse>,
    roots: Vec<Root>,
    asked: Vec<Asked>,
}

impl Default for Scripted {
    fn default() -> Self {
        Scripted::new()
    }
}

impl Scripted {
    /// An empty script that declares form elicitation, sampling and roots.
    pub fn new() -> Self {
        Scripted {
            inner: Arc::new(Mutex::new(Script {
                capabilities: InputCapabilities::all(),
                elicit: VecDeque::new(),
                sample: VecDeque::new(),
                roots: Vec::new(),
                asked: Vec::new(),
            })),
        }
    }

    fn with(self, f: impl FnOnce(&mut Script)) -> Self {
        f(&mut self.script());
        self
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Declares these capabilities instead (to test how a tool copes without them).
    pub fn capabilities(self, capabilities: InputCapabilities) -> Self {
        self.with(|s| s.capabilities = capabilities)
    }

    /// The next elicitation gets this answer.
    pub fn elicit(self, response: ElicitResponse) -> Self {
        self.with(|s| s.elicit.push_back(response))
    }

    /// The next elicitation is accepted with these fields.
    ///
    /// # Panics
    /// When `value` does not serialise to a JSON object.
    pub fn accept(self, value: impl Serialize) -> Self {
        self.elicit(ElicitResponse::accept(value))
    }

    /// The next elicitation is declined.
    pub fn decline(self) -> Self {
        self.elicit(ElicitResponse::Decline)
    }

    /// The next elicitation is dismissed (`cancel`).
    pub fn dismiss(self) -> Self {
        self.elicit(ElicitResponse::Cancel)
    }

    /// The next sampling request gets this answer.
    pub fn sample(self, response: SamplingResponse) -> Self {
        self.with(|s| s.sample.push_back(response))
    }

    /// The next sampling request is answered with this text (model `scripted`).
    pub fn sample_text(self, text: impl Into<String>) -> Self {
        self.sample(SamplingResponse::text("scripted", text))
    }

    /// `roots/list` answers these roots.
    pub fn roots(self, roots: Vec<Root>) -> Self {
        self.with(|s| s.roots = roots)
    }

    /// Every request received so far, in order.
    pub fn asked(&self) -> Vec<Asked> {
        self.script().asked.clone()
    }

    /// How many scripted answers (elicitation and sampling) are still unused.
    pub fn remaining(&self) -> usize {
        let s = self.script();
        s.elicit.len() + s.sample.len()
    }
}

impl InputHandler for Scripted {
    fn capabilities(&self) -> InputCapabilities {
        self.script().capabilities
    }

    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let mut s = self.script();
        s.asked.push(Asked::Elicit(request));
        s.elicit.pop_front().unwrap_or(ElicitResponse::Decline)
    }

    async fn sample(&self, request: SamplingRequest) -> SamplingResponse {
        let mut s = self.script();
        s.asked.push(Asked::Sample(request));
        s.sample.pop_front().unwrap_or(SamplingResponse::Decline)
    }

    async fn roots(&self, request: RootsRequest) -> Vec<Root> {
        let mut s = self.script();
        s.asked.push(Asked::Roots(request));
        s.roots.clone()
    }
}
