//! What the derives refuse: `ui/*.rs` must fail to compile with exactly the committed `.stderr`,
//! one error naming the attribute or field. Refresh with `TRYBUILD=overwrite cargo test -p
//! mcp-tasks-wire --test ui`, then read every changed `.stderr`.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
