//! Benchmarks of mcp-tasks against rmcp 3.11 and a bare JSON-RPC echo (the floor), over stdio and
//! in-process pipes, with one load driver for every server. `cargo run --release -p
//! mcp-tasks-bench` runs everything; see `bench/README.md`.

pub mod driver;
pub mod measure;
pub mod servers;

/// With `--features jemalloc`, every binary of the bench allocates with jemalloc (Rust's
/// allocations; SQLite's own stay with the system's `malloc`).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
