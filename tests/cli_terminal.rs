//! The `mcp-tasks` command at a real terminal, read as a person sees it: the screen of a tmux
//! pane (its own tmux server), after Ctrl-C at a question, on a `TERM=dumb` terminal, and while
//! a line is typed (Ctrl-U, an answer refused).

use mcp_tasks_tests::cli::{fresh_cache, mcp_tasks_bin, run_cli};
use mcp_tasks_tests::example_bin;
use mcp_tasks_tests::http::HttpServer;
use std::process::Command;
use std::time::{Duration, Instant};

/// A command in a tmux pane of 100x30 on a tmux server of its own, killed when dropped.
struct Pane {
    socket: String,
}

impl Pane {
    /// Runs `command` (a shell line) in the pane; `EXIT=<code>` is printed when it ends.
    fn run(name: &str, env: &[(&str, &str)], command: &[String]) -> Pane {
        let socket = format!("mcp-tasks-cli-{name}-{}", std::process::id());
        let quoted: Vec<String> = command
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
            .collect();
        let mut line = String::from("env");
        for (k, v) in env {
            line.push_str(&format!(" {k}='{v}'"));
        }
        line.push_str(&format!(" {}; echo EXIT=$?; sleep 600", quoted.join(" ")));
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "100", "-y", "30", &line])
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        Pane { socket }
    }

    /// The pane's screen, as text (one line per line written: wrapped rows joined).
    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (at most 30 s) until the screen shows `text`; returns the screen.
    fn wait_for(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no {text:?} on the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn research(name: &str, env: &[(&str, &str)]) -> Pane {
    let cache = fresh_cache(name).display().to_string();
    let mut all = vec![("NO_COLOR", "1"), ("RUST_LOG", "warn")];
    all.push(("MCP_TASKS_CACHE_DIR", cache.as_str()));
    all.extend_from_slice(env);
    Pane::run(
        name,
        &all,
        &[
            mcp_tasks_bin().display().to_string(),
            "call".into(),
            "research".into(),
            "--args".into(),
            "topic=tides".into(),
            "--".into(),
            example_bin("example_server").display().to_string(),
        ],
    )
}

/// A spinner frame (indicatif's default spinner is braille).
fn has_spinner(line: &str) -> bool {
    line.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

/// Ctrl-C at a question: what follows starts on lines of its own (not on the prompt's line, not
/// at the column where the prompt ended), and no frozen spinner is left on the screen.
#[test]
fn ctrl_c_at_a_question_leaves_a_clean_screen() {
    let pane = research("ctrl-c", &[]);
    pane.wait_for("›");
    pane.keys(&["C-c"]);
    let screen = pane.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130"), "{screen}");
    for line in screen.lines() {
        assert!(!has_spinner(line), "a spinner left on screen:\n{screen}");
        if let Some(at) = line.find("mcp-tasks:") {
            assert_eq!(at, 0, "a line not at its start:\n{screen}");
        }
        if let Some(at) = line.find("cancelling task") {
            assert!(line.starts_with("^C: cancelling task"), "{at}:\n{screen}");
        }
    }
    let prompt = screen
        .lines()
        .find(|l| l.contains("›"))
        .expect("the prompt's line");
    assert!(
        !prompt.contains("cancel"),
        "written onto the prompt:\n{screen}"
    );
    assert!(screen.contains("mcp-tasks: task "), "{screen}");
}

/// `TERM=dumb` on a terminal: no live line can be drawn there, so the task's states are shown
/// one line per change, as when stderr is not a terminal.
#[test]
fn a_dumb_terminal_shows_the_status_line_by_line() {
    let pane = research("dumb", &[("TERM", "dumb")]);
    let screen = pane.wait_for("›");
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("task ") && l.contains(": working")),
        "no status shown:\n{screen}"
    );
    pane.keys(&["C-c"]);
    pane.wait_for("EXIT=");
}

/// At a typed answer: a refused answer is said and taken out of the line (the next one is typed
/// into an empty line), and Ctrl-U clears what was typed.
#[test]
fn a_refused_answer_and_ctrl_u_leave_an_empty_line() {
    let pane = research("ctrl-u", &[]);
    pane.wait_for("›");
    pane.keys(&["many", "Enter"]);
    pane.wait_for("is not a whole number");
    // Typed after the refusal: "3" alone is the answer (not "many3").
    pane.keys(&["3", "Enter"]);
    pane.wait_for("Reply as the model");
    pane.keys(&["wrong words", "C-u", "The moon.", "Enter"]);
    let screen = pane.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("The moon."), "{screen}");
    assert!(!screen.contains("wrong words"), "{screen}");
}

/// `task watch` of a 2025-11-25 task whose sampling request was sent to the command that started
/// it, which died at the prompt (its terminal closed): it is not sent again, so the watch
/// says so after a few seconds (and how to cancel the task) instead of polling in silence;
/// `--task-timeout` ends it.
#[test]
fn watching_a_task_whose_question_went_elsewhere_says_so() {
    let http = HttpServer::start_bin("example_server", &[]);
    let cache = fresh_cache("elsewhere");
    let pane = Pane::run(
        "elsewhere",
        &[
            ("NO_COLOR", "1"),
            ("MCP_TASKS_CACHE_DIR", &cache.display().to_string()),
        ],
        &[
            mcp_tasks_bin().display().to_string(),
            "call".into(),
            "research".into(),
            "--era".into(),
            "legacy".into(),
            "--args".into(),
            "topic=tides".into(),
            "--url".into(),
            http.url.clone(),
        ],
    );
    // The form answered; the hint (held while the first prompt was open) is on screen once the
    // sampling prompt opens, and the command dies there.
    pane.wait_for("›");
    pane.keys(&["3", "Enter"]);
    let screen = pane.wait_for("Reply as the model");
    let hint = screen
        .lines()
        .find(|l| l.contains("follows it again"))
        .unwrap_or_else(|| panic!("no hint:\n{screen}"));
    let words: Vec<&str> = hint
        .split('`')
        .nth(1)
        .expect("a command in the hint")
        .split_whitespace()
        .collect();
    assert_eq!(words[..3], ["mcp-tasks", "task", "watch"], "{hint}");
    // The terminal closes: the command dies at its prompt, no tasks/cancel sent.
    drop(pane);
    let mut args = words[1..].to_vec();
    args.extend(["--task-timeout", "8s"]);
    let run = run_cli(&args, &cache, Duration::from_secs(60));
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the task waits for input that was asked of another client"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("`mcp-tasks task cancel {}`", words[3])),
        "{}",
        run.stderr
    );
}
