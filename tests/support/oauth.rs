//! The OAuth tests' authorization server (`tests/oauth/issuer.mjs`: oauth2-mock-server, installed
//! pinned by `tests/oauth/install.sh`) and example servers that take its tokens.

use crate::{example_bin, workspace_root};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Installs oauth2-mock-server (once per test process); the `node` to run it with. Panics with the
/// installer's message (what is missing and how to get it) when it cannot.
fn install() -> String {
    static NODE: OnceLock<Result<String, String>> = OnceLock::new();
    let node = NODE.get_or_init(|| {
        let out = Command::new("bash")
            .current_dir(workspace_root())
            .arg("tests/oauth/install.sh")
            .output()
            .map_err(|e| format!("could not run tests/oauth/install.sh: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(format!(
                "tests/oauth/install.sh failed ({}); the OAuth tests need Node.js >= 20.19 and npm \
                 with the npm registry reachable:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    match node {
        Ok(node) => node.clone(),
        Err(message) => panic!("{message}"),
    }
}

/// A running authorization server, killed on drop.
#[derive(Debug)]
pub struct Issuer {
    child: Child,
    io: Mutex<(ChildStdin, Receiver<String>)>,
    /// Its issuer identifier, `http://127.0.0.1:PORT` (HTTPS: `https://localhost:PORT`).
    pub url: String,
    /// HTTPS: the directory of its certificate and key files, removed on drop.
    tls_dir: Option<std::path::PathBuf>,
}

impl Issuer {
    /// Starts one on a free loopback port.
    pub fn start() -> Issuer {
        Self::spawn(None)
    }

    /// Starts one serving HTTPS with `cert_pem` (a certificate for `localhost`, PEM) and
    /// `key_pem` (its private key, PEM), on a free loopback port; its URL is
    /// `https://localhost:PORT`.
    pub fn start_https(cert_pem: &str, key_pem: &str) -> Issuer {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("mcp-tasks-oauth-issuer-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the issuer's certificate");
        std::fs::write(dir.join("cert.pem"), cert_pem).expect("write cert.pem");
        std::fs::write(dir.join("key.pem"), key_pem).expect("write key.pem");
        let issuer = Self::spawn(Some(dir));
        assert!(issuer.url.starts_with("https://"), "{}", issuer.url);
        issuer
    }

    fn spawn(tls_dir: Option<std::path::PathBuf>) -> Issuer {
        let node = install();
        let mut command = Command::new(node);
        if let Some(dir) = &tls_dir {
            command
                .env("ISSUER_TLS_CERT", dir.join("cert.pem"))
                .env("ISSUER_TLS_KEY", dir.join("key.pem"));
        }
        let mut child = command
            .arg(workspace_root().join("tests/oauth/issuer.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node tests/oauth/issuer.mjs");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the issuer printed its URL");
        let url = serde_json::from_str::<Value>(&first).expect("JSON")["issuer"]
            .as_str()
            .expect("issuer")
            .to_owned();
        Issuer {
            child,
            io: Mutex::new((stdin, rx)),
            url,
            tls_dir,
        }
    }

    /// Sends one command (see `issuer.mjs`) and returns its answer.
    pub fn command(&self, command: Value) -> Value {
        let mut io = self.io.lock().unwrap();
        writeln!(io.0, "{command}").expect("write to the issuer");
        io.0.flush().unwrap();
        let line =
            io.1.recv_timeout(Duration::from_secs(30))
                .expect("the issuer answers");
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert!(answer.get("error").is_none(), "issuer: {answer}");
        answer
    }

    /// A token signed with the current key, its claims set over `{iss, iat, exp, nbf, sub: alice}`.
    pub fn token(&self, claims: Value) -> String {
        self.token_with(json!({ "claims": claims }))
    }

    /// A token of a `token` command with these other fields (`drop`, `foreign`, `kid`, ...).
    pub fn token_with(&self, mut command: Value) -> String {
        command["cmd"] = json!("token");
        self.command(command)["token"]
            .as_str()
            .expect("token")
            .to_owned()
    }

    /// How many times its JWKS, metadata and introspection endpoints were asked.
    pub fn stats(&self) -> Value {
        self.command(json!({ "cmd": "stats" }))
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.tls_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A free loopback port (bound then released): the resource URI must be known before the server
/// starts, since it is the audience the tokens name.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `example_server --http 127.0.0.1:PORT --oauth-issuer ISSUER --oauth-audience URL [extra]`,
/// killed on drop.
#[derive(Debug)]
pub struct ProtectedServer {
    child: Child,
    /// Its MCP endpoint, also the resource URI (the tokens' audience).
    pub url: String,
}

impl ProtectedServer {
    /// Serves at a free port, for `issuer`'s tokens. A port found free can be taken by a test
    /// running beside this one before the server binds it; the server then exits without
    /// listening, and another port is tried.
    pub fn start(issuer: &str, extra: &[&str]) -> ProtectedServer {
        Self::start_bin("example_server", issuer, extra)
    }

    /// [`start`](Self::start) with the example binary `bin` (which takes the same flags).
    pub fn start_bin(bin: &str, issuer: &str, extra: &[&str]) -> ProtectedServer {
        const TRIES: usize = 4;
        for _ in 0..TRIES {
            let port = free_port();
            let url = format!("http://127.0.0.1:{port}/mcp");
            let address = format!("127.0.0.1:{port}");
            if let Some(server) = Self::try_start_at(bin, &address, issuer, &url, extra) {
                return server;
            }
        }
        panic!("{bin} listened on none of {TRIES} free ports");
    }

    /// Serves at `address` for `issuer`'s tokens naming `resource`.
    pub fn start_at(
        address: &str,
        issuer: &str,
        resource: &str,
        extra: &[&str],
    ) -> ProtectedServer {
        Self::try_start_at("example_server", address, issuer, resource, extra)
            .expect("example_server printed `listening on`")
    }

    /// [`start_at`](Self::start_at), `None` if the server exits (or prints nothing in 30 s)
    /// before it listens.
    fn try_start_at(
        bin: &str,
        address: &str,
        issuer: &str,
        resource: &str,
        extra: &[&str],
    ) -> Option<ProtectedServer> {
        let mut child = Command::new(example_bin(bin))
            .args([
                "--http",
                address,
                "--oauth-issuer",
                issuer,
                "--oauth-audience",
                resource,
            ])
            .args(extra)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {bin}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let Some(line) = crate::first_line(stdout, Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        };
        assert!(line.starts_with("listening on "), "{line}");
        Some(ProtectedServer {
            child,
            url: resource.to_owned(),
        })
    }
}

impl Drop for ProtectedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON-RPC error every path answers a request for `research` (`#[tool(scope = "research")]`
/// in the example servers) by a caller whose token lacks the scope: over HTTP (with its 403), the
/// rmcp bridge, `serve_io` and an in-process client alike.
pub fn research_refused() -> Value {
    json!({
        "code": -32600,
        "message": "Forbidden: the tool `research` needs the scope `research`, which this token does not grant",
        "data": { "error": "insufficient_scope", "scope": "research", "missing": ["research"] },
    })
}
