//! The client side against real third-party peers, installed and pinned by the project
//! (`tests/peers/install.sh`, `tests/conformance/install.sh`, under `target/`):
//!
//! - the official conformance suite's **client** scenarios, with
//!   `mcp-tasks-client/examples/conformance_client.rs` as the client under test;
//! - three third-party task servers, each driven by the `mcp-tasks` command through a task that
//!   asks for input (answered with `--answers`) and through a cancellation (SIGINT, as Ctrl-C
//!   sends it: `tasks/cancel`, exit 130):
//!   `@modelcontextprotocol/server-everything` 2026.8.31 (legacy tasks; `simulate-research-query`
//!   asks for a clarification), a Python `mcp` 1.30.0 server with its experimental tasks
//!   (`tests/peers/tasks_server.py`, legacy), and a 2026-07-28 server on
//!   `@modelcontextprotocol/server` 2.4.0 with `@modelcontextprotocol/ext-tasks` 0.2.2's wire
//!   schemas (`tests/peers/modern_tasks_server.mjs`, modern tasks with a stored input request).

use mcp_tasks_tests::cli::{conformance_client_bin, mcp_tasks_bin};
use mcp_tasks_tests::peers::{conformance_suite, install_peers, node, venv_python};
use mcp_tasks_tests::workspace_root;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished `mcp-tasks` run did.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// `mcp-tasks <args>` with no terminal; when `interrupt_after` names a line stderr will show, the
/// process gets SIGINT (what Ctrl-C sends) once that line appears. Killed after 60 s.
fn mcp_tasks(args: &[&str], interrupt_after: Option<&str>) -> Run {
    let mut child = Command::new(mcp_tasks_bin())
        .args(args)
        .current_dir(workspace_root().join("tests/peers"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-tasks");
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let stderr = child.stderr.take().expect("piped");
    let needle = interrupt_after.map(str::to_owned);
    let err = std::thread::spawn(move || {
        let mut all = String::new();
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent && needle.as_deref().is_some_and(|n| line.contains(n)) {
                sent = true;
                let _ = Command::new("kill")
                    .args(["-INT", &pid.to_string()])
                    .status();
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

fn server_everything() -> Vec<String> {
    install_peers("node");
    let index = mcp_tasks_tests::peers::server_everything_index();
    vec![node(), index.display().to_string(), "stdio".into()]
}

fn python_server() -> Vec<String> {
    install_peers("python");
    vec![
        venv_python().display().to_string(),
        workspace_root()
            .join("tests/peers/tasks_server.py")
            .display()
            .to_string(),
    ]
}

fn ext_tasks_server() -> Vec<String> {
    install_peers("node");
    vec![
        node(),
        workspace_root()
            .join("tests/peers/modern_tasks_server.mjs")
            .display()
            .to_string(),
    ]
}

fn with_server<'a>(args: &[&'a str], server: &'a [String]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push("--");
    all.extend(server.iter().map(String::as_str));
    all
}

/// Asserts a SIGINT-cancelled run: exit 130, the task confirmed `cancelled`.
fn assert_cancelled(run: &Run) {
    assert_eq!(run.code, Some(130), "{}", run.describe());
    assert!(
        run.stderr.contains("^C: cancelling task"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("mcp-tasks: task ") && l.ends_with(" cancelled")),
        "the server did not confirm the cancellation:\n{}",
        run.describe()
    );
}

/// server-everything's `simulate-research-query` (required task, legacy): an ambiguous topic
/// makes it ask (elicitation tagged with the task, delivered while `tasks/result` waits); the
/// answer from `--answers` shapes the report.
#[test]
fn server_everything_research_task_with_input() {
    let server = server_everything();
    let run = mcp_tasks(
        &with_server(
            &[
                "call",
                "simulate-research-query",
                "--args",
                r#"{"topic": "python", "ambiguous": true}"#,
                "--answers",
                r#"{"interpretation": "snake"}"#,
                "--json",
            ],
            &server,
        ),
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stderr.contains("could have multiple interpretations"),
        "{}",
        run.describe()
    );
    // The question was answered from --answers. (Whether the `input_required` status itself is
    // shown depends on a poll landing while the task waits: the question and its answer can
    // come and go between two polls.)
    assert!(
        run.stderr
            .contains(r#"answered from --answers: {"interpretation":"snake"}"#),
        "{}",
        run.describe()
    );
    let result: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON on stdout");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("# Research Report: python (snake)"), "{text}");
}

/// server-everything: Ctrl-C during the research task cancels it (`tasks/cancel`).
#[test]
fn server_everything_research_task_cancelled() {
    let server = server_everything();
    let run = mcp_tasks(
        &with_server(
            &[
                "call",
                "simulate-research-query",
                "--args",
                r#"{"topic": "tides"}"#,
            ],
            &server,
        ),
        Some("Gathering sources"),
    );
    assert_cancelled(&run);
}

/// Python `mcp` 1.30.0 experimental tasks (legacy): an elicitation (integer with bounds, boolean)
/// and a sampling request, both through the task's message queue while `tasks/result` waits.
#[test]
fn python_mcp_task_with_input_and_sampling() {
    let server = python_server();
    let run = mcp_tasks(
        &with_server(
            &[
                "call",
                "plan_trip",
                "--args",
                r#"{"city": "Lyon"}"#,
                "--answers",
                r#"{"nights": "3", "hotel": "yes", "@sampling": "Eat a praline tart."}"#,
            ],
            &server,
        ),
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(
        run.stdout.trim(),
        "3 nights in Lyon, hotel: yes; tip: Eat a praline tart.",
        "{}",
        run.describe()
    );
    // The tool's status message is shown (the fixture holds it for two of the client's polls
    // before asking; without that, seeing it at all was timing, and a loaded machine missed it).
    assert!(
        run.stderr.contains(": looking up Lyon"),
        "{}",
        run.describe()
    );
}

/// Python `mcp` 1.30.0: Ctrl-C cancels a running task.
#[test]
fn python_mcp_task_cancelled() {
    let server = python_server();
    let run = mcp_tasks(
        &with_server(&["call", "slow", "--args", r#"{"seconds": 30}"#], &server),
        Some("working: sleeping"),
    );
    assert_cancelled(&run);
}

/// The 2026-07-28 server on @modelcontextprotocol/server 2.4.0 + ext-tasks 0.2.2 schemas: a
/// modern task turns `input_required` with a stored input request, answered with `tasks/update`
/// from `--answers` (a default fills the field not given).
#[test]
fn ext_tasks_modern_task_with_input() {
    let server = ext_tasks_server();
    let run = mcp_tasks(
        &with_server(
            &[
                "call",
                "book_table",
                "--args",
                r#"{"restaurant": "Chez Paul"}"#,
                "--answers",
                r#"{"size": 4}"#,
            ],
            &server,
        ),
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(
        run.stdout.trim(),
        "table for 4 at Chez Paul (outside: false)",
        "{}",
        run.describe()
    );
    assert!(
        run.stderr
            .contains("input required: waiting for the party size"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr
            .contains(r#"input party = {"action":"accept","content":{"outside":false,"size":4}}"#),
        "the server did not log the tasks/update it got:\n{}",
        run.describe()
    );
}

/// The 2026-07-28 ext-tasks server: Ctrl-C sends `tasks/cancel`; the tool sees it.
#[test]
fn ext_tasks_modern_task_cancelled() {
    let server = ext_tasks_server();
    let run = mcp_tasks(
        &with_server(&["call", "slow", "--args", r#"{"seconds": 30}"#], &server),
        Some("working: sleeping"),
    );
    assert_cancelled(&run);
    assert!(
        run.stderr.contains("slow saw its cancellation"),
        "{}",
        run.describe()
    );
}

/// The conformance suite's client scenarios this client takes part in (the `auth/*` ones are out
/// of scope).
const CLIENT_SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// Every client scenario passes with no failed check and no warning, and the client exits 0.
#[test]
fn conformance_client_scenarios() {
    let (node, suite) = conformance_suite();
    let client = conformance_client_bin();
    let mut failed = Vec::new();
    for scenario in CLIENT_SCENARIOS {
        let started = Instant::now();
        let (stdout, stderr, success) = run_suite(&node, &suite, &client, scenario);
        // In client mode the suite prints its summary on stderr.
        let summary = stdout
            .lines()
            .chain(stderr.lines())
            .rev()
            .find(|l| l.starts_with("Passed:"))
            .unwrap_or("(no summary)")
            .to_owned();
        eprintln!("{scenario}: {summary} [{:.1?}]", started.elapsed());
        let clean = success
            && summary.contains(" 0 failed")
            && summary.contains(" 0 warnings")
            && !stderr.contains("Client exited with code")
            && !stderr.contains("Client timed out");
        if !clean {
            eprintln!("---- {scenario} (exit ok: {success}) ----\n{stdout}\n{stderr}");
            failed.push(*scenario);
        }
    }
    assert!(
        failed.is_empty(),
        "conformance client scenarios failed: {failed:?}"
    );
}

/// Runs one client scenario; returns its stdout, stderr and whether it exited 0. The suite starts
/// the client through a shell, and on its own timeout kills only the shell, so the whole process
/// group goes when the suite is done (or after 60 s), and the output goes through files: a
/// client left behind can hold no pipe open.
fn run_suite(
    node: &std::path::Path,
    suite: &std::path::Path,
    client: &std::path::Path,
    scenario: &str,
) -> (String, String, bool) {
    use std::os::unix::process::CommandExt;
    let dir = workspace_root().join("target/interop");
    std::fs::create_dir_all(&dir).expect("create target/interop");
    let name = scenario.replace('/', "_");
    let (out_path, err_path) = (
        dir.join(format!("{name}.out")),
        dir.join(format!("{name}.err")),
    );
    let mut child = Command::new(node)
        .arg(suite)
        .args([
            "client",
            "--scenario",
            scenario,
            "--timeout",
            "20000",
            "--command",
        ])
        .arg(client)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("create the stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("create the stderr file"))
        .process_group(0)
        .spawn()
        .expect("run the conformance suite");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    (
        read(&out_path),
        read(&err_path),
        status.is_some_and(|s| s.success()),
    )
}

/// Answers server-everything's clarification question with `snake`.
#[derive(Debug, Clone, Copy)]
struct Snake;

impl mcp_tasks_client::InputHandler for Snake {
    async fn elicit(&self, _: mcp_tasks_client::ElicitRequest) -> mcp_tasks_client::ElicitResponse {
        mcp_tasks_client::ElicitResponse::accept(serde_json::json!({ "interpretation": "snake" }))
    }
}

/// server-everything's research flow (ambiguous topic: `working`, `input_required`, `working`,
/// `completed`), 100 runs at once on one connection: the library's state stream never goes
/// backwards. The server queues the task's `notifications/tasks/status` and delivers them with
/// `tasks/result`, so they can arrive after a poll that already saw a newer state; the client
/// orders states by the task's own `lastUpdatedAt` and drops the older ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_task_states_never_go_backwards_in_100_runs() {
    use mcp_tasks_client::{Client, TaskSnapshot, TaskStatus, TaskUpdate};
    const RUNS: usize = 100;
    let server = server_everything();
    let mut command = tokio::process::Command::new(&server[0]);
    command.args(&server[1..]).stderr(Stdio::null());
    let client = Client::builder()
        .handler(Snake)
        .connect_stdio(command)
        .await
        .expect("server-everything starts");
    let started = Instant::now();
    let runs: Vec<_> = (0..RUNS)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let call = client
                    .call_tool(
                        "simulate-research-query",
                        serde_json::json!({ "topic": "python", "ambiguous": true }),
                    )
                    .await
                    .expect("the research task starts");
                let task = call.task().expect("a required task").clone();
                let mut updates = task.updates();
                let streamed = tokio::spawn(async move {
                    let mut states = Vec::new();
                    while let Some(event) = updates.next().await {
                        if let TaskUpdate::Updated(snap) = event {
                            states.push(snap);
                        }
                    }
                    states
                });
                let result = call.result().await.expect("the research task completes");
                let text = mcp_tasks_client::text(&result);
                assert!(text.contains("# Research Report: python (snake)"), "{text}");
                (task.history(), streamed.await.expect("the stream ends"))
            })
        })
        .collect();
    let mut backwards = Vec::new();
    for run in runs {
        let (history, streamed) = run.await.expect("a run");
        for states in [&history, &streamed] {
            // Consecutive statuses, repeats merged: the flow's own order, `input_required` once.
            let mut statuses: Vec<TaskStatus> = states.iter().map(|s| s.status).collect();
            statuses.dedup();
            let asked = statuses
                .iter()
                .filter(|s| **s == TaskStatus::InputRequired)
                .count();
            let times: Vec<&str> = states
                .iter()
                .filter_map(|s: &TaskSnapshot| s.last_updated_at.as_deref())
                .collect();
            let ordered = times.windows(2).all(|w| {
                let parse = |t: &str| t.parse::<TimeKey>().expect("an RFC 3339 time");
                parse(w[0]) <= parse(w[1])
            });
            if asked > 1 || !ordered || statuses.last() != Some(&TaskStatus::Completed) {
                backwards.push(format!("{statuses:?} at {times:?}"));
            }
        }
    }
    assert!(
        backwards.is_empty(),
        "{} of {} state streams went backwards, e.g. {}",
        backwards.len(),
        RUNS * 2,
        backwards[0]
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    client.close().await;
}

/// An RFC 3339 time as `(seconds, fraction)` in UTC, comparable (the server sends
/// `2026-11-25T12:00:00.123Z`).
#[derive(Debug, PartialEq, PartialOrd)]
struct TimeKey(String);

impl std::str::FromStr for TimeKey {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        // The server writes every time in UTC with milliseconds (`toISOString`): the same
        // length and zone, so the text orders as the time does.
        if s.len() != 24 || !s.ends_with('Z') {
            return Err(format!("not a toISOString() time: {s}"));
        }
        Ok(TimeKey(s.to_owned()))
    }
}
