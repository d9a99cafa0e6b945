use mcp_tasks_runtime::{State, tool};
use std::cell::RefCell;

// Calls and tasks share state across threads: `RefCell` is not `Sync`.
#[tool]
async fn count(counter: State<RefCell<u32>>) -> String {
    counter.borrow().to_string()
}

fn main() {}
