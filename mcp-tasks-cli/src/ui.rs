//! The terminal side: the live progress line, and the questions a tool asks (elicitation forms,
//! sampling requests) answered at the prompt or from `--answers`.
//!
//! Everything the user is shown goes to stderr; stdout is only for the result.

use crate::cli::{Answers, Refusal, Shown};
use crate::form::{Field, Form, Kind};
use dialoguer::console::{Key, Term};
use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, MultiSelect, Select};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_tasks_client::{
    ElicitRequest, ElicitResponse, InputCapabilities, InputHandler, Root, RootsRequest,
    SamplingRequest, SamplingResponse, TaskSnapshot, WireDirection,
};
use serde_json::{Map, Value};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// The model name a typed sampling reply is sent under.
const HUMAN_MODEL: &str = "mcp-tasks-cli (typed by a person)";

/// What the user sees, shared by the main flow and the input handler.
#[derive(Debug)]
pub struct Ui {
    /// Questions are asked at the prompt (stdin and stderr are terminals).
    pub interactive: bool,
    /// The progress line (a spinner, or a bar once the task reports a total).
    bar: Mutex<Option<ProgressBar>>,
    /// Only one question on screen at a time.
    asking: tokio::sync::Mutex<()>,
    /// Set when the command must stop before the call ends: Ctrl-C pressed while a prompt had
    /// the terminal (raw mode swallows the signal), or an `--answers` value that does not fit.
    stop: watch::Sender<Option<Stop>>,
    /// The property order of the latest `requestedSchema`s seen on the wire (newest last).
    schema_orders: Mutex<Vec<Vec<String>>>,
    /// What is shown besides questions and errors.
    shown: Shown,
    /// The tool of the inline call under way (its progress goes to the progress line), if any.
    inline: Mutex<Option<String>>,
    /// The last inline progress text shown (headless: one line per change).
    last_progress: Mutex<String>,
    /// stderr is a terminal: a live progress line, else one line per change.
    term: bool,
    /// While a prompt owns the terminal: the lines to show once it is closed (nothing is
    /// printed into an open prompt; the progress line is cleared, not left frozen above it).
    held: Mutex<Option<Vec<String>>>,
}

/// Why the command stops before the call ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C: the task is cancelled, exit 130.
    Interrupted,
    /// A usage mistake found only once the server asked (an `--answers` value that does not fit
    /// the question): the message; the task is cancelled, exit 2.
    Usage(String),
    /// `--task-timeout` ran out: the task is cancelled, exit 2.
    TimedOut(Duration),
}

impl Ui {
    pub fn new(shown: Shown) -> Arc<Ui> {
        Arc::new(Ui {
            interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
            asking: tokio::sync::Mutex::new(()),
            stop: watch::Sender::new(None),
            schema_orders: Mutex::new(Vec::new()),
            shown,
            inline: Mutex::new(None),
            last_progress: Mutex::new(String::new()),
            term: std::io::stderr().is_terminal(),
            held: Mutex::new(None),
        })
    }

    /// The progress line, saying `message`: a spinner on stderr (hidden when stderr is no
    /// terminal, or while a prompt is open). The message is set before the first frame is drawn
    /// (a frame without it flashed up first).
    fn new_bar(&self, message: String) -> ProgressBar {
        let prompting = self.held.lock().expect("held lock").is_some();
        let target = if prompting {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(None, target).with_message(message);
        bar.set_style(spinner_style());
        if !prompting {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        bar
    }

    /// A line that `--quiet` leaves out.
    pub fn info(&self, line: &str) {
        if !self.shown.quiet {
            self.say(line);
        }
    }

    /// One message on the wire: printed with `--wire` (`-->` sent, `<--` received); a received
    /// one is also read for what the parsed message loses (schema order), the server's log
    /// messages, and an inline call's progress.
    pub fn wire(&self, direction: WireDirection, text: &str) {
        if self.shown.wire {
            let arrow = match direction {
                WireDirection::Sent => "-->",
                WireDirection::Received => "<--",
            };
            self.say(&format!("{arrow} {}", text.trim_end()));
        }
        if direction == WireDirection::Received {
            self.received(text);
            if text.contains("\"notifications/")
                && let Ok(message) = serde_json::from_str::<Value>(text)
            {
                self.notification(&message);
            }
        }
    }

    fn notification(&self, message: &Value) {
        let params = &message["params"];
        match message["method"].as_str() {
            Some("notifications/message") if !self.shown.quiet => {
                let level = params["level"].as_str().unwrap_or("info");
                let serious = matches!(
                    level,
                    "warning" | "error" | "critical" | "alert" | "emergency"
                );
                if self.shown.verbose || serious {
                    self.say(&log_line(params));
                }
            }
            Some("notifications/progress") if !self.shown.quiet => {
                let Some(tool) = self.inline.lock().expect("inline lock").clone() else {
                    return;
                };
                let mut text = format!("{tool}:");
                if let Some(m) = params["message"].as_str() {
                    text.push_str(&format!(" {m}"));
                }
                let done = params["progress"].as_f64().unwrap_or(0.0);
                match params["total"].as_f64() {
                    Some(t) => text.push_str(&format!(" ({}/{})", number(done), number(t))),
                    // Without a total it is a count; a server's keepalive steps it by tiny
                    // fractions (to keep it increasing), which say nothing.
                    None if done.fract() == 0.0 => text.push_str(&format!(" ({done})")),
                    // Nothing to say: the line stays as it is (the spinner turns on).
                    None if params["message"].as_str().is_none() => return,
                    None => {}
                }
                self.inline_progress(text);
            }
            _ => {}
        }
    }

    /// An inline call starts (`Some(tool)`) or is over (`None`): while one is under way, its
    /// progress is shown (a spinner on a terminal, one line per change elsewhere).
    pub fn inline_call(&self, tool: Option<&str>) {
        *self.inline.lock().expect("inline lock") = tool.map(str::to_owned);
        if let Some(tool) = tool
            && !self.shown.quiet
        {
            let message = if self.term {
                format!("{tool}: calling")
            } else {
                String::new()
            };
            let mut slot = self.bar.lock().expect("bar lock");
            match slot.as_ref() {
                Some(bar) => bar.set_message(message),
                None => *slot = Some(self.new_bar(message)),
            }
        }
    }

    fn inline_progress(&self, text: String) {
        let mut slot = self.bar.lock().expect("bar lock");
        let bar = slot.get_or_insert_with(|| self.new_bar(String::new()));
        if !self.term {
            drop(slot);
            let mut last = self.last_progress.lock().expect("progress lock");
            if *last != text {
                eprintln!("{text}");
                *last = text;
            }
        } else {
            bar.set_message(text);
        }
    }

    /// Reads a message from the server as text, before the client parses it: remembers the
    /// property order of each `requestedSchema` in it (a parsed map forgets it).
    pub fn received(&self, text: &str) {
        let found = crate::form::schema_orders(text);
        if !found.is_empty() {
            let mut orders = self.schema_orders.lock().expect("orders lock");
            orders.extend(found);
            let excess = orders.len().saturating_sub(64);
            orders.drain(..excess);
        }
    }

    /// Puts a form's fields in its schema's order, as the server sent it.
    fn order(&self, form: &mut Form) {
        let orders = self.schema_orders.lock().expect("orders lock");
        if let Some(order) = form.order_from(orders.iter().rev()).cloned() {
            drop(orders);
            form.reorder(&order);
        }
    }

    /// Stops the command (the first reason wins).
    pub fn stop(&self, why: Stop) {
        self.stop.send_if_modified(|s| {
            if s.is_some() {
                return false;
            }
            *s = Some(why);
            true
        });
    }

    /// Resolves once [`stop`](Self::stop) was called.
    pub async fn stopped(&self) -> Stop {
        let mut rx = self.stop.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(s) => s.clone().expect("checked"),
            Err(_) => std::future::pending().await,
        }
    }

    /// A line for the user (stderr), above the progress line if there is one.
    pub fn say(&self, line: &str) {
        if let Some(held) = self.held.lock().expect("held lock").as_mut() {
            held.push(line.to_owned());
            return;
        }
        match self.bar.lock().expect("bar lock").as_ref() {
            Some(bar) if !bar.is_hidden() => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }

    /// Shows a task's state: on a terminal the live line, elsewhere one line per change.
    pub fn task_state(&self, s: &TaskSnapshot) {
        if self.shown.quiet {
            return;
        }
        let text = describe(s);
        if !self.term {
            eprintln!("task {}: {text}", s.task_id);
            return;
        }
        // While a prompt is open the line is hidden: it takes the change silently.
        let mut slot = self.bar.lock().expect("bar lock");
        let bar = slot.get_or_insert_with(|| self.new_bar(text.clone()));
        match s
            .progress
            .as_ref()
            .and_then(|p| p.total.map(|t| (p.progress, t)))
        {
            Some((done, total)) if total > 0.0 => {
                if bar.length().is_none() {
                    bar.set_style(bar_style());
                }
                // Whole units when the numbers are whole; else per mille of the total.
                let (pos, len) = if done.fract() == 0.0 && total.fract() == 0.0 {
                    (done as u64, total as u64)
                } else {
                    ((done / total * 1000.0) as u64, 1000)
                };
                bar.set_length(len);
                bar.set_position(pos.min(len));
            }
            _ => {}
        }
        bar.set_message(text);
    }

    /// Removes the progress line (before the result is printed).
    pub fn finish(&self) {
        if let Some(bar) = self.bar.lock().expect("bar lock").take() {
            bar.finish_and_clear();
        }
    }

    /// Runs a blocking prompt with the progress line out of the way.
    async fn prompt<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        let _turn = self.asking.lock().await;
        // One owner of the terminal at a time: hold other lines, hide and clear the progress
        // line (a hidden target alone leaves its last frame on screen), then ask.
        *self.held.lock().expect("held lock") = Some(Vec::new());
        let bar = self.bar.lock().expect("bar lock").clone();
        if let Some(bar) = &bar {
            bar.disable_steady_tick();
            bar.set_draw_target(ProgressDrawTarget::hidden());
            if self.term {
                let _ = Term::stderr().clear_line();
            }
        }
        let out = tokio::task::spawn_blocking(f)
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
        let held = self.held.lock().expect("held lock").take();
        // The line as it is now (it may have been made while the prompt was open).
        let bar = self.bar.lock().expect("bar lock").clone();
        if let Some(bar) = &bar {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        for line in held.unwrap_or_default() {
            self.say(&line);
        }
        if out.as_ref().is_err_and(is_interrupt) {
            self.stop(Stop::Interrupted);
        }
        out
    }
}

fn is_interrupt(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Interrupted
}

/// Ctrl-C (or an `--answers` value that does not fit) at a question: the whole call is being cancelled (`tasks/cancel`), so the question gets
/// no answer at all (an answer could end the task some other way first). The client drops this
/// future once it sees the task end.
async fn left_unanswered<T>() -> T {
    std::future::pending().await
}

/// `server warning (db): disk almost full` for a `notifications/message`.
fn log_line(params: &Value) -> String {
    let level = params["level"].as_str().unwrap_or("info");
    let data = match &params["data"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match params["logger"].as_str() {
        Some(logger) => format!("server {level} ({logger}): {data}"),
        None => format!("server {level}: {data}"),
    }
}

/// A progress number: whole ones as they are, others to two decimals at most.
fn number(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{n}")
    } else {
        let text = format!("{n:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("a valid template")
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{bar:30}] {percent:>3}% {msg} [{elapsed}]")
        .expect("a valid template")
        .progress_chars("=> ")
}

/// `working: Fetching sources (3/10)`.
pub fn describe(s: &TaskSnapshot) -> String {
    let mut text = s.status.as_str().replace('_', " ");
    if let Some(m) = s.status_message.as_deref().filter(|m| !m.is_empty()) {
        text.push_str(": ");
        text.push_str(m);
    }
    if let Some(p) = &s.progress {
        if let Some(m) = p
            .message
            .as_deref()
            .filter(|m| Some(*m) != s.status_message.as_deref())
        {
            text.push_str(" - ");
            text.push_str(m);
        }
        match p.total {
            Some(t) => text.push_str(&format!(" ({}/{})", p.progress, t)),
            None => text.push_str(&format!(" ({})", p.progress)),
        }
    }
    text
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

fn io_error(e: dialoguer::Error) -> std::io::Error {
    match e {
        dialoguer::Error::IO(e) => e,
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

/// Asks every field not in `given`; `None` when the user declines (Esc).
fn ask_form(
    form: &Form,
    given: &Map<String, Value>,
) -> std::io::Result<Option<Map<String, Value>>> {
    eprintln!("  (Esc declines the question)");
    let mut out = Map::new();
    for field in &form.fields {
        if let Some(v) = given.get(&field.name).and_then(|v| field.check(v).ok()) {
            eprintln!("  {}: {v} (from --answers)", field.label);
            out.insert(field.name.clone(), v);
            continue;
        }
        match ask_field(field)? {
            Asked::Value(v) => {
                out.insert(field.name.clone(), v);
            }
            Asked::Skip => {}
            Asked::Decline => return Ok(None),
        }
    }
    Ok(Some(out))
}

enum Asked {
    Value(Value),
    Skip,
    Decline,
}

fn ask_field(field: &Field) -> std::io::Result<Asked> {
    let theme = ColorfulTheme::default();
    let mut prompt = field.label.clone();
    if let Some(d) = &field.description
        && d != &field.label
    {
        prompt.push_str(&format!(" ({d})"));
    }
    if let Some(h) = field.hint() {
        prompt.push_str(&format!(" [{h}]"));
    }
    if !field.required {
        prompt.push_str(" (optional)");
    }
    let got = match &field.kind {
        Kind::Boolean => {
            let mut c = Confirm::with_theme(&theme).with_prompt(prompt);
            if let Some(Value::Bool(d)) = field.default {
                c = c.default(d);
            }
            c.interact_opt().map_err(io_error)?.map(Value::Bool)
        }
        Kind::Choice(options) => {
            let labels: Vec<&str> = options.iter().map(|c| c.label.as_str()).collect();
            let default = field
                .default
                .as_ref()
                .and_then(|d| {
                    options
                        .iter()
                        .position(|c| Some(c.value.as_str()) == d.as_str())
                })
                .unwrap_or(0);
            Select::with_theme(&theme)
                .with_prompt(prompt)
                .items(&labels)
                .default(default)
                .interact_opt()
                .map_err(io_error)?
                .map(|i| Value::String(options[i].value.clone()))
        }
        Kind::MultiChoice { options, .. } => {
            let labels: Vec<&str> = options.iter().map(|c| c.label.as_str()).collect();
            let chosen: Vec<bool> = options
                .iter()
                .map(|c| {
                    field
                        .default
                        .as_ref()
                        .and_then(Value::as_array)
                        .is_some_and(|d| d.iter().any(|v| v.as_str() == Some(&c.value)))
                })
                .collect();
            loop {
                let picked = MultiSelect::with_theme(&theme)
                    .with_prompt(prompt.clone())
                    .items(&labels)
                    .defaults(&chosen)
                    .interact_opt()
                    .map_err(io_error)?;
                let Some(picked) = picked else { break None };
                let v = Value::Array(
                    picked
                        .iter()
                        .map(|&i| Value::String(options[i].value.clone()))
                        .collect(),
                );
                match field.check(&v) {
                    Ok(v) => break Some(v),
                    Err(e) => eprintln!("  {e}"),
                }
            }
        }
        Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. } => {
            let default = field.default.as_ref().map(|d| match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let required = field.required;
            let text = read_line(&prompt, default.as_deref(), |s| {
                if s.is_empty() && !required {
                    return Ok(());
                }
                if s.is_empty() {
                    return Err("an answer is required (Esc declines)".into());
                }
                field.parse_text(s).map(|_| ())
            })?;
            match text {
                None => None,
                Some(text) if text.is_empty() && !field.required => return Ok(Asked::Skip),
                Some(text) => Some(field.parse_text(&text).map_err(std::io::Error::other)?),
            }
        }
    };
    Ok(got.map_or(Asked::Decline, Asked::Value))
}

/// One line typed at the prompt, on stderr's terminal: `None` when Esc declines. Backspace edits,
/// Enter submits (an empty line takes `default`); `check` refuses a line with a message shown
/// under the prompt, and the line is kept for editing. Ctrl-C is an `Interrupted` error.
/// (dialoguer's `Input` has no way out but Ctrl-C.)
fn read_line(
    prompt: &str,
    default: Option<&str>,
    check: impl Fn(&str) -> Result<(), String>,
) -> std::io::Result<Option<String>> {
    let term = Term::stderr();
    let head = match default {
        Some(d) => format!("? {prompt} [{d}] › "),
        None => format!("? {prompt} › "),
    };
    let mut text = String::new();
    term.write_str(&head)?;
    loop {
        match term.read_key()? {
            Key::Escape => {
                term.write_line("")?;
                return Ok(None);
            }
            Key::Enter => {
                let line = match (text.is_empty(), default) {
                    (true, Some(d)) => d.to_owned(),
                    _ => text.clone(),
                };
                match check(&line) {
                    Ok(()) => {
                        term.write_line("")?;
                        return Ok(Some(line));
                    }
                    Err(why) => {
                        term.clear_line()?;
                        term.write_line(&format!("  ✘ {why}"))?;
                        term.write_str(&format!("{head}{text}"))?;
                    }
                }
            }
            Key::Backspace if text.pop().is_some() => {
                term.clear_line()?;
                term.write_str(&format!("{head}{text}"))?;
            }
            Key::Char(c) if !c.is_control() => {
                text.push(c);
                term.write_str(c.encode_utf8(&mut [0; 4]))?;
            }
            Key::CtrlC => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "read interrupted",
                ));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
