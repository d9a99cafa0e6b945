//! Argument completion (`completion/complete`): the candidates a client offers while the user
//! types a prompt argument or a resource-template variable.
//!
//! The registry (`CompletionRegistry`, crate-internal) is keyed by the *reference* a request
//! names (`CompletionRef`: `ref/prompt` with a prompt's name, `ref/resource` with a URI
//! template), then by argument. Anything that has named arguments registers them there with
//! `declare` and adds a `Completer` per completed argument with `insert`; prompts do so from
//! their `#[complete(...)]` parameters at `ServerBuilder::build`, and resource templates do the
//! same with their variables (`#[complete(...)]` on a variable's parameter, kept in
//! [`Resource::COMPLETERS`](crate::Resource::COMPLETERS)).
//!
//! A completer is a fixed list (`Completer::Values`, `#[complete(values = [...])]`: the values
//! that start with what was typed, ignoring case) or an `async fn` (`Completer::With`,
//! `#[complete(with = path)]`) that receives the partial value and a [`CompletionContext`] (the
//! arguments already chosen, application state). At most [`MAX_VALUES`] values go out, with
//! `total` and `hasMore` saying how many there were.

use crate::protocol::RpcError;
use crate::tool::{State, StateMap, ToolError};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The most values one `completion/complete` answer carries (the spec: "Maximum 100 items").
pub const MAX_VALUES: usize = 100;

/// What a `completion/complete` answers: the candidates, best first.
#[derive(Debug, Clone, PartialEq, Eq, Default, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The candidates (at most [`MAX_VALUES`] go out; the rest are cut, and `hasMore` set).
    pub values: Vec<String>,
    /// How many candidates there are in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more candidates than these.
    #[serde(default)]
    pub has_more: bool,
}

impl Completion {
    /// These candidates, all of them: `total` is their number.
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Completion {
            total: Some(values.len() as u64),
            values,
            has_more: false,
        }
    }

    /// Cuts the list to [`MAX_VALUES`], setting `hasMore` (and keeping `total`) when it was longer.
    fn capped(mut self) -> Self {
        if self.values.len() > MAX_VALUES {
            self.values.truncate(MAX_VALUES);
            self.has_more = true;
        }
        self
    }
}

/// What a completion request names: a prompt, or a resource template.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum CompletionRef {
    /// `{"type": "ref/prompt", "name": ...}`.
    Prompt(String),
    /// `{"type": "ref/resource", "uri": ...}`: a resource template's URI template.
    Resource(String),
}

impl fmt::Display for CompletionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompletionRef::Prompt(name) => write!(f, "prompt `{name}`"),
            CompletionRef::Resource(uri) => write!(f, "resource template `{uri}`"),
        }
    }
}

/// What a completion function is told besides the partial value.
#[derive(Clone)]
pub struct CompletionContext {
    /// The argument being completed.
    pub argument: String,
    /// The arguments the user already chose (`context.arguments` of the request).
    pub arguments: HashMap<String, String>,
    state: Arc<StateMap>,
}

impl fmt::Debug for CompletionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompletionContext")
            .field("argument", &self.argument)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl CompletionContext {
    /// A context for tests of a completion function: no state registered.
    pub fn new(argument: impl Into<String>, arguments: HashMap<String, String>) -> Self {
        CompletionContext {
            argument: argument.into(),
            arguments,
            state: Arc::default(),
        }
    }

    /// An already-chosen argument.
    pub fn get(&self, argument: &str) -> Option<&str> {
        self.arguments.get(argument).map(String::as_str)
    }

    /// Application state registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state), as a tool gets it.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.state.get::<T>()
    }
}

/// The future of a completion function, its answer converted.
#[doc(hidden)] // named by what `#[complete]` expands to (`__private::complete_with`); not API
pub type CompleteFuture = Pin<Box<dyn Future<Output = Result<Completion, RpcError>> + Send>>;

/// A completion function as the registry keeps it (what `#[complete(with = path)]` makes of
/// `path`).
#[doc(hidden)] // the function in `Completer::With`, written by `#[complete(with = ..)]`; not API
pub type CompleteFn = fn(String, CompletionContext) -> CompleteFuture;

/// How one argument is completed.
#[doc(hidden)] // what `#[complete]` expands to (`Prompt::describe`, `Resource::COMPLETERS`); not API
#[derive(Clone, Copy)]
pub enum Completer {
    /// A fixed list: the values that start with what was typed, ignoring case, in list order.
    Values(&'static [&'static str]),
    /// An `async fn(value: String, context: CompletionContext) -> impl IntoCompletion`.
    With(CompleteFn),
}

impl fmt::Debug for Completer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Completer::Values(values) => f.debug_tuple("Values").field(values).finish(),
            Completer::With(_) => f.write_str("With(..)"),
        }
    }
}

impl Completer {
    fn run(self, value: String, context: CompletionContext) -> CompleteFuture {
        match self {
            Completer::Values(values) => {
                let typed = value.to_lowercase();
                let matching = values
                    .iter()
                    .filter(|v| v.to_lowercase().starts_with(&typed))
                    .copied();
                let completion = Completion::new(matching);
                Box::pin(async move { Ok(completion) })
            }
            Completer::With(f) => f(value, context),
        }
    }
}

/// What a completion function may return: a list of values (`Vec<String>`, `Vec<&str>`), a
/// [`Completion`] (to set `total` and `hasMore` yourself), or a `Result` of those whose error
/// converts into [`ToolError`] (a failed completion answers a JSON-RPC error: `-32603` with the
/// error's text, or the [`RpcError`] it carries).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a completion function",
    label = "the completion function returns this",
    note = "return `Vec<String>`, `Vec<&'static str>`, `Completion`, or a `Result` of those \
            whose error converts into `ToolError`"
)]
#[doc(hidden)] // the bound of `__private::complete_with`; `#[prompt]`'s page lists these types
pub trait IntoCompletion<M>: Send + 'static {
    /// The answer, or the JSON-RPC error it stands for.
    fn into_completion(self) -> Result<Completion, RpcError>;
}

/// Marker: a value.
#[doc(hidden)] // a marker of `IntoCompletion`, inferred, never written
#[derive(Debug)]
pub enum ViaValue {}
/// Marker: a `Result`.
#[doc(hidden)] // a marker of `IntoCompletion`, inferred, never written
#[derive(Debug)]
pub enum ViaResult {}

impl IntoCompletion<ViaValue> for Completion {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(self)
    }
}

impl IntoCompletion<ViaValue> for Vec<String> {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(Completion::new(self))
    }
}

impl IntoCompletion<ViaValue> for Vec<&'static str> {
    fn into_completion(self) -> Result<Completion, RpcError> {
        Ok(Completion::new(self))
    }
}

impl<T, E> IntoCompletion<ViaResult> for Result<T, E>
where
    T: IntoCompletion<ViaValue>,
    E: Into<ToolError> + Send + 'static,
{
    fn into_completion(self) -> Result<Completion, RpcError> {
        match self {
            Ok(value) => value.into_completion(),
            Err(err) => Err(err.into().into_rpc()),
        }
    }
}

/// The completions of a server, by reference, then argument.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompletionRegistry {
    refs: HashMap<CompletionRef, Entry>,
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// Every argument the reference has (completed or not).
    arguments: Vec<String>,
    completers: HashMap<&'static str, Completer>,
}

impl CompletionRegistry {
    /// Declares a reference and all its arguments: an argument declared here with no completer
    /// completes to nothing; one that is not declared is the client's error (`-32602`).
    pub(crate) fn declare(
        &mut self,
        reference: CompletionRef,
        arguments: impl IntoIterator<Item = impl Into<String>>,
    ) {
        let entry = self.refs.entry(reference).or_default();
        for argument in arguments {
            let argument = argument.into();
            if !entry.arguments.contains(&argument) {
                entry.arguments.push(argument);
            }
        }
    }

    /// Adds `completer` for `argument` of `reference` (declaring both).
    pub fn insert(
        &mut self,
        reference: CompletionRef,
        argument: &'static str,
        completer: Completer,
    ) {
        self.declare(reference.clone(), [argument]);
        if let Some(entry) = self.refs.get_mut(&reference) {
            entry.completers.insert(argument, completer);
        }
    }

    /// Whether any argument of any reference has a completer (the `completions` capability).
    pub(crate) fn has_completers(&self) -> bool {
        self.refs.values().any(|e| !e.completers.is_empty())
    }

    /// Starts completing: `Err` (`-32602`) when the reference or its argument is unknown.
    pub(crate) fn complete(
        &self,
        request: CompleteRequest,
        state: Arc<StateMap>,
    ) -> Result<CompleteFuture, RpcError> {
        let CompleteRequest {
            reference,
            argument,
            value,
            arguments,
        } = request;
        let Some(entry) = self.refs.get(&reference) else {
            let (message, data) = match &reference {
                CompletionRef::Prompt(name) => (
                    format!("Invalid params: unknown prompt `{name}`"),
                    json!({ "ref": { "type": "ref/prompt", "name": name } }),
                ),
                CompletionRef::Resource(uri) => (
                    format!("Invalid params: unknown resource template `{uri}`"),
                    json!({ "ref": { "type": "ref/resource", "uri": uri } }),
                ),
            };
            return Err(RpcError::invalid_params(message).with_data(data));
        };
        if !entry.arguments.contains(&argument) {
            let known = entry
                .arguments
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let has = if known.is_empty() {
                "has no arguments".to_owned()
            } else {
                format!("has {known}")
            };
            return Err(RpcError::invalid_params(format!(
                "Invalid params: {reference} has no argument `{argument}` (it {has})"
            ))
            .with_data(json!({ "argument": argument })));
        }
        let Some(completer) = entry.completers.get(argument.as_str()).copied() else {
            return Ok(Box::pin(async { Ok(Completion::default()) }));
        };
        let context = CompletionContext {
            argument,
            arguments,
            state,
        };
        let fut = completer.run(value, context);
        Ok(Box::pin(async move { fut.await.map(Completion::capped) }))
    }
}

/// One `completion/complete` request, read.
#[derive(Debug)]
pub(crate) struct CompleteRequest {
    pub(crate) reference: CompletionRef,
    pub(crate) argument: String,
    pub(crate) value: String,
    pub(crate) arguments: HashMap<String, String>,
}

impl CompleteRequest {
    /// Reads `ref`, `argument` and `context` (`-32602` naming what is wrong).
    pub(crate) fn parse(
        reference: Option<Value>,
        argument: Option<Value>,
        context: Option<Value>,
    ) -> Result<Self, RpcError> {
        let invalid = |why: &str| RpcError::invalid_params(format!("Invalid params: {why}"));
        let Some(Value::Object(reference)) = reference else {
            return Err(invalid("`ref` must be an object with `type`"));
        };
        let field = |map: &Map<String, Value>, key: &str, what: &str| match map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(invalid(&format!("`{what}.{key}` must be a string"))),
        };
        let reference = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => CompletionRef::Prompt(field(&reference, "name", "ref")?),
            Some("ref/resource") => CompletionRef::Resource(field(&reference, "uri", "ref")?),
            Some(other) => {
                return Err(invalid(&format!(
                    "unknown `ref.type` `{other}`: expected `ref/prompt` or `ref/resource`"
                )));
            }
            None => return Err(invalid("`ref.type` must be a string")),
        };
        let Some(Value::Object(argument)) = argument else {
            return Err(invalid(
                "`argument` must be an object with `name` and `value`",
            ));
        };
        let name = field(&argument, "name", "argument")?;
        let value = field(&argument, "value", "argument")?;
        let arguments = match context {
            None | Some(Value::Null) => HashMap::new(),
            Some(Value::Object(mut context)) => match context.remove("arguments") {
                None | Some(Value::Null) => HashMap::new(),
                Some(Value::Object(chosen)) => chosen
                    .into_iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => Ok((k, s)),
                        _ => Err(invalid(&format!(
                            "`context.arguments.{k}` must be a string"
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(invalid("`context.arguments` must be an object")),
            },
            Some(_) => return Err(invalid("`context` must be an object")),
        };
        Ok(CompleteRequest {
            reference,
            argument: name,
            value,
            arguments,
        })
    }
}

/// Runs a completion function's future and converts its answer (what `#[complete(with = f)]`
/// expands to).
pub(crate) fn boxed<F, M>(fut: F) -> CompleteFuture
where
    F: Future + Send + 'static,
    F::Output: IntoCompletion<M>,
{
    Box::pin(async move { fut.await.into_completion() })
}

#[cfg(test)]
mod tests;
