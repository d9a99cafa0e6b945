//! See `mcp_tasks_runtime::fuzzing::message`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_tasks_runtime::fuzzing::message(data));
