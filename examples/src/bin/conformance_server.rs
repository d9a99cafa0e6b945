//! The conformance fixture server: over stdio by default, or over Streamable HTTP with
//! `--http 127.0.0.1:PORT` (what the official conformance suite tests).

#[tokio::main]
async fn main() -> std::io::Result<()> {
    mcp_tasks_examples::serve_from_args(mcp_tasks_examples::conformance::conformance_server()).await
}
