use super::{Prompt, PromptArguments, PromptBuilder, PromptFuture, PromptInfo};
use crate::completion::Completer;
use crate::protocol::PromptArgument;
use crate::tool::{ArgumentError, StateNeed, ToolContext};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

type GetFn = fn(ToolContext, PromptArguments) -> Result<PromptFuture, ArgumentError>;

/// One prompt, described once at registration.
pub(crate) struct RegisteredPrompt {
    pub(crate) info: PromptInfo,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) state_needs: Vec<StateNeed>,
    pub(crate) completers: Vec<(&'static str, Completer)>,
    get: GetFn,
}

impl fmt::Debug for RegisteredPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredPrompt")
            .field("info", &self.info)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl RegisteredPrompt {
    /// Describes `P`.
    pub(crate) fn of<P: Prompt>() -> Self {
        let mut builder = PromptBuilder::default();
        P::describe(&mut builder);
        RegisteredPrompt {
            info: P::INFO,
            arguments: builder.arguments,
            state_needs: builder.states,
            completers: builder.completers,
            get: P::get,
        }
    }

    /// Takes `arguments` apart and starts the prompt.
    pub(crate) fn get(
        &self,
        ctx: ToolContext,
        arguments: Option<Value>,
    ) -> Result<PromptFuture, ArgumentError> {
        (self.get)(ctx, PromptArguments::new(arguments)?)
    }
}

/// The prompts of a server, by name, in registration order.
#[derive(Debug, Default)]
pub(crate) struct PromptRegistry {
    order: Vec<Arc<RegisteredPrompt>>,
    by_name: HashMap<&'static str, Arc<RegisteredPrompt>>,
}

impl PromptRegistry {
    /// Adds a prompt; `false` (nothing added) when its name is taken.
    pub(crate) fn insert(&mut self, prompt: RegisteredPrompt) -> bool {
        let name = prompt.info.name;
        if self.by_name.contains_key(name) {
            return false;
        }
        let prompt = Arc::new(prompt);
        self.order.push(prompt.clone());
        self.by_name.insert(name, prompt);
        true
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredPrompt>> {
        self.by_name.get(name)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<RegisteredPrompt>> {
        self.order.iter()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}
