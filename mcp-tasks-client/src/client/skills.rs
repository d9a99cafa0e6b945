//! Skills (the extension `io.modelcontextprotocol/skills`, SEP-2640) from the client's side:
//! list them (`skills/list`, every page), get one entry (`skills/get`), load a skill (read its
//! `SKILL.md`) and read its other files, each checked against the entry before it is handed
//! over: its size, its `sha256:` digest, and for `SKILL.md` its frontmatter, field by field.
//! Content that fails a check is never returned: the error says which file and why.
//!
//! Nothing is fetched ahead of need: listing reads no file, loading reads `SKILL.md` only, and a
//! supporting file is read when [`Client::read_skill_file`] asks for it.

use super::Client;
use crate::error::Error;
use mcp_tasks_runtime::protocol::skill::{
    MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SKILLS_EXTENSION, SkillEntry, SkillFiles, digest,
    parse_frontmatter, skill_name_of,
};
use serde_json::{Value, json};

impl Client {
    /// Whether the server declared the skills extension (`capabilities.extensions`).
    pub fn serves_skills(&self) -> bool {
        self.server()
            .capabilities
            .get("extensions")
            .and_then(|e| e.get(SKILLS_EXTENSION))
            .is_some()
    }

    /// Every skill the server lists (all pages of `skills/list`). Reads no skill file.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, Error> {
        self.list_all("skills/list", "skills").await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`). A URI that is no
    /// skill's is [`Error::Rpc`] with `-32602`.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        let method = "skills/get";
        let mut result = self.inner.call(method, json!({ "uri": uri })).await?;
        let skill = result.get_mut("skill").map(Value::take).unwrap_or_default();
        serde_json::from_value(skill).map_err(|e| Error::invalid(method, format!("`skill`: {e}")))
    }

    /// Loads a skill: checks its entry (its name is its URI's last folder, it is within the
    /// limits of 512 files and 16 MiB), reads its `SKILL.md`, and checks the text against the
    /// entry (size and digest, unless its files are `"dynamic"`; its frontmatter, field by
    /// field). Returns the text; any mismatch is [`Error::SkillVerification`] and the text is
    /// not returned.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<String, Error> {
        check_entry(entry)?;
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let fail = |reason: String| Error::SkillVerification {
            uri: entry.uri.clone(),
            reason,
        };
        let text = String::from_utf8(bytes).map_err(|_| fail("it is not UTF-8 text".into()))?;
        let frontmatter = parse_frontmatter(&text).map_err(fail)?;
        let keys = frontmatter.keys().chain(entry.frontmatter.keys());
        for key in keys {
            let (file, listed) = (frontmatter.get(key), entry.frontmatter.get(key));
            if file != listed {
                let show = |v: Option<&Value>| v.map_or("nothing".to_owned(), Value::to_string);
                return Err(fail(format!(
                    "its frontmatter `{key}` is {} but the entry says {}",
                    show(file),
                    show(listed)
                )));
            }
        }
        Ok(text)
    }

    /// Reads one file of a skill (`SKILL.md` or a supporting file) and checks it against the
    /// entry: a file the entry does not list is refused unread, and one whose size or digest
    /// differs from the entry's is [`Error::SkillVerification`]. For an entry whose files are
    /// `"dynamic"`, no check is possible: the bytes come as read.
    pub async fn read_skill_file(&self, entry: &SkillEntry, uri: &str) -> Result<Vec<u8>, Error> {
        let fail = |reason: String| Error::SkillVerification {
            uri: uri.to_owned(),
            reason,
        };
        let listed = match &entry.resources {
            SkillFiles::Dynamic => None,
            SkillFiles::Listed(_) => Some(entry.file(uri).ok_or_else(|| {
                fail(format!(
                    "the entry of {} does not list this file",
                    entry.uri
                ))
            })?),
        };
        let read = self.read_resource(uri).await?;
        let content = read
            .contents
            .iter()
            .find(|c| c.uri == uri)
            .or(read.contents.first())
            .ok_or_else(|| fail("the read returned no contents".into()))?;
        let bytes = content.data.bytes().to_vec();
        if let Some(listed) = listed {
            if bytes.len() as u64 != listed.size {
                return Err(fail(format!(
                    "it has {} bytes but the entry says {}",
                    bytes.len(),
                    listed.size
                )));
            }
            let got = digest(&bytes);
            if got != listed.digest {
                return Err(fail(format!(
                    "its digest is {got} but the entry says {}",
                    listed.digest
                )));
            }
        }
        Ok(bytes)
    }
}

/// What an entry must be before any of its files is read.
fn check_entry(entry: &SkillEntry) -> Result<(), Error> {
    let fail = |reason: String| {
        Err(Error::SkillVerification {
            uri: entry.uri.clone(),
            reason,
        })
    };
    let Some(name) = skill_name_of(&entry.uri) else {
        return fail("a skill's URI ends in /<name>/SKILL.md".into());
    };
    if entry.name() != Some(name) {
        return fail(format!(
            "the entry's frontmatter `name` is {:?}, not the URI's `{name}`",
            entry.name()
        ));
    }
    if let SkillFiles::Listed(files) = &entry.resources {
        let total: u64 = files.iter().map(|f| f.size).sum();
        if files.len() > MAX_FILES_PER_SKILL || total > MAX_BYTES_PER_SKILL {
            return fail(format!(
                "the skill has {} files of {total} bytes, over the limits (512 files, 16 MiB)",
                files.len()
            ));
        }
        if entry.file(&entry.uri).is_none() {
            return fail("the entry does not list its own SKILL.md".into());
        }
    }
    Ok(())
}
