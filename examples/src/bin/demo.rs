//! A scripted session against the example server, printing every exchange: what a client sends
//! (`->`) and what the server answers (`<-`), in both protocol eras.
//!
//! `cargo run -p mcp-tasks-examples --bin demo`

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: i64,
}

impl Session {
    fn start() -> Session {
        // The server is this same program, started again with `--serve`: the example server over
        // real stdin/stdout pipes, exactly as `example_server` runs it.
        let server = std::env::current_exe().expect("own path");
        let mut child = Command::new(&server)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
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
        println!(
            "started the example server (pid {}), talking to it over stdio\n",
            child.id()
        );
        Session {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        println!("-> {msg}");
        writeln!(self.stdin, "{msg}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the server answers");
        let msg: Value = serde_json::from_str(&line).expect("JSON");
        println!("<- {msg}");
        msg
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let msg = self.recv();
            if msg["id"] == json!(id) && (msg.get("result").is_some() || msg.get("error").is_some())
            {
                println!();
                return msg;
            }
        }
    }

    /// Polls `tasks/get` quietly until `done` holds, then prints that exchange.
    fn poll_until(&mut self, task_id: &str, caps: &Value, done: impl Fn(&Value) -> bool) -> Value {
        let mut polls = 0;
        loop {
            polls += 1;
            let id = self.next_id;
            self.next_id += 1;
            let req = json!({ "jsonrpc": "2.0", "id": id, "method": "tasks/get",
                "params": { "taskId": task_id, "_meta": meta(caps.clone()) } });
            writeln!(self.stdin, "{req}").expect("write");
            self.stdin.flush().expect("flush");
            let resp: Value = loop {
                let line = self
                    .lines
                    .recv_timeout(Duration::from_secs(30))
                    .expect("the server answers");
                let msg: Value = serde_json::from_str(&line).expect("JSON");
                if msg["id"] == json!(id) {
                    break msg;
                }
            };
            if done(&resp["result"]) || polls > 200 {
                println!("-> {req}");
                println!("<- {resp}");
                println!("   (polled tasks/get {polls} times)\n");
                return resp["result"].clone();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
        println!();
    }
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "demo", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn heading(text: &str) {
    println!("=== {text}\n");
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        mcp_tasks_runtime::init_logging();
        let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
        let server = mcp_tasks_examples::example_server()
            .build()
            .expect("the example server is set up right");
        rt.block_on(server.serve_stdio().into_future())
            .expect("serve");
        return;
    }
    let mut s = Session::start();

    heading("Modern era (2026-07-28): stateless, every request carries its own _meta");
    s.request("server/discover", json!({ "_meta": meta(json!({})) }));
    s.request("tools/list", json!({ "_meta": meta(json!({})) }));
    s.request(
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "Ada" }, "_meta": meta(json!({})) }),
    );
    s.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 40 }, "_meta": meta(json!({})) }),
    );

    heading("Bad input gets a precise error, and the server keeps serving");
    s.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": "two", "b": 1 }, "_meta": meta(json!({})) }),
    );
    s.request(
        "tools/call",
        json!({ "name": "explode", "arguments": {}, "_meta": meta(json!({})) }),
    );

    heading(
        "A task (the client declares the tasks extension): research asks the user, then the client's model",
    );
    let caps = json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let created = s.request("tools/call", json!({ "name": "research", "arguments": { "topic": "tides" }, "_meta": meta(caps.clone()) }));
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let asking = s.poll_until(&task_id, &caps, |t| t["status"] == "input_required");
    let key = asking["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("an input request");
    println!("   (the user answers the form: 3 sources)\n");
    s.request("tasks/update", json!({ "taskId": task_id, "inputResponses": { &key: { "action": "accept", "content": { "sources": 3 } } }, "_meta": meta(caps.clone()) }));
    let sampling = s.poll_until(&task_id, &caps, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    });
    let key = sampling["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("a sampling request");
    println!("   (the client's model answers)\n");
    s.request("tasks/update", json!({ "taskId": task_id, "inputResponses": { &key: {
        "role": "assistant", "content": { "type": "text", "text": "Tides are driven mostly by the moon." }, "model": "demo-model" } }, "_meta": meta(caps.clone()) }));
    s.poll_until(&task_id, &caps, |t| t["status"] == "completed");

    heading("Legacy era (2025-11-25) on the same connection: initialize opens a session");
    s.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "demo", "version": "1" } }),
    );
    s.notify("notifications/initialized", json!({}));
    s.request(
        "tools/call",
        json!({ "name": "always_fails", "arguments": {} }),
    );

    drop(s.stdin);
    let status = s.child.wait().expect("server exits");
    println!("server exited with {status} after its input closed");
}
