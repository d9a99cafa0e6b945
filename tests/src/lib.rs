//! Integration tests of mcp-tasks live in `tests/`.
