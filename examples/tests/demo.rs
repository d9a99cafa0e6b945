//! The demo, the first command a newcomer runs: it tells a story in words by default and shows
//! the JSON-RPC messages only with `--wire`. Both runs are real: the demo spawns the example
//! server and talks to it over stdio pipes.

use std::process::Command;

/// Runs the demo binary with `args`; returns its stdout, failing the test if it fails.
fn demo(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_demo"))
        .args(args)
        .output()
        .expect("the demo starts");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        output.status.success(),
        "the demo failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_demo_tells_a_story_without_raw_json() {
    let out = demo(&[]);
    for line in out.lines() {
        assert!(
            !line.trim_start().starts_with('{') && !line.contains("\"jsonrpc\""),
            "raw JSON in the story: {line}\n---\n{out}"
        );
    }
    // Every step, in order.
    let steps = [
        "1. The 2026-07-28 era",
        "greet {name: \"Ada\"} answered \"Hello, Ada!\"",
        "3. Bad input gets a precise error",
        "add {a: \"two\", b: 1} answered a tool error the model can read (isError: true)",
        "argument `a`: invalid type: string \"two\", expected f64",
        "4. A task",
        "answers at once with a task",
        "the tool asks the user",
        "The user fills in 3",
        "asks the client's model",
        "tasks/get: the task is completed",
        "5. The same server in the 2025-11-25 era",
        "tasks/result returns the tool's result",
        "the server exits",
    ];
    let mut from = 0;
    for step in steps {
        let at = out[from..]
            .find(step)
            .unwrap_or_else(|| panic!("the story lacks {step:?} (after byte {from}):\n{out}"));
        from += at + step.len();
    }
}

#[test]
fn the_demo_shows_the_wire_when_asked() {
    let out = demo(&["--wire"]);
    let sent = out.lines().filter(|l| l.starts_with("-> {")).count();
    let received = out.lines().filter(|l| l.starts_with("<- {")).count();
    assert!(
        sent >= 10 && received >= 10,
        "{sent} sent, {received} received:\n{out}"
    );
    assert!(out.contains("\"jsonrpc\":\"2.0\""), "{out}");
    for method in [
        "server/discover",
        "tools/call",
        "tasks/get",
        "tasks/update",
        "initialize",
        "tasks/result",
        "elicitation/create",
    ] {
        assert!(
            out.contains(&format!("\"method\":\"{method}\"")),
            "no {method} on the wire:\n{out}"
        );
    }
}
