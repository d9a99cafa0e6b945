//! `--answers`: the answers to a tool's questions given on the command line.

use crate::args::{json_object, kind};
use serde_json::{Map, Value};

/// What `--answers` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers {
    /// Whether `--answers` was given at all.
    pub given: bool,
    /// Field name -> answer.
    pub fields: Map<String, Value>,
    /// `@action`: refuse every question this way.
    pub refuse: Option<Refusal>,
    /// `@sampling`: the reply to sampling requests.
    pub sampling: Option<String>,
}

/// How a question is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Decline,
    Cancel,
}

/// Reads `--answers`.
pub fn parse_answers(text: &str) -> Result<Answers, String> {
    let mut fields = json_object("--answers", text)?;
    let refuse = match fields.remove("@action") {
        None => None,
        Some(Value::String(s)) if s == "decline" => Some(Refusal::Decline),
        Some(Value::String(s)) if s == "cancel" => Some(Refusal::Cancel),
        Some(Value::String(s)) if s == "accept" => None,
        Some(other) => {
            return Err(format!(
                "--answers \"@action\" must be \"accept\", \"decline\" or \"cancel\"; got {other}"
            ));
        }
    };
    let sampling = match fields.remove("@sampling") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            return Err(format!(
                "--answers \"@sampling\" must be a string (the reply); got {}",
                kind(&other)
            ));
        }
    };
    if let Some(key) = fields.keys().find(|k| k.starts_with('@')) {
        return Err(format!(
            "--answers has an unknown key {key:?} (the special keys are \"@action\" and \"@sampling\")"
        ));
    }
    Ok(Answers {
        given: true,
        fields,
        refuse,
        sampling,
    })
}
