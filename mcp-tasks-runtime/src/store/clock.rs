//! Where a store gets the time from.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// A source of wall-clock time. Stores stamp `createdAt`/`lastUpdatedAt` with it and measure TTLs
/// against it; tests inject a [`ManualClock`] so that nothing sleeps.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system's clock: [`SystemTime::now`]. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that only moves when told to. Cloning shares the same time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<SystemTime>>);

impl ManualClock {
    /// 2025-11-25T10:30:00Z, a whole second, so every store can represent it exactly.
    pub const DEFAULT_START: Duration = Duration::from_secs(1_764_066_600);

    /// A clock standing at [`DEFAULT_START`](Self::DEFAULT_START) after the Unix epoch.
    pub fn new() -> Self {
        Self::starting_at(SystemTime::UNIX_EPOCH + Self::DEFAULT_START)
    }

    /// A clock standing at `at`.
    pub fn starting_at(at: SystemTime) -> Self {
        ManualClock(Arc::new(Mutex::new(at)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) += by;
    }

    /// Sets the clock.
    pub fn set(&self, at: SystemTime) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = at;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told_and_clones_share_time() {
        let clock = ManualClock::new();
        let start = clock.now();
        assert_eq!(start, SystemTime::UNIX_EPOCH + ManualClock::DEFAULT_START);
        let shared = clock.clone();
        shared.advance(Duration::from_secs(5));
        assert_eq!(clock.now(), start + Duration::from_secs(5));
        clock.set(start);
        assert_eq!(shared.now(), start);
    }
}
