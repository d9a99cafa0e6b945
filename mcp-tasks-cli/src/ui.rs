//! What the user sees: the live progress line, the server's notifications, `--wire`, and the
//! hand-over of the terminal to a prompt. The questions themselves are `handler.rs` and `ask.rs`.
//!
//! Everything the user is shown goes to stderr; stdout is only for the result.

use crate::command::Shown;
use crate::form::Form;
use dialoguer::console::Term;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_tasks_client::{TaskSnapshot, WireDirection};
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

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
    /// stderr is a terminal that can redraw a line: a live progress line, else one line per
    /// change (a `TERM=dumb` terminal too, where the live line would not be drawn at all).
    term: bool,
    /// The progress line was removed for good ([`Ui::finish`]): a state that comes after it
    /// (the task's last, after a cancellation) is a plain line, not a new spinner left frozen
    /// on screen when the command exits.
    finished: AtomicBool,
    /// While a prompt owns the terminal: the lines to show once it is closed (nothing is
    /// printed into an open prompt; the progress line is cleared, not left frozen above it).
    held: Mutex<Option<Vec<String>>>,
    /// The method of the last request sent (to say what went unanswered).
    last_request: Mutex<Option<String>>,
    /// How many questions the server asked this command, and how many are open now.
    questions: (AtomicUsize, AtomicUsize),
}

/// A question being answered ([`Ui::question`]); closed when dropped.
pub struct OpenQuestion<'a>(&'a Ui);

impl Drop for OpenQuestion<'_> {
    fn drop(&mut self) {
        self.0.questions.1.fetch_sub(1, Ordering::SeqCst);
    }
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
    /// With no terminal, the task waits for an answer nothing here can give (the request's
    /// method, e.g. `sampling/createMessage`): the task is cancelled, exit 2.
    Unanswerable(String),
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
            term: std::io::stderr().is_terminal() && !dumb_terminal(),
            held: Mutex::new(None),
            last_request: Mutex::new(None),
            finished: AtomicBool::new(false),
            questions: (AtomicUsize::new(0), AtomicUsize::new(0)),
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
        if direction == WireDirection::Sent
            && let Ok(message) = serde_json::from_str::<Value>(text)
            && message.get("id").is_some()
            && let Some(method) = message["method"].as_str()
        {
            *self.last_request.lock().expect("request lock") = Some(method.to_owned());
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
        if tool.is_some() {
            // A call starts (again, after a wrong era): its line may be drawn.
            self.finished.store(false, Ordering::SeqCst);
        }
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
    pub fn order(&self, form: &mut Form) {
        let orders = self.schema_orders.lock().expect("orders lock");
        if let Some(order) = form.order_from(orders.iter().rev()).cloned() {
            drop(orders);
            form.reorder(&order);
        }
    }

    /// A question from the server reached this command: counted, and open until dropped.
    pub fn question(&self) -> OpenQuestion<'_> {
        self.questions.0.fetch_add(1, Ordering::SeqCst);
        self.questions.1.fetch_add(1, Ordering::SeqCst);
        OpenQuestion(self)
    }

    /// How many questions reached this command so far, and whether one is open now.
    pub fn questions(&self) -> (usize, bool) {
        (
            self.questions.0.load(Ordering::SeqCst),
            self.questions.1.load(Ordering::SeqCst) > 0,
        )
    }

    /// The method of the last request sent, if any.
    pub fn last_request(&self) -> Option<String> {
        self.last_request.lock().expect("request lock").clone()
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
        if !self.term || self.finished.load(Ordering::SeqCst) {
            self.say(&format!("task {}: {text}", s.task_id));
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
        self.finished.store(true, Ordering::SeqCst);
        if let Some(bar) = self.bar.lock().expect("bar lock").take() {
            bar.finish_and_clear();
        }
    }

    /// Runs a blocking prompt with the progress line out of the way.
    pub async fn prompt<T: Send + 'static>(
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
        if out.as_ref().is_err_and(is_interrupt) && std::io::stderr().is_terminal() {
            // Ctrl-C left the cursor on the prompt's line (and a menu's cursor hidden): what
            // follows starts on a line of its own.
            let term = Term::stderr();
            let _ = term.show_cursor();
            let _ = term.write_line("");
        }
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

/// `TERM=dumb` (or no `TERM`): a terminal that cannot redraw a line, where indicatif draws
/// nothing.
fn dumb_terminal() -> bool {
    std::env::var("TERM").map_or(true, |t| t == "dumb" || t.is_empty())
}

pub fn is_interrupt(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Interrupted
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

#[cfg(test)]
mod tests;
