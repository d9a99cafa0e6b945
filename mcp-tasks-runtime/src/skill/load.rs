//! Reading a [`Skills`] source into skills: every file read once, each folder holding a
//! `SKILL.md` made a skill, its frontmatter, name, paths and size checked. What is wrong is a
//! [`SkillProblem`] naming the file and the rule, reported by `build()` with the rest.

use super::{Skills, Source};
use crate::protocol::skill::{
    MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SKILL_SCHEME, SkillEntry, SkillFile, SkillFiles,
    check_skill_name, digest, parse_frontmatter,
};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// A skill file that cannot be served as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillProblem {
    /// The file (or folder): its path on disk, or its embedded path.
    pub(crate) file: String,
    /// The rule it breaks.
    pub(crate) rule: String,
}

/// One file of a source: its path below the source's root (`/`-separated), its bytes, and how
/// to name it in a message.
pub(super) struct SourceFile {
    pub(super) path: String,
    pub(super) bytes: Arc<[u8]>,
    pub(super) shown: String,
}

/// A skill read from a source: its entry (as `skills/list` gives it) and its files.
pub(super) struct LoadedSkill {
    pub(super) entry: SkillEntry,
    pub(super) files: Vec<LoadedFile>,
}

/// One file of a [`LoadedSkill`].
pub(super) struct LoadedFile {
    pub(super) uri: String,
    pub(super) bytes: Arc<[u8]>,
    pub(super) shown: String,
}

/// Every file of `skills`' source, in path order.
pub(super) fn read(skills: &Skills, problems: &mut Vec<SkillProblem>) -> Vec<SourceFile> {
    let mut files = Vec::new();
    match &skills.source {
        Source::Dir(root) => walk(root, "", &mut files, problems),
        Source::Embedded(list) => {
            for (path, bytes) in *list {
                let shown = format!("{path} (embedded)");
                match check_path(path) {
                    Ok(()) => files.push(SourceFile {
                        path: (*path).to_owned(),
                        bytes: Arc::from(*bytes),
                        shown,
                    }),
                    Err(rule) => problems.push(SkillProblem { file: shown, rule }),
                }
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for pair in files.windows(2) {
        if pair[0].path == pair[1].path {
            problems.push(SkillProblem {
                file: pair[1].shown.clone(),
                rule: "a path is given twice".to_owned(),
            });
        }
    }
    files
}

fn walk(dir: &Path, prefix: &str, files: &mut Vec<SourceFile>, problems: &mut Vec<SkillProblem>) {
    let problem = |path: &Path, rule: String| SkillProblem {
        file: path.display().to_string(),
        rule,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return problems.push(problem(dir, format!("the folder cannot be read: {e}"))),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                return problems.push(problem(dir, format!("the folder cannot be read: {e}")));
            }
        };
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            problems.push(problem(&path, "a skill file's name is UTF-8".to_owned()));
            continue;
        };
        let relative = format!("{prefix}{name}");
        // Follows links, as reading the file would.
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, &format!("{relative}/"), files, problems),
            Ok(_) => match std::fs::read(&path) {
                Ok(bytes) => files.push(SourceFile {
                    path: relative,
                    bytes: bytes.into(),
                    shown: path.display().to_string(),
                }),
                Err(e) => problems.push(problem(&path, format!("the file cannot be read: {e}"))),
            },
            Err(e) => problems.push(problem(&path, format!("the file cannot be read: {e}"))),
        }
    }
}

/// An embedded path is relative, `/`-separated, with no empty, `.` or `..` segment.
fn check_path(path: &str) -> Result<(), String> {
    let bad = path.is_empty()
        || path.contains('\\')
        || path
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..");
    if bad {
        return Err(
            "an embedded skill path is relative and `/`-separated, with no empty, `.` or `..` part"
                .to_owned(),
        );
    }
    Ok(())
}

/// The skills among `files`: one for each `SKILL.md` below the root, with every file under its
/// folder (a nested skill's files are its enclosing skill's files too, as SEP-2640 says).
pub(super) fn skills(files: &[SourceFile], problems: &mut Vec<SkillProblem>) -> Vec<LoadedSkill> {
    let mut skills = Vec::new();
    for file in files {
        let Some(skill_path) = file.path.strip_suffix("SKILL.md") else {
            continue;
        };
        let Some(skill_path) = skill_path.strip_suffix('/') else {
            if skill_path.is_empty() {
                problems.push(SkillProblem {
                    file: file.shown.clone(),
                    rule: "a SKILL.md is in a folder named after its skill, not at the root of \
                           the skills folder"
                        .to_owned(),
                });
            }
            continue;
        };
        if let Some(skill) = skill(skill_path, file, files, problems) {
            skills.push(skill);
        }
    }
    skills
}

fn skill(
    skill_path: &str,
    skill_md: &SourceFile,
    files: &[SourceFile],
    problems: &mut Vec<SkillProblem>,
) -> Option<LoadedSkill> {
    let before = problems.len();
    let mut fail = |rule: String| {
        problems.push(SkillProblem {
            file: skill_md.shown.clone(),
            rule,
        })
    };
    let frontmatter = match std::str::from_utf8(&skill_md.bytes) {
        Ok(text) => parse_frontmatter(text).map_err(|why| format!("SKILL.md: {why}")),
        Err(_) => Err("a SKILL.md is UTF-8 text".to_owned()),
    };
    let frontmatter = match frontmatter {
        Ok(frontmatter) => frontmatter,
        Err(rule) => {
            fail(rule);
            return None;
        }
    };
    let folder = skill_path.rsplit('/').next().unwrap_or(skill_path);
    match frontmatter.get("name") {
        Some(Value::String(name)) => {
            if let Err(rule) = check_skill_name(name) {
                fail(format!("frontmatter `name`: {rule}"));
            } else if name != folder {
                fail(format!(
                    "frontmatter `name` equals the skill's folder name (the URI's last segment): \
                     `{name}` is in the folder `{folder}`"
                ));
            }
        }
        Some(_) => fail("frontmatter `name` is a string".to_owned()),
        None => fail("the frontmatter has a `name`".to_owned()),
    }
    match frontmatter.get("description") {
        Some(Value::String(d)) if d.trim().is_empty() => {
            fail("frontmatter `description` is not empty".to_owned())
        }
        Some(Value::String(d)) if d.chars().count() > 1024 => fail(format!(
            "frontmatter `description` has at most 1024 characters (it has {})",
            d.chars().count()
        )),
        Some(Value::String(_)) => {}
        Some(_) => fail("frontmatter `description` is a string".to_owned()),
        None => fail("the frontmatter has a `description`".to_owned()),
    }
    if let Some(Value::Object(metadata)) = frontmatter.get("metadata")
        && let Some(key) = metadata
            .keys()
            .find(|k| k.starts_with("io.modelcontextprotocol/"))
    {
        fail(format!(
            "frontmatter `metadata` keys under `io.modelcontextprotocol/` are reserved for MCP \
             extensions (`{key}`)"
        ));
    }
    let authority = skill_path.split('/').next().unwrap_or_default();
    if let Some(c) = authority.chars().find(|c| !is_reg_name_char(*c)) {
        fail(format!(
            "the first folder of a skill path is a URI authority (RFC 3986 reg-name): `{authority}` has `{c}`"
        ));
    }
    let uri = format!("{SKILL_SCHEME}{skill_path}/SKILL.md");
    let under = format!("{skill_path}/");
    let mut loaded: Vec<LoadedFile> = vec![LoadedFile {
        uri: uri.clone(),
        bytes: skill_md.bytes.clone(),
        shown: skill_md.shown.clone(),
    }];
    loaded.extend(
        files
            .iter()
            .filter(|f| f.path.starts_with(&under) && !std::ptr::eq(*f, skill_md))
            .map(|f| LoadedFile {
                uri: format!("{SKILL_SCHEME}{}", f.path),
                bytes: f.bytes.clone(),
                shown: f.shown.clone(),
            }),
    );
    let total: u64 = loaded.iter().map(|f| f.bytes.len() as u64).sum();
    if loaded.len() > MAX_FILES_PER_SKILL {
        fail(format!(
            "a skill has at most {MAX_FILES_PER_SKILL} files (this one has {})",
            loaded.len()
        ));
    }
    if total > MAX_BYTES_PER_SKILL {
        fail(format!(
            "a skill's files add up to at most 16 MiB ({MAX_BYTES_PER_SKILL} bytes; this one's to {total})"
        ));
    }
    if problems.len() > before {
        return None;
    }
    let resources = loaded
        .iter()
        .map(|f| SkillFile {
            uri: f.uri.clone(),
            digest: digest(&f.bytes),
            size: f.bytes.len() as u64,
        })
        .collect();
    Some(LoadedSkill {
        entry: SkillEntry {
            uri,
            frontmatter,
            resources: SkillFiles::Listed(resources),
        },
        files: loaded,
    })
}

/// RFC 3986 `reg-name` characters (unreserved and sub-delims; no percent-encoding in a path).
fn is_reg_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=".contains(c)
}
