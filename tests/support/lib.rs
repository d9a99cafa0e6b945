//! Shared helpers for the integration tests: locating and driving the example server binary.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Path of a binary of the `mcp-tasks-examples` package, built (once per test process) with the
/// same profile as the tests.
pub fn example_bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(workspace_root())
            .args(["build", "--quiet", "-p", "mcp-tasks-examples", "--bins"])
            .status()
            .expect("cargo build runs");
        assert!(status.success(), "building the example binaries failed");
    });
    // target/debug/deps/<test-exe> -> target/debug/<name>
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target/<profile>");
    let path = dir.join(name);
    assert!(path.exists(), "{} does not exist after building", path.display());
    path
}
