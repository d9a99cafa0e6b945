//! The task engine: the dual path, task lifecycle, TTL, cancellation, and the input broker behind
//! `ToolContext` (stored input requests in tasks, MRTR inline).

mod backend;
pub(crate) mod deferred;
mod durable;
pub(crate) mod engine;
pub(crate) mod executor;
mod limits;
pub(crate) mod mrtr;
mod recorded;
mod run;
pub(crate) mod state;

use crate::protocol::RpcError;

/// The key of the n-th input request of a call or task: `elicit-0`, `sample-1`, `roots-2`. Stable
/// for a tool that asks in the same order (MRTR replays rely on it), unique within one call or task.
pub(crate) fn input_key(method: &str, n: usize) -> String {
    let kind = match method {
        "elicitation/create" => "elicit",
        "sampling/createMessage" => "sample",
        "roots/list" => "roots",
        _ => "input",
    };
    format!("{kind}-{n}")
}

/// The JSON-RPC error a panicking tool's call ends with (`-32603`, with the panic message). The
/// panic is logged; the server and every other call go on.
pub(crate) fn panic_error(tool: &str, panic: &(dyn std::any::Any + Send)) -> RpcError {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    tracing::error!(tool, panic = %what, "a tool panicked");
    RpcError::internal(format!("tool `{tool}` panicked: {what}"))
}
