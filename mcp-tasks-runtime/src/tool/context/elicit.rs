use super::{ElicitOutcome, InputError, ToolContext};
use crate::protocol::InputRequest;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

/// A pending elicitation; `.await` it. See [`ToolContext::elicit`].
#[must_use = "an elicitation does nothing until awaited"]
#[derive(Debug)]
pub struct Elicit<'a, T> {
    ctx: &'a ToolContext,
    message: String,
    key: Option<String>,
    _t: PhantomData<fn() -> T>,
}

impl<'a, T> Elicit<'a, T> {
    pub(super) fn new(ctx: &'a ToolContext, message: String) -> Self {
        Elicit {
            ctx,
            message,
            key: None,
            _t: PhantomData,
        }
    }

    /// Names this request's key in `inputRequests` (default: numbered by the runtime). Keys must
    /// be unique within one call or task.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl<'a, T: DeserializeOwned + JsonSchema + Send + 'static> IntoFuture for Elicit<'a, T> {
    type Output = Result<ElicitOutcome<T>, InputError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let schema =
                crate::tool::schema::elicitation_schema::<T>().map_err(InputError::InvalidForm)?;
            // Built by hand: `json!` would copy the schema tree into a new one.
            let mut params = serde_json::Map::new();
            params.insert("mode".into(), Value::from("form"));
            params.insert("message".into(), Value::String(self.message));
            params.insert("requestedSchema".into(), schema);
            let params = Value::Object(params);
            let mut request = InputRequest::new("elicitation/create", params);
            request.key = self.key;
            let answer = self.ctx.request(request).await?;
            parse_outcome(answer)
        })
    }
}

fn parse_outcome<T: DeserializeOwned>(answer: Value) -> Result<ElicitOutcome<T>, InputError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let empty = Value::Object(serde_json::Map::new());
            T::deserialize(answer.get("content").unwrap_or(&empty))
                .map(ElicitOutcome::Accept)
                .map_err(|e| {
                    InputError::InvalidResponse(format!(
                        "the accepted content does not match the form: {e}"
                    ))
                })
        }
        Some("decline") => Ok(ElicitOutcome::Decline),
        Some("cancel") => Ok(ElicitOutcome::Cancel),
        Some(other) => Err(InputError::InvalidResponse(format!(
            "unknown elicitation action `{other}`"
        ))),
        None => Err(InputError::InvalidResponse(
            "the elicitation result has no `action`".into(),
        )),
    }
}
