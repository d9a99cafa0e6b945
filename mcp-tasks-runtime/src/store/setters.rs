//! The settings that the stores reached over the network share, written once for their builders.

/// Defines a network store builder's `clock` and `timeout` setters, on a builder with the fields
/// `clock: Arc<dyn Clock>` and `timeout: Duration`. `$timeout` documents what the timeout bounds
/// and its default, which differ by backend.
macro_rules! clock_and_timeout {
    (timeout: $timeout:literal) => {
        /// The clock that stamps tasks and drives TTLs and leases (default: the system clock).
        pub fn clock(mut self, clock: ::std::sync::Arc<dyn $crate::store::Clock>) -> Self {
            self.clock = clock;
            self
        }

        #[doc = $timeout]
        pub fn timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.timeout = timeout;
            self
        }
    };
}

pub(super) use clock_and_timeout;
