//! The `mcp-tasks` command in scripts (no terminal): runs that end, and say why, whatever the
//! server does; exit codes that do not depend on the server; a reader that stops reading; the
//! hint to follow a task again.

use mcp_tasks_tests::cli::{fresh_cache, mcp_tasks_bin, run_cli};
use mcp_tasks_tests::example_bin;
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::peers::{install_peers, node, server_everything_index};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn bin(name: &str) -> String {
    example_bin(name).display().to_string()
}

fn cache() -> PathBuf {
    static CACHE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| fresh_cache("headless")).clone()
}

/// A 2026-07-28 task that samples, with no terminal and `--answers` for its form only: nothing
/// can answer the sampling request, so the command cancels the task and exits 2 within 5 s,
/// naming the request and how `--answers` would answer it.
#[test]
fn a_headless_run_ends_naming_the_question_it_cannot_answer() {
    let server = bin("example_server");
    mcp_tasks_bin();
    let run = run_cli(
        &[
            "call",
            "research",
            "--args",
            "topic=tides",
            "--answers",
            r#"{"sources":3}"#,
            "--",
            &server,
        ],
        &cache(),
        Duration::from_secs(30),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.took < Duration::from_secs(5), "took {:?}", run.took);
    assert!(
        run.stderr
            .contains("the task waits for an answer to sampling/createMessage"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(r#""@sampling""#), "{}", run.stderr);
    assert!(run.stderr.contains("cancelled"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

/// `--timeout` bounds connecting to a server that answers nothing as a whole: `2s` ends within
/// 2.5 s, the 60 s default within 61 s, each with exit 2 naming the request left unanswered.
#[test]
fn timeouts_are_what_they_say() {
    mcp_tasks_bin();
    let silent = ["--", "sh", "-c", "cat >/dev/null"];
    let run = run_cli(
        &[&["tools", "--timeout", "2s"][..], &silent[..]].concat(),
        &cache(),
        Duration::from_secs(30),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.took < Duration::from_millis(2500),
        "took {:?}",
        run.took
    );
    assert!(run.took >= Duration::from_secs(2), "took {:?}", run.took);
    assert!(
        run.stderr.contains("could not connect: no answer to"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("within 2 s"), "{}", run.stderr);
    let run = run_cli(
        &[&["tools"][..], &silent[..]].concat(),
        &cache(),
        Duration::from_secs(90),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.took < Duration::from_secs(61), "took {:?}", run.took);
    assert!(run.took >= Duration::from_secs(60), "took {:?}", run.took);
    assert!(run.stderr.contains("within 60 s"), "{}", run.stderr);
}

/// A tool the server does not have is a usage mistake, exit 2, whether the server says so with a
/// JSON-RPC error (ours) or with an `isError` result (server-everything).
#[test]
fn an_unknown_tool_exits_2_on_every_server() {
    install_peers("node");
    let servers = [
        vec![bin("example_server")],
        vec![
            node(),
            server_everything_index().display().to_string(),
            "stdio".into(),
        ],
    ];
    for server in servers {
        let mut args = vec!["call", "no-such-tool", "--"];
        args.extend(server.iter().map(String::as_str));
        let run = run_cli(&args, &cache(), Duration::from_secs(60));
        assert_eq!(run.code, Some(2), "{server:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("the server has no tool named \"no-such-tool\""),
            "{server:?}: {}",
            run.stderr
        );
    }
}

/// `mcp-tasks tools | head -1`, 50 times: the reader closes the pipe after one line, and the
/// command ends quietly (no panic, no exit 101).
#[test]
fn a_reader_that_stops_early_is_no_panic() {
    let server = bin("example_server");
    let cli = mcp_tasks_bin();
    // The era found once, so that the runs are quick.
    run_cli(&["tools", "--", &server], &cache(), Duration::from_secs(60));
    for run in 0..50 {
        let mut child = Command::new(&cli)
            .args(["tools", "--", &server])
            .env("RUST_LOG", "warn")
            .env("MCP_TASKS_CACHE_DIR", cache())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mcp-tasks");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("the first line");
        // The reader is gone (dropped above), as `head -1` goes.
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("stderr");
        let status = child.wait().expect("mcp-tasks ends");
        assert!(first.starts_with("TOOL"), "run {run}: {first}");
        assert_ne!(status.code(), Some(101), "run {run}: {stderr}");
        assert!(!stderr.contains("panicked"), "run {run}: {stderr}");
        assert!(status.code().is_some(), "run {run}: {status:?}");
    }
}

/// Starts `mcp-tasks <args>`, reads its stderr until it names the task it started, kills it
/// (SIGKILL: no `tasks/cancel`, no session closed) and returns that stderr line.
fn started_line(args: &[&str]) -> String {
    let mut child: Child = Command::new(mcp_tasks_bin())
        .args(args)
        .env("RUST_LOG", "warn")
        .env("MCP_TASKS_CACHE_DIR", cache())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-tasks");
    let lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    for line in lines.map_while(Result::ok) {
        if line.starts_with("task ") && line.contains(" started; ") {
            child.kill().expect("kill mcp-tasks");
            let _ = child.wait();
            return line;
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    let _ = child.wait();
    panic!("mcp-tasks {args:?} named no task: {seen}");
}

/// The command in a hint (between backticks), as words.
fn hinted(line: &str) -> Vec<String> {
    let command = line
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {line}"));
    command.split_whitespace().map(str::to_owned).collect()
}

/// The hint `call` gives to follow its task again is a command that works when pasted: over HTTP
/// it names the `--url` (and a 2025-11-25 task's `--session`), and pasted, it follows the task
/// to its end. Over stdio it says that the task lives in the server process this command started.
#[test]
fn the_hint_to_follow_a_task_again_can_be_pasted() {
    let http = HttpServer::start_bin("example_server", &[]);
    for era in ["modern", "legacy"] {
        let line = started_line(&[
            "call",
            "countdown",
            "--era",
            era,
            "--args",
            r#"{"seconds":2}"#,
            "--url",
            &http.url,
        ]);
        let words = hinted(&line);
        assert_eq!(words[..3], ["mcp-tasks", "task", "watch"], "{line}");
        assert!(words.contains(&http.url), "{era}: {line}");
        assert_eq!(words.contains(&"--session".to_string()), era == "legacy");
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let run = run_cli(&args, &cache(), Duration::from_secs(60));
        assert_eq!(run.code, Some(0), "{era}: {line}: {}", run.stderr);
    }
    let line = started_line(&[
        "call",
        "countdown",
        "--args",
        r#"{"seconds":2}"#,
        "--",
        &bin("example_server"),
    ]);
    assert!(
        line.contains("lives in the server process this command started"),
        "{line}"
    );
}

/// server-everything over Streamable HTTP on a free port; killed when dropped.
struct Everything {
    child: Child,
    url: String,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything_http() -> Everything {
    install_peers("node");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(node())
        .arg(server_everything_index())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start server-everything");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening on port") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("server-everything listens");
    Everything {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// `tasks list --session S` asks the server (a joined session skipped `initialize`, so its
/// capabilities are unknown here): server-everything lists the task of that session.
#[test]
fn tasks_list_in_a_joined_session_asks_the_server() {
    let server = everything_http();
    let line = started_line(&[
        "call",
        "simulate-research-query",
        "--args",
        "topic=tides",
        "--url",
        &server.url,
    ]);
    let words = hinted(&line);
    let id = &words[3];
    let session = &words[words
        .iter()
        .position(|w| w == "--session")
        .expect("--session")
        + 1];
    let run = run_cli(
        &["tasks", "list", "--session", session, "--url", &server.url],
        &cache(),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains(id.as_str()), "{}", run.stdout);
}
