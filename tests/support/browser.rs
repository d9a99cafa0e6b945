//! The official TypeScript packages and the browser that `tests/apps_browser.rs` and
//! `tests/skills_ts.rs` use, installed by `tests/browser/install.sh` into `target/browser`.

use crate::workspace_root;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Where the packages are, and where the scripts run from.
pub fn browser_dir() -> PathBuf {
    workspace_root().join("target/browser")
}

/// Installs what the tests need (once) and returns the node binary and the browser.
pub fn install() -> (PathBuf, PathBuf) {
    let script = workspace_root().join("tests/browser/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(out.status.success(), "{} failed", script.display());
    let text = String::from_utf8(out.stdout).expect("paths");
    let mut lines = text.lines();
    let node = PathBuf::from(lines.next().expect("the node binary"));
    let chromium = PathBuf::from(lines.next().expect("the chromium binary"));
    (node, chromium)
}

/// Copies `tests/browser/<file>` next to the packages (ES modules resolve their imports from
/// where they are).
pub fn stage(file: &str) {
    let from = workspace_root().join("tests/browser").join(file);
    std::fs::copy(&from, browser_dir().join(file)).unwrap_or_else(|e| panic!("copy {file}: {e}"));
}
