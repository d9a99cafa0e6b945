//! The task engine: the dual path, task lifecycle, TTL, cancellation, and the input broker behind
//! `ToolContext` (stored input requests in tasks, MRTR inline).

pub(crate) mod deferred;
pub mod engine;
pub(crate) mod mrtr;
pub mod state;
