//! [`SkillRegistry`]: the server's skills, read and checked by `build()`, and what the skill
//! methods look up in it: the entries in URI order, each file by URI, each folder's children.

use super::Skills;
use super::load::{self, SkillProblem};
use crate::protocol::skill::{DIRECTORY_MIME_TYPE, SKILL_SCHEME, SkillEntry};
use crate::resource::ListedResource;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The server's skills (`ServerBuilder::skills`), every file held in memory.
#[derive(Debug, Default)]
pub(crate) struct SkillRegistry {
    /// The entries, in URI order, each with the scopes reading it needs.
    skills: Vec<(SkillEntry, Arc<[&'static str]>)>,
    /// Index into `skills` by the `SKILL.md` URI.
    by_uri: HashMap<String, usize>,
    /// Every file, by URI (a nested skill's files once).
    files: BTreeMap<String, SkillResource>,
    /// Every folder (`skill://a`, `skill://a/b`, ...), by URI.
    dirs: BTreeMap<String, Folder>,
}

/// One file of a skill, as `resources/list` lists it and `resources/read` serves it.
#[derive(Debug)]
pub(crate) struct SkillResource {
    pub(crate) uri: String,
    /// The file name, or for a `SKILL.md` its skill's name.
    pub(crate) name: String,
    /// For a `SKILL.md`, its skill's description.
    pub(crate) description: Option<String>,
    pub(crate) mime_type: &'static str,
    pub(crate) bytes: Arc<[u8]>,
    /// What reading it needs.
    pub(crate) scopes: Arc<[&'static str]>,
}

impl SkillResource {
    /// What `resources/read` answers: text when it is UTF-8 of a textual type, else a blob.
    pub(crate) fn contents(&self) -> crate::protocol::ResourceContents {
        use base64::Engine as _;
        let binary = self.mime_type.starts_with("image/")
            || matches!(
                self.mime_type,
                "application/pdf" | "application/octet-stream"
            );
        let mime_type = Some(self.mime_type.to_owned());
        match std::str::from_utf8(&self.bytes) {
            Ok(text) if !binary => crate::protocol::ResourceContents::Text {
                uri: self.uri.clone(),
                mime_type,
                text: text.to_owned(),
                meta: None,
            },
            _ => crate::protocol::ResourceContents::Blob {
                uri: self.uri.clone(),
                mime_type,
                blob: base64::engine::general_purpose::STANDARD.encode(&self.bytes),
                meta: None,
            },
        }
    }

    /// How `resources/list` shows it.
    pub(crate) fn listed(&self) -> ListedResource {
        ListedResource {
            uri: self.uri.clone(),
            name: self.name.clone(),
            title: None,
            description: self.description.clone(),
            mime_type: Some(self.mime_type.to_owned()),
            size: Some(self.bytes.len() as u64),
        }
    }
}

/// A folder: its direct children, and what reading it needs.
#[derive(Debug, Default)]
struct Folder {
    children: BTreeMap<String, DirChild>,
    scopes: Arc<[&'static str]>,
}

/// A direct child of a folder, as `resources/directory/read` lists it.
#[derive(Debug, Clone, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DirChild {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) mime_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
}

impl SkillRegistry {
    /// Reads and checks every source; `Err` lists every problem found.
    pub(crate) fn build(sources: &[Skills]) -> Result<Self, Vec<SkillProblem>> {
        let mut problems = Vec::new();
        let mut registry = SkillRegistry::default();
        let mut shown_by_uri: HashMap<String, String> = HashMap::new();
        for source in sources {
            let files = load::read(source, &mut problems);
            let scopes: Arc<[&'static str]> = source.scopes.clone().into();
            for skill in load::skills(&files, &mut problems) {
                let description = skill.entry.description().map(str::to_owned);
                let name = skill.entry.name().unwrap_or_default().to_owned();
                for file in skill.files {
                    if let Some(first) = shown_by_uri.get(&file.uri)
                        && *first != file.shown
                    {
                        problems.push(SkillProblem {
                            file: file.shown.clone(),
                            rule: format!(
                                "a skill URI is served once: `{}` is also `{first}`",
                                file.uri
                            ),
                        });
                        continue;
                    }
                    shown_by_uri.insert(file.uri.clone(), file.shown.clone());
                    let is_skill_md = file.uri == skill.entry.uri;
                    registry.add_file(SkillResource {
                        name: if is_skill_md {
                            name.clone()
                        } else {
                            file.uri.rsplit('/').next().unwrap_or_default().to_owned()
                        },
                        description: is_skill_md.then(|| description.clone()).flatten(),
                        mime_type: mime_type(&file.uri),
                        bytes: file.bytes,
                        scopes: scopes.clone(),
                        uri: file.uri,
                    });
                }
                registry.skills.push((skill.entry, scopes.clone()));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        registry.skills.sort_by(|a, b| a.0.uri.cmp(&b.0.uri));
        registry.by_uri = (registry.skills.iter().enumerate())
            .map(|(i, (entry, _))| (entry.uri.clone(), i))
            .collect();
        Ok(registry)
    }

    /// Adds a file, and the folders above it up to the URI's authority.
    fn add_file(&mut self, file: SkillResource) {
        let path = file.uri.strip_prefix(SKILL_SCHEME).unwrap_or(&file.uri);
        let segments: Vec<&str> = path.split('/').collect();
        for depth in 1..segments.len() {
            let dir = format!("{SKILL_SCHEME}{}", segments[..depth].join("/"));
            let child_uri = format!("{dir}/{}", segments[depth]);
            let is_file = depth + 1 == segments.len();
            let folder = self.dirs.entry(dir).or_insert_with(|| Folder {
                children: BTreeMap::new(),
                scopes: file.scopes.clone(),
            });
            folder
                .children
                .entry(child_uri.clone())
                .or_insert_with(|| DirChild {
                    name: segments[depth].to_owned(),
                    mime_type: if is_file {
                        file.mime_type
                    } else {
                        DIRECTORY_MIME_TYPE
                    },
                    size: is_file.then_some(file.bytes.len() as u64),
                    uri: child_uri,
                });
        }
        self.files.insert(file.uri.clone(), file);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Every entry, in URI order, with the scopes reading it needs.
    pub(crate) fn entries(&self) -> &[(SkillEntry, Arc<[&'static str]>)] {
        &self.skills
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<&(SkillEntry, Arc<[&'static str]>)> {
        self.by_uri.get(uri).map(|&i| &self.skills[i])
    }

    /// The file at `uri`.
    pub(crate) fn file(&self, uri: &str) -> Option<&SkillResource> {
        self.files.get(uri)
    }

    /// Every file, in URI order.
    pub(crate) fn files(&self) -> impl Iterator<Item = &SkillResource> {
        self.files.values()
    }

    /// The direct children of the folder at `uri` (no trailing `/`), in URI order, and the
    /// scopes reading it needs.
    pub(crate) fn dir(&self, uri: &str) -> Option<(Vec<&DirChild>, &[&'static str])> {
        let folder = self.dirs.get(uri)?;
        Some((folder.children.values().collect(), &folder.scopes))
    }

    /// The URI and the scopes reading it needs, when `uri` is one of the skills' files or
    /// folders.
    pub(crate) fn scopes_of(&self, uri: &str) -> Option<(&str, &[&'static str])> {
        match self.files.get_key_value(uri) {
            Some((uri, file)) => Some((uri, &file.scopes)),
            None => (self.dirs.get_key_value(uri)).map(|(uri, d)| (uri.as_str(), &*d.scopes)),
        }
    }
}

/// The MIME type of a skill file, by its extension (`application/octet-stream` when unknown).
fn mime_type(uri: &str) -> &'static str {
    let name = uri.rsplit('/').next().unwrap_or_default();
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("rs") => "text/x-rust",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}
