//! Prompts: `prompts/list` (every page), `prompts/get` in both eras (MRTR rounds in 2026-07-28),
//! and `completion/complete` for prompt arguments and resource-template variables.

use super::Client;
use super::resources::check_complete;
use crate::error::Error;
use mcp_tasks_runtime::protocol::Content;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A prompt as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInfo {
    /// Its name (what [`Client::get_prompt`] takes).
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The arguments it takes, in the server's order.
    pub arguments: Vec<PromptArgument>,
    /// The whole prompt object, exactly as sent.
    pub raw: Value,
}

/// One argument of a prompt (its value is a string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    pub required: bool,
}

/// What `prompts/get` returned.
#[derive(Debug, Clone, PartialEq)]
pub struct GetPromptResult {
    /// The server's description of the result.
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// The whole result, exactly as sent.
    pub raw: Value,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// What it says: text, an image, audio, a resource link, or an embedded resource.
    pub content: Content,
}

/// What [`Client::complete`] completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt's argument (`ref/prompt`), by the prompt's name.
    Prompt(String),
    /// A resource template's variable (`ref/resource`), by the template (or a URI).
    Resource(String),
}

impl CompletionRef {
    fn to_json(&self) -> Value {
        match self {
            CompletionRef::Prompt(name) => json!({ "type": "ref/prompt", "name": name }),
            CompletionRef::Resource(uri) => json!({ "type": "ref/resource", "uri": uri }),
        }
    }
}

/// What `completion/complete` suggested.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// The suggestions, best first (at most 100).
    pub values: Vec<String>,
    /// How many there are in all, when the server says.
    pub total: Option<u64>,
    /// Whether there are more than [`values`](Self::values).
    pub has_more: bool,
}

fn text(raw: &Value, key: &str) -> Option<String> {
    raw.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl PromptInfo {
    fn parse(raw: Value) -> Result<Self, Error> {
        let m = "prompts/list";
        let name =
            text(&raw, "name").ok_or_else(|| Error::invalid(m, "a prompt without a `name`"))?;
        let arguments = match raw.get("arguments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(args)) => args
                .iter()
                .map(|a| {
                    Ok(PromptArgument {
                        name: text(a, "name").ok_or_else(|| {
                            Error::invalid(m, format!("an argument of `{name}` without a `name`"))
                        })?,
                        title: text(a, "title"),
                        description: text(a, "description"),
                        required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect::<Result<_, Error>>()?,
            Some(_) => {
                return Err(Error::invalid(
                    m,
                    format!("the `arguments` of `{name}` are not an array"),
                ));
            }
        };
        Ok(PromptInfo {
            title: text(&raw, "title"),
            description: text(&raw, "description"),
            arguments,
            name,
            raw,
        })
    }
}

impl GetPromptResult {
    fn parse(raw: Value) -> Result<Self, Error> {
        let m = "prompts/get";
        let messages =
            raw.get("messages")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::invalid(m, "no `messages` array"))?
                .iter()
                .enumerate()
                .map(|(i, msg)| {
                    let role = text(msg, "role")
                        .ok_or_else(|| Error::invalid(m, format!("message {i} has no `role`")))?;
                    let content = msg.get("content").cloned().ok_or_else(|| {
                        Error::invalid(m, format!("message {i} has no `content`"))
                    })?;
                    let content = serde_json::from_value(content).map_err(|e| {
                        Error::invalid(m, format!("message {i}: not a content block: {e}"))
                    })?;
                    Ok(PromptMessage { role, content })
                })
                .collect::<Result<_, Error>>()?;
        Ok(GetPromptResult {
            description: text(&raw, "description"),
            messages,
            raw,
        })
    }
}

impl Client {
    /// Every prompt (all pages of `prompts/list`).
    pub async fn list_prompts(&self) -> Result<Vec<PromptInfo>, Error> {
        self.list_all("prompts/list", "prompts")
            .await?
            .into_iter()
            .map(PromptInfo::parse)
            .collect()
    }

    /// Gets a prompt with these arguments (anything that serialises to a JSON object of strings;
    /// `()` or `Value::Null` for none). In 2026-07-28 the server may first ask for input
    /// (`InputRequiredResult`): the input handler answers and the request is sent again, as for a
    /// tool call. An unknown prompt or a missing argument is the server's `-32602`, as
    /// [`Error::Rpc`] (the client does not check the arguments: [`list_prompts`](Self::list_prompts)
    /// says which are required).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, Error> {
        let method = "prompts/get";
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        match serde_json::to_value(arguments)
            .map_err(|e| Error::Decode(format!("the arguments do not serialise: {e}")))?
        {
            Value::Null => {}
            arguments @ Value::Object(_) => {
                params.insert("arguments".into(), arguments);
            }
            other => {
                return Err(Error::Decode(format!(
                    "prompt arguments must be a JSON object, not {other}"
                )));
            }
        }
        let outcome = if self.inner.era.is_modern() {
            self.request_answering(method, params).await?
        } else {
            self.inner.request(method, Value::Object(params)).await?
        };
        let raw = outcome.map_err(|error| Error::Rpc {
            method: method.into(),
            error,
        })?;
        check_complete(method, &raw)?;
        GetPromptResult::parse(raw)
    }

    /// Suggestions for an argument's value (`completion/complete`): `argument` of `reference`
    /// (a prompt's argument, or a resource template's variable), as typed so far (`value`), with
    /// the values already chosen for the other arguments (`context`, e.g.
    /// `&[("department", "Sales")]`; `&[]` for none).
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &[(&str, &str)],
    ) -> Result<Completion, Error> {
        let method = "completion/complete";
        let mut params = json!({
            "ref": reference.to_json(),
            "argument": { "name": argument, "value": value },
        });
        if !context.is_empty() {
            let arguments: Map<String, Value> = context
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
                .collect();
            params["context"] = json!({ "arguments": arguments });
        }
        let raw = self.inner.call(method, params).await?;
        check_complete(method, &raw)?;
        let completion = raw
            .get("completion")
            .ok_or_else(|| Error::invalid(method, "no `completion` object"))?;
        let values = completion
            .get("values")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::invalid(method, "no `completion.values` array"))?
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    Error::invalid(method, format!("a value that is not a string: {v}"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Completion {
            values,
            total: completion.get("total").and_then(Value::as_u64),
            has_more: completion
                .get("hasMore")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}
