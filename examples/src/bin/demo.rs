//! A client and the example server, talking over real stdio pipes, narrated step by step: a tool
//! called inline, a task that asks the user and then the client's model, its result, and the same
//! server in the other protocol era.
//!
//! `cargo run -p mcp-tasks-examples --bin demo` tells the story;
//! `cargo run -p mcp-tasks-examples --bin demo -- --wire` prints every JSON-RPC message instead:
//! what the client sends (`->`) and what the server answers (`<-`).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long the demo waits for any one message before it gives up.
const WAIT: Duration = Duration::from_secs(30);

/// The client's side of the pipes to the server process.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: i64,
    /// `--wire`: print the JSON-RPC lines rather than the story.
    wire: bool,
}

impl Session {
    fn start(wire: bool) -> Session {
        // The server is this same program, started again with `--serve`: the example server over
        // real stdin/stdout pipes, exactly as `example_server` runs it.
        let server = std::env::current_exe().expect("own path");
        let mut child = Command::new(&server)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The story is on stdout; the server's own log (the `explode` tool's panic among it)
            // would interrupt it, so only `--wire` shows it.
            .stderr(if wire {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .env("RUST_LOG", "warn")
            .env("RUST_BACKTRACE", "0")
            .spawn()
            .expect("start the example server");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let session = Session {
            child,
            stdin,
            lines,
            next_id: 1,
            wire,
        };
        session.say(&format!(
            "Started the example server (pid {}) as a child process. This program is its client: \
             it writes JSON-RPC requests to the server's stdin and reads the answers from its stdout.",
            session.child.id()
        ));
        if wire {
            println!(
                "started the example server (pid {}), talking to it over stdio\n",
                session.child.id()
            );
        }
        session
    }

    /// A line of the story (not with `--wire`).
    fn say(&self, text: &str) {
        if !self.wire {
            println!("{}", wrap(text, "  "));
        }
    }

    /// A blank line between exchanges in the story.
    fn pause(&self) {
        if !self.wire {
            println!();
        }
    }

    fn write(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    fn send(&mut self, msg: &Value) {
        if self.wire {
            println!("-> {msg}");
        }
        self.write(msg);
    }

    fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .expect("the server answers in time");
        serde_json::from_str(&line).expect("the server writes JSON lines")
    }

    fn recv(&mut self) -> Value {
        let msg = self.read();
        if self.wire {
            println!("<- {msg}");
        }
        msg
    }

    fn fresh_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends a request and waits for its response (anything else the server sends meanwhile is
    /// shown with `--wire` and otherwise skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.fresh_id();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let response = self.response_to(id);
        if self.wire {
            println!();
        }
        response
    }

    fn response_to(&mut self, id: i64) -> Value {
        loop {
            let msg = self.recv();
            if msg["id"] == json!(id) && (msg.get("result").is_some() || msg.get("error").is_some())
            {
                return msg;
            }
        }
    }

    /// Polls `tasks/get` without showing each poll until `done` holds; `--wire` then shows the
    /// last exchange. Returns the task and how many polls it took.
    fn poll_until(
        &mut self,
        task_id: &str,
        caps: &Value,
        done: impl Fn(&Value) -> bool,
    ) -> (Value, u32) {
        let mut polls = 0;
        loop {
            polls += 1;
            let id = self.fresh_id();
            let req = json!({ "jsonrpc": "2.0", "id": id, "method": "tasks/get",
                "params": { "taskId": task_id, "_meta": meta(caps.clone()) } });
            self.write(&req);
            let resp = loop {
                let msg = self.read();
                if msg["id"] == json!(id) {
                    break msg;
                }
            };
            if done(&resp["result"]) || polls > 200 {
                if self.wire {
                    println!("-> {req}");
                    println!("<- {resp}");
                    println!("   (polled tasks/get {polls} times)\n");
                }
                return (resp["result"].clone(), polls);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
        if self.wire {
            println!();
        }
    }

    /// A step of the story: a heading in both modes.
    fn heading(&self, number: u32, text: &str) {
        if self.wire {
            println!("=== {text}\n");
        } else {
            println!("{number}. {text}");
        }
    }
}

/// The `_meta` a 2026-07-28 request carries, declaring these client capabilities.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "demo", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// Wraps `text` at 96 columns, each line indented by `indent`.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        // A word that opens a brace stays on its line, so no line of the story starts like JSON.
        let too_long = indent.len() + line.len() + 1 + word.len() > 96;
        if !line.is_empty() && too_long && !word.starts_with('{') {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(indent);
    out.push_str(&line);
    out
}

/// What a `tools/call` answered, in words: its text, its structured content, a tool error or a
/// JSON-RPC error.
fn outcome(response: &Value) -> String {
    if let Some(error) = response.get("error") {
        return format!(
            "a JSON-RPC error {}: {}",
            error["code"],
            error["message"].as_str().unwrap_or("")
        );
    }
    let result = &response["result"];
    let text: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    let text = text.join(" ");
    if result["isError"] == true {
        format!("a tool error the model can read (isError: true): \"{text}\"")
    } else if let Some(structured) = result.get("structuredContent") {
        format!("structured content ({})", fields(structured))
    } else {
        format!("\"{text}\"")
    }
}

/// An object's fields as `key: value, ...` (strings quoted), for the story.
fn fields(value: &Value) -> String {
    match value.as_object() {
        Some(object) => object
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => value.to_string(),
    }
}

/// "1 poll", "3 polls".
fn polls_text(polls: u32) -> String {
    if polls == 1 {
        "1 poll".to_owned()
    } else {
        format!("{polls} polls")
    }
}

/// The one input request a task waits on: its key and the request.
fn input_request(task: &Value) -> (String, Value) {
    let (key, request) = task["inputRequests"]
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("the task waits on an input request");
    (key.clone(), request.clone())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let wire = match args.next().as_deref() {
        Some("--serve") => {
            mcp_tasks_runtime::init_logging();
            let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
            let server = mcp_tasks_examples::example_server()
                .build()
                .expect("the example server is set up right");
            rt.block_on(server.serve_stdio().into_future())
                .expect("serve");
            return;
        }
        Some("--wire") => true,
        None => false,
        Some(other) => {
            eprintln!("unknown argument {other:?}; usage: demo [--wire]");
            std::process::exit(2);
        }
    };
    if !wire {
        println!(
            "mcp-tasks demo: a client and the example server, over real stdio pipes.\n\
             (Run it with `-- --wire` to see the JSON-RPC messages themselves.)\n"
        );
    }
    let mut s = Session::start(wire);
    s.pause();

    s.heading(
        1,
        "The 2026-07-28 era: no handshake; every request carries its own _meta",
    );
    let discover = s.request("server/discover", json!({ "_meta": meta(json!({})) }));
    let info = &discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    let versions = discover["result"]["supportedVersions"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    s.say(&format!(
        "server/discover: the server is {} {}, and speaks {versions}.",
        info["name"].as_str().unwrap_or("?"),
        info["version"].as_str().unwrap_or("?"),
    ));
    let tools = s.request("tools/list", json!({ "_meta": meta(json!({})) }));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    s.say(&format!(
        "tools/list: {} tools: {}.",
        names.len(),
        names.join(", ")
    ));
    s.pause();

    s.heading(2, "A tool called inline: the answer comes back at once");
    let greet = s.request(
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "Ada" }, "_meta": meta(json!({})) }),
    );
    s.say(&format!(
        "greet {{name: \"Ada\"}} answered {}.",
        outcome(&greet)
    ));
    let add = s.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 40 }, "_meta": meta(json!({})) }),
    );
    s.say(&format!("add {{a: 2, b: 40}} answered {}.", outcome(&add)));
    s.pause();

    s.heading(
        3,
        "Bad input gets a precise error, and the server keeps serving",
    );
    let bad = s.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": "two", "b": 1 }, "_meta": meta(json!({})) }),
    );
    s.say(&format!(
        "add {{a: \"two\", b: 1}} answered {}.",
        outcome(&bad)
    ));
    let explode = s.request(
        "tools/call",
        json!({ "name": "explode", "arguments": {}, "_meta": meta(json!({})) }),
    );
    s.say(&format!(
        "explode, a tool that panics, answered {}.",
        outcome(&explode)
    ));
    s.pause();

    s.heading(
        4,
        "A task: research asks the user, then the client's model, and runs to its end",
    );
    let caps = json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let created = s.request(
        "tools/call",
        json!({ "name": "research", "arguments": { "topic": "tides" }, "_meta": meta(caps.clone()) }),
    );
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    s.say(&format!(
        "The client declares the tasks extension and calls research {{topic: \"tides\"}}. The \
         server answers at once with a task, id {}…, status {}; the tool runs on in the background.",
        &task_id[..8.min(task_id.len())],
        created["result"]["status"].as_str().unwrap_or("?"),
    ));
    let (asking, polls) = s.poll_until(&task_id, &caps, |t| t["status"] == "input_required");
    let (key, question) = input_request(&asking);
    s.say(&format!(
        "The client polls tasks/get; after {} the task is input_required: the tool asks the user \
         \"{}\" (a form with the field `sources`).",
        polls_text(polls),
        question["params"]["message"].as_str().unwrap_or("?"),
    ));
    s.request(
        "tasks/update",
        json!({ "taskId": task_id, "inputResponses": { &key: { "action": "accept", "content": { "sources": 3 } } }, "_meta": meta(caps.clone()) }),
    );
    s.say("The user fills in 3; the client sends the answer with tasks/update.");
    let (sampling, polls) = s.poll_until(&task_id, &caps, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    });
    let (key, request) = input_request(&sampling);
    let prompt = request["params"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or("?");
    s.say(&format!(
        "The tool goes on ({}) and, {} later, asks the client's model: \"{prompt}\"",
        sampling["statusMessage"].as_str().unwrap_or("working"),
        polls_text(polls),
    ));
    let summary = "Tides are driven mostly by the moon.";
    s.request(
        "tasks/update",
        json!({ "taskId": task_id, "inputResponses": { &key: {
            "role": "assistant", "content": { "type": "text", "text": summary }, "model": "demo-model" } }, "_meta": meta(caps.clone()) }),
    );
    s.say(&format!(
        "The client's model answers \"{summary}\"; tasks/update again."
    ));
    let (done, _) = s.poll_until(&task_id, &caps, |t| t["status"] == "completed");
    s.say(&format!(
        "tasks/get: the task is {}, and carries the tool's result: {}.",
        done["status"].as_str().unwrap_or("?"),
        fields(&done["result"]["structuredContent"]),
    ));
    s.pause();

    s.heading(
        5,
        "The same server in the 2025-11-25 era, on the same pipes: initialize opens a session",
    );
    let init = s.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {}, "sampling": {} },
            "clientInfo": { "name": "demo", "version": "1" } }),
    );
    s.notify("notifications/initialized", json!({}));
    s.say(&format!(
        "initialize: the server agrees on protocol {}; from now on the session remembers what \
         the client declared.",
        init["result"]["protocolVersion"].as_str().unwrap_or("?"),
    ));
    let greet = s.request(
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "Grace" } }),
    );
    s.say(&format!(
        "greet {{name: \"Grace\"}} answered {} (no _meta needed now).",
        outcome(&greet)
    ));
    let failing = s.request(
        "tools/call",
        json!({ "name": "always_fails", "arguments": {} }),
    );
    s.say(&format!("always_fails answered {}.", outcome(&failing)));
    legacy_task(&mut s);

    let Session {
        mut child, stdin, ..
    } = s;
    drop(stdin);
    let status = child.wait().expect("the server exits");
    if wire {
        println!("server exited with {status} after its input closed");
    } else {
        println!(
            "{}",
            wrap(
                &format!("The client closes the server's stdin; the server exits ({status})."),
                "  "
            )
        );
    }
}

/// The same `research` tool as a 2025-11-25 task: the client asks for a task with `task: {}`,
/// waits on `tasks/result`, and answers the server's questions, which come as requests tagged
/// with the task, meanwhile.
fn legacy_task(s: &mut Session) {
    let created = s.request(
        "tools/call",
        json!({ "name": "research", "arguments": { "topic": "tides" }, "task": {} }),
    );
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    s.say(&format!(
        "research again, now asking for a task with `task: {{}}`: task {}…. The client waits on \
         tasks/result, and the questions come to it as requests tagged with the task.",
        &task_id[..8.min(task_id.len())],
    ));
    let result_id = s.fresh_id();
    s.send(
        &json!({ "jsonrpc": "2.0", "id": result_id, "method": "tasks/result",
        "params": { "taskId": task_id } }),
    );
    loop {
        let msg = s.recv();
        if msg["id"] == json!(result_id) && msg.get("method").is_none() {
            if s.wire {
                println!();
            }
            s.say(&format!(
                "tasks/result returns the tool's result: {}.",
                outcome(&msg)
            ));
            return;
        }
        match msg["method"].as_str() {
            Some("elicitation/create") => {
                s.say(&format!(
                    "The server asks the user \"{}\" (elicitation/create); the user answers 2.",
                    msg["params"]["message"].as_str().unwrap_or("?"),
                ));
                s.send(&json!({ "jsonrpc": "2.0", "id": msg["id"],
                    "result": { "action": "accept", "content": { "sources": 2 } } }));
            }
            Some("sampling/createMessage") => {
                let answer = "The moon, mostly.";
                s.say(&format!(
                    "The server asks the client's model (sampling/createMessage); it answers \
                     \"{answer}\"."
                ));
                s.send(&json!({ "jsonrpc": "2.0", "id": msg["id"], "result": {
                    "role": "assistant", "content": { "type": "text", "text": answer },
                    "model": "demo-model" } }));
            }
            _ => {} // status notifications and the like: shown with --wire only
        }
    }
}
