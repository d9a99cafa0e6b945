//! `mcp-tasks skills list|get`: a server's skills (the extension `io.modelcontextprotocol/skills`,
//! SEP-2640). `list` reads no skill file; `get` loads one skill (its `SKILL.md`, checked against
//! its entry: size, digest, frontmatter) and prints it, or with `--file` one of its other files
//! (checked too). A file that fails its check is never printed: exit 2, naming the file and what
//! did not match.

use crate::out::outln;
use crate::outcome::{Outcome, timeout_hint};
use mcp_tasks_client::{Client, Error, SkillEntry, SkillFiles};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// `skills ...`, checked.
#[derive(Debug, Clone, PartialEq)]
pub enum SkillsCommand {
    List {
        json: bool,
    },
    Get {
        skill: String,
        file: Option<String>,
        output: Option<PathBuf>,
        json: bool,
    },
}

/// Runs `skills ...`.
pub async fn run(client: &Client, command: SkillsCommand) -> Outcome {
    let outcome = match command {
        SkillsCommand::List { json } => list(client, json).await,
        SkillsCommand::Get {
            skill,
            file,
            output,
            json,
        } => get(client, &skill, file.as_deref(), output.as_deref(), json).await,
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("mcp-tasks: {e}");
        Outcome::Failure
    })
}

async fn list(client: &Client, json: bool) -> Result<Outcome, String> {
    let skills = client.list_skills().await.map_err(|e| said(client, &e))?;
    if json {
        let text = serde_json::to_string_pretty(&skills).expect("JSON");
        outln!("{text}");
        return Ok(Outcome::Success);
    }
    if skills.is_empty() {
        eprintln!("(no skills)");
        return Ok(Outcome::Success);
    }
    let width = skills.iter().map(|s| s.uri.len()).max().unwrap_or(0);
    let nwidth = (skills.iter())
        .map(|s| s.name().unwrap_or("").len())
        .max()
        .unwrap_or(0)
        .max(4);
    outln!("{:nwidth$}  {:width$}  FILES  DESCRIPTION", "NAME", "URI");
    for skill in &skills {
        let files = match &skill.resources {
            SkillFiles::Listed(files) => files.len().to_string(),
            SkillFiles::Dynamic => "dynamic".into(),
        };
        let description = skill.description().unwrap_or("").lines().next();
        outln!(
            "{:nwidth$}  {:width$}  {files:>5}  {}",
            skill.name().unwrap_or(""),
            skill.uri,
            description.unwrap_or("")
        );
    }
    Ok(Outcome::Success)
}

async fn get(
    client: &Client,
    skill: &str,
    file: Option<&str>,
    output: Option<&std::path::Path>,
    json: bool,
) -> Result<Outcome, String> {
    let entry = find(client, skill).await?;
    let text = client
        .load_skill(&entry)
        .await
        .map_err(|e| said(client, &e))?;
    let bytes = match file {
        None if json => {
            let shown = json!({ "skill": entry, "text": text });
            outln!("{}", serde_json::to_string_pretty(&shown).expect("JSON"));
            return Ok(Outcome::Success);
        }
        None => text.into_bytes(),
        Some(file) => {
            let root = entry.uri.strip_suffix("/SKILL.md").unwrap_or(&entry.uri);
            let uri = if file.contains("://") {
                file.to_owned()
            } else {
                format!("{root}/{}", file.trim_start_matches("./"))
            };
            (client.read_skill_file(&entry, &uri).await).map_err(|e| said(client, &e))?
        }
    };
    match output {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write to stdout: {e}"))?;
        }
    }
    Ok(Outcome::Success)
}

/// The entry of `skill`: `skills/get` for a URI, else the listed skill of that name.
async fn find(client: &Client, skill: &str) -> Result<SkillEntry, String> {
    if skill.contains("://") {
        return client.get_skill(skill).await.map_err(|e| said(client, &e));
    }
    let listed = client.list_skills().await.map_err(|e| said(client, &e))?;
    let named: Vec<SkillEntry> = (listed.into_iter())
        .filter(|s| s.name() == Some(skill))
        .collect();
    match named.len() {
        0 => Err(format!(
            "the server lists no skill named `{skill}` (`mcp-tasks skills list` shows them)"
        )),
        1 => Ok(named.into_iter().next().expect("one")),
        _ => {
            let uris: Vec<&str> = named.iter().map(|s| s.uri.as_str()).collect();
            Err(format!(
                "{} skills are named `{skill}`; give one's URI: {}",
                uris.len(),
                uris.join(", ")
            ))
        }
    }
}

/// An error, as said on stderr; a server without the extension is said to have no skills.
fn said(client: &Client, e: &Error) -> String {
    let not_found = e.rpc_error().is_some_and(|r| r.code == -32601);
    if not_found && !client.serves_skills() {
        return format!(
            "the server offers no skills (it does not declare the skills extension): {e}"
        );
    }
    format!("{e}{}", timeout_hint(e))
}
