//! Questions at the terminal: a form asked field by field, and one line typed at the prompt.

use crate::form::{Field, Form, Kind};
use dialoguer::console::{Key, Term};
use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, MultiSelect, Select};
use serde_json::{Map, Value};

pub fn io_error(e: dialoguer::Error) -> std::io::Error {
    match e {
        dialoguer::Error::IO(e) => e,
    }
}

/// Asks every field not in `given`; `None` when the user declines (Esc).
pub fn ask_form(
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
                    .with_prompt(format!("{prompt} (Space picks, Enter confirms)"))
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
/// Ctrl-U clears the line, Enter submits (an empty line takes `default`); `check` refuses a line
/// with a message shown under the prompt, which is then empty again. Ctrl-C is an `Interrupted`
/// error.
/// (dialoguer's `Input` has no way out but Ctrl-C.)
pub fn read_line(
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
                        // The refused answer is said under the prompt and taken out of it.
                        text.clear();
                        term.clear_line()?;
                        term.write_line(&format!("  ✘ {why}"))?;
                        term.write_str(&head)?;
                    }
                }
            }
            Key::Backspace if text.pop().is_some() => {
                term.clear_line()?;
                term.write_str(&format!("{head}{text}"))?;
            }
            // Ctrl-U: the whole line.
            Key::Char('\u{15}') => {
                text.clear();
                term.clear_line()?;
                term.write_str(&head)?;
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
