//! The conformance fixture server over stdio.

#[tokio::main]
async fn main() -> std::io::Result<()> {
    mcp_tasks_runtime::init_logging();
    mcp_tasks_examples::conformance::conformance_server()
        .serve_stdio()
        .await
}
