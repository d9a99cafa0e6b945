//! The commands for what a server offers besides tools: `resources`, `read`, `prompts`, `prompt`
//! and `complete`. Errors are exit 2, as for `call`; a usage mistake the prompt's listing reveals
//! (an unknown prompt, a missing or unknown argument) is exit 2 before `prompts/get` is sent.

use crate::args::ArgSpec;
use crate::out::{out, outln, write_bytes};
use crate::outcome::{Outcome, timeout_hint};
use mcp_tasks_client::{
    Client, CompletionRef, Content, Error, GetPromptResult, ListedPrompt, ResourceContents,
    ResourceData,
};
use serde_json::{Map, Value, json};
use std::io::IsTerminal;
use std::path::Path;

/// An error of a request: said on stderr, exit 2.
fn failed(e: &Error) -> Outcome {
    eprintln!("mcp-tasks: {e}{}", timeout_hint(e));
    Outcome::Failure
}

/// An error of a request for a feature the server may not offer (`capability`: `resources`,
/// `prompts`, `completions`): a server without the capability that answers "method not found" is
/// said to offer none; anything else as [`failed`] says it.
fn failed_for(client: &Client, e: &Error, capability: &str) -> Outcome {
    let not_found = e.rpc_error().is_some_and(|r| r.code == -32601);
    if not_found && client.server().capabilities.get(capability).is_none() {
        eprintln!(
            "mcp-tasks: the server offers no {capability} (its capabilities have no \
             `{capability}`): {e}"
        );
        return Outcome::Failure;
    }
    failed(e)
}

/// The first line of a description, for tables.
fn first_line(text: Option<&str>) -> &str {
    text.and_then(|d| d.lines().next()).unwrap_or("")
}

/// `resources`: the fixed resources, then the templates, as two tables (or the JSON of both).
pub async fn resources(client: &Client, json: bool) -> Outcome {
    let resources = match client.list_resources().await {
        Ok(r) => r,
        Err(e) => return failed_for(client, &e, "resources"),
    };
    let templates = match client.list_resource_templates().await {
        Ok(t) => t,
        Err(e) => return failed_for(client, &e, "resources"),
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(
                &json!({ "resources": resources, "resourceTemplates": templates })
            )
            .expect("JSON")
        );
        return Outcome::Success;
    }
    if resources.is_empty() {
        eprintln!("(no resources)");
    } else {
        let width = resources
            .iter()
            .map(|r| r.uri.len())
            .max()
            .unwrap_or(0)
            .max(3);
        let mime = |m: &Option<String>| m.clone().unwrap_or_else(|| "-".into());
        let mwidth = resources
            .iter()
            .map(|r| mime(&r.mime_type).len())
            .max()
            .unwrap_or(0)
            .max(4);
        outln!("{:width$}  {:mwidth$}  DESCRIPTION", "URI", "MIME");
        for r in &resources {
            let what = first_line(r.description.as_deref().or(r.title.as_deref()));
            let what = if what.is_empty() { &r.name } else { what };
            outln!("{:width$}  {:mwidth$}  {what}", r.uri, mime(&r.mime_type));
        }
    }
    if !templates.is_empty() {
        if !resources.is_empty() {
            outln!();
        }
        let width = templates
            .iter()
            .map(|t| t.uri_template.len())
            .max()
            .unwrap_or(0)
            .max(8);
        let mime = |m: &Option<String>| m.clone().unwrap_or_else(|| "-".into());
        let mwidth = templates
            .iter()
            .map(|t| mime(&t.mime_type).len())
            .max()
            .unwrap_or(0)
            .max(4);
        outln!("{:width$}  {:mwidth$}  DESCRIPTION", "TEMPLATE", "MIME");
        for t in &templates {
            let what = first_line(t.description.as_deref().or(t.title.as_deref()));
            let what = if what.is_empty() { &t.name } else { what };
            outln!(
                "{:width$}  {:mwidth$}  {what}",
                t.uri_template,
                mime(&t.mime_type)
            );
        }
        eprintln!("(a template's resources are read by their URI: mcp-tasks read URI ...)");
    }
    Outcome::Success
}

/// `read URI`: text to stdout; bytes to stdout when it is not a terminal, else a line saying
/// what they are and how to save them; everything to `--output FILE` when given.
pub async fn read(client: &Client, uri: &str, output: Option<&Path>, json: bool) -> Outcome {
    let result = match client.read_resource(uri).await {
        Ok(r) => r,
        Err(Error::ResourceNotFound { uri, error }) => {
            eprintln!(
                "mcp-tasks: the server has no resource {uri} ({}: {}); `mcp-tasks resources` lists \
                 its resources and templates",
                error.code, error.message
            );
            return Outcome::Failure;
        }
        Err(e) => return failed_for(client, &e, "resources"),
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&result.raw).expect("JSON")
        );
        return Outcome::Success;
    }
    if result.contents.is_empty() {
        eprintln!("(the resource {uri} has no contents)");
        return Outcome::Success;
    }
    if let Some(path) = output {
        let bytes: Vec<u8> = result
            .contents
            .iter()
            .flat_map(|c| c.data.bytes().iter().copied())
            .collect();
        return match std::fs::write(path, &bytes) {
            Ok(()) => {
                eprintln!("wrote {} bytes to {}", bytes.len(), path.display());
                Outcome::Success
            }
            Err(e) => {
                eprintln!(
                    "mcp-tasks: --output {}: cannot write it: {e}",
                    path.display()
                );
                Outcome::Failure
            }
        };
    }
    let terminal = std::io::stdout().is_terminal();
    let several = result.contents.len() > 1;
    for c in &result.contents {
        let mime = c.mime_type.as_deref().unwrap_or("no MIME type");
        if several {
            eprintln!("--- {} ({mime})", c.uri);
        }
        match &c.data {
            ResourceData::Text(text) => {
                write_bytes(text.as_bytes());
                if terminal && !text.ends_with('\n') {
                    write_bytes(b"\n");
                }
            }
            ResourceData::Blob(bytes) if !terminal => write_bytes(bytes),
            ResourceData::Blob(bytes) => {
                eprintln!(
                    "mcp-tasks: {} is {} bytes of {mime} (binary), not written to a terminal; \
                     save it with --output FILE, or redirect stdout (> FILE)",
                    c.uri,
                    bytes.len()
                );
            }
        }
    }
    Outcome::Success
}

/// `prompts`: each prompt, its arguments (`name*` required), and what it is for.
pub async fn prompts(client: &Client, json: bool) -> Outcome {
    let prompts = match client.list_prompts().await {
        Ok(p) => p,
        Err(e) => return failed_for(client, &e, "prompts"),
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "prompts": prompts })).expect("JSON")
        );
        return Outcome::Success;
    }
    if prompts.is_empty() {
        eprintln!("(no prompts)");
        return Outcome::Success;
    }
    let args = |p: &ListedPrompt| {
        p.arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("{}*", a.name)
                } else {
                    a.name.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let width = prompts
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let awidth = prompts
        .iter()
        .map(|p| args(p).len())
        .max()
        .unwrap_or(0)
        .max(9);
    outln!("{:width$}  {:awidth$}  DESCRIPTION", "PROMPT", "ARGUMENTS");
    for p in &prompts {
        let what = first_line(p.description.as_deref().or(p.title.as_deref()));
        outln!("{:width$}  {:awidth$}  {what}", p.name, args(p));
    }
    if prompts
        .iter()
        .any(|p| p.arguments.iter().any(|a| a.required))
    {
        eprintln!("(* required: mcp-tasks prompt NAME --args KEY=VALUE ...)");
    }
    Outcome::Success
}

/// The `--args` of a prompt, checked against its listing: every value a string, every name one it
/// takes, every required one given. `Err` says what is wrong and what the prompt takes.
pub fn prompt_arguments(
    prompt: &ListedPrompt,
    args: &ArgSpec,
) -> Result<Map<String, Value>, String> {
    let schema = json!({
        "properties": prompt
            .arguments
            .iter()
            .map(|a| (a.name.clone(), json!({ "type": "string" })))
            .collect::<Map<String, Value>>()
    });
    let values = args.resolve(Some(&schema))?;
    let takes = || {
        if prompt.arguments.is_empty() {
            "it takes no arguments".to_owned()
        } else {
            let names: Vec<String> = prompt
                .arguments
                .iter()
                .map(|a| {
                    if a.required {
                        format!("{} (required)", a.name)
                    } else {
                        a.name.clone()
                    }
                })
                .collect();
            format!("it takes {}", names.join(", "))
        }
    };
    for (key, value) in &values {
        if !prompt.arguments.iter().any(|a| &a.name == key) {
            return Err(format!(
                "the prompt `{}` has no argument `{key}`; {}",
                prompt.name,
                takes()
            ));
        }
        if !value.is_string() {
            return Err(format!(
                "--args: `{key}` must be a string (prompt arguments are strings); got {value}"
            ));
        }
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !values.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the prompt `{}` needs {}: give {} ({})",
            prompt.name,
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            missing
                .iter()
                .map(|m| format!("--args {m}=VALUE"))
                .collect::<Vec<_>>()
                .join(" "),
            takes()
        ));
    }
    Ok(values)
}

/// `prompt NAME`: the prompt's arguments checked against `prompts/list` (exit 2 before anything
/// is got when one is missing, unknown, or the prompt is), then `prompts/get`, its messages
/// printed (or its JSON).
pub async fn prompt(client: &Client, name: &str, args: &ArgSpec, json: bool) -> Outcome {
    let prompts = match client.list_prompts().await {
        Ok(p) => p,
        Err(e) if e.rpc_error().is_some_and(|r| r.code == -32601) => {
            return failed_for(client, &e, "prompts");
        }
        Err(e) => {
            eprintln!("mcp-tasks: prompts/list (to check the prompt's arguments) failed: {e}");
            return Outcome::Failure;
        }
    };
    let Some(info) = prompts.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        eprintln!(
            "mcp-tasks: the server has no prompt `{name}`; {}",
            if names.is_empty() {
                "it lists none".to_owned()
            } else {
                format!("its prompts are {}", names.join(", "))
            }
        );
        return Outcome::Failure;
    };
    let arguments = match prompt_arguments(info, args) {
        Ok(a) => a,
        Err(why) => {
            eprintln!("mcp-tasks: {why}");
            return Outcome::Failure;
        }
    };
    let result = match client.get_prompt(name, Value::Object(arguments)).await {
        Ok(r) => r,
        Err(e) => return failed(&e),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&result).expect("JSON"));
    } else {
        out!("{}", show_messages(&result));
    }
    Outcome::Success
}

/// A prompt's messages for people: each under its role, text as it is, anything else described
/// on one line (an embedded text resource with its text).
pub fn show_messages(result: &GetPromptResult) -> String {
    let mut out = String::new();
    if let Some(d) = &result.description {
        out.push_str(&format!("# {d}\n\n"));
    }
    for (i, m) in result.messages.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("[{}]\n", m.role));
        out.push_str(&show_content(&m.content));
        out.push('\n');
    }
    out
}

/// How many bytes a base64 text stands for.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    (data.len() / 4) * 3 - data.chars().rev().take_while(|&c| c == '=').count()
}

fn show_content(content: &Content) -> String {
    match content {
        Content::Text { text, .. } => text.clone(),
        Content::Image {
            data, mime_type, ..
        } => format!("[image: {} bytes of {mime_type}]", base64_len(data)),
        Content::Audio {
            data, mime_type, ..
        } => format!("[audio: {} bytes of {mime_type}]", base64_len(data)),
        Content::ResourceLink { uri, name, .. } => {
            format!("[resource link: {uri} ({name}); mcp-tasks read {uri} ...]")
        }
        Content::Resource { resource, .. } => match resource {
            ResourceContents::Text {
                uri,
                mime_type,
                text,
                ..
            } => format!(
                "[resource {uri}{}]\n{text}",
                mime_type
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            ResourceContents::Blob {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {} bytes of {}]",
                base64_len(blob),
                mime_type.as_deref().unwrap_or("binary")
            ),
        },
        #[allow(unreachable_patterns)]
        other => format!(
            "[{}]",
            serde_json::to_value(other)
                .map(|v| v["type"].to_string())
                .unwrap_or_default()
        ),
    }
}

/// `complete`: the suggestions, one per line (or the `completion` object as JSON).
pub async fn complete(
    client: &Client,
    reference: &CompletionRef,
    argument: &str,
    value: &str,
    context: &ArgSpec,
    json: bool,
) -> Outcome {
    // Every context value is a string, as completion context arguments are.
    let schema = json!({
        "properties": context
            .pairs
            .iter()
            .map(|(k, _)| (k.clone(), json!({ "type": "string" })))
            .collect::<Map<String, Value>>()
    });
    let context = match context.resolve(Some(&schema)).and_then(|values| {
        values
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(format!(
                    "--args: `{k}` must be a string (completion context values are strings); got {other}"
                )),
            })
            .collect::<Result<Vec<_>, _>>()
    }) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("mcp-tasks: {why}");
            return Outcome::Failure;
        }
    };
    let pairs: Vec<(&str, &str)> = context
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let completion = match client.complete(reference, argument, value, &pairs).await {
        Ok(c) => c,
        Err(e) => return failed_for(client, &e, "completions"),
    };
    if json {
        let mut out = json!({ "values": completion.values, "hasMore": completion.has_more });
        if let Some(total) = completion.total {
            out["total"] = Value::from(total);
        }
        outln!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
        return Outcome::Success;
    }
    for v in &completion.values {
        outln!("{v}");
    }
    if completion.values.is_empty() {
        eprintln!("(no suggestions)");
    } else if completion.has_more {
        match completion.total {
            Some(total) => eprintln!("({} of {total} shown)", completion.values.len()),
            None => eprintln!("(more than {} exist)", completion.values.len()),
        }
    }
    Outcome::Success
}

#[cfg(test)]
mod tests;
