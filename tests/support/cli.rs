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

/// How a headless run of the `mcp-tasks` command ended ([`run_cli`]).
#[derive(Debug)]
pub struct CliRun {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// From the start to the exit.
    pub took: std::time::Duration,
}

/// Runs `mcp-tasks <args>` with no terminal (stdin null, stdout and stderr piped), its era cache
/// in `cache`; a run that has not ended after `hang` is killed and the test fails.
pub fn run_cli(args: &[&str], cache: &std::path::Path, hang: std::time::Duration) -> CliRun {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::Instant;
    let bin = mcp_tasks_bin();
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .env("RUST_LOG", "warn")
        .env("MCP_TASKS_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-tasks");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mcp-tasks") {
            break status;
        }
        if started.elapsed() > hang {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mcp-tasks {args:?} still running after {hang:?}; stderr: {}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let took = started.elapsed();
    CliRun {
        code: status.code(),
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
        took,
    }
}

/// A fresh, empty directory for the command's era cache, named for the test.
pub fn fresh_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-tasks-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the cache directory");
    dir
}
