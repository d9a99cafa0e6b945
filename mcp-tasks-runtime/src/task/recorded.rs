//! Outcomes a store may forget after acknowledging them. Redis restarted from its last snapshot
//! comes back without the writes made after it: a task whose tool returned and whose outcome
//! the store took just before would be `working` again, with no tool left to end it. So, over
//! such a store (its [`forgetful_epoch`](crate::store::fast::FastPaths::forgetful_epoch) is
//! `Some`), the engine keeps each outcome it recorded for a few seconds (the last 1,024 at
//! most: the tool's own result, moved here rather than copied), and when the store's epoch
//! moves on (it reconnected) writes again every kept outcome whose task the store shows unended.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::CallToolResult;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::{TaskId, TaskOutcome};
use crate::store::{StoreError, TaskStore};

/// How long an outcome is kept: longer than the second of writes a Redis whose append-only file
/// is fsynced each second (the usual setting) loses in a crash, or a test's `SAVE` before a kill.
const KEPT_FOR: Duration = Duration::from_secs(5);

/// The most outcomes kept at once: past it, the oldest go first. At a few hundred tasks a second
/// that is the last 5 s; at the thousands of a benchmark, the last fraction of a second, and
/// at most a few megabytes.
const MOST_KEPT: usize = 1024;

/// What a tool ended with (what [`TaskOutcome`] is made of).
pub(super) type ToolOutcome = Result<CallToolResult, RpcError>;

/// The outcome written to the store for `out`.
pub(super) fn task_outcome(out: &ToolOutcome) -> TaskOutcome {
    match out {
        Ok(result) => TaskOutcome::Result(serde_json::to_value(result).unwrap_or_default()),
        Err(error) => TaskOutcome::Error(error.clone()),
    }
}

/// The outcomes this engine recorded lately, when its store may forget them; nothing otherwise.
#[derive(Clone)]
pub(super) struct Recorded(Option<Arc<Kept>>);

type KeptOutcome = (Instant, TaskId, ToolOutcome);

struct Kept {
    /// When each was recorded, its task, and what its tool ended with.
    outcomes: Mutex<VecDeque<KeptOutcome>>,
}

impl Recorded {
    /// Keeps outcomes if `store` may forget them.
    pub(super) fn new(store: &dyn TaskStore) -> Self {
        Recorded(store.forgetful_epoch().map(|_| {
            Arc::new(Kept {
                outcomes: Mutex::default(),
            })
        }))
    }

    /// Task `id`'s outcome, made of `out`, was recorded: keep `out`.
    pub(super) fn keep(&self, id: &TaskId, out: ToolOutcome) {
        let Some(kept) = &self.0 else { return };
        let now = Instant::now();
        let mut outcomes = kept.lock();
        kept.prune(&mut outcomes, now);
        if outcomes.len() >= MOST_KEPT {
            outcomes.pop_front();
        }
        outcomes.push_back((now, id.clone(), out));
    }

    /// Writes again each kept outcome whose task the store shows unended, unless the task is
    /// `running` here again. Fails when the store cannot be reached: the caller tries again
    /// later.
    pub(super) async fn restore(
        &self,
        store: &dyn TaskStore,
        running: impl Fn(&TaskId) -> bool,
    ) -> Result<(), StoreError> {
        let Some(kept) = &self.0 else { return Ok(()) };
        let ids: Vec<TaskId> = {
            let mut outcomes = kept.lock();
            kept.prune(&mut outcomes, Instant::now());
            outcomes.iter().map(|(_, id, _)| id.clone()).collect()
        };
        let mut restored = 0usize;
        for id in ids {
            if running(&id) {
                continue;
            }
            match store.get_unchecked(&id).await? {
                Some(record) if !record.status.is_terminal() => {}
                _ => continue,
            }
            // Made only for a task the store forgot, outside the lock `keep` takes.
            let Some(outcome) = kept.outcome_of(&id) else {
                continue;
            };
            match store.finish(&id, outcome).await {
                Ok(_) => {
                    restored += 1;
                    tracing::warn!(task = %id, "the task store forgot the task's outcome after taking it; recorded it again");
                }
                Err(StoreError::Backend(e)) => return Err(StoreError::Backend(e)),
                // Ended or gone meanwhile: nothing to restore.
                Err(_) => {}
            }
        }
        if restored > 0 {
            tracing::info!(
                restored,
                "outcomes the task store forgot are recorded again"
            );
        }
        Ok(())
    }
}

impl Kept {
    fn lock(&self) -> MutexGuard<'_, VecDeque<KeptOutcome>> {
        self.outcomes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The outcome kept for task `id`, if it still is.
    fn outcome_of(&self, id: &TaskId) -> Option<TaskOutcome> {
        let out = self
            .lock()
            .iter()
            .find(|(_, kept, _)| kept == id)
            .map(|(_, _, out)| out.clone())?;
        Some(task_outcome(&out))
    }

    /// Drops the outcomes older than [`KEPT_FOR`].
    fn prune(&self, outcomes: &mut VecDeque<KeptOutcome>, now: Instant) {
        while outcomes
            .front()
            .is_some_and(|(at, _, _)| now.duration_since(*at) > KEPT_FOR)
        {
            outcomes.pop_front();
        }
    }
}
