use super::{ArgumentError, ParamsBuilder, Tool, ToolContext, ToolFuture, ToolInfo};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

type CallFn = fn(ToolContext, super::Arguments) -> Result<ToolFuture, ArgumentError>;

/// One tool with its schemas computed once, at registration.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The compile-time description.
    pub info: ToolInfo,
    /// `inputSchema`.
    pub input_schema: Arc<Value>,
    /// `outputSchema`, for tools with structured output.
    pub output_schema: Option<Arc<Value>>,
    headers: Arc<[super::HeaderParam]>,
    state_needs: Arc<[super::StateNeed]>,
    call: CallFn,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// Registers `T`, computing its schemas: for tests of a tool's description. A server
    /// registers its tools with [`ServerBuilder::tool`](crate::server::ServerBuilder::tool), which
    /// reports a bad header in its [`SetupError`](crate::SetupError) instead of panicking.
    ///
    /// # Panics
    /// When an `x-mcp-header` in its input schema breaks SEP-2243's rules (see
    /// [`try_of`](Self::try_of)).
    pub fn of<T: Tool>() -> Self {
        Self::try_of::<T>()
            .unwrap_or_else(|why| panic!("mcp-tasks: tool `{}`: {why}", T::INFO.name))
    }

    /// Registers `T`, computing its schemas; `Err` says why an `x-mcp-header` in its input schema
    /// breaks SEP-2243's rules (see [`header_params`](Self::header_params)): clients would drop
    /// the tool, so it is found at start-up instead.
    pub fn try_of<T: Tool>() -> Result<Self, String> {
        let mut params = ParamsBuilder::default();
        T::describe(&mut params);
        let state_needs = params.state_needs().into();
        let input_schema = params.finish();
        let headers = super::headers::header_params(&input_schema)?;
        Ok(RegisteredTool {
            info: T::INFO,
            input_schema: Arc::new(input_schema),
            output_schema: T::output_schema().map(Arc::new),
            headers: headers.into(),
            state_needs,
            call: T::call,
        })
    }

    /// The arguments this tool's input schema marks `x-mcp-header` (SEP-2243): over Streamable
    /// HTTP in the 2026-07-28 era each travels in an `Mcp-Param-{name}` header too, which must
    /// agree with the body. Declare one with `#[schemars(extend("x-mcp-header" = "Name"))]` on a
    /// string, integer or boolean field; the name must be an HTTP token, unique ignoring case.
    pub fn header_params(&self) -> &[super::HeaderParam] {
        &self.headers
    }

    /// The application state types this tool takes ([`State<T>`](super::State) parameters).
    pub fn state_needs(&self) -> &[super::StateNeed] {
        &self.state_needs
    }

    /// Decodes `arguments` and starts the call.
    pub fn call(
        &self,
        ctx: ToolContext,
        arguments: Option<Value>,
    ) -> Result<ToolFuture, ArgumentError> {
        let args = super::Arguments::new(arguments)?;
        (self.call)(ctx, args)
    }
}

/// The tools of a server, by name.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    order: Vec<&'static str>,
    tools: HashMap<&'static str, Arc<RegisteredTool>>,
}

impl ToolRegistry {
    /// Adds a tool, like `HashSet::insert`: `false`, and nothing added, when a tool of the same
    /// name is already registered (a bug in the server's setup, which
    /// [`ServerBuilder::build`](crate::server::ServerBuilder::build) reports at start-up rather
    /// than leaving it for a client to find).
    #[must_use = "`false` means the tool was not added: its name is taken"]
    pub fn insert(&mut self, tool: RegisteredTool) -> bool {
        let name = tool.info.name;
        if self.tools.contains_key(name) {
            return false;
        }
        self.order.push(name);
        self.tools.insert(name, Arc::new(tool));
        true
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// All tools, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.order.iter().map(|n| &self.tools[n])
    }
}
