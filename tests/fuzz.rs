//! The fuzz targets in `fuzz/`, each for a few seconds (`MCP_TASKS_FUZZ_SECS`, default 5): none
//! may crash or break a property it checks. The script builds them (unoptimised, to keep the
//! suite short) with the nightly toolchain and installs cargo-fuzz (pinned) on first use, all
//! under `target/`; longer runs are `fuzz/run.sh SECONDS`.

use std::process::Command;

#[test]
fn every_fuzz_target_runs_without_a_crash() {
    let root = mcp_tasks_tests::workspace_root();
    let secs = std::env::var("MCP_TASKS_FUZZ_SECS").unwrap_or_else(|_| "5".into());
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("fuzz/run.sh"))
        .arg(&secs)
        .env("FUZZ_DEV", "1");
    // What the outer cargo set for this test must not steer the nightly build.
    for var in [
        "CARGO",
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("run fuzz/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "fuzz/run.sh {secs} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    for target in [
        "message",
        "tool_arguments",
        "input_responses",
        "request_state",
    ] {
        assert!(
            stdout.contains(&format!("fuzz: {target} ran")),
            "{target} did not run:\n{stdout}"
        );
    }
}
