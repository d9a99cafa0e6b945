//! The bridge into an rmcp server (feature `rmcp`): this crate's tools, with their
//! `task_support`, served by an rmcp 3.11 `ServerHandler` beside its own `#[tool_router]` tools.
//!
//! It sits where a transport sits (ARCHITECTURE.md): rmcp is the transport and the session, and
//! each call it routes here is handed to `dispatch.rs` as one 2026-07-28 request, with the rmcp
//! request context seen as a [`Peer`] (its principal is the owner of the tasks the request
//! creates or touches). Dispatch does the rest as it does for its own transports: the dual path
//! (`plan.rs`), `-32021`, MRTR, stored input requests, the store. Nothing below names this module.

use super::auth::Authenticator;
use super::authz;
use super::connection::owner_of;
use super::dispatch;
use super::era::Era;
use super::inner::ServerInner;
use super::peer::{Answer, LegacySession, Peer};
use crate::protocol::jsonrpc::{self, Message, RequestId, RpcError};
use crate::protocol::meta::MetaCache;
use crate::protocol::task::Owner;
use crate::protocol::{LogLevel, MODERN_VERSION, TASKS_EXTENSION, meta};
use crate::tool::{Principal, TaskSupport};
use ::rmcp::ErrorData;
use ::rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use ::rmcp::handler::server::tool::ToolCallContext;
use ::rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult, CustomRequest,
    CustomResult, ErrorCode, GetTaskParams, GetTaskResult, InputRequiredResult, ServerCapabilities,
    ServerJsonRpcMessage, UpdateTaskParams,
};
use ::rmcp::service::{RequestContext, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use tokio::sync::oneshot;

/// This crate's tools inside an rmcp server: the routes to merge into its `ToolRouter`, the
/// three task methods its `ServerHandler` delegates here, and the tasks extension for its
/// `get_info`.
///
/// Made from a [`Server`](crate::Server) (built with [`Server::builder`](crate::Server::builder)
/// as usual: its tools, state, store, limits and configuration are the bridge's); cloning shares
/// it.
///
/// ```no_run
/// use mcp_tasks_runtime::rmcp::TaskTools;
/// use mcp_tasks_runtime::{Server, ToolContext, ToolError, tool};
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::handler::server::tool::ToolCallContext;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse, ListToolsResult};
/// use rmcp::model::{PaginatedRequestParams, ServerCapabilities, ServerConfig};
/// use rmcp::service::{RequestContext, RoleServer};
/// use rmcp::{ErrorData, ServerHandler};
///
/// /// Count down from `from`, a second a step; a task when the client can take one.
/// #[tool(task_support = "optional")]
/// async fn countdown(ctx: ToolContext, from: u32) -> Result<String, ToolError> {
///     for n in (1..=from).rev() {
///         ctx.status(format!("{n}"));
///         tokio::time::sleep(std::time::Duration::from_secs(1)).await;
///     }
///     Ok("liftoff".into())
/// }
///
/// #[derive(Clone)]
/// struct App {
///     tool_router: ToolRouter<Self>, // with `#[tool_router]`: `Self::tool_router()`, merged
///     tasks: TaskTools,
/// }
///
/// // With rmcp's macros: `#[tool_handler(router = self.tool_router)]` writes `call_tool` and
/// // `list_tools` (the guide page "Adding task tools to an rmcp server").
/// impl ServerHandler for App {
///     mcp_tasks_runtime::rmcp_task_methods!(tasks);
///
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         self.tool_router.call(ToolCallContext::new(self, request, context)).await
///     }
///
///     async fn list_tools(
///         &self,
///         _request: Option<PaginatedRequestParams>,
///         _context: RequestContext<RoleServer>,
///     ) -> Result<ListToolsResult, ErrorData> {
///         Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
///     }
///
///     fn get_info(&self) -> ServerConfig {
///         let capabilities = ServerCapabilities::builder().enable_tools().build();
///         ServerConfig::new(self.tasks.capabilities(capabilities))
///     }
/// }
///
/// # fn main() -> std::io::Result<()> {
/// let tasks = TaskTools::new(&Server::builder("app", "1.0.0").tool::<countdown>().build()?);
/// let mut tool_router = ToolRouter::new();
/// tool_router.merge(tasks.router());
/// let app = App { tool_router, tasks };
/// # let _ = app;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TaskTools {
    server: Arc<ServerInner>,
    authenticator: Option<Arc<dyn Authenticator>>,
    local: Option<Principal>,
}

impl fmt::Debug for TaskTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskTools")
            .field("server", &self.server.info)
            .field("authenticator", &self.authenticator.is_some())
            .field("principal", &self.local)
            .finish()
    }
}

impl TaskTools {
    /// The tools of the server that shares `server` (`TaskTools::new`, in the facade).
    pub(super) fn of(server: Arc<ServerInner>) -> Self {
        TaskTools {
            server,
            authenticator: None,
            local: None,
        }
    }

    /// Who sends a request that came over HTTP: decided from the HTTP request's head, which rmcp's
    /// Streamable HTTP server hands on in the request context (`http::request::Parts`). That
    /// principal owns the tasks the request creates, and only it sees them; tools see it as
    /// [`ToolContext::principal`](crate::ToolContext::principal). A request the authenticator
    /// refuses gets `-32001` (answering HTTP 401 is the rmcp application's, in a layer before
    /// rmcp). A [`Principal`] a layer of the application put in the request's extensions is
    /// taken as it is, before any authenticator. Without either, HTTP callers are anonymous.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// The principal of requests that do not come over HTTP (stdio: the one client the process
    /// serves); anonymous unless set.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.local = Some(principal);
        self
    }

    /// One route per tool, to merge into the server's own (`ToolRouter::merge`). Each runs its
    /// tool as this crate does: inline, as a task (tasks extension, 2026-07-28), or refused with
    /// `-32021` when it requires a task and the client did not declare the extension.
    pub fn router<S: Send + Sync + 'static>(&self) -> ToolRouter<S> {
        let mut router = ToolRouter::new();
        for tool in self.server.tools.iter() {
            let listed = dispatch::describe(&self.server, tool, &Era::Modern, false);
            let attr: ::rmcp::model::Tool = match convert(&listed) {
                Ok(attr) => attr,
                // The description is this crate's own wire type; rmcp reads every tool it lists.
                Err(e) => unreachable!(
                    "rmcp cannot read the description of `{}`: {e:?}",
                    tool.info.name
                ),
            };
            let bridge = self.clone();
            router.add_route(ToolRoute::new_dyn(
                attr,
                move |call: ToolCallContext<'_, S>| {
                    let bridge = bridge.clone();
                    let mut params = Map::new();
                    params.insert("name".into(), Value::String(call.name.to_string()));
                    if let Some(arguments) = call.arguments {
                        params.insert("arguments".into(), Value::Object(arguments));
                    }
                    if let Some(responses) = call.input_responses {
                        params.insert("inputResponses".into(), to_value(&responses));
                    }
                    if let Some(state) = call.request_state {
                        params.insert("requestState".into(), Value::String(state));
                    }
                    let context = call.request_context;
                    Box::pin(async move { bridge.call_tool(params, &context).await })
                },
            ));
        }
        router
    }

    /// `tools` (what the rmcp server lists: its router's `list_all()`) without this crate's
    /// tools that `context`'s caller may not call: those needing a scope its principal lacks
    /// (unless [`ServerConfig::list_only_permitted_tools`](crate::ServerConfig::list_only_permitted_tools)
    /// is off), as mcp-tasks' own `tools/list` leaves them out. For a `ServerHandler::list_tools`
    /// written by hand: rmcp's `#[tool_handler]` lists its static router to every caller. (A
    /// call is checked either way.)
    pub async fn permitted_tools(
        &self,
        mut tools: Vec<::rmcp::model::Tool>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<::rmcp::model::Tool>, ErrorData> {
        let listing = authz::listing_for(&self.server, self.principal_of(context).await?);
        tools.retain(|t| {
            (self.server.tools.get(&t.name)).is_none_or(|ours| listing.shows(ours.info.scopes))
        });
        Ok(tools)
    }

    /// `capabilities` with the tasks extension (`io.modelcontextprotocol/tasks`) declared, when
    /// any of the tools may run as a task: for the server's `get_info`. rmcp answers the three
    /// task methods only when it is declared.
    pub fn capabilities(&self, mut capabilities: ServerCapabilities) -> ServerCapabilities {
        if self.declares_tasks() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION.into(), Map::new());
        }
        capabilities
    }

    /// Whether any of the tools may run as a task: then the tasks extension is declared.
    fn declares_tasks(&self) -> bool {
        (self.server.tools.iter()).any(|t| t.info.task_support != TaskSupport::Forbidden)
    }

    /// A request rmcp could not read into one of its request types: a
    /// `ServerHandler::on_custom_request` delegates here (`rmcp_task_methods!` writes it).
    ///
    /// rmcp reads a request whose params do not fit its type for the method (`tasks/get` without
    /// `taskId`, or with a number) as a custom request, not as the method's, so its
    /// `get_task`, `update_task` and `cancel_task` never see it, and its default answer is
    /// `-32601` with the method's name. Here `tasks/get`, `tasks/update` and `tasks/cancel` go to
    /// the engine as they came, and get its answer: `-32602` naming the parameter (after the
    /// same capability gate, `-32021`, as a well-formed one). Any other method, and the task
    /// methods of a server that declares no tasks extension, get rmcp's own answer, `-32601`
    /// with the method's name. A server with custom methods of its own answers those and hands
    /// the rest here.
    pub async fn custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, params, .. } = request;
        let task_method = matches!(
            method.as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel"
        );
        if !task_method || !self.declares_tasks() {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None));
        }
        let params = match params {
            None => Map::new(),
            Some(Value::Object(params)) => params,
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    format!("the params of `{method}` must be an object"),
                    None,
                ));
            }
        };
        self.dispatch(&method, params, &context)
            .await
            .map(CustomResult)
    }

    /// `tasks/get`, answered from the store for the task's owner (someone else's task id answers
    /// like an unknown one): a `ServerHandler::get_task` delegates here.
    pub async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let value = self
            .dispatch("tasks/get", params(&request), &context)
            .await?;
        from_value(value)
    }

    /// `tasks/update`: answers to the task's outstanding input requests (the tool resumes). A
    /// `ServerHandler::update_task` delegates here.
    pub async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.dispatch("tasks/update", params(&request), &context)
            .await
            .map(drop)
    }

    /// `tasks/cancel`: cancels the task's tool (the task ends `cancelled`). A
    /// `ServerHandler::cancel_task` delegates here.
    pub async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.dispatch("tasks/cancel", params(&request), &context)
            .await
            .map(drop)
    }

    /// One `tools/call` through dispatch, its answer as rmcp's three kinds of response.
    ///
    /// A client in an `initialize` session (before 2026-07-28) cannot take an
    /// `InputRequiredResult` (rmcp refuses to send one); there the bridge asks the questions
    /// itself, as server-to-client requests on the session, and calls again with the answers: the
    /// tool runs again from the top as in any MRTR retry, and the client sees one call.
    async fn call_tool(
        &self,
        mut params: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let session = (context.protocol_version()).is_none_or(|v| v.as_str() < MODERN_VERSION);
        let mut result = self.dispatch("tools/call", params.clone(), context).await?;
        let mut rounds = 0;
        while session && result.get("resultType").and_then(Value::as_str) == Some("input_required")
        {
            rounds += 1;
            if rounds > MAX_SESSION_ROUNDS {
                return Err(ErrorData::internal_error(
                    format!("the tool asked for input more than {MAX_SESSION_ROUNDS} times"),
                    None,
                ));
            }
            let peer = RmcpPeer {
                owner: owner_of(None),
                principal: None,
                client: context.peer.clone(),
            };
            let mut responses = Map::new();
            let requests = result.get("inputRequests").and_then(Value::as_object);
            for (key, request) in requests.into_iter().flatten() {
                let method = request
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let asked = request.get("params").cloned().unwrap_or_else(|| json!({}));
                let answer = peer
                    .request(method, asked)
                    .await
                    .map_err(|e| ErrorData::new(ErrorCode(e.code as i32), e.message, e.data))?;
                responses.insert(key.clone(), answer);
            }
            params.insert("inputResponses".into(), Value::Object(responses));
            match result.get("requestState") {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
            result = self.dispatch("tools/call", params.clone(), context).await?;
        }
        match result.get("resultType").and_then(Value::as_str) {
            Some("task") => from_value::<CreateTaskResult>(result).map(CallToolResponse::Task),
            Some("input_required") => {
                from_value::<InputRequiredResult>(result).map(CallToolResponse::InputRequired)
            }
            _ => from_value::<CallToolResult>(result).map(CallToolResponse::Complete),
        }
    }

    /// Hands one request to dispatch as a 2026-07-28 request from `context`'s caller, and returns
    /// its result (without this crate's `serverInfo`: rmcp's server is the one answering) or its
    /// error.
    async fn dispatch(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let principal = self.principal_of(context).await?;
        let peer: Arc<dyn Peer> = Arc::new(RmcpPeer {
            owner: owner_of(principal.as_ref()),
            principal,
            client: context.peer.clone(),
        });
        params.remove("_meta");
        params.insert("_meta".into(), Value::Object(request_meta(context)));
        let message =
            json!({"jsonrpc": "2.0", "id": context.id, "method": method, "params": params});
        let mut request = match Message::parse(&message.to_string()) {
            Ok(Message::Request(request)) => request,
            _ => {
                return Err(ErrorData::internal_error(
                    "the bridge built a malformed request",
                    None,
                ));
            }
        };
        let meta = (request.meta.take()).map(|text| MetaCache::read(Cow::Owned(text)));
        let reply = dispatch::request(&self.server, &peer, request, meta, context.ct.clone())
            .await
            .ok_or_else(|| {
                ErrorData::new(
                    ErrorCode(REQUEST_CANCELLED),
                    "the request was cancelled",
                    None,
                )
            })?;
        let Value::Object(mut envelope) = to_value(&reply) else {
            return Err(ErrorData::internal_error(
                "the reply is not an object",
                None,
            ));
        };
        if let Some(error) = envelope.remove("error") {
            let error: RpcError = serde_json::from_value(error)
                .unwrap_or_else(|e| RpcError::internal(format!("unreadable error: {e}")));
            return Err(ErrorData::new(
                ErrorCode(error.code as i32),
                error.message,
                error.data,
            ));
        }
        let mut result = envelope.remove("result").unwrap_or_default();
        if let Some(Value::Object(meta)) = result.get_mut("_meta") {
            meta.remove(meta::SERVER_INFO);
            if meta.is_empty()
                && let Value::Object(obj) = &mut result
            {
                obj.remove("_meta");
            }
        }
        Ok(result)
    }

    /// The caller: a principal put in the HTTP request's extensions, else the authenticator's
    /// answer for the HTTP request, else (not HTTP) the local principal.
    async fn principal_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Principal>, ErrorData> {
        let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
            return Ok(self.local.clone());
        };
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(Some(principal.clone()));
        }
        match &self.authenticator {
            Some(auth) => auth
                .authenticate(parts)
                .await
                .map_err(|refused| ErrorData::new(ErrorCode(UNAUTHORIZED), refused.message, None)),
            None => Ok(None),
        }
    }
}

/// How many times a call in an `initialize` session may ask for input before it fails (each
/// round runs the tool again).
const MAX_SESSION_ROUNDS: usize = 16;
/// `-32001`, what this crate's own HTTP transport answers a refused request with (beside 401).
const UNAUTHORIZED: i32 = -32001;
/// `-32800`: the request was cancelled before it had an answer.
const REQUEST_CANCELLED: i32 = -32800;

/// The request's `_meta` as a 2026-07-28 request carries it. A request of an `initialize`
/// session has none of its own: the session's client capabilities and client info stand in, and
/// the request is served as a 2026-07-28 one (rmcp carries the tasks extension in a session too).
fn request_meta(context: &RequestContext<RoleServer>) -> Map<String, Value> {
    let mut out = context.meta.0.0.clone();
    out.entry(meta::PROTOCOL_VERSION)
        .or_insert_with(|| MODERN_VERSION.into());
    if !out.contains_key(meta::CLIENT_CAPABILITIES) {
        let capabilities = context.client_capabilities().map(|c| to_value(&c));
        out.insert(
            meta::CLIENT_CAPABILITIES.into(),
            capabilities.unwrap_or_else(|| json!({})),
        );
    }
    if !out.contains_key(meta::CLIENT_INFO)
        && let Some(info) = context.client_info()
    {
        out.insert(meta::CLIENT_INFO.into(), to_value(&info));
    }
    out
}

fn to_value(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A request's params as JSON (rmcp's params type, `_meta` included).
fn params(request: &impl Serialize) -> Map<String, Value> {
    match to_value(request) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// One of this crate's results as rmcp's type.
fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|e| ErrorData::internal_error(format!("rmcp cannot read the result: {e}"), None))
}

/// A value of this crate's wire types as the rmcp type of the same wire shape.
fn convert<T: DeserializeOwned>(value: &impl Serialize) -> Result<T, serde_json::Error> {
    serde_json::from_value(to_value(value))
}

/// The rmcp request a call came in on, as dispatch sees its client: who it is, and the way back
/// to it for what the server says on its own (progress, log messages). Questions never travel
/// as server-to-client requests here: inline they are MRTR (`InputRequiredResult`), in a task
/// they are stored input requests.
struct RmcpPeer {
    owner: Owner,
    principal: Option<Principal>,
    client: ::rmcp::service::Peer<RoleServer>,
}

impl RmcpPeer {
    /// `message` (a JSON-RPC notification or request this crate built) as rmcp's type.
    fn rmcp_message(message: Value) -> Option<ServerJsonRpcMessage> {
        serde_json::from_value(message)
            .inspect_err(|e| tracing::debug!(error = %e, "rmcp cannot carry a message; dropped"))
            .ok()
    }
}

impl Peer for RmcpPeer {
    fn send(&self, message: Value) -> bool {
        let Some(ServerJsonRpcMessage::Notification(n)) = Self::rmcp_message(message) else {
            return true;
        };
        if self.client.is_transport_closed() {
            return false;
        }
        let client = self.client.clone();
        tokio::spawn(async move {
            let _ = client.send_notification(n.notification).await;
        });
        true
    }

    fn close_stream(&self) -> bool {
        false
    }

    /// rmcp lists and routes the tools: no companion tools, so no fallback task either.
    fn offers_fallback(&self) -> bool {
        false
    }

    fn request<'a>(&'a self, method: &'a str, params: Value) -> Answer<'a> {
        let message = jsonrpc::request_message(&RequestId::Number(0), method, params);
        Box::pin(async move {
            let Some(ServerJsonRpcMessage::Request(r)) = Self::rmcp_message(message) else {
                return Err(RpcError::internal(format!(
                    "rmcp cannot send a `{method}` request"
                )));
            };
            match self.client.send_request(r.request).await {
                Ok(result) => Ok(to_value(&result)),
                Err(::rmcp::service::ServiceError::McpError(e)) => Err(RpcError {
                    code: e.code.0.into(),
                    message: e.message.into_owned(),
                    data: e.data,
                }),
                Err(e) => Err(RpcError::internal(format!(
                    "the client did not answer: {e}"
                ))),
            }
        })
    }

    fn owner(&self, _era: &Era) -> Owner {
        self.owner.clone()
    }

    fn principal(&self) -> Option<Principal> {
        self.principal.clone()
    }

    fn identified(&self) -> bool {
        self.principal.is_some()
    }

    fn session(&self) -> Option<LegacySession> {
        None
    }

    fn open_session(&self, _session: LegacySession) -> bool {
        false
    }

    fn set_log_level(&self, _level: LogLevel) -> bool {
        false
    }

    fn after_reply(&self, _id: &RequestId) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(());
        rx
    }
}

/// The three task methods of an rmcp `ServerHandler`, each a one-line delegation to the
/// [`TaskTools`](crate::rmcp::TaskTools) in field `$field` (or any expression of `self`
/// that names one). Write it inside `impl ServerHandler for …` (the example on
/// [`TaskTools`](crate::rmcp::TaskTools) shows it in a whole server).
///
/// It writes `get_task`, `update_task` and `cancel_task`, and `on_custom_request`, where rmcp
/// puts a task method whose params it cannot read (see
/// [`TaskTools::custom_request`](crate::rmcp::TaskTools::custom_request)); nothing
/// else, so a handler method rmcp adds later is not silently taken over. A server that answers
/// custom requests of its own writes the four by hand, and hands the custom requests it does not
/// know to [`TaskTools::custom_request`](crate::rmcp::TaskTools::custom_request).
#[macro_export]
macro_rules! rmcp_task_methods {
    ($field:ident) => {
        fn get_task(
            &self,
            request: $crate::__private::rmcp::model::GetTaskParams,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::service::RoleServer,
            >,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<
                $crate::__private::rmcp::model::GetTaskResult,
                $crate::__private::rmcp::ErrorData,
            >,
        > + ::core::marker::Send
        + '_ {
            self.$field.get_task(request, context)
        }

        fn update_task(
            &self,
            request: $crate::__private::rmcp::model::UpdateTaskParams,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::service::RoleServer,
            >,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<(), $crate::__private::rmcp::ErrorData>,
        > + ::core::marker::Send
        + '_ {
            self.$field.update_task(request, context)
        }

        fn cancel_task(
            &self,
            request: $crate::__private::rmcp::model::CancelTaskParams,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::service::RoleServer,
            >,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<(), $crate::__private::rmcp::ErrorData>,
        > + ::core::marker::Send
        + '_ {
            self.$field.cancel_task(request, context)
        }

        fn on_custom_request(
            &self,
            request: $crate::__private::rmcp::model::CustomRequest,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::service::RoleServer,
            >,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<
                $crate::__private::rmcp::model::CustomResult,
                $crate::__private::rmcp::ErrorData,
            >,
        > + ::core::marker::Send
        + '_ {
            self.$field.custom_request(request, context)
        }
    };
}
