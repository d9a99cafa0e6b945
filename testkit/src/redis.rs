//! A real `redis-server` for the tests and the benchmark: installed (pinned) by
//! `testkit/redis/install.sh`, started on a free loopback port without persistence, stopped when
//! dropped, and also when the process dies any other way (a watchdog ends it when our end of its
//! stdin pipe closes).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::workspace_root;

/// The pinned `redis-server` launcher, installed on first use (once per test process).
/// Panics with instructions when it cannot be had: the Redis tests never skip.
pub fn redis_server_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let script = workspace_root().join("testkit").join("redis").join("install.sh");
        let output = Command::new("bash")
            .arg(&script)
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            output.status.success(),
            "{} failed ({}); see its message above. The Redis tests need redis-server 7: \
             let the script install it (Debian 12, apt-get), or set REDIS_SERVER=/path/to/redis-server",
            script.display(),
            output.status
        );
        let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        PathBuf::from(path)
    })
    .clone()
}

/// A running `redis-server` on 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
}

impl RedisServer {
    /// Starts a fresh server on a free port.
    pub fn start() -> RedisServer {
        for _ in 0..5 {
            let port = free_port();
            // A snapshot an earlier run left for this port would be loaded: not a fresh server.
            let _ = std::fs::remove_file(std::env::temp_dir().join(snapshot_name(port)));
            if let Some(server) = Self::start_on(port) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    /// A server shared by every test of this process (started on first use, ended with the
    /// process). Tests keep apart by key prefix.
    pub fn shared() -> &'static RedisServer {
        static SHARED: OnceLock<RedisServer> = OnceLock::new();
        SHARED.get_or_init(RedisServer::start)
    }

    fn start_on(port: u16) -> Option<RedisServer> {
        let bin = redis_server_bin();
        // The watchdog shell starts redis-server and kills it as soon as its stdin reaches EOF,
        // which happens when this process exits or dies, whatever the way.
        let script = r#"
            "$0" "$@" &
            pid=$!
            trap 'kill -9 $pid 2>/dev/null; exit 0' TERM INT
            while read -r _; do :; done
            kill -9 $pid 2>/dev/null
            wait $pid 2>/dev/null
        "#;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(&bin)
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            // No persistence of its own: only `restart_keeping_data` writes a snapshot (`SAVE`),
            // to a file of this port's, which the restart loads and then deletes.
            .arg("--dir")
            .arg(std::env::temp_dir())
            .args(["--dbfilename", &snapshot_name(port)])
            .args(["--loglevel", "warning", "--logfile", ""])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("[redis:{port}] {line}");
            }
        });
        let url = format!("redis://127.0.0.1:{port}");
        let mut server = RedisServer {
            child: Some(child),
            port,
            url,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if server.ping() {
                return Some(server);
            }
            if let Some(child) = server.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// Whether the server answers `PING`.
    pub fn ping(&self) -> bool {
        self.command(&["PING"])
            .is_some_and(|reply| reply == "+PONG")
    }

    /// Sends one command (RESP); the reply to read, `None` if the server cannot be reached.
    fn send(&self, args: &[&str]) -> Option<BufReader<TcpStream>> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(request.as_bytes()).ok()?;
        Some(BufReader::new(stream))
    }

    /// Sends one command and returns the first line of the reply, `None` if the server cannot
    /// be reached.
    pub fn command(&self, args: &[&str]) -> Option<String> {
        let mut line = String::new();
        self.send(args)?.read_line(&mut line).ok()?;
        Some(line.trim_end().to_owned())
    }

    /// Sends one command whose reply is a bulk string (`GET`, `HGET`, `INFO`) and returns it,
    /// `None` if the server cannot be reached or has no such value.
    pub fn bulk(&self, args: &[&str]) -> Option<String> {
        let mut reader = self.send(args)?;
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let len: usize = header.trim_end().strip_prefix('$')?.parse().ok()?;
        let mut body = vec![0; len + 2];
        std::io::Read::read_exact(&mut reader, &mut body).ok()?;
        body.truncate(len);
        String::from_utf8(body).ok()
    }

    /// `INFO section` as text.
    pub fn info(&self, section: &str) -> String {
        self.bulk(&["INFO", section])
            .unwrap_or_else(|| panic!("no INFO {section} from redis on port {}", self.port))
    }

    /// Kills the server (SIGKILL: no goodbye to clients).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Closing stdin makes the watchdog kill redis-server and exit.
            drop(child.stdin.take());
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.ping() {
            assert!(Instant::now() < deadline, "redis-server outlived its kill");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts the server again on the same port (empty: nothing is persisted).
    pub fn restart(&mut self) {
        self.kill();
        let _ = std::fs::remove_file(std::env::temp_dir().join(snapshot_name(self.port)));
        self.start_again();
    }

    /// Snapshots the data (`SAVE`) and kills the server, then calls `while_down`, then starts the
    /// server again on the same port with the data it had: an outage that loses nothing.
    pub fn restart_keeping_data(&mut self, while_down: impl FnOnce()) {
        assert_eq!(self.command(&["SAVE"]).as_deref(), Some("+OK"), "SAVE");
        self.kill();
        while_down();
        self.start_again();
        let _ = std::fs::remove_file(std::env::temp_dir().join(snapshot_name(self.port)));
    }

    fn start_again(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(mut server) = Self::start_on(self.port) {
                self.child = server.child.take();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not restart on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

/// The snapshot file of the server on `port` (under the temporary directory).
fn snapshot_name(port: u16) -> String {
    format!("mcp-tasks-test-redis-{port}.rdb")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}
