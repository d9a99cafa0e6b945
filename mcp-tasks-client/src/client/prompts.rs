//! Prompts: `prompts/list` (every page), `prompts/get` in both eras (MRTR rounds in 2026-07-28),
//! and `completion/complete` for prompt arguments and resource-template variables.

use super::Client;
use super::resources::check_complete;
use crate::error::Error;
use mcp_tasks_runtime::Completion;
use mcp_tasks_runtime::protocol::{GetPromptResult, ListedPrompt};
use serde::Serialize;
use serde_json::{Map, Value, json};

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

impl Client {
    /// Every prompt (all pages of `prompts/list`).
    pub async fn list_prompts(&self) -> Result<Vec<ListedPrompt>, Error> {
        self.list_all("prompts/list", "prompts").await
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
        serde_json::from_value(raw).map_err(|e| Error::invalid(method, e.to_string()))
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
        /// `CompleteResult`.
        #[derive(mcp_tasks_wire::Deserialize)]
        struct Complete {
            completion: Completion,
        }
        serde_json::from_value::<Complete>(raw)
            .map(|r| r.completion)
            .map_err(|e| Error::invalid(method, e.to_string()))
    }
}
