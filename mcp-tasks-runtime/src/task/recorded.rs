//! Outcomes a store may forget after acknowledging them. Redis restarted from its last snapshot
//! comes back without the writes made after it: a task whose tool returned and whose outcome
//! the store took just before would be `working` again, with no tool left to end it. So, over
//! such a store ([`forgetful_epoch`](crate::store::TaskStore::forgetful_epoch) is `Some`), the
//! engine keeps each outcome it recorded for one lease period, and when the store's epoch moves
//! on (it reconnected) writes again every kept outcome the store no longer shows.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::task::{TaskId, TaskOutcome};
use crate::store::{StoreError, TaskStore};

/// The most outcomes kept at once: past it, the oldest go first.
const MOST_KEPT: usize = 100_000;

/// The outcomes this engine recorded lately, when its store may forget them; nothing otherwise.
#[derive(Clone, Default)]
pub(super) struct Recorded(Option<Arc<Kept>>);

struct Kept {
    /// How long an outcome is kept.
    window: Duration,
    outcomes: Mutex<VecDeque<(Instant, TaskId, TaskOutcome)>>,
}

impl Recorded {
    /// Keeps outcomes for `window` if `store` may forget them.
    pub(super) fn new(store: &dyn TaskStore, window: Duration) -> Self {
        Recorded(store.forgetful_epoch().map(|_| {
            Arc::new(Kept {
                window,
                outcomes: Mutex::default(),
            })
        }))
    }

    /// Task `id`'s outcome was recorded: keep it (made by `outcome`, only if it is kept).
    pub(super) fn keep(&self, id: &TaskId, outcome: impl FnOnce() -> TaskOutcome) {
        let Some(kept) = &self.0 else { return };
        let now = Instant::now();
        let mut outcomes = kept.lock();
        kept.prune(&mut outcomes, now);
        if outcomes.len() >= MOST_KEPT {
            outcomes.pop_front();
        }
        outcomes.push_back((now, id.clone(), outcome()));
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
        let outcomes: Vec<(TaskId, TaskOutcome)> = {
            let mut outcomes = kept.lock();
            kept.prune(&mut outcomes, Instant::now());
            outcomes
                .iter()
                .map(|(_, id, outcome)| (id.clone(), outcome.clone()))
                .collect()
        };
        let mut restored = 0usize;
        for (id, outcome) in outcomes {
            if running(&id) {
                continue;
            }
            match store.get_unchecked(&id).await? {
                Some(record) if !record.status.is_terminal() => {}
                _ => continue,
            }
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
    fn lock(&self) -> MutexGuard<'_, VecDeque<(Instant, TaskId, TaskOutcome)>> {
        self.outcomes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the outcomes older than the window.
    fn prune(&self, outcomes: &mut VecDeque<(Instant, TaskId, TaskOutcome)>, now: Instant) {
        while outcomes
            .front()
            .is_some_and(|(at, _, _)| now.duration_since(*at) > self.window)
        {
            outcomes.pop_front();
        }
    }
}
