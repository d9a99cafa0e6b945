//! Real third-party MCP clients against the example server over stdio.
//!
//! The clients are installed at exact versions by `tests/peers/install.sh` (npm ci from the
//! committed lockfile into `target/peers/node`, a pip-frozen venv into `target/peers/py`);
//! the first test that needs one runs the installer once per test process. Each node script
//! spawns the server itself through the client's own stdio transport, prints one line per
//! step plus the raw JSON-RPC trace, and exits non-zero on the first failed check.
//!
//! A missing `node`, `npm` or `python3` fails these tests with a message: they never skip.
//! Set `NODE`, `NPM`, `PYTHON` or `PEERS_DIR` to override what `install.sh` uses, and
//! `MCP_PEERS_SERVER_BIN` to test another server binary.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use mcp_tasks_tests::{example_bin, workspace_root};

/// Budget for one client script (the scripts give up by themselves after 50 s).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// Budget for one half of the installer on a cold machine (downloads included).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

fn scripts_dir() -> PathBuf {
    workspace_root().join("tests").join("peers")
}

/// Where `install.sh` puts the clients (its default, or `PEERS_DIR`).
fn peers_dir() -> PathBuf {
    std::env::var_os("PEERS_DIR").map_or_else(
        || workspace_root().join("target").join("peers"),
        PathBuf::from,
    )
}

fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".to_owned())
}

/// What a finished (or killed) command did.
struct Run {
    status: Option<ExitStatus>,
    timed_out: bool,
    /// stdout and stderr interleaved, in the order the process wrote them.
    output: String,
}

impl Run {
    fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    fn describe(&self) -> String {
        match (self.timed_out, self.status) {
            (true, _) => "timed out and was killed".to_owned(),
            (false, Some(status)) => format!("exited with {status}"),
            (false, None) => "could not be waited for".to_owned(),
        }
    }
}

/// Runs `cmd` in its own process group with stdout and stderr on one pipe, echoing every line
/// (libtest shows it for failing tests, or always with `--nocapture`). After `timeout`, or once
/// it has exited, the whole group is killed, so a server the client spawned cannot linger.
fn run(label: &str, mut cmd: Command, timeout: Duration) -> Run {
    use std::os::unix::process::CommandExt;

    let (reader, writer) = std::io::pipe().expect("create a pipe");
    let writer_err = writer.try_clone().expect("clone the pipe");
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_err)
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => panic!("{label}: could not start {:?}: {e}", cmd.get_program()),
    };
    // Close our copies of the pipe's write end, or the reader would never see EOF.
    drop(cmd);

    let prefix = label.to_owned();
    let echo = thread::spawn(move || {
        let mut all = String::new();
        let mut lines = BufReader::new(reader);
        let mut line = Vec::new();
        while lines
            .read_until(b'\n', &mut line)
            .map(|n| n > 0)
            .unwrap_or(false)
        {
            let text = String::from_utf8_lossy(&line);
            println!("{prefix}| {}", text.trim_end());
            all.push_str(&text);
            line.clear();
        }
        // Whatever is left without a newline.
        let _ = lines.read_to_end(&mut line);
        all.push_str(&String::from_utf8_lossy(&line));
        all
    });

    let started = Instant::now();
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (Some(status), false),
            Ok(None) if started.elapsed() >= timeout => {
                println!(
                    "{label}| ... no exit after {timeout:?}: killing process group {}",
                    child.id()
                );
                kill_group(child.id());
                break (child.wait().ok(), true);
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                println!("{label}| ... wait failed: {e}");
                break (None, false);
            }
        }
    };
    // Grandchildren (the server processes) may still hold the pipe open.
    kill_group(child.id());
    let output = echo.join().unwrap_or_default();
    Run {
        status,
        timed_out,
        output,
    }
}

fn kill_group(pgid: u32) {
    // No libc (unsafe is forbidden in this workspace): kill(1) does it. A group that is
    // already gone is not an error.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `install.sh <part>` once per test process; later callers get the first outcome.
fn install(part: &'static str) {
    static NODE: OnceLock<Result<(), String>> = OnceLock::new();
    static PYTHON: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = match part {
        "node" => &NODE,
        "python" => &PYTHON,
        _ => unreachable!("install.sh has no part {part}"),
    };
    let outcome = cell.get_or_init(|| {
        let script = scripts_dir().join("install.sh");
        let mut cmd = Command::new("bash");
        cmd.arg(&script).arg(part);
        let run = run(&format!("install {part}"), cmd, INSTALL_TIMEOUT);
        if run.success() {
            Ok(())
        } else {
            Err(format!(
                "tests/peers/install.sh {part} {}; its last lines:\n{}",
                run.describe(),
                last_lines(&run.output, 20)
            ))
        }
    });
    if let Err(message) = outcome {
        panic!("{message}");
    }
}

/// Fails (never skips) when Node.js is missing: these tests are part of the suite.
fn require_node() {
    let node = node();
    match Command::new(&node).arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`{node} --version` failed ({}): the peer tests need Node.js >= 20; stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "`{node}` could not be run ({e}): the peer tests need Node.js >= 20 and npm on PATH \
             (Debian: apt-get install nodejs npm), or NODE=/path/to/node"
        ),
    }
}

/// The server under test: `example_server`, built now, unless `MCP_PEERS_SERVER_BIN` names
/// another binary (a release build, a server under development elsewhere).
fn server_bin() -> PathBuf {
    match std::env::var_os("MCP_PEERS_SERVER_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => example_bin("example_server"),
    }
}

/// Installs the node clients, builds the server and runs `tests/peers/<script>` against it.
fn run_node_script(script: &str) {
    require_node();
    install("node");
    let server = server_bin();
    let path = scripts_dir().join(script);
    assert!(path.exists(), "{} is missing", path.display());

    let mut cmd = Command::new(node());
    cmd.current_dir(scripts_dir())
        .arg(&path)
        .arg(&server)
        .env("MCP_SERVER_BIN", &server);
    let label = script.trim_end_matches(".mjs");
    let run = run(label, cmd, SCRIPT_TIMEOUT);
    let verdict: Vec<&str> = run
        .output
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .collect();
    assert!(
        run.success(),
        "`node tests/peers/{script} {}` {}\n{}\nlast lines:\n{}",
        server.display(),
        run.describe(),
        verdict.join("\n"),
        last_lines(&run.output, 25)
    );
    assert!(
        run.output.lines().any(|l| l.starts_with("PASS ")),
        "`node tests/peers/{script}` exited 0 without printing its PASS verdict"
    );
}

/// @modelcontextprotocol/client 2.4.0: server/discover probe, then the 2026-07-28 wire.
#[test]
fn modern_typescript_client_2_4() {
    run_node_script("modern.mjs");
}

/// @modelcontextprotocol/sdk 1.32.2: initialize handshake, the 2025-11-25 wire.
#[test]
fn legacy_typescript_sdk_1_32() {
    run_node_script("legacy.mjs");
}

/// The pinned Python client (mcp 1.30.0) installs and imports; the Python peer scripts run in
/// this venv.
#[test]
fn python_client_venv_installs() {
    install("python");
    let python = peers_dir().join("py").join("bin").join("python");
    assert!(
        Path::new(&python).exists(),
        "{} missing after install.sh python",
        python.display()
    );
    let out = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m, mcp.client.stdio, mcp.client.session; print(m.version('mcp'))",
        ])
        .output()
        .expect("run the venv's python");
    assert!(
        out.status.success(),
        "importing mcp in {} failed: {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1.30.0",
        "mcp version in the venv"
    );
}
