//! The `mcp-tasks` command, run as a user runs it: in a real pseudo-terminal (progress line,
//! questions answered by typing, Ctrl-C), and headless with `--json --answers` (the result on
//! stdout, nothing asked, nothing hanging). The servers are the example binaries over stdio and
//! Streamable HTTP.

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{ControlCode, Eof, Expect, Regex};
use mcp_tasks_tests::cli::mcp_tasks_bin;
use mcp_tasks_tests::example_bin;
use mcp_tasks_tests::http::HttpServer;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn cli_bin() -> PathBuf {
    mcp_tasks_bin()
}

/// `mcp-tasks <args>` in a pseudo-terminal of 100x30, with a 20 s expect timeout.
fn spawn_pty(args: &[&str]) -> Session {
    let mut cmd = Command::new(cli_bin());
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .env("MCP_TASKS_CACHE_DIR", cache_dir());
    let mut session = Session::spawn(cmd).expect("spawn mcp-tasks in a pty");
    session
        .get_process_mut()
        .set_window_size(100, 30)
        .expect("set the pty size");
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session
}

/// The exit code of the process behind a session.
fn exit_code(session: &Session) -> i32 {
    match session.get_process().wait().expect("wait for mcp-tasks") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("mcp-tasks did not exit normally: {other:?}"),
    }
}

/// Where the command keeps the era it found per server: one directory per test process, so
/// runs of the suite do not share it.
fn cache_dir() -> PathBuf {
    std::env::temp_dir().join(format!("mcp-tasks-cli-cache-{}", std::process::id()))
}

fn bin(name: &str) -> String {
    example_bin(name).display().to_string()
}

/// A task that asks (an integer, validated) and samples, on a terminal: the live progress line
/// shows the task's status, the question is answered by typing (a wrong answer first, which the
/// prompt refuses), the sampling request is shown and answered by typing, and the result is
/// printed; exit 0.
#[test]
fn pty_progress_and_questions_answered_by_typing() {
    let server = bin("example_server");
    let mut p = spawn_pty(&[
        "call",
        "research",
        "--args",
        r#"{"topic":"tides"}"#,
        "--",
        &server,
    ]);
    // The progress line, from the task's status.
    p.expect(Regex("working|input required"))
        .expect("a progress line");
    p.expect("How many sources should I read about \"tides\"?")
        .expect("the question");
    p.expect("sources").expect("the field's prompt");
    p.send_line("many").expect("type");
    p.expect("is not a whole number")
        .expect("the validation message");
    // Clear what was typed, then a valid answer.
    for _ in 0.."many".len() {
        p.send(ControlCode::Backspace).expect("type");
    }
    p.send_line("3").expect("type");
    p.expect("Summarise what is known about tides in one sentence.")
        .expect("the sampling request is shown");
    p.expect("Reply as the model").expect("the sampling prompt");
    p.send_line("Tides follow the moon.").expect("type");
    p.expect("Tides follow the moon.").expect("the result");
    p.expect(Eof).expect("mcp-tasks exits");
    assert_eq!(exit_code(&p), 0);
}

/// Ctrl-C while a task runs sends `tasks/cancel`, waits for `cancelled`, and exits 130; the
/// progress line showed the task's status message before.
#[test]
fn pty_ctrl_c_cancels_the_task_and_exits_130() {
    let server = bin("example_server");
    let started = Instant::now();
    let mut p = spawn_pty(&[
        "call",
        "countdown",
        "--args",
        r#"{"seconds":60}"#,
        "--",
        &server,
    ]);
    p.expect(Regex(r"working: \d+s left"))
        .expect("the status message in the progress line");
    p.send(ControlCode::EndOfText).expect("Ctrl-C");
    p.expect("cancelling task")
        .expect("the cancellation starts");
    p.expect(Regex(r"task \S+ cancelled"))
        .expect("the server confirms it");
    p.expect(Eof).expect("mcp-tasks exits");
    assert_eq!(exit_code(&p), 130);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "cancelling took {:?}",
        started.elapsed()
    );
}

/// Ctrl-C while a question is on screen (the prompt holds the terminal in raw mode, or is about
/// to) cancels the task too, and exits 130.
#[test]
fn pty_ctrl_c_at_a_question_cancels_the_task() {
    let server = bin("example_server");
    let mut p = spawn_pty(&[
        "call",
        "research",
        "--args",
        r#"{"topic":"tides"}"#,
        "--",
        &server,
    ]);
    p.expect("How many sources should I read")
        .expect("the question");
    p.expect("sources").expect("the field's prompt");
    p.send(ControlCode::EndOfText).expect("Ctrl-C");
    p.expect("cancelling task")
        .expect("the cancellation starts");
    // The question is left unanswered (an answer could end the task some other way first).
    p.expect(Regex(r"task \S+ cancelled"))
        .expect("the task ends cancelled");
    p.expect(Eof).expect("mcp-tasks exits");
    assert_eq!(exit_code(&p), 130);
}

/// Runs the command headless and checks that it exits `code` with `says` in its stderr, which it
/// returns.
fn exits_saying(args: &[&str], code: i32, says: &str) -> String {
    let (got, _, stderr) = headless(args);
    assert_eq!(got, code, "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
    stderr
}

/// Runs `mcp-tasks <args>` with no terminal (stdin null, pipes); returns (code, stdout, stderr).
fn headless(args: &[&str]) -> (i32, String, String) {
    headless_caching_in(&cache_dir(), args)
}

/// [`headless`] with the era cache in `cache`.
fn headless_caching_in(cache: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    use std::io::Read;
    // A run that hangs fails here, after a bound far above any healthy run on a loaded machine
    // (a healthy run takes about a second), instead of hanging the suite.
    const HANG: Duration = Duration::from_secs(60);
    let mut child = Command::new(cli_bin())
        .args(args)
        .env("RUST_LOG", "warn")
        .env("MCP_TASKS_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
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
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mcp-tasks") {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mcp-tasks {args:?} hung for {HANG:?}; stderr: {}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().expect("exited"),
        stdout.join().expect("stdout"),
        stderr.join().expect("stderr"),
    )
}

/// `--json --answers` with no terminal: the question is answered from `--answers`, the sampling
/// request from `"@sampling"`, and stdout is exactly the result as JSON (progress on stderr).
/// Over stdio and HTTP, in both eras.
#[test]
fn headless_json_answers_give_the_result_on_stdout() {
    let server = bin("example_server");
    let http = HttpServer::start_bin("example_server", &[]);
    let answers = r#"{"sources": 4, "@sampling": "Tides follow the moon."}"#;
    let runs: [Vec<&str>; 4] = [
        vec!["--", &server],
        vec!["--era", "legacy", "--", &server],
        vec!["--url", &http.url],
        vec!["--era", "legacy", "--url", &http.url],
    ];
    for target in runs {
        let mut args = vec![
            "call",
            "research",
            "--args",
            r#"{"topic":"tides"}"#,
            "--json",
        ];
        args.extend(["--answers", answers]);
        args.extend(target.iter().copied());
        let (code, stdout, stderr) = headless(&args);
        assert_eq!(code, 0, "{args:?}\nstderr: {stderr}");
        let result: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not the JSON result ({e}): {stdout}"));
        assert_eq!(
            result["structuredContent"],
            serde_json::json!({"topic": "tides", "sources": 4, "summary": "Tides follow the moon."}),
            "{stdout}"
        );
        assert!(stderr.contains("answered from --answers"), "{stderr}");
    }
}

/// With no terminal and no `--answers`, the question is declined with a message saying how to
/// answer it, never left hanging; the tool's own answer to that (an error) exits 1. A tool that
/// fails exits 1, and so do arguments the tool refuses (a tool error); a usage mistake 2, an
/// unknown tool 2.
#[test]
fn headless_without_answers_declines_and_exit_codes_say_what_happened() {
    let server = bin("example_server");
    let (code, stdout, stderr) = headless(&[
        "call",
        "research",
        "--args",
        r#"{"topic":"x"}"#,
        "--",
        &server,
    ]);
    assert!(
        stderr.contains("no terminal to ask at and no --answers: declined (answer with --answers '{\"sources\":1}')"),
        "{stderr}"
    );
    assert_eq!(code, 1, "declining makes research fail: {stdout}\n{stderr}");
    assert!(
        stdout.contains("the user called the research off"),
        "{stdout}"
    );

    let (code, _, stderr) = headless(&["call", "always_fails", "--", &server]);
    assert_eq!(code, 1, "{stderr}");
    // Arguments that do not fit are the tool's error, shown as one and exiting 1, in both eras
    // and for a task-required tool too (no task is started).
    for (tool, args, said) in [
        (
            "add",
            r#"{"a":"two","b":1}"#,
            "invalid argument `a`: invalid type: string \"two\", expected f64",
        ),
        (
            "research",
            r#"{"topic":5}"#,
            "invalid argument `topic`: invalid type: integer `5`, expected a string",
        ),
    ] {
        for era in ["modern", "legacy"] {
            let (code, stdout, stderr) =
                headless(&["call", tool, "--era", era, "--args", args, "--", &server]);
            assert_eq!(code, 1, "{tool} {era}: {stdout}\n{stderr}");
            assert_eq!(stdout.trim(), said, "{tool} {era}: {stderr}");
            assert!(
                stderr.contains("the tool reported an error"),
                "{tool} {era}: {stderr}"
            );
        }
    }
    exits_saying(&["call", "no_such_tool", "--", &server], 2, "no_such_tool");
    let (code, _, stderr) = headless(&["call", "greet", "--args", "[1]", "--", &server]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--args must be a JSON object"), "{stderr}");
    let (code, _, stderr) = headless(&["tools"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no server"), "{stderr}");
    let (code, _, stderr) = headless(&["call", "greet", "--url", "http://127.0.0.1:9/mcp"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("could not connect"), "{stderr}");
}

/// `tools` says what `call` will do with each tool: legacy era, `task` where the server runs
/// calls as tasks and the tool allows one, else `inline`; modern era, `task or inline` (the
/// server decides per call). Against our server in both eras and server-everything (legacy).
/// `--json` prints the tools as the server sent them.
#[test]
fn tools_lists_what_a_call_will_do() {
    let server = bin("example_server");
    let line = |stdout: &str, tool: &str| -> String {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{tool} ")))
            .unwrap_or_else(|| panic!("no {tool} line: {stdout}"))
            .split_whitespace()
            .skip(1)
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (code, stdout, stderr) = headless(&["tools", "--era", "legacy", "--", &server]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("TOOL "), "{stdout}");
    assert!(line(&stdout, "research").starts_with("task "), "{stdout}");
    assert!(line(&stdout, "countdown").starts_with("task "), "{stdout}");
    assert!(line(&stdout, "greet").starts_with("inline "), "{stdout}");
    let (code, stdout, stderr) = headless(&["tools", "--era", "modern", "--", &server]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(line(&stdout, "greet"), "task or inline", "{stdout}");
    assert!(stderr.contains("the server decides per call"), "{stderr}");

    mcp_tasks_tests::peers::install_peers("node");
    let index = mcp_tasks_tests::peers::server_everything_index();
    let node = mcp_tasks_tests::peers::node();
    let index = index.display().to_string();
    let (code, stdout, stderr) = headless(&[
        "tools",
        "--server-stderr",
        "null",
        "--",
        &node,
        &index,
        "stdio",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        line(&stdout, "simulate-research-query").starts_with("task "),
        "{stdout}"
    );
    assert!(line(&stdout, "echo").starts_with("inline "), "{stdout}");

    let (code, stdout, _) = headless(&["tools", "--json", "--era", "legacy", "--", &server]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&stdout).expect("JSON");
    let research = json["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "research")
        .expect("research");
    // As the server sent it: to a 2025-11-25 client that declares no `tasks` capability, the
    // fallback (on by default) lists a `required` tool as `optional` (it can call it either way).
    assert_eq!(research["execution"]["taskSupport"], "optional");
}

/// An `--answers` value that does not fit the question (a wrong type, out of range, not one of an
/// enum's values) is a usage error: exit 2, a message naming the field and what it takes, and no
/// answer sent (the tool never sees a "declined" and says nothing on stdout). A task is cancelled
/// rather than left waiting. Task and inline questions, both eras.
#[test]
fn answers_that_do_not_fit_the_question_exit_2_naming_the_field() {
    let server = bin("example_server");
    let conformance = bin("conformance_server");
    for era in ["modern", "legacy"] {
        for (answers, said) in [
            (
                r#"{"sources": "many", "@sampling": "x"}"#,
                "\"many\" is not a whole number",
            ),
            (r#"{"sources": -3}"#, "must be at least 0"),
        ] {
            let (code, stdout, stderr) = headless(&[
                "call",
                "research",
                "--era",
                era,
                "--args",
                r#"{"topic":"tides"}"#,
                "--answers",
                answers,
                "--",
                &server,
            ]);
            assert_eq!(code, 2, "{era} {answers}: {stdout}\n{stderr}");
            assert!(stderr.contains("--answers \"sources\""), "{stderr}");
            assert!(stderr.contains(said), "{stderr}");
            assert!(stderr.contains("takes a whole number"), "{stderr}");
            assert!(!stderr.contains("declined"), "{stderr}");
            assert!(stdout.is_empty(), "{stdout}");
        }
        let (code, stdout, stderr) = headless(&[
            "call",
            "test_elicitation_sep1330_enums",
            "--era",
            era,
            "--answers",
            r#"{"untitledSingle": "option9"}"#,
            "--",
            &conformance,
        ]);
        assert_eq!(code, 2, "{era}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(
                "--answers \"untitledSingle\": \"option9\" is not one of option1, option2, option3"
            ),
            "{stderr}"
        );
        assert!(!stdout.contains("action="), "{stdout}");
    }
}

/// Starts `mcp-tasks call <args>` headless, reads its stderr until it names the task it started,
/// kills it (kill -9: no `tasks/cancel`, the task is orphaned) and returns the task's id.
fn orphan_a_task(args: &[&str]) -> String {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(cli_bin())
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mcp-tasks");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let id = loop {
        let line = lines
            .next()
            .expect("mcp-tasks names its task before it ends")
            .expect("stderr");
        if let Some(rest) = line.strip_prefix("task ")
            && let Some((id, _)) = rest.split_once(" started; ")
        {
            break id.to_owned();
        }
    };
    child.kill().expect("kill mcp-tasks");
    let _ = child.wait();
    id
}

/// Task management by id against a running server (Streamable HTTP, modern era: tasks belong to
/// the caller, not to one connection): `task get` shows an orphaned task, `task cancel` cancels
/// it, `task watch` follows one to its end and answers its question and its sampling request from
/// `--answers` (the command that started it was killed at the question, in a terminal). An
/// unknown id is exit 2 with a plain message; `tasks list` is exit 2 in the modern era (the
/// extension has none) and lists in the legacy era where the server offers it (stdio).
#[test]
fn task_get_cancel_watch_and_list_by_id() {
    let http = HttpServer::start_bin("example_server", &[]);
    let url = http.url.as_str();

    // get, then cancel, an orphaned countdown.
    let id = orphan_a_task(&[
        "call",
        "countdown",
        "--args",
        r#"{"seconds":60}"#,
        "--url",
        url,
    ]);
    let (code, stdout, stderr) = headless(&["task", "get", &id, "--url", url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("{id}  working")), "{stdout}");
    let (code, stdout, stderr) = headless(&["task", "cancel", &id, "--url", url]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), format!("{id}  cancel requested"));
    let (code, stdout, stderr) = headless(&["task", "get", &id, "--json", "--url", url]);
    assert_eq!(code, 0, "{stderr}");
    let task: Value = serde_json::from_str(&stdout).expect("the task as JSON");
    assert_eq!(task["status"], "cancelled", "{stdout}");

    // watch a task whose command died at its question.
    let mut p = spawn_pty(&[
        "call",
        "research",
        "--args",
        r#"{"topic":"tides"}"#,
        "--url",
        url,
    ]);
    let found = p
        .expect(Regex(r"task (\S+) started"))
        .expect("the task's id");
    let id = String::from_utf8_lossy(found.get(1).expect("the id")).into_owned();
    p.expect("How many sources").expect("the question");
    p.get_process_mut()
        .kill(expectrl::process::unix::Signal::SIGKILL)
        .expect("kill mcp-tasks");
    // Gone, with its connections, before another client takes the task over.
    p.get_process().wait().expect("mcp-tasks exits");
    let (code, stdout, stderr) = headless(&[
        "task",
        "watch",
        &id,
        "--json",
        "--answers",
        r#"{"sources": 2, "@sampling": "Tides follow the moon."}"#,
        "--url",
        url,
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let result: Value = serde_json::from_str(&stdout).expect("the result as JSON");
    assert_eq!(
        result["structuredContent"],
        serde_json::json!({"topic": "tides", "sources": 2, "summary": "Tides follow the moon."}),
    );
    let (code, stdout, _) = headless(&["task", "get", &id, "--url", url]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with(&format!("{id}  completed")), "{stdout}");

    // An unknown id, in either command.
    for cmd in ["get", "cancel", "watch"] {
        let (code, _, stderr) = headless(&["task", cmd, "no-such-task", "--url", url]);
        assert_eq!(code, 2, "{cmd}: {stderr}");
        assert!(
            stderr.contains("the server knows no task \"no-such-task\""),
            "{cmd}: {stderr}"
        );
    }

    // tasks list: none in the modern era; the legacy era's where the server offers it.
    exits_saying(
        &["tasks", "list", "--url", url],
        2,
        "which has no tasks/list",
    );
    let server = bin("example_server");
    let (code, stdout, stderr) =
        headless(&["tasks", "list", "--json", "--era", "legacy", "--", &server]);
    assert_eq!(code, 0, "{stderr}");
    let list: Value = serde_json::from_str(&stdout).expect("the list as JSON");
    assert_eq!(list, serde_json::json!({"tasks": []}));
    exits_saying(
        &["tasks", "list", "--era", "legacy", "--url", url],
        2,
        "does not offer tasks/list",
    );
    exits_saying(
        &["task", "get", "x", "--era", "legacy", "--", &server],
        2,
        "the server knows no task \"x\"",
    );
}

/// `task watch` of a live 2025-11-25 task from a second command (Streamable HTTP): a legacy server
/// knows a task only in the session that created it, so `call` names the session in its hint and
/// `task watch ID --session S` joins it. Our `example_server` (a bearer token): a countdown is
/// followed to its end after the command that started it was killed. Python `mcp` 1.30.0: a task
/// that asks and samples after its command was killed is answered from `--answers` by the
/// command that joined. Without `--session` the task is unknown; another token, or an unknown
/// session, cannot join; `--session` is refused over stdio and with `--era modern` (exit 2).
#[test]
fn task_watch_follows_a_live_legacy_task_from_a_second_command() {
    let http = HttpServer::start_bin(
        "example_server",
        &["--token", "tok-a=alice", "--token", "tok-b=bob"],
    );
    let url = http.url.as_str();
    let watch_hint = |stderr: &str| -> (String, String) {
        let hint = stderr
            .split('`')
            .find(|part| part.starts_with("mcp-tasks task watch "))
            .unwrap_or_else(|| panic!("no watch hint: {stderr}"));
        let words: Vec<&str> = hint.split_whitespace().collect();
        assert_eq!(words[..3], ["mcp-tasks", "task", "watch"], "{hint}");
        assert_eq!(words[4], "--session", "{hint}");
        (words[3].to_owned(), words[5].to_owned())
    };

    // A countdown, orphaned.
    let mut p = spawn_pty(&[
        "call",
        "countdown",
        "--era",
        "legacy",
        "--args",
        r#"{"seconds":3}"#,
        "--url",
        url,
        "--token",
        "tok-a",
    ]);
    let found = p.expect("follows it again").expect("the task's hint");
    let (id, session) = watch_hint(&String::from_utf8_lossy(found.before()));
    p.get_process_mut()
        .kill(expectrl::process::unix::Signal::SIGKILL)
        .expect("kill mcp-tasks");
    // Gone, with its connections, before another client takes the task over.
    p.get_process().wait().expect("mcp-tasks exits");
    exits_saying(
        &["task", "watch", &id, "--url", url, "--token", "tok-a"],
        2,
        &format!("the server knows no task {id:?}"),
    );
    exits_saying(
        &[
            "task",
            "watch",
            &id,
            "--session",
            &session,
            "--url",
            url,
            "--token",
            "tok-b",
        ],
        2,
        "Session not found",
    );
    exits_saying(
        &[
            "task",
            "watch",
            &id,
            "--session",
            "no-such-session",
            "--url",
            url,
            "--token",
            "tok-a",
        ],
        2,
        "Session not found",
    );
    let (code, stdout, stderr) = headless(&[
        "task",
        "watch",
        &id,
        "--session",
        &session,
        "--url",
        url,
        "--token",
        "tok-a",
    ]);
    assert_eq!((code, stdout.trim()), (0, "liftoff"), "{stderr}");
    assert!(stderr.contains(&format!("following task {id}")), "{stderr}");

    // Python `mcp` 1.30.0 over Streamable HTTP binds its tasks to the session too (without
    // `--session`, "Task not found"). Its `plan_trip` holds its status for a second before it
    // asks: the command that started it is killed before the question, so the question and the
    // sampling request that follows wait in the task's queue and reach the command that joined.
    mcp_tasks_tests::peers::install_peers("python");
    let mut python = Command::new(mcp_tasks_tests::peers::venv_python());
    python
        .arg(mcp_tasks_tests::workspace_root().join("tests/peers/tasks_server.py"))
        .arg("--http");
    let py = HttpServer::start_command(python);
    let mut p = spawn_pty(&["call", "plan_trip", "--args", "city=Oslo", "--url", &py.url]);
    let found = p.expect("follows it again").expect("the task's hint");
    let (id, session) = watch_hint(&String::from_utf8_lossy(found.before()));
    p.get_process_mut()
        .kill(expectrl::process::unix::Signal::SIGKILL)
        .expect("kill mcp-tasks");
    // Gone, with its connections, before another client takes the task over.
    p.get_process().wait().expect("mcp-tasks exits");
    exits_saying(
        &["task", "get", &id, "--url", &py.url],
        2,
        &format!("the server knows no task {id:?}"),
    );
    let (code, stdout, stderr) = headless(&[
        "task",
        "watch",
        &id,
        "--session",
        &session,
        "--answers",
        r#"{"nights": 3, "@sampling": "See the fjords."}"#,
        "--url",
        &py.url,
    ]);
    assert_eq!(
        (code, stdout.trim()),
        (0, "3 nights in Oslo, hotel: no; tip: See the fjords."),
        "{stderr}"
    );
    assert!(
        stderr.contains("How long will you stay in Oslo?"),
        "{stderr}"
    );

    exits_saying(
        &["task", "watch", "x", "--session", "s", "--", "server"],
        2,
        "--session is for --url",
    );
    exits_saying(
        &[
            "task",
            "get",
            "x",
            "--session",
            "s",
            "--era",
            "modern",
            "--url",
            url,
        ],
        2,
        "2026-07-28 (--era modern) has none",
    );
}

/// A server that never answers does not hang the command: a process that reads everything and
/// writes nothing fails at start-up after `--timeout`, a tool that never answers (`sleep` with no
/// progress) fails its `tools/call` after `--timeout` in both eras, and `--task-timeout` bounds a
/// task's total time (the task is cancelled); each exits 2 saying what ran out.
#[test]
fn timeouts_end_a_silent_server_with_exit_2() {
    let server = bin("example_server");
    cli_bin(); // built before the clock starts
    let started = Instant::now();
    let stderr = exits_saying(
        &[
            "tools",
            "--timeout",
            "1s",
            "--",
            "sh",
            "-c",
            "cat >/dev/null",
        ],
        2,
        "could not connect: no answer to initialize within 1 s",
    );
    assert!(
        stderr.contains("--timeout DURATION waits longer"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    for era in ["modern", "legacy"] {
        let started = Instant::now();
        let (code, stdout, stderr) = headless(&[
            "call",
            "sleep",
            "--era",
            era,
            "--args",
            r#"{"ms": 60000}"#,
            "--timeout",
            "1s",
            "--",
            &server,
        ]);
        assert_eq!(code, 2, "{era}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("no answer to tools/call within 1 s"),
            "{era}: {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{era}: {:?}",
            started.elapsed()
        );
    }
    let stderr = exits_saying(
        &[
            "call",
            "countdown",
            "--args",
            r#"{"seconds": 60}"#,
            "--task-timeout",
            "2s",
            "--",
            &server,
        ],
        2,
        "--task-timeout ran out: cancelling task",
    );
    assert!(stderr.contains("cancelled"), "{stderr}");
    assert!(
        stderr.contains("the call did not end within 2s (--task-timeout)"),
        "{stderr}"
    );
    exits_saying(
        &["tools", "--timeout", "soon", "--", &server],
        2,
        "not a duration",
    );
}

/// server-everything's `trigger-elicitation-request` (a form of 13 fields, `name` first and
/// `birthdate` sixth): the fields are taken in the schema's order, not alphabetically (a parsed
/// JSON map sorts its keys; the order comes from the message's text). Shown headless by the
/// `--answers` hint, and on a terminal by the first field asked.
#[test]
fn form_fields_are_asked_in_the_schema_order() {
    mcp_tasks_tests::peers::install_peers("node");
    let index = mcp_tasks_tests::peers::server_everything_index();
    let node = mcp_tasks_tests::peers::node();
    let index = index.display().to_string();
    let (_, _, stderr) = headless(&[
        "call",
        "trigger-elicitation-request",
        "--",
        &node,
        &index,
        "stdio",
    ]);
    let hint = stderr
        .lines()
        .find_map(|l| l.split_once("answer with --answers '"))
        .map(|(_, h)| h)
        .unwrap_or_else(|| panic!("no --answers hint: {stderr}"));
    let keys: Vec<&str> = hint
        .split("\":")
        .filter_map(|part| part.rsplit('"').next())
        .take(6)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "check",
            "firstLine",
            "email",
            "homepage",
            "birthdate"
        ],
        "{hint}"
    );
    let mut p = spawn_pty(&[
        "call",
        "trigger-elicitation-request",
        "--",
        &node,
        &index,
        "stdio",
    ]);
    p.expect("Please provide inputs").expect("the question");
    let first = p
        .expect(Regex(r"String with date format|String \(|Boolean"))
        .expect("a field's prompt");
    assert_eq!(
        String::from_utf8_lossy(first.get(0).expect("match")),
        "String (",
        "the first field asked is `name` (titled \"String\")"
    );
    p.send(ControlCode::EndOfText).expect("Ctrl-C");
    p.expect(Eof).expect("mcp-tasks exits");
}

/// Esc declines a text or number question and a sampling request at the prompt, as the prompt
/// says, without cancelling the task: the tool hears "declined" and ends its own way (exit 1).
/// An empty reply declines a sampling request too.
#[test]
fn pty_esc_declines_a_number_question_and_a_sampling_request() {
    let server = bin("example_server");
    for era in ["modern", "legacy"] {
        let mut p = spawn_pty(&[
            "call",
            "research",
            "--era",
            era,
            "--args",
            r#"{"topic":"tides"}"#,
            "--",
            &server,
        ]);
        p.expect("How many sources").expect("the question");
        p.expect("sources").expect("the field's prompt");
        p.expect("›").expect("the prompt waits");
        p.send("\x1b").expect("Esc");
        p.expect("declined").expect("the question is declined");
        p.expect("the user called the research off")
            .expect("the tool heard the decline");
        p.expect(Eof).expect("mcp-tasks exits");
        assert_eq!(exit_code(&p), 1, "{era}");
    }
    // Legacy: a declined sampling request is an error the tool sees.
    for reply in ["\x1b", "\r"] {
        let mut p = spawn_pty(&[
            "call",
            "research",
            "--era",
            "legacy",
            "--args",
            r#"{"topic":"tides"}"#,
            "--",
            &server,
        ]);
        p.expect("sources").expect("the field's prompt");
        p.expect("›").expect("the prompt waits");
        p.send_line("3").expect("type");
        p.expect("Reply as the model").expect("the sampling prompt");
        p.expect("›").expect("the prompt waits");
        p.send(reply).expect("Esc or Enter");
        p.expect("declined")
            .expect("the sampling request is declined");
        p.expect(Eof).expect("mcp-tasks exits");
        assert_eq!(exit_code(&p), 1, "{reply:?}");
    }
}

/// What the command shows besides the result, both eras: an inline call's progress (the client
/// sends a progress token on every call), the server's log messages with `--verbose` (warnings
/// and worse only without it), every JSON-RPC message with `--wire`, and nothing but questions,
/// results and errors with `--quiet`.
#[test]
fn progress_logs_wire_and_quiet() {
    let conformance = bin("conformance_server");
    let server = bin("example_server");
    for era in ["modern", "legacy"] {
        let (code, stdout, stderr) = headless(&[
            "call",
            "test_tool_with_progress",
            "--era",
            era,
            "--",
            &conformance,
        ]);
        assert_eq!(code, 0, "{era}: {stderr}");
        assert_eq!(stdout.trim(), "Tool with progress executed successfully");
        for line in [
            "test_tool_with_progress: (0/100)",
            "test_tool_with_progress: (50/100)",
            "test_tool_with_progress: (100/100)",
        ] {
            assert!(stderr.lines().any(|l| l == line), "{era}: {stderr}");
        }
        let logged = [
            "server info: Tool execution started",
            "server info: Tool processing data",
            "server info: Tool execution completed",
        ];
        let (code, _, stderr) = headless(&[
            "call",
            "test_tool_with_logging",
            "--verbose",
            "--era",
            era,
            "--",
            &conformance,
        ]);
        assert_eq!(code, 0, "{era}: {stderr}");
        for line in logged {
            assert!(stderr.lines().any(|l| l == line), "{era}: {stderr}");
        }
        let (code, _, stderr) = headless(&[
            "call",
            "test_tool_with_logging",
            "--era",
            era,
            "--",
            &conformance,
        ]);
        assert_eq!(code, 0, "{era}: {stderr}");
        assert!(!stderr.contains("server info"), "{era}: {stderr}");

        let (code, stdout, stderr) = headless(&[
            "call",
            "greet",
            "--args",
            r#"{"name":"Ada"}"#,
            "--wire",
            "--era",
            era,
            "--",
            &server,
        ]);
        assert_eq!(code, 0, "{era}: {stderr}");
        assert_eq!(stdout.trim(), "Hello, Ada!");
        let sent = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("--> "))
            .map(|l| serde_json::from_str::<Value>(l).expect("a sent message is JSON"))
            .find(|m| m["method"] == "tools/call")
            .unwrap_or_else(|| panic!("{era}: no tools/call on the wire: {stderr}"));
        assert_eq!(sent["params"]["arguments"]["name"], "Ada");
        assert!(
            sent["params"]["_meta"]["progressToken"].is_string(),
            "{sent}"
        );
        assert!(
            stderr
                .lines()
                .filter_map(|l| l.strip_prefix("<-- "))
                .any(|l| l.contains("Hello, Ada!")),
            "{era}: {stderr}"
        );

        let (code, stdout, stderr) = headless(&[
            "call",
            "research",
            "--quiet",
            "--era",
            era,
            "--args",
            r#"{"topic":"tides"}"#,
            "--answers",
            r#"{"sources": 2, "@sampling": "Moon."}"#,
            "--",
            &server,
        ]);
        assert_eq!(code, 0, "{era}: {stderr}");
        assert!(stdout.contains("Moon."), "{stdout}");
        assert!(!stderr.contains("task "), "{era}: {stderr}");
        assert!(
            stderr.contains("answered from --answers"),
            "{era}: {stderr}"
        );
    }
}

/// `--args` as `KEY=VALUE` pairs typed by the tool's input schema (a number where it says number,
/// text where it says string even if it looks like a number), from `@FILE`, and a value that
/// does not fit its type is exit 2 before the call; `--server-stderr` silences a stdio server's
/// stderr, or sends it to a file. Both eras.
#[test]
fn args_as_pairs_and_files_and_server_stderr() {
    let server = bin("example_server");
    let dir = std::env::temp_dir().join(format!("mcp-tasks-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("args.json");
    std::fs::write(&file, r#"{"a": 1, "b": 2}"#).expect("write the args file");
    let at_file = format!("@{}", file.display());
    for era in ["modern", "legacy"] {
        let run = |args: &[&str]| {
            let mut all = vec!["call"];
            all.extend_from_slice(args);
            all.extend(["--era", era, "--", &server]);
            headless(&all)
        };
        let (code, stdout, stderr) = run(&["add", "--args", "a=2", "--args", "b=3.5"]);
        assert_eq!(
            (code, stdout.trim()),
            (0, r#"{"sum":5.5}"#),
            "{era}: {stderr}"
        );
        let (code, stdout, stderr) = run(&["greet", "--args", "name=42"]);
        assert_eq!((code, stdout.trim()), (0, "Hello, 42!"), "{era}: {stderr}");
        let (code, stdout, stderr) = run(&["add", "--args", &at_file, "--args", "b=5"]);
        assert_eq!(
            (code, stdout.trim()),
            (0, r#"{"sum":6.0}"#),
            "{era}: {stderr}"
        );
        let (code, stdout, stderr) = run(&["add", "--args", "a=two", "--args", "b=1"]);
        assert_eq!(code, 2, "{era}: {stdout}");
        assert!(
            stderr.contains("--args a=two: `a` takes a number (from the tool's input schema)"),
            "{era}: {stderr}"
        );
    }
    let (code, _, stderr) = headless(&["call", "add", "--args", "@/no/such.json", "--", &server]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--args @/no/such.json: cannot read it"),
        "{stderr}"
    );

    let noisy = format!("echo noisy-server >&2; exec {server}");
    let (code, _, stderr) = headless(&[
        "call", "greet", "--args", "name=x", "--", "sh", "-c", &noisy,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("noisy-server"),
        "inherited by default: {stderr}"
    );
    let (code, stdout, stderr) = headless(&[
        "call",
        "greet",
        "--args",
        "name=x",
        "--server-stderr",
        "null",
        "--",
        "sh",
        "-c",
        &noisy,
    ]);
    assert_eq!((code, stdout.trim()), (0, "Hello, x!"), "{stderr}");
    assert!(!stderr.contains("noisy-server"), "{stderr}");
    let log = dir.join("server.log");
    let log_arg = log.display().to_string();
    let (code, _, stderr) = headless(&[
        "call",
        "greet",
        "--args",
        "name=x",
        "--server-stderr",
        &log_arg,
        "--",
        "sh",
        "-c",
        &noisy,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("noisy-server"), "{stderr}");
    let logged = std::fs::read_to_string(&log).expect("the server's stderr file");
    assert!(logged.contains("noisy-server"), "{logged}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One owner of the terminal line at a time: the progress line is cleared before a question is
/// asked (no frozen spinner frame is left above the prompt), nothing is written into the open
/// prompt while it waits, and the progress line comes back after the answer.
#[test]
fn pty_the_progress_line_is_cleared_before_a_prompt_and_nothing_writes_into_it() {
    let server = bin("example_server");
    let mut p = spawn_pty(&[
        "call",
        "research",
        "--args",
        r#"{"topic":"tides"}"#,
        "--",
        &server,
    ]);
    let shown = p.expect("›").expect("the field's prompt");
    let before = String::from_utf8_lossy(shown.before()).into_owned();
    let last_frame = ["planning", "input required", "working"]
        .iter()
        .filter_map(|t| before.rfind(t))
        .max()
        .unwrap_or_else(|| panic!("no progress line before the prompt: {before:?}"));
    assert!(
        before[last_frame..].contains("\x1b[2K"),
        "the last progress frame is left on screen above the prompt: {:?}",
        &before[last_frame..]
    );
    p.set_expect_timeout(Some(Duration::from_millis(1500)));
    match p.expect(Regex("[^\\s]")) {
        Err(expectrl::Error::ExpectTimeout) => {}
        Ok(found) => panic!(
            "written into the open prompt: {:?}",
            String::from_utf8_lossy(found.get(0).unwrap_or_default())
        ),
        Err(e) => panic!("{e}"),
    }
    p.set_expect_timeout(Some(Duration::from_secs(20)));
    p.send_line("2").expect("type");
    p.expect("Reply as the model").expect("the sampling prompt");
    p.send_line("Moon.").expect("type");
    p.expect("Moon.").expect("the result");
    p.expect(Eof).expect("mcp-tasks exits");
    assert_eq!(exit_code(&p), 0);
}

/// Asserts that every spinner frame of `tool`'s inline call in `screen` (what the terminal got
/// before a prompt or a result) was wiped (`\r` and erase-line) before anything else was written:
/// a frame followed by other output, or by the prompt or result that ends `screen`, is a stale
/// spinner line left on screen. Returns how many frames there were.
fn assert_frames_cleared(screen: &str, tool: &str) -> usize {
    let marker = format!("{tool}: ");
    let mut frames = 0;
    for (at, _) in screen.match_indices(&marker) {
        let rest = &screen[at..];
        let end = rest.find(['\r', '\n', '\x1b']).unwrap_or(rest.len());
        frames += 1;
        assert!(
            rest[end..].starts_with("\r\x1b[2K"),
            "a spinner frame left on screen: {:?}",
            &rest[..rest.len().min(end + 60)]
        );
    }
    frames
}

/// An inline call (no task) on a terminal: the spinner shows the call (`TOOL: calling`) and its
/// progress (`TOOL: (2/4)`), and every frame is wiped before anything else is written: before the
/// result is printed, and before a question's prompt opens (nothing is written into the open
/// prompt either). A question asked inline (our `test_elicitation`, an MRTR round in 2026-07-28,
/// a plain `elicitation/create` in 2025-11-25), our server's progress (keepalive progress on
/// `sleep`), and server-everything's `trigger-long-running-operation` (progress 1..4 of 4).
#[test]
fn pty_an_inline_call_shows_its_spinner_and_leaves_no_stale_line() {
    let conformance = bin("conformance_server");
    for era in ["modern", "legacy"] {
        let mut p = spawn_pty(&[
            "call",
            "test_elicitation",
            "--era",
            era,
            "--args",
            "message=Who are you?",
            "--",
            &conformance,
        ]);
        let shown = p.expect("›").expect("the first field's prompt");
        let before = String::from_utf8_lossy(shown.before()).into_owned();
        let first = before
            .find("test_elicitation: calling")
            .unwrap_or_else(|| panic!("{era}: no spinner: {before:?}"));
        assert!(
            !before[..first].contains("[0s]"),
            "{era}: a frame without the call's name came first: {before:?}"
        );
        assert!(assert_frames_cleared(&before, "test_elicitation") > 0);
        p.set_expect_timeout(Some(Duration::from_millis(1500)));
        match p.expect(Regex("[^\\s]")) {
            Err(expectrl::Error::ExpectTimeout) => {}
            Ok(found) => panic!(
                "{era}: written into the open prompt: {:?}",
                String::from_utf8_lossy(found.get(0).unwrap_or_default())
            ),
            Err(e) => panic!("{e}"),
        }
        p.set_expect_timeout(Some(Duration::from_secs(20)));
        p.send_line("ada@example.com").expect("type");
        p.expect("username").expect("the second field");
        p.expect("›").expect("its prompt");
        p.send_line("ada").expect("type");
        let shown = p
            .expect("User response: action=accept")
            .expect("the result");
        assert_frames_cleared(&String::from_utf8_lossy(shown.before()), "test_elicitation");
        let rest = p.expect(Eof).expect("mcp-tasks exits");
        let rest = String::from_utf8_lossy(rest.before()).into_owned();
        assert!(!rest.contains("test_elicitation: "), "{era}: {rest:?}");
        assert_eq!(exit_code(&p), 0, "{era}");
    }

    mcp_tasks_tests::peers::install_peers("node");
    let everything = mcp_tasks_tests::workspace_root()
        .join(
            "target/peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        )
        .display()
        .to_string();
    let node = mcp_tasks_tests::peers::node();
    let server = bin("example_server");
    let runs: [(&[&str], &str, &str, &str); 2] = [
        (
            &[
                "sleep",
                "--args",
                "ms=1500",
                "--",
                &server,
                "--keepalive-ms",
                "200",
            ],
            "sleep",
            "sleep: (0)",
            "slept 1500 ms",
        ),
        (
            &[
                "trigger-long-running-operation",
                "--args",
                "duration=2",
                "--args",
                "steps=4",
                "--",
                &node,
                &everything,
                "stdio",
            ],
            "trigger-long-running-operation",
            "trigger-long-running-operation: (2/4)",
            "Long running operation completed",
        ),
    ];
    for (args, tool, progress, result) in runs {
        let mut all = vec!["call"];
        all.extend_from_slice(args);
        let mut p = spawn_pty(&all);
        p.expect(progress).expect("the progress in the spinner");
        let shown = p.expect(result).expect("the result");
        assert_frames_cleared(&String::from_utf8_lossy(shown.before()), tool);
        let rest = p.expect(Eof).expect("mcp-tasks exits");
        let rest = String::from_utf8_lossy(rest.before()).into_owned();
        assert!(!rest.contains(&format!("{tool}: ")), "{tool}: {rest:?}");
        assert_eq!(exit_code(&p), 0, "{tool}");
    }
}

/// The methods `--wire` shows the command sent, in order.
fn sent_methods(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("--> "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

/// The era probe at first contact with a legacy-only server (Python `mcp` 1.30.0) is
/// `server/discover`, which it refuses, then `initialize`. `--era auto` remembers the era each server was found to speak (`eras.json` in the cache
/// directory), so later commands skip the probe; a remembered era that stops working is
/// forgotten and the probe runs again.
#[test]
fn the_era_probe_runs_once_per_server() {
    mcp_tasks_tests::peers::install_peers("python");
    let python = mcp_tasks_tests::peers::venv_python().display().to_string();
    let script = mcp_tasks_tests::workspace_root()
        .join("tests/peers/tasks_server.py")
        .display()
        .to_string();
    // A cache of its own: the other tests of this file write theirs at the same time.
    let dir = PathBuf::from(format!("{}-probe-once", cache_dir().display()));
    let _ = std::fs::remove_dir_all(&dir);
    let headless = |args: &[&str]| headless_caching_in(&dir, args);
    let cache = dir.join("eras.json");
    let (code, stdout, stderr) =
        headless(&["tools", "--server-stderr", "null", "--", &python, &script]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.is_empty());
    let remembered: Value =
        serde_json::from_str(&std::fs::read_to_string(&cache).expect("eras.json")).unwrap();
    let key = serde_json::json!([python, script]).to_string();
    assert_eq!(remembered[&key], "legacy", "{remembered}");
    // What the first contact sends, traced.
    let _ = std::fs::remove_file(&cache);
    let (code, stdout1, stderr) = headless(&["tools", "--wire", "--", &python, &script]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout1, stdout);
    let sent = sent_methods(&stderr);
    assert_eq!(
        sent[..3],
        ["server/discover", "initialize", "notifications/initialized"],
        "{stderr}"
    );
    // Remembered: no probe at all the second time.
    let (code, stdout2, stderr) = headless(&["tools", "--wire", "--", &python, &script]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout2, stdout);
    assert_eq!(sent_methods(&stderr)[0], "initialize", "{stderr}");
    assert!(!stderr.contains("server/discover"), "{stderr}");
    // A remembered era that no longer fits (the server was replaced, say): probed again.
    std::fs::write(
        &cache,
        serde_json::json!({ key.clone(): "modern" }).to_string(),
    )
    .unwrap();
    let (code, stdout3, stderr) = headless(&["tools", "--", &python, &script]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout3, stdout);
    let remembered: Value =
        serde_json::from_str(&std::fs::read_to_string(&cache).expect("eras.json")).unwrap();
    assert_eq!(remembered[&key], "legacy", "{remembered}");
}

/// First contact (nothing remembered) with servers that speak 2026-07-28 finds that era: they
/// answer the `server/discover` probe, and get no `initialize`. Our
/// `example_server`, and a third-party one on `@modelcontextprotocol/server` 2.4.0.
#[test]
fn the_era_probe_finds_modern_servers_at_first_contact() {
    mcp_tasks_tests::peers::install_peers("node");
    let example = vec![bin("example_server")];
    let ext = vec![
        mcp_tasks_tests::peers::node(),
        mcp_tasks_tests::workspace_root()
            .join("tests/peers/modern_tasks_server.mjs")
            .display()
            .to_string(),
    ];
    // A cache of its own, empty: nothing remembered.
    let dir = PathBuf::from(format!("{}-first-contact", cache_dir().display()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("eras.json");
    for server in [example, ext] {
        let key = Value::from(server.clone()).to_string();
        let mut args = vec!["tools", "--wire", "--"];
        args.extend(server.iter().map(String::as_str));
        let (code, stdout, stderr) = headless_caching_in(&dir, &args);
        assert_eq!(code, 0, "{server:?}: {stderr}");
        assert!(!stdout.contains("protocol 2025-11-25"), "{stdout}");
        let sent = sent_methods(&stderr);
        assert_eq!(sent[..2], ["server/discover", "tools/list"], "{stderr}");
        assert!(!sent.iter().any(|m| m == "initialize"), "{stderr}");
        let remembered: Value =
            serde_json::from_str(&std::fs::read_to_string(&cache).expect("eras.json")).unwrap();
        assert_eq!(remembered[&key], "modern", "{server:?}: {remembered}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
