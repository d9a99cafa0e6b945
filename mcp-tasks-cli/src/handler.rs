//! The questions a tool asks (elicitation forms and URLs, sampling requests, roots), answered at
//! the prompt or from `--answers`.

use crate::answers::{Answers, Refusal};
use crate::ask::{ask_form, io_error, read_line};
use crate::form::{Form, Kind};
use crate::ui::{Stop, Ui, is_interrupt};
use dialoguer::Confirm;
use dialoguer::theme::ColorfulTheme;
use mcp_tasks_client::{
    ElicitRequest, ElicitResponse, InputCapabilities, InputHandler, Root, RootsRequest,
    SamplingRequest, SamplingResponse,
};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The model name a typed sampling reply is sent under.
const HUMAN_MODEL: &str = "mcp-tasks-cli (typed by a person)";

/// Ctrl-C (or an `--answers` value that does not fit) at a question: the whole call is being cancelled (`tasks/cancel`), so the question gets
/// no answer at all (an answer could end the task some other way first). The client drops this
/// future once it sees the task end.
async fn left_unanswered<T>() -> T {
    std::future::pending().await
}

/// Answers what the server asks: at the prompt when there is a terminal, from `--answers`
/// otherwise; a question nothing can answer is declined with a message, never left hanging.
#[derive(Debug, Clone)]
pub struct CliHandler {
    pub ui: Arc<Ui>,
    pub answers: Arc<Answers>,
}

impl InputHandler for CliHandler {
    fn capabilities(&self) -> InputCapabilities {
        InputCapabilities {
            elicitation: true,
            elicitation_url: true,
            sampling: true,
            roots: true,
        }
    }

    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let ui = &self.ui;
        let _open = ui.question();
        ui.say(&format!("? {}", request.message));
        if let Some(refusal) = self.answers.refuse {
            ui.say("  (--answers \"@action\" refuses it)");
            return refused(refusal);
        }
        if request.mode == "url" {
            return self.elicit_url(&request).await;
        }
        let mut form = match request
            .requested_schema
            .as_ref()
            .map_or(Ok(Form { fields: vec![] }), Form::from_schema)
        {
            Ok(form) => form,
            Err(why) => {
                ui.say(&format!("  cannot ask this question ({why}); declined"));
                return ElicitResponse::Decline;
            }
        };
        ui.order(&mut form);
        if let Err(why) = form.check_given(&self.answers.fields) {
            // A usage mistake, not an answer: nothing is sent, the command stops with exit 2.
            ui.stop(Stop::Usage(why));
            return left_unanswered().await;
        }
        if self.answers.given || !ui.interactive {
            if !self.answers.given {
                ui.say(&format!(
                    "  no terminal to ask at and no --answers: declined (answer with --answers '{}')",
                    example_answers(&form)
                ));
                return ElicitResponse::Decline;
            }
            // --answers wins; on a terminal, what it leaves open is asked.
            if !ui.interactive {
                return match form.answer_from(&self.answers.fields) {
                    Ok(content) => {
                        ui.say(&format!(
                            "  answered from --answers: {}",
                            Value::Object(content.clone())
                        ));
                        ElicitResponse::Accept(content)
                    }
                    Err(why) => {
                        ui.say(&format!("  {why} (and no terminal to ask at): declined"));
                        ElicitResponse::Decline
                    }
                };
            }
        }
        let given = self.answers.fields.clone();
        let result = ui.prompt(move || ask_form(&form, &given)).await;
        match result {
            Ok(Some(content)) => ElicitResponse::Accept(content),
            Ok(None) => {
                eprintln!("  declined");
                ElicitResponse::Decline
            }
            Err(e) if is_interrupt(&e) => left_unanswered().await,
            Err(e) => {
                eprintln!("  cancelled ({e})");
                ElicitResponse::Cancel
            }
        }
    }

    async fn sample(&self, request: SamplingRequest) -> SamplingResponse {
        let ui = &self.ui;
        let _open = ui.question();
        ui.say("? The server asks for a completion from your model:");
        if let Some(system) = request.system_prompt() {
            ui.say(&format!("  system: {system}"));
        }
        for line in request.text().lines() {
            ui.say(&format!("  {line}"));
        }
        if let Some(max) = request.max_tokens() {
            ui.say(&format!("  (at most {max} tokens)"));
        }
        if self.answers.refuse.is_some() {
            ui.say("  (--answers \"@action\" refuses it)");
            return SamplingResponse::Decline;
        }
        if let Some(reply) = &self.answers.sampling {
            ui.say(&format!("  answered from --answers: {reply}"));
            return SamplingResponse::text(HUMAN_MODEL, reply.clone());
        }
        if !ui.interactive {
            ui.say("  no terminal to ask at and no --answers \"@sampling\": declined");
            return SamplingResponse::Decline;
        }
        let reply = ui
            .prompt(|| {
                read_line(
                    "Reply as the model (Esc or an empty reply declines)",
                    None,
                    |_| Ok(()),
                )
            })
            .await;
        match reply {
            Ok(Some(text)) if !text.trim().is_empty() => SamplingResponse::text(HUMAN_MODEL, text),
            Ok(_) => {
                eprintln!("  declined");
                SamplingResponse::Decline
            }
            Err(e) if is_interrupt(&e) => left_unanswered().await,
            Err(e) => {
                eprintln!("  declined ({e})");
                SamplingResponse::Decline
            }
        }
    }

    async fn roots(&self, _request: RootsRequest) -> Vec<Root> {
        // The directory the command runs in.
        std::env::current_dir()
            .ok()
            .and_then(|dir| {
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                Some(Root {
                    uri: format!("file://{}", dir.to_str()?),
                    name,
                })
            })
            .into_iter()
            .collect()
    }
}

impl CliHandler {
    async fn elicit_url(&self, request: &ElicitRequest) -> ElicitResponse {
        let url = request.url.clone().unwrap_or_default();
        self.ui.say(&format!("  open {url}"));
        if !self.ui.interactive {
            if self.answers.given {
                self.ui
                    .say("  accepted (--answers given; the page is left to you)");
                return ElicitResponse::Accept(Map::new());
            }
            self.ui
                .say("  no terminal to ask at and no --answers: declined");
            return ElicitResponse::Decline;
        }
        let done = self
            .ui
            .prompt(|| {
                Confirm::with_theme(&ColorfulTheme::default())
                    .with_prompt("Done on that page?")
                    .default(true)
                    .interact_opt()
                    .map_err(io_error)
            })
            .await;
        match done {
            Ok(Some(true)) => ElicitResponse::Accept(Map::new()),
            Ok(_) => ElicitResponse::Decline,
            Err(_) => ElicitResponse::Cancel,
        }
    }
}

fn refused(r: Refusal) -> ElicitResponse {
    match r {
        Refusal::Decline => ElicitResponse::Decline,
        Refusal::Cancel => ElicitResponse::Cancel,
    }
}

/// `{"confirm": true}`-like text built from the form (its fields in its order), for the "how to
/// answer" hint.
fn example_answers(form: &Form) -> String {
    let mut ex = Vec::new();
    for f in &form.fields {
        let v = f.default.clone().unwrap_or_else(|| match &f.kind {
            Kind::Boolean => Value::Bool(true),
            Kind::Integer { .. } | Kind::Number { .. } => Value::from(1),
            Kind::Choice(o) => {
                Value::String(o.first().map(|c| c.value.clone()).unwrap_or_default())
            }
            Kind::MultiChoice { options, .. } => Value::Array(
                options
                    .iter()
                    .take(1)
                    .map(|c| Value::String(c.value.clone()))
                    .collect(),
            ),
            Kind::Text { .. } => Value::String("...".into()),
        });
        ex.push(format!("{}:{v}", Value::String(f.name.clone())));
    }
    format!("{{{}}}", ex.join(","))
}

#[cfg(test)]
mod tests;
