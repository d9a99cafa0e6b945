//! A real PostgreSQL 15 for the tests and the benchmark: found (or installed, pinned) by
//! `testkit/postgres/install.sh`, initialised in a temporary directory and started on a free
//! loopback port with `fsync=on` (the tests check durability), stopped when dropped, and also when
//! the process dies any other way (a watchdog kills it when our end of its stdin pipe closes,
//! and removes its data).
//!
//! PostgreSQL refuses to run as root: when the tests run as root (CI does), `initdb`, `postgres`
//! and `pg_ctl` run as the `postgres` system user (made by Debian's package) through `setpriv`,
//! in a directory that user owns. Clients connect over TCP as the database user `postgres`
//! without a password (`trust`, loopback only).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::workspace_root;

/// The directory of PostgreSQL 15's programs, found or installed on first use (once per test
/// process). Panics with instructions when it cannot be had: the Postgres tests never skip.
pub fn postgres_bin_dir() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let script = workspace_root()
            .join("testkit")
            .join("postgres")
            .join("install.sh");
        let output = Command::new("bash")
            .arg(&script)
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            output.status.success(),
            "{} failed ({}); see its message above. The Postgres tests need PostgreSQL 15: let \
             the script install it (root, Debian 12, apt-get), or set PG_BIN=/path/to/its/bin",
            script.display(),
            output.status
        );
        PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
    })
    .clone()
}

/// A running PostgreSQL on 127.0.0.1 with its own data directory; killed, and its data removed,
/// on drop.
#[derive(Debug)]
pub struct PostgresServer {
    /// The watchdog shell (its stdin is our end of the pipe).
    child: Option<Child>,
    /// Its port.
    pub port: u16,
    /// The temporary directory: `data/` (the cluster), `sock/` (its unix socket).
    dir: PathBuf,
    bin: PathBuf,
}

impl PostgresServer {
    /// Initialises a fresh cluster (a few seconds) and starts it on a free port.
    pub fn start() -> PostgresServer {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let bin = postgres_bin_dir();
        let dir = std::env::temp_dir().join(format!(
            "mcp-tasks-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sock")).expect("a temporary directory for Postgres");
        if is_root() {
            run(Command::new("chown")
                .arg("-R")
                .arg("postgres:postgres")
                .arg(&dir));
        }
        run(as_postgres(&bin.join("initdb"))
            .arg("-D")
            .arg(dir.join("data"))
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "-N",
            ]));
        for _ in 0..5 {
            let mut server = PostgresServer {
                child: None,
                port: free_port(),
                dir: dir.clone(),
                bin: bin.clone(),
            };
            if server.launch() {
                return server;
            }
            server.retire_watchdog();
        }
        panic!("postgres did not start on any of 5 free ports");
    }

    /// A server shared by every test of this process (started on first use, ended with the
    /// process). Tests keep apart by database ([`Self::create_database`]) or by schema.
    pub fn shared() -> &'static PostgresServer {
        static SHARED: OnceLock<PostgresServer> = OnceLock::new();
        SHARED.get_or_init(PostgresServer::start)
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates a database no other caller of this process gets, and returns its URL.
    pub fn create_database(&self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "t_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs SQL with `psql` in `database`; returns its unaligned, tuples-only output. Panics if
    /// it fails.
    pub fn sql(&self, database: &str, sql: &str) -> String {
        let output = self
            .try_sql(database, sql)
            .unwrap_or_else(|e| panic!("psql {sql:?}: {e}"));
        output.trim_end().to_owned()
    }

    /// [`Self::sql`], or why it failed.
    pub fn try_sql(&self, database: &str, sql: &str) -> Result<String, String> {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database])
            .args(["-p", &self.port.to_string()])
            .args(["-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }

    /// Whether the server accepts connections and answers a query.
    pub fn ready(&self) -> bool {
        TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            && self
                .try_sql("postgres", "SELECT 1")
                .is_ok_and(|out| out.trim() == "1")
    }

    /// SIGKILL to the postmaster (its backends notice and exit): a crash, no shutdown at all.
    /// The data stays for [`Self::restart`].
    pub fn kill(&mut self) {
        self.retire_watchdog();
        self.wait_until_down();
    }

    /// `pg_ctl stop -m immediate`: every server process quits at once without a checkpoint, as
    /// after a crash (the next start replays the write-ahead log). The data stays.
    pub fn stop_immediate(&mut self) {
        let output = as_postgres(&self.bin.join("pg_ctl"))
            .arg("stop")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "-t", "30"])
            .output()
            .expect("pg_ctl runs");
        assert!(
            output.status.success(),
            "pg_ctl stop: {}",
            describe(&output)
        );
        self.retire_watchdog();
        self.wait_until_down();
    }

    /// Starts the server again on the same port with the data it had (stopping it first with
    /// [`Self::stop_immediate`] if it runs).
    pub fn restart(&mut self) {
        if self.child.is_some() {
            self.stop_immediate();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.launch() {
            self.retire_watchdog();
            assert!(
                Instant::now() < deadline,
                "postgres did not restart on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Starts postgres under a watchdog shell and waits until it answers; `false` if it exits
    /// or does not answer within 20 s.
    fn launch(&mut self) -> bool {
        // The watchdog starts postgres and reads its stdin until EOF, which comes when this
        // process exits or dies, whatever the way; it then kills postgres and, unless it was
        // told `keep` (a kill or stop that a restart follows), removes the data.
        let script = r#"
            dir="$1"; shift
            "$@" &
            pid=$!
            keep=
            while read -r line; do [ "$line" = keep ] && keep=1; done
            kill -9 $pid 2>/dev/null
            wait $pid 2>/dev/null
            if [ -z "$keep" ]; then sleep 0.5; rm -rf "$dir"; fi
        "#;
        let mut command = Command::new("sh");
        command.arg("-c").arg(script).arg("watchdog").arg(&self.dir);
        if is_root() {
            command.args(SETPRIV);
        }
        let sock = self.dir.join("sock");
        let mut child = command
            .arg(self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", sock.display()))
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .args(["-c", "max_connections=400", "-c", "shared_buffers=128MB"])
            .args([
                "-c",
                "log_min_messages=warning",
                "-c",
                "logging_collector=off",
            ])
            // Statement counts for the benchmark (`pg_stat_statements`, shipped with Postgres).
            .args(["-c", "shared_preload_libraries=pg_stat_statements"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start postgres: {e}"));
        let port = self.port;
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    eprintln!("[postgres:{port}] {line}");
                }
            });
        }
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.ready() {
                return true;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Ends the watchdog without removing the data: it kills postgres (if still running).
    fn retire_watchdog(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(b"keep\n");
            }
            let _ = child.wait();
        }
    }

    fn wait_until_down(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "postgres outlived its stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's temporary directory (`data/` holds the cluster).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            drop(child.stdin.take());
            let _ = child.wait();
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs a program as the `postgres` user through `setpriv` (when we are root).
const SETPRIV: [&str; 5] = [
    "setpriv",
    "--reuid=postgres",
    "--regid=postgres",
    "--init-groups",
    "--",
];

fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new(SETPRIV[0]);
        command.args(&SETPRIV[1..]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn is_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
    })
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        describe(&output)
    );
}

fn describe(output: &Output) -> String {
    format!(
        "{}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}
