//! The records of the tasks written lately, kept as committed.

use std::collections::HashMap;
use std::sync::Arc;

use crate::protocol::task::TaskId;
use crate::store::frozen::Frozen;

/// How many records [`Shared::recent`] keeps at most.
pub(super) const RECENT_KEPT: usize = 4096;

/// The records of the tasks written lately, in two generations of at most [`RECENT_KEPT`] / 2:
/// once the newer is full it becomes the older, and the older is let go of. A task stays while
/// 2,048 to 4,096 others are written after it, and never are all of them let go of at once (a
/// task polled while it runs is still found right after). What is let go of is handed back, to
/// be dropped once no lock is held: 2,048 records freed one by one would hold up every reader
/// of `recent`, and the writes waiting for their answers.
#[derive(Default)]
pub(super) struct Recent {
    pub(super) newer: HashMap<TaskId, Arc<Frozen>>,
    pub(super) older: HashMap<TaskId, Arc<Frozen>>,
}

/// A generation of [`Recent`] let go of.
pub(super) type LetGo = HashMap<TaskId, Arc<Frozen>>;

impl Recent {
    pub(super) fn get(&self, id: &TaskId) -> Option<&Arc<Frozen>> {
        self.newer.get(id).or_else(|| self.older.get(id))
    }

    pub(super) fn remove(&mut self, id: &TaskId) {
        self.newer.remove(id);
        self.older.remove(id);
    }

    /// Keeps `task` as its task's latest record; the generation this let go of, if any.
    #[must_use = "what is let go of is dropped by the caller, once it holds no lock"]
    pub(super) fn insert(&mut self, task: Arc<Frozen>) -> Option<LetGo> {
        if let Some(kept) = self.newer.get_mut(&task.record.id) {
            *kept = task;
            return None;
        }
        self.older.remove(&task.record.id);
        let let_go = (self.newer.len() >= RECENT_KEPT / 2).then(|| {
            let newer = std::mem::replace(&mut self.newer, HashMap::with_capacity(RECENT_KEPT / 2));
            std::mem::replace(&mut self.older, newer)
        });
        self.newer.insert(task.record.id.clone(), task);
        let_go
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }
}

/// The longest result (as text) of a record [`Shared::recent`] keeps: 4,096 of them stay within
/// 256 MiB.
pub(super) const RECENT_RESULT: usize = 64 * 1024;
