//! The resources of a server: fixed URIs by exact match, then templates in registration order.

use super::{ListFuture, Resource, ResourceFuture, ResourceInfo, ResourceRequest, UriTemplate};
use crate::completion::Completer;
use crate::protocol::RpcError;
use crate::tool::{ParamsBuilder, StateNeed, ToolContext};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

type ReadFn = fn(ToolContext, ResourceRequest) -> Result<ResourceFuture, RpcError>;
type ListFn = fn(ToolContext) -> Option<ListFuture>;

/// One resource with its template parsed, at registration.
#[derive(Clone)]
pub struct RegisteredResource {
    /// The compile-time description.
    pub info: ResourceInfo,
    template: Option<UriTemplate>,
    state_needs: Arc<[StateNeed]>,
    read: ReadFn,
    list: ListFn,
    completers: &'static [(&'static str, Completer)],
}

impl fmt::Debug for RegisteredResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredResource")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl RegisteredResource {
    /// Registers `R`; `Err` says why its `uri` is not a URI (template) a client could use.
    pub fn try_of<R: Resource>() -> Result<Self, String> {
        let info = R::INFO;
        if !has_scheme(info.uri) {
            return Err(format!(
                "`{}` is not an absolute URI: it needs a scheme, as in `notes://{{title}}`",
                info.uri
            ));
        }
        let template = match UriTemplate::parse(info.uri) {
            Ok(t) if info.template => Some(t),
            Ok(t) if t.has_variables() => {
                return Err(format!(
                    "`{}` has variables but is declared fixed",
                    info.uri
                ));
            }
            Ok(_) => None,
            Err(why) => return Err(format!("URI template `{}`: {why}", info.uri)),
        };
        let mut params = ParamsBuilder::default();
        R::describe(&mut params);
        Ok(RegisteredResource {
            info,
            template,
            state_needs: params.state_needs().into(),
            read: R::read,
            list: R::list,
            completers: R::COMPLETERS,
        })
    }

    /// The parsed template (`None` for a fixed resource).
    pub fn template(&self) -> Option<&UriTemplate> {
        self.template.as_ref()
    }

    /// How the template's variables complete ([`Resource::COMPLETERS`]).
    pub fn completers(&self) -> &'static [(&'static str, Completer)] {
        self.completers
    }

    /// The application state types the function takes.
    pub fn state_needs(&self) -> &[StateNeed] {
        &self.state_needs
    }

    /// Starts a read of `request`.
    pub fn read(
        &self,
        ctx: ToolContext,
        request: ResourceRequest,
    ) -> Result<ResourceFuture, RpcError> {
        (self.read)(ctx, request)
    }

    /// The template's `list` function, started (`None` without one).
    pub fn list(&self, ctx: ToolContext) -> Option<ListFuture> {
        (self.list)(ctx)
    }
}

/// `scheme:` with a scheme of RFC 3986 (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`).
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The resources of a server.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourceRegistry {
    fixed: Vec<Arc<RegisteredResource>>,
    by_uri: HashMap<&'static str, usize>,
    templates: Vec<Arc<RegisteredResource>>,
    shapes: HashMap<String, &'static str>,
}

/// A read's resource and the variables its template found in the URI.
pub(crate) struct Found<'a> {
    pub(crate) resource: &'a Arc<RegisteredResource>,
    pub(crate) request: ResourceRequest,
}

impl ResourceRegistry {
    /// Adds a resource; `Err` names the resource already registered under the same URI, or the
    /// template of the same shape (which would match the same URIs, so one could never be read).
    pub(crate) fn insert(&mut self, resource: RegisteredResource) -> Result<(), &'static str> {
        let uri = resource.info.uri;
        match &resource.template {
            None => {
                if let Some(&at) = self.by_uri.get(uri) {
                    return Err(self.fixed[at].info.uri);
                }
                self.by_uri.insert(uri, self.fixed.len());
                self.fixed.push(Arc::new(resource));
            }
            Some(template) => {
                let shape = template.shape();
                if let Some(taken) = self.shapes.get(&shape) {
                    return Err(taken);
                }
                self.shapes.insert(shape, uri);
                self.templates.push(Arc::new(resource));
            }
        }
        Ok(())
    }

    /// Whether there are no resources at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.templates.is_empty()
    }

    /// The fixed resources, in registration order.
    pub(crate) fn fixed(&self) -> &[Arc<RegisteredResource>] {
        &self.fixed
    }

    /// The templates, in registration order.
    pub(crate) fn templates(&self) -> &[Arc<RegisteredResource>] {
        &self.templates
    }

    /// Every resource.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<RegisteredResource>> {
        self.fixed.iter().chain(&self.templates)
    }

    /// The resource `uri` names: a fixed resource of exactly that URI, else the first template
    /// that matches it.
    pub(crate) fn find(&self, uri: &str) -> Option<Found<'_>> {
        if let Some(&at) = self.by_uri.get(uri) {
            return Some(Found {
                resource: &self.fixed[at],
                request: ResourceRequest::new(uri, HashMap::new()),
            });
        }
        self.templates.iter().find_map(|resource| {
            let vars = resource.template.as_ref()?.matches(uri)?;
            Some(Found {
                resource,
                request: ResourceRequest::new(uri, vars),
            })
        })
    }
}
