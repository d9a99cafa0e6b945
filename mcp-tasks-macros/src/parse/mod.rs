//! Stage 1: the raw input with its spans. `attr` reads `#[tool(...)]` with darling; `sig` takes
//! the function apart (and strips the parameter doc comments rustc would reject).

pub mod attr;
pub mod sig;

pub use attr::{AnnotationsAttr, Kv, ToolAttr};
pub use sig::ToolFn;
