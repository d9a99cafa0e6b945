//! Limits on what one client, or all of them, may make the server hold. Each has a default that
//! leaves ordinary use untouched and a builder setting; going over one answers the request that
//! would have gone over with a precise JSON-RPC error and costs nobody else anything.

/// The server's limits (see [`ServerBuilder::limits`](super::ServerBuilder::limits)); the Streamable HTTP
/// ones (sessions, SSE buffers, a session's backlog) are on [`HttpConfig`](super::HttpConfig).
///
/// | limit | default | going over it |
/// |---|---|---|
/// | [`tasks_per_owner`](Self::tasks_per_owner) | 10,000 | the `tools/call` that would start one more task answers `-32010` `Limit reached: …`, `data: {"limit": "tasks_per_owner", "max": N}` |
/// | [`tasks`](Self::tasks) | 100,000 | the same, `"limit": "tasks"` |
/// | [`inputs_per_task`](Self::inputs_per_task) | 100 | the tool's input request fails with [`InputError::LimitReached`](crate::InputError::LimitReached) (`"limit": "inputs_per_task"`); returned with `?`, the task fails with that `-32010` |
/// | [`inputs_per_session`](Self::inputs_per_session) | 1,000 | the same for server-to-client requests of one legacy session waiting for answers, `"limit": "inputs_per_session"` |
/// | [`checkpoint_bytes`](Self::checkpoint_bytes) | 64 KiB | [`ToolContext::checkpoint`](crate::ToolContext::checkpoint) answers an error naming the limit; the last checkpoint stays |
/// | [`outputs_per_task`](Self::outputs_per_task) | 100 | the tool's [`publish_text`](crate::ToolContext::publish_text) or [`publish_blob`](crate::ToolContext::publish_blob) of one more output fails with `-32010` (`"limit": "outputs_per_task"`); publishing a name the task has replaces it and still works; returned with `?`, the task fails with that error |
/// | [`output_bytes_per_task`](Self::output_bytes_per_task) | 16 MiB | the same when the task's outputs would hold more bytes in all (text, or base64 for a blob), `"limit": "output_bytes_per_task"` |
/// | [`max_message`](Self::max_message) | 16 MiB | over stdio, the line is skipped without being buffered and answered `-32700` `Parse error: message longer than N bytes` (`id: null`) |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub(crate) tasks_per_owner: usize,
    pub(crate) tasks: usize,
    pub(crate) inputs_per_task: usize,
    pub(crate) inputs_per_session: usize,
    pub(crate) outputs_per_task: usize,
    pub(crate) output_bytes_per_task: usize,
    pub(crate) max_message: usize,
    pub(crate) checkpoint_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            tasks_per_owner: 10_000,
            tasks: 100_000,
            inputs_per_task: 100,
            inputs_per_session: 1_000,
            outputs_per_task: 100,
            output_bytes_per_task: 16 * 1024 * 1024,
            max_message: 16 * 1024 * 1024,
            checkpoint_bytes: 64 * 1024,
        }
    }
}

impl Limits {
    /// How many tasks one owner (an authenticated principal, a legacy session, a stdio
    /// connection, or all unauthenticated HTTP callers together) may have running at once.
    pub fn tasks_per_owner(mut self, n: usize) -> Self {
        self.tasks_per_owner = n;
        self
    }

    /// How many tasks may run at once in this server, all owners together.
    pub fn tasks(mut self, n: usize) -> Self {
        self.tasks = n;
        self
    }

    /// How many input requests (elicitation, sampling, roots) one task may have waiting for an
    /// answer at once.
    pub fn inputs_per_task(mut self, n: usize) -> Self {
        self.inputs_per_task = n;
        self
    }

    /// How many server-to-client requests one legacy session (or stdio connection) may have
    /// waiting for the client's answer at once.
    pub fn inputs_per_session(mut self, n: usize) -> Self {
        self.inputs_per_session = n;
        self
    }

    /// The largest checkpoint a durable task's tool may keep
    /// ([`ToolContext::checkpoint`](crate::ToolContext::checkpoint)), in bytes of JSON.
    pub fn checkpoint_bytes(mut self, bytes: usize) -> Self {
        self.checkpoint_bytes = bytes;
        self
    }

    /// How many outputs one task may keep
    /// ([`ToolContext::publish_text`](crate::ToolContext::publish_text)).
    pub fn outputs_per_task(mut self, n: usize) -> Self {
        self.outputs_per_task = n;
        self
    }

    /// How many bytes one task's outputs may hold in all: text, or base64 for a blob, as
    /// stored. Every `tasks/get` of a durable store reads the task's record, outputs included.
    pub fn output_bytes_per_task(mut self, bytes: usize) -> Self {
        self.output_bytes_per_task = bytes;
        self
    }

    /// The longest message accepted over stdio (and [`serve_io`](super::Server::serve_io)), in
    /// bytes. (Over HTTP, [`HttpConfig::max_body`](super::HttpConfig::max_body) says it.)
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }
}
