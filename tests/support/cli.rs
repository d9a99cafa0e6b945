//! The client's binaries: the `mcp-tasks` command (package `mcp-tasks-cli`) and the conformance
//! suite's client under test (`mcp-tasks-client/examples/conformance_client.rs`), each built once
//! per test process with the tests' profile.

use crate::{example_bin, workspace_root};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn build(package: &str, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", package])
        .args(args)
        .status()
        .expect("cargo build runs");
    assert!(status.success(), "cargo build -p {package} {args:?} failed");
}

/// `target/<profile>`, where the example servers are built too.
fn profile_dir() -> PathBuf {
    example_bin("example_server")
        .parent()
        .expect("target/<profile>")
        .to_path_buf()
}

/// The `mcp-tasks` command.
pub fn mcp_tasks_bin() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| build("mcp-tasks-cli", &["--bin", "mcp-tasks"]));
    let bin = profile_dir().join("mcp-tasks");
    assert!(bin.exists(), "{} missing after the build", bin.display());
    bin
}

/// The conformance suite's client under test.
pub fn conformance_client_bin() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| build("mcp-tasks-client", &["--example", "conformance_client"]));
    let bin = profile_dir().join("examples").join("conformance_client");
    assert!(bin.exists(), "{} missing after the build", bin.display());
    bin
}
