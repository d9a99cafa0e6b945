//! MCP messages a tools server needs, in both eras, by family (as rmcp's `model/`).

mod capabilities;
mod content;
mod init;
mod input;
mod logging;
mod resources;
mod tools;

pub use capabilities::*;
pub use content::*;
pub use init::*;
pub use input::*;
pub use logging::*;
pub use resources::*;
pub use tools::*;

#[cfg(test)]
mod tests;
