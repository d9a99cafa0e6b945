//! Resources: the [`Resource`] trait that `#[resource]` implements, URI templates
//! (`UriTemplate`, RFC 6570 levels 1 to 3), what a read returns (`IntoResourceContents`), the
//! registry, and the [`ResourceNotifier`] an application keeps to tell subscribers a resource
//! changed.
//!
//! This layer sits beside `tool/` and knows `protocol` and `tool` (a resource function takes the
//! same [`ToolContext`] and [`State<T>`](crate::State) a tool does). The server serves it
//! (`server/resources.rs`).

mod contents;
mod notify;
mod param;
pub(crate) mod registry;
mod template;

pub use contents::Blob;
#[doc(hidden)]
// the bound of `__private::resource_output`; `#[resource]`'s page lists the return types
pub use contents::IntoResourceContents;
pub(crate) use notify::ResourceEvent;
pub use notify::ResourceNotifier;
#[doc(hidden)] // the bound of `__private::resource_var`; not API
pub use param::IsResourceVar;
pub(crate) use param::var_value;
#[doc(hidden)] // what `#[resource]` expands to (through `__private`); not API
pub use param::{ResourceInjected, ResourceRequest};
pub(crate) use registry::RegisteredResource;
pub(crate) use registry::ResourceRegistry;
pub(crate) use template::UriTemplate;

use crate::completion::Completer;
use crate::protocol::{ResourceContents, RpcError};
use crate::tool::{ParamsBuilder, ToolContext};
use std::future::Future;
use std::pin::Pin;

/// Everything about a resource (or a resource template) that is known at compile time.
#[derive(Debug, Clone, Copy)]
pub struct ResourceInfo {
    /// The resource's URI, or for a template its RFC 6570 URI template.
    pub uri: &'static str,
    /// Whether `uri` is a template (it has `{...}` expressions).
    pub template: bool,
    /// The resource's name (`name`; the function's name unless set).
    pub name: &'static str,
    /// Human-readable title.
    pub title: Option<&'static str>,
    /// Description, from the doc comment unless overridden.
    pub description: Option<&'static str>,
    /// MIME type, published in the listing and given to what a read returns.
    pub mime_type: Option<&'static str>,
    /// Size in bytes, if known ahead (fixed resources only).
    pub size: Option<u64>,
    /// The OAuth scopes a caller's token must grant, all of them, to read this resource (for a
    /// template: any resource it stands for) or complete its variables
    /// (`#[resource(scope = "notes")]`). Empty: any authenticated caller may. Checked as a
    /// tool's [`scopes`](crate::tool::ToolInfo::scopes) are.
    pub scopes: &'static [&'static str],
}

/// The future a resource read runs: the contents, or a JSON-RPC error.
#[doc(hidden)] // what `#[resource]` expands to (through `__private`); not API
pub type ResourceFuture =
    Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, RpcError>> + Send>>;

/// The future a template's `list` function runs: the concrete resources it stands for now.
#[doc(hidden)] // what `#[resource]` expands to (through `__private`); not API
pub type ListFuture = Pin<Box<dyn Future<Output = Vec<ListedResource>> + Send>>;

/// A resource (fixed or template). `#[resource]` implements this on a type named after the
/// function; implement it by hand only when a macro will not do.
pub trait Resource: Send + Sync + 'static {
    /// The compile-time description of the resource.
    const INFO: ResourceInfo;

    /// For a template: how its variables complete in `completion/complete` (`ref/resource`
    /// with the URI template), by variable name; `#[complete(...)]` on a variable's parameter
    /// adds one. Registered by [`ServerBuilder::build`](crate::ServerBuilder::build).
    const COMPLETERS: &'static [(&'static str, Completer)] = &[];

    /// Records what the function takes from the server (its [`State<T>`](crate::State)
    /// parameters), checked when the server is built.
    fn describe(params: &mut ParamsBuilder);

    /// Decodes the template variables and starts the read. A variable that does not fit its
    /// parameter is an error before anything runs.
    fn read(ctx: ToolContext, request: ResourceRequest) -> Result<ResourceFuture, RpcError>;

    /// For a template with `list = "..."`: the concrete resources it stands for, listed by
    /// `resources/list` after the fixed ones. `None`: the template lists nothing.
    fn list(ctx: ToolContext) -> Option<ListFuture> {
        let _ = ctx;
        None
    }
}

/// One entry of `resources/list`: what a template's `list` function returns for each concrete
/// resource it stands for, and what a client reads of each listed resource.
#[derive(Debug, Clone, PartialEq, Eq, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedResource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type (the template's unless set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ListedResource {
    /// A resource at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ListedResource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// Sets the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

/// The error for a URI that names no resource: `-32602` with `data.uri` (SEP-2164, 2026-07-28).
/// A resource function may return it too (through `ToolError`), for a URI its template matches
/// but whose record does not exist: `Err(resource_not_found(uri).into())`.
pub fn resource_not_found(uri: &str) -> RpcError {
    RpcError::invalid_params(format!("Resource not found: `{uri}`"))
        .with_data(serde_json::json!({ "uri": uri }))
}
