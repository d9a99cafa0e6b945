//! The example server: a few tools, served over stdio in both protocol eras.
//!
//! Run it with `cargo run -p mcp-tasks-examples --bin example_server` and connect an MCP client to
//! its stdin/stdout (for example `npx @modelcontextprotocol/inspector <path-to-binary>`), or run
//! `cargo run -p mcp-tasks-examples --bin demo` to watch a scripted session.
//!
//! With `--http 127.0.0.1:8080` it serves Streamable HTTP at `http://127.0.0.1:8080/mcp` instead;
//! add `--token TOKEN=PRINCIPAL` to require a bearer token, or
//! `--oauth-issuer ISSUER_URL --oauth-audience http://127.0.0.1:8080/mcp` to take OAuth access
//! tokens from an authorization server (`research` then needs the scope `research`; add
//! `--oauth-ca-cert FILE` for an issuer whose HTTPS certificate comes from a private CA).
//! `--keepalive-ms N` (or `off`) sets how often a long call with a progress token gets a
//! keepalive `notifications/progress` (default 10 s).
//!
//! Its `ingest` tool is durable: with `--store redis://...` or `postgres://...` on several
//! instances, a task whose instance dies is taken over by another (`--lease-ms N`);
//! `--drain-ms N` gives running tasks that long on SIGTERM, and `--role front|worker|both` splits
//! serving clients from running durable tasks (docs/src/durable.md).

use mcp_tasks_examples::example_server;
use std::io::IsTerminal;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let http = std::env::args().any(|a| a == "--http");
    if !http && std::io::stdin().is_terminal() {
        eprintln!(
            "mcp-tasks-example speaks MCP (JSON-RPC, one message per line) on stdin/stdout.\n\
             Connect a client to this process, or try `cargo run -p mcp-tasks-examples --bin demo`.\n\
             Waiting for input; Ctrl-D or Ctrl-C to stop."
        );
    }
    mcp_tasks_examples::serve_from_args(example_server()).await
}
