//! An rmcp server that serves two tools of its own (`#[tool_router]`: `echo`, `add`) and two task
//! tools of mcp-tasks beside them (`research`: a task only, asks the user then the client's model;
//! `countdown`: a task when the client can take one), through `mcp_tasks_runtime::rmcp::TaskTools`.
//!
//! Stdio by default; `--http HOST:PORT` serves rmcp's Streamable HTTP at `http://HOST:PORT/mcp`
//! (printed as `listening on URL`), where `--token TOKEN=PRINCIPAL` (repeatable) binds each
//! bearer token's tasks to its principal, or `--oauth-issuer ISSUER_URL --oauth-audience
//! http://HOST:PORT/mcp` takes OAuth access tokens from an authorization server, as
//! `example_server` does (`--oauth-introspection`, `--oauth-client`, `--oauth-ca-cert` too): then
//! `research` needs the scope `research`, and a call without it is refused with the error
//! mcp-tasks' own transports answer; `--store SPEC` keeps tasks in another store (`memory`,
//! `sqlite:PATH`, `redis://…`, `postgres://…`), as the other example servers.

use mcp_tasks_examples::oauth::OAuthArgs;
use mcp_tasks_runtime::Server;
use mcp_tasks_runtime::rmcp::TaskTools;
use mcp_tasks_runtime::server::BearerTokens;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The application's own rmcp server, with the task tools merged into its router.
#[derive(Clone)]
struct App {
    tool_router: ToolRouter<App>,
    tasks: TaskTools,
}

/// `echo` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// `add` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

#[tool_router]
impl App {
    fn new(tasks: TaskTools) -> Self {
        let mut tool_router = Self::tool_router();
        tool_router.merge(tasks.router());
        App { tool_router, tasks }
    }

    #[tool(description = "Send the text back (an rmcp tool).")]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Add two numbers (an rmcp tool).")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        a.saturating_add(b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for App {
    mcp_tasks_runtime::rmcp_task_methods!(tasks);

    /// The router's tools, less the task tools the caller's token has no scope for.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let all = self.tool_router.list_all();
        let tools = self.tasks.permitted_tools(all, &context).await?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(self.tasks.capabilities(capabilities))
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    mcp_tasks_runtime::init_logging();
    let mut args = std::env::args().skip(1);
    let (mut http, mut store, mut tokens) = (None, None, Vec::new());
    let mut oauth = OAuthArgs::default();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| usage(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--http" => http = Some(value()?),
            "--store" => {
                let spec = value()?;
                let opened = mcp_tasks_examples::open_store(&spec).await;
                store = Some(opened.map_err(|e| usage(&e))?);
            }
            "--token" => {
                let spec = value()?;
                let (token, principal) = spec
                    .split_once('=')
                    .ok_or_else(|| usage("--token needs TOKEN=PRINCIPAL"))?;
                tokens.push((token.to_owned(), principal.to_owned()));
            }
            flag if OAuthArgs::FLAGS.contains(&flag) => {
                oauth.read(flag, &mut args).map_err(|e| usage(&e))?;
            }
            other => return Err(usage(&format!("unknown argument `{other}`"))),
        }
    }
    let mut server = Server::builder("rmcp-bridge-example", env!("CARGO_PKG_VERSION"))
        .tool::<mcp_tasks_examples::research>()
        .tool::<mcp_tasks_examples::countdown>();
    if let Some(store) = store {
        server = server.store(store);
    }
    let mut tasks = TaskTools::new(&server.build()?);
    if http.is_none() && (!tokens.is_empty() || oauth.given()) {
        return Err(usage(
            "--token and --oauth-* apply to --http only (stdio is not authenticated)",
        ));
    }
    let resource =
        (oauth.resource_server("mcp-tasks rmcp bridge example")).map_err(|e| usage(&e))?;
    if let Some(resource) = resource {
        if !tokens.is_empty() {
            return Err(usage("--token and --oauth-issuer exclude each other"));
        }
        tasks = tasks.authenticator(resource);
    } else if !tokens.is_empty() {
        let tokens = (tokens.into_iter()).fold(BearerTokens::new(), |t, (k, p)| t.token(k, p));
        tasks = tasks.authenticator(tokens);
    }
    let app = App::new(tasks);
    match http {
        None => {
            let running = app
                .serve((tokio::io::stdin(), tokio::io::stdout()))
                .await
                .map_err(std::io::Error::other)?;
            running.waiting().await.map_err(std::io::Error::other)?;
            Ok(())
        }
        Some(address) => serve_http(app, &address).await,
    }
}

/// rmcp's Streamable HTTP server at `/mcp` on `address`.
async fn serve_http(app: App, address: &str) -> std::io::Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        move || Ok(app.clone()),
        LocalSessionManager::default().into(),
        // A plain answer as JSON, as mcp-tasks' own transport does (rmcp falls back to SSE when
        // the call sends something before its answer).
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

fn usage(why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{why}\nusage: rmcp_bridge_server [--store memory|sqlite:PATH|redis://HOST:PORT[/DB]|postgres://USER@HOST:PORT/DB] [--http HOST:PORT [--token TOKEN=PRINCIPAL]... [--oauth-issuer URL --oauth-audience RESOURCE_URL [--oauth-introspection URL --oauth-client ID:SECRET] [--oauth-ca-cert FILE]...]]"
        ),
    )
}
