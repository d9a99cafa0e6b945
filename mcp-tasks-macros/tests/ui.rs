//! Compile-time behaviour of `#[tool]`, `#[resource]` and `#[prompt]`: `ui/pass` must compile (and run), `ui/fail` must fail with
//! exactly the committed `.stderr`. Refresh with `TRYBUILD=overwrite cargo test -p mcp-tasks-macros
//! --test ui`, then read every changed `.stderr`: each error must sit on the offending token and
//! name the fix, with no follow-on errors.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
