//! A fixture server over Streamable HTTP, as a child process: `conformance_server --http`.

use crate::example_bin;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An example server binary run with `--http 127.0.0.1:0 [args]`, killed on drop.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Starts the conformance fixture server on a free loopback port with these extra arguments
    /// (e.g. `--token T=P`) and waits until it accepts connections.
    pub fn start(extra: &[&str]) -> HttpServer {
        Self::start_bin("conformance_server", extra)
    }

    /// Like [`HttpServer::start`], for another binary of the examples (e.g. `example_server`).
    pub fn start_bin(name: &str, extra: &[&str]) -> HttpServer {
        let bin = example_bin(name);
        let mut child = Command::new(&bin)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let started = Instant::now();
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("the HTTP server printed no `listening on` line within 30 s")
            });
        let url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"))
            .to_owned();
        tracing_free_log(&format!(
            "HTTP server at {url} (up after {:?})",
            started.elapsed()
        ));
        HttpServer { child, url }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (up to `within`) for the process to exit; its exit status.
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

fn tracing_free_log(line: &str) {
    eprintln!("{line}");
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
