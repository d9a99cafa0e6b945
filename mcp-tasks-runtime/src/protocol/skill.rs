//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the wire: a skill's entry
//! as `skills/list` and `skills/get` carry it, the `sha256:` digests of its files, and the
//! `SKILL.md` frontmatter read as the JSON object an entry carries. The server builds entries
//! from these (`crate::skill`), and a client verifies what it reads against them.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use yaml_rust2::{Yaml, YamlLoader};

/// The id of the skills extension.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The scheme a server serves skills under.
pub const SKILL_SCHEME: &str = "skill://";

/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// At most this many files per skill (`SKILL.md` included).
pub const MAX_FILES_PER_SKILL: usize = 512;

/// At most this many bytes per skill, summed over its files (16 MiB).
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;

/// One skill, as `skills/list` lists it and `skills/get` returns it.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct SkillEntry {
    /// The URI of its `SKILL.md`, e.g. `skill://git-workflow/SKILL.md`.
    pub uri: String,
    /// Its `SKILL.md` frontmatter as a JSON object, verbatim (`name` and `description` at least).
    pub frontmatter: Map<String, Value>,
    /// Its files with their digests and sizes, or `"dynamic"`.
    pub resources: SkillFiles,
}

impl SkillEntry {
    /// `frontmatter.name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// `frontmatter.description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The listed file at `uri`, when the entry lists its files and that one is among them.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillFiles::Dynamic => None,
        }
    }
}

/// A skill's files: every one listed (with its digest and size), or `"dynamic"` (content made
/// on demand, with no stable digests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillFiles {
    /// Every file of the skill, `SKILL.md` included, each once.
    Listed(Vec<SkillFile>),
    /// `"dynamic"`.
    Dynamic,
}

impl Serialize for SkillFiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillFiles::Listed(files) => files.serialize(s),
            SkillFiles::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillFiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "dynamic" => Ok(SkillFiles::Dynamic),
            files @ Value::Array(_) => serde_json::from_value(files)
                .map(SkillFiles::Listed)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "`resources` must be an array of files or \"dynamic\", not {other}"
            ))),
        }
    }
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, wire::Serialize, wire::Deserialize)]
pub struct SkillFile {
    /// Its resource URI.
    pub uri: String,
    /// `sha256:` and the 64 lowercase hex digits of its bytes' SHA-256 ([`digest`]).
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// `sha256:{hex}` of `bytes`: the digest a skill's entry gives each of its files.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The skill name a `SKILL.md` URI ends in: `refunds` for `skill://acme/billing/refunds/SKILL.md`.
pub fn skill_name_of(uri: &str) -> Option<&str> {
    let path = uri.split_once("://")?.1.strip_suffix("/SKILL.md")?;
    let name = path.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters, lowercase letters,
/// digits and hyphens, no hyphen first, last or twice in a row. `Err` says which rule it breaks.
pub fn check_skill_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "a skill name has 1 to 64 characters (`{name}` has {})",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "a skill name has only lowercase letters, digits and hyphens (`{name}` has `{c}`)"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "a skill name neither starts nor ends with a hyphen, nor has two in a row (`{name}`)"
        ));
    }
    Ok(())
}

/// The frontmatter of a `SKILL.md`: the YAML mapping between its first line `---` and the next
/// line `---`, as a JSON object (keys in their order; numbers, booleans and nulls as JSON's; a
/// value JSON cannot hold, such as `.inf`, as its text). `Err` says what is wrong.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let is_fence = |line: &str| line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---";
    if !lines.next().is_some_and(is_fence) {
        return Err("it does not begin with YAML frontmatter (a first line `---`)".to_owned());
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if is_fence(line) {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("its frontmatter has no closing line `---`".to_owned());
    }
    let docs = YamlLoader::load_from_str(&yaml)
        .map_err(|e| format!("its frontmatter is not valid YAML: {e}"))?;
    match docs.into_iter().next().map(to_json) {
        Some(Value::Object(map)) => Ok(map),
        Some(Value::Null) | None => Err("its frontmatter is empty".to_owned()),
        Some(_) => Err("its frontmatter is not a YAML mapping (`key: value` lines)".to_owned()),
    }
}

fn to_json(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (key_text(k), to_json(v)))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn key_text(key: Yaml) -> String {
    match to_json(key) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}
