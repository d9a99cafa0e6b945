//! See `mcp_tasks_runtime::fuzzing::input_responses`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_tasks_runtime::fuzzing::input_responses(data));
