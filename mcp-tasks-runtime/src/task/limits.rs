//! How many tasks an engine runs, per owner and in all: the limits
//! [`EngineConfig::max_tasks`](super::engine::EngineConfig::max_tasks) and
//! [`EngineConfig::max_tasks_per_owner`](super::engine::EngineConfig::max_tasks_per_owner).

use std::sync::{Arc, Mutex};

use foldhash::HashMap;

use crate::protocol::jsonrpc::RpcError;
use crate::protocol::task::Owner;

/// The tasks an engine runs, counted against its limits.
pub(super) struct Running {
    /// How many tasks may run at once, all owners together.
    max_tasks: usize,
    /// How many tasks one owner may have running at once.
    max_per_owner: usize,
    counts: Mutex<(usize, HashMap<Owner, usize>)>,
}

impl Running {
    /// No task running yet, at most `max_tasks` at once and `max_per_owner` of one owner.
    pub(super) fn new(max_tasks: usize, max_per_owner: usize) -> Self {
        Running {
            max_tasks,
            max_per_owner,
            counts: Mutex::default(),
        }
    }

    /// Takes a place for one more task of `owner`, or says which limit is in the way.
    pub(super) fn reserve(self: &Arc<Self>, owner: &Owner) -> Result<RunningSlot, RpcError> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_owner) = &mut *counts;
        let mine = per_owner.get(owner).copied().unwrap_or(0);
        if mine >= self.max_per_owner {
            return Err(RpcError::limit_reached(
                "tasks_per_owner",
                self.max_per_owner,
                "this requestor already has as many tasks running as it may; wait for one to end or cancel one",
            ));
        }
        if *total >= self.max_tasks {
            return Err(RpcError::limit_reached(
                "tasks",
                self.max_tasks,
                "the server is running as many tasks as it may; try again later",
            ));
        }
        *total += 1;
        *per_owner.entry(owner.clone()).or_default() += 1;
        Ok(RunningSlot {
            running: self.clone(),
            owner: owner.clone(),
        })
    }
}

/// One task's place in [`Running`], given back when the task's driver ends.
pub(super) struct RunningSlot {
    running: Arc<Running>,
    owner: Owner,
}

impl Drop for RunningSlot {
    fn drop(&mut self) {
        let mut counts = self
            .running
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (total, per_owner) = &mut *counts;
        *total -= 1;
        if let Some(n) = per_owner.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                per_owner.remove(&self.owner);
            }
        }
    }
}
