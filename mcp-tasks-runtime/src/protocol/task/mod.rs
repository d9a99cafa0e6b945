//! Tasks on the wire, for both eras: ids ([`TaskId`]), status ([`TaskStatus`]), the owner a task
//! is bound to ([`Owner`]), how it ended ([`TaskOutcome`]) and the URIs of its outputs
//! (`task://{taskId}/{name}`, `output.rs`). The stored record itself is
//! [`crate::store::TaskRecord`].

// Inside the crate: pure renderers that turn a [`TaskView`] (the fields a client may see, borrowed
// from wherever the task is stored) into each JSON shape a client sees.
//
// | shape | era | renderer |
// |---|---|---|
// | `CreateTaskResult` (flat, `resultType: "task"`) | 2026-07-28 | [`TaskView::modern_create_result`] |
// | `tasks/get` result (`DetailedTask`, `resultType: "complete"`) | 2026-07-28 | [`TaskView::modern_get_result`] |
// | `notifications/tasks` params (`DetailedTask`) | 2026-07-28 | [`TaskView::modern_notification_params`] |
// | `Task` (`tasks/get`, `tasks/cancel` results) | 2025-11-25 | [`TaskView::legacy_task`] |
// | `CreateTaskResult` (nested `{"task": …}`) | 2025-11-25 | [`TaskView::legacy_create_result`] |
// | `notifications/tasks/status` params | 2025-11-25 | [`TaskView::legacy_task`] |
// | `tasks/list` result | 2025-11-25 | [`legacy_list_result`] |
//
// The two eras name durations differently (`ttlMs`/`pollIntervalMs` against `ttl`/`pollInterval`)
// and only the modern era carries the payload (`inputRequests`, `result`, `error`) in the task
// itself; the renderers are the one place that knows this.
//
// Each shape is written by one [`Serialize`] renderer, [`Rendered`] ([`TaskView::render`] with a
// [`TaskShape`]), straight to text (a derive on a borrowed struct per shape): the JSON its tree
// would give, without the tree, and with a result a store keeps as text
// ([`OutcomeView::ResultText`]) copied in rather than parsed. The methods above that return a [`Value`] are that text as a tree.
//
// The types are in `types.rs`, the renderers in `view.rs` (a stored result merged into them in
// `result.rs`), the timestamp format in `time.rs`.

mod output;
mod result;
mod time;
mod types;
mod view;

pub(crate) use output::{check_name as check_output_name, output_uri, parse_output_uri};
pub(crate) use result::RelatedResult;
pub(crate) use types::OutcomeView;
pub use types::{Owner, TaskId, TaskOutcome, TaskStatus};
pub(crate) use view::{AsTaskView, TaskShape, TaskView, legacy_list_result};
