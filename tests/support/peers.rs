//! The pinned third-party peers (`tests/peers/install.sh`: npm packages in `target/peers/node`, the
//! Python `mcp` venv in `target/peers/py`) and the conformance suite (`tests/conformance/install.sh`),
//! installed once per test process, for tests other than `peers.rs` / `conformance.rs`.

use crate::workspace_root;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Runs `tests/peers/install.sh <part>` (`node` or `python`) once per test process; panics with the
/// installer's output when it fails.
pub fn install_peers(part: &'static str) {
    static NODE: OnceLock<Result<(), String>> = OnceLock::new();
    static PYTHON: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = match part {
        "node" => &NODE,
        "python" => &PYTHON,
        other => panic!("tests/peers/install.sh has no part {other}"),
    };
    let outcome = cell.get_or_init(|| run_installer(&["tests/peers/install.sh", part]).map(drop));
    if let Err(message) = outcome {
        panic!("{message}");
    }
}

/// Installs the conformance suite (once per test process) and returns the pinned Node.js (>= 22)
/// it runs on, and the suite's entry script.
pub fn conformance_suite() -> (PathBuf, PathBuf) {
    static NODE: OnceLock<Result<String, String>> = OnceLock::new();
    let node = NODE.get_or_init(|| run_installer(&["tests/conformance/install.sh"]));
    match node {
        Ok(node) => (
            PathBuf::from(node.trim()),
            workspace_root().join(
                "target/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js",
            ),
        ),
        Err(message) => panic!("{message}"),
    }
}

fn run_installer(args: &[&str]) -> Result<String, String> {
    let out = Command::new("bash")
        .current_dir(workspace_root())
        .args(args)
        .output()
        .map_err(|e| format!("could not run {args:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Where `tests/peers/install.sh` installs: `$PEERS_DIR`, else `<repo>/target/peers`.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("PEERS_DIR")
        .map_or_else(|| workspace_root().join("target/peers"), PathBuf::from)
}

/// The venv's python (after `install_peers("python")`).
pub fn venv_python() -> PathBuf {
    peers_dir().join("py/bin/python")
}

/// The entry script of `@modelcontextprotocol/server-everything` (after `install_peers("node")`).
pub fn server_everything_index() -> PathBuf {
    peers_dir().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The Node.js that runs the peer scripts and servers: `$NODE`, else `node` on PATH.
pub fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".to_owned())
}
