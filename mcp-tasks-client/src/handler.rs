//! Answering what the server asks: one [`InputHandler`] gets every elicitation, sampling and roots
//! request, whichever route it came by (a modern task's `inputRequests`, a legacy server-to-client
//! request, an MRTR `InputRequiredResult`).

use mcp_tasks_runtime::protocol::{CreateMessageResult, Root};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::pin::Pin;

/// Which kinds of requests a handler answers; the client declares exactly these capabilities, so
/// a server never asks for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputCapabilities {
    /// Form elicitation (`elicitation/create`, questions answered from a schema).
    pub elicitation: bool,
    /// URL elicitation (the user is sent to a web page).
    pub elicitation_url: bool,
    /// Sampling (`sampling/createMessage`, the client's model).
    pub sampling: bool,
    /// Roots (`roots/list`).
    pub roots: bool,
}

impl InputCapabilities {
    /// Form elicitation, sampling and roots.
    pub fn all() -> Self {
        InputCapabilities {
            elicitation: true,
            elicitation_url: false,
            sampling: true,
            roots: true,
        }
    }

    /// Nothing: the server may not ask anything.
    pub fn none() -> Self {
        InputCapabilities::default()
    }

    /// As `ClientCapabilities` JSON (without extensions).
    pub(crate) fn to_json(self) -> Map<String, Value> {
        let mut caps = Map::new();
        if self.elicitation || self.elicitation_url {
            let mut e = Map::new();
            if self.elicitation {
                e.insert("form".into(), json!({}));
            }
            if self.elicitation_url {
                e.insert("url".into(), json!({}));
            }
            caps.insert("elicitation".into(), Value::Object(e));
        }
        if self.sampling {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots {
            caps.insert("roots".into(), json!({ "listChanged": false }));
        }
        caps
    }
}

/// Where a request came from, for handlers that care (most do not).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputContext {
    /// The task that asks, when it is a task (modern `inputRequests`, legacy `related-task`).
    pub task_id: Option<String>,
    /// The key of the request in `inputRequests` (modern task and MRTR routes).
    pub key: Option<String>,
}

/// An elicitation: a question for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// The question.
    pub message: String,
    /// `form` (answer from [`requested_schema`](Self::requested_schema)) or `url`.
    pub mode: String,
    /// For forms: the JSON Schema of the answer (a flat object), as the server sent it.
    pub requested_schema: Option<Value>,
    /// For URL mode: the page to send the user to.
    pub url: Option<String>,
    /// The request's params exactly as sent.
    pub params: Value,
    /// Where it came from.
    pub context: InputContext,
}

impl ElicitRequest {
    pub(crate) fn from_params(params: Value, context: InputContext) -> Self {
        let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_owned);
        ElicitRequest {
            message: text("message").unwrap_or_default(),
            mode: text("mode").unwrap_or_else(|| "form".into()),
            requested_schema: params.get("requestedSchema").cloned(),
            url: text("url"),
            context,
            params,
        }
    }

    /// The schema's default for each field that has one (SEP-1034).
    pub fn defaults(&self) -> Map<String, Value> {
        self.requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The names of the fields the form asks for, in the schema's order.
    pub fn fields(&self) -> Vec<&str> {
        self.requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitResponse {
    /// Submitted, with these field values (empty for URL mode). Fields left out that have a
    /// `default` in the requested schema are sent with it.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

impl ElicitResponse {
    /// Accepts with the fields of `value` (anything that serialises to a JSON object).
    ///
    /// # Panics
    /// When `value` does not serialise to a JSON object.
    pub fn accept(value: impl Serialize) -> Self {
        match serde_json::to_value(value) {
            Ok(Value::Object(map)) => ElicitResponse::Accept(map),
            Ok(other) => panic!("an elicitation answer must be a JSON object, not {other}"),
            Err(e) => panic!("an elicitation answer must serialise: {e}"),
        }
    }

    /// The `ElicitResult` JSON.
    pub(crate) fn to_json(&self) -> Value {
        match self {
            ElicitResponse::Accept(content) if content.is_empty() => json!({ "action": "accept" }),
            ElicitResponse::Accept(content) => json!({ "action": "accept", "content": content }),
            ElicitResponse::Decline => json!({ "action": "decline" }),
            ElicitResponse::Cancel => json!({ "action": "cancel" }),
        }
    }
}

/// A sampling request: the server asks the client's model.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The request's params exactly as sent (`messages`, `maxTokens`, `systemPrompt`, ...).
    pub params: Value,
    /// Where it came from.
    pub context: InputContext,
}

impl SamplingRequest {
    /// The text of the messages, one per line (`role: text`), for showing or for a simple model.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        for m in self
            .params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            let blocks: Vec<&Value> = match m.get("content") {
                Some(Value::Array(a)) => a.iter().collect(),
                Some(one) => vec![one],
                None => vec![],
            };
            for b in blocks {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    out.push(format!("{role}: {t}"));
                }
            }
        }
        out.join("\n")
    }

    /// `maxTokens`.
    pub fn max_tokens(&self) -> Option<u64> {
        self.params.get("maxTokens").and_then(Value::as_u64)
    }

    /// `systemPrompt`.
    pub fn system_prompt(&self) -> Option<&str> {
        self.params.get("systemPrompt").and_then(Value::as_str)
    }
}

/// The answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingResponse {
    /// The model's message.
    Message(CreateMessageResult),
    /// Refused (by the user or the client). Legacy and inline routes answer the server with a
    /// JSON-RPC error; a modern task has no way to refuse, so the question is left open and the
    /// caller is told with [`TaskUpdate::Unanswered`](crate::TaskUpdate::Unanswered) (the task is
    /// not cancelled); a modern inline call (MRTR) is abandoned with
    /// [`Error::InputDeclined`](crate::Error::InputDeclined).
    Decline,
}

impl SamplingResponse {
    /// An assistant text message from `model`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        SamplingResponse::Message(CreateMessageResult {
            role: "assistant".into(),
            content: mcp_tasks_runtime::Content::text(text),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
        })
    }
}

/// A request for the client's roots (the directories it works in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootsRequest {
    /// Where it came from.
    pub context: InputContext,
}

/// A boxed future, for [`DynHandler`].
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Answers what servers ask. Implement the methods for the kinds you support and say so in
/// [`capabilities`](Self::capabilities); the client declares exactly those, so servers ask
/// nothing else. Methods may take as long as they need (a person is typing).
///
/// ```
/// use mcp_tasks_client::{ElicitRequest, ElicitResponse, InputCapabilities, InputHandler};
///
/// struct AlwaysFive;
///
/// impl InputHandler for AlwaysFive {
///     fn capabilities(&self) -> InputCapabilities {
///         InputCapabilities { elicitation: true, ..InputCapabilities::none() }
///     }
///     async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
///         let field = request.fields().first().map(|f| f.to_string()).unwrap_or_default();
///         ElicitResponse::accept(serde_json::json!({ field: 5 }))
///     }
/// }
/// ```
pub trait InputHandler: Send + Sync + 'static {
    /// The kinds of requests this handler answers (default: form elicitation, sampling, roots).
    fn capabilities(&self) -> InputCapabilities {
        InputCapabilities::all()
    }

    /// Answers an elicitation (default: decline).
    fn elicit(&self, request: ElicitRequest) -> impl Future<Output = ElicitResponse> + Send {
        let _ = request;
        async { ElicitResponse::Decline }
    }

    /// Answers a sampling request (default: decline).
    fn sample(&self, request: SamplingRequest) -> impl Future<Output = SamplingResponse> + Send {
        let _ = request;
        async { SamplingResponse::Decline }
    }

    /// Lists the client's roots (default: none).
    fn roots(&self, request: RootsRequest) -> impl Future<Output = Vec<Root>> + Send {
        let _ = request;
        async { Vec::new() }
    }
}

/// The handler a client has when none is given: it declares no capabilities, so servers ask
/// nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInput;

impl InputHandler for NoInput {
    fn capabilities(&self) -> InputCapabilities {
        InputCapabilities::none()
    }
}

/// [`InputHandler`] as a trait object.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn capabilities(&self) -> InputCapabilities;
    fn elicit(&self, request: ElicitRequest) -> BoxFuture<'_, ElicitResponse>;
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingResponse>;
    fn roots(&self, request: RootsRequest) -> BoxFuture<'_, Vec<Root>>;
}

impl<H: InputHandler> DynHandler for H {
    fn capabilities(&self) -> InputCapabilities {
        InputHandler::capabilities(self)
    }
    fn elicit(&self, request: ElicitRequest) -> BoxFuture<'_, ElicitResponse> {
        Box::pin(InputHandler::elicit(self, request))
    }
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingResponse> {
        Box::pin(InputHandler::sample(self, request))
    }
    fn roots(&self, request: RootsRequest) -> BoxFuture<'_, Vec<Root>> {
        Box::pin(InputHandler::roots(self, request))
    }
}

/// One input request, whatever route it came by.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// An elicitation.
    Elicit(ElicitRequest),
    /// A sampling request.
    Sample(SamplingRequest),
    /// A roots request.
    Roots(RootsRequest),
}

/// What the handler made of one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The bare result object (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`).
    Result(Value),
    /// Refused where the wire has no refusal (sampling, roots): the route decides what to do.
    Declined,
    /// A method this client does not know.
    Unknown,
}

impl Asked {
    pub(crate) fn new(method: &str, params: Value, context: InputContext) -> Option<Asked> {
        match method {
            "elicitation/create" => {
                Some(Asked::Elicit(ElicitRequest::from_params(params, context)))
            }
            "sampling/createMessage" => Some(Asked::Sample(SamplingRequest { params, context })),
            "roots/list" => Some(Asked::Roots(RootsRequest { context })),
            _ => None,
        }
    }

    /// The request's method.
    pub fn method(&self) -> &'static str {
        match self {
            Asked::Elicit(_) => "elicitation/create",
            Asked::Sample(_) => "sampling/createMessage",
            Asked::Roots(_) => "roots/list",
        }
    }
}

/// Asks the handler one request given as `method` + `params`.
pub(crate) async fn answer(
    handler: &dyn DynHandler,
    method: &str,
    params: Value,
    context: InputContext,
) -> Answer {
    let Some(asked) = Asked::new(method, params, context) else {
        return Answer::Unknown;
    };
    match asked {
        Asked::Elicit(r) => {
            let defaults = r.defaults();
            let mut response = handler.elicit(r).await;
            // Fields the answer leaves out take the schema's defaults (SEP-1034), as a form
            // pre-filled with them would have sent.
            if let ElicitResponse::Accept(content) = &mut response {
                for (k, v) in defaults {
                    content.entry(k).or_insert(v);
                }
            }
            Answer::Result(response.to_json())
        }
        Asked::Sample(r) => match handler.sample(r).await {
            SamplingResponse::Message(m) => Answer::Result(
                serde_json::to_value(m).expect("a CreateMessageResult always serialises"),
            ),
            SamplingResponse::Decline => Answer::Declined,
        },
        Asked::Roots(r) => {
            let roots = handler.roots(r).await;
            Answer::Result(json!({ "roots": roots }))
        }
    }
}

/// The handler's answers to an input-requests map.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    /// The `inputResponses` map, for the requests it answered.
    pub(crate) responses: Map<String, Value>,
    /// `(key, method)` of each request it declined where the wire has no way to decline
    /// (sampling, roots), or that this client does not know.
    pub(crate) declined: Vec<(String, String)>,
}

/// Answers every request of an input-requests map with the handler.
pub(crate) async fn answer_all(
    handler: &dyn DynHandler,
    requests: &Map<String, Value>,
    task_id: Option<&str>,
) -> Answers {
    let mut answers = Answers::default();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(json!({}));
        let context = InputContext {
            task_id: task_id.map(str::to_owned),
            key: Some(key.clone()),
        };
        match answer(handler, method, params, context).await {
            Answer::Result(r) => {
                answers.responses.insert(key.clone(), r);
            }
            Answer::Declined | Answer::Unknown => {
                answers.declined.push((key.clone(), method.to_owned()));
            }
        }
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;

    struct AcceptEmpty;
    impl InputHandler for AcceptEmpty {
        async fn elicit(&self, _: ElicitRequest) -> ElicitResponse {
            ElicitResponse::accept(json!({ "name": "Ada" }))
        }
    }

    #[tokio::test]
    async fn accepted_forms_take_the_schema_defaults_for_fields_left_out() {
        let params = json!({
            "message": "Who?",
            "requestedSchema": { "type": "object", "properties": {
                "name": { "type": "string", "default": "Bob" },
                "age": { "type": "integer", "default": 30 },
                "verified": { "type": "boolean", "default": true },
                "nickname": { "type": "string" },
            } }
        });
        let answer = answer(
            &AcceptEmpty,
            "elicitation/create",
            params,
            InputContext::default(),
        )
        .await;
        assert_eq!(
            answer,
            Answer::Result(json!({
                "action": "accept",
                "content": { "name": "Ada", "age": 30, "verified": true }
            }))
        );
    }
}
