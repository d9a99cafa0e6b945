//! Skills (the extension `io.modelcontextprotocol/skills`, SEP-2640): folders of instructions
//! for a model, each with its `SKILL.md`, that a server ships beside its tools.
//!
//! A [`Skills`] names where the files are: a folder on disk ([`Skills::dir`]) or files built
//! into the program ([`Skills::embedded`]). Every folder holding a `SKILL.md` is a skill, served
//! at `skill://<its path>/SKILL.md`, each of its files at `skill://<its path>/<file path>`.
//! [`ServerBuilder::skills`](crate::ServerBuilder::skills) registers them; `build()` reads and
//! checks every file (frontmatter, names, limits) and fails naming the file and the rule it
//! breaks, so a bad skill never reaches a client. The server then declares the extension and
//! serves `skills/list`, `skills/get`, `resources/directory/read`, and each file through the
//! resource methods (`server/skills.rs`).
//!
//! ```no_run
//! use mcp_tasks_runtime::{Server, skill::Skills};
//!
//! # fn main() -> std::io::Result<()> {
//! let server = Server::builder("docs", "1.0.0")
//!     // skills/git-workflow/SKILL.md, skills/git-workflow/references/BRANCHES.md, ...
//!     .skills(Skills::dir("skills"))
//!     .skills(Skills::embedded(&[(
//!         "release-notes/SKILL.md",
//!         b"---\nname: release-notes\ndescription: Draft release notes\n---\n# Release notes\n",
//!     )]))
//!     .build()?;
//! # Ok(()) }
//! ```

mod load;
mod registry;
#[cfg(test)]
mod tests;

pub(crate) use registry::{DirChild, SkillRegistry};

use std::path::PathBuf;

/// Where a server's skills are, and the OAuth scopes reading them needs. Registered with
/// [`ServerBuilder::skills`](crate::ServerBuilder::skills).
#[derive(Debug, Clone)]
pub struct Skills {
    source: Source,
    scopes: Vec<&'static str>,
}

#[derive(Debug, Clone)]
enum Source {
    Dir(PathBuf),
    Embedded(&'static [(&'static str, &'static [u8])]),
}

impl Skills {
    /// The skills in a folder: each folder under it (at any depth) that holds a `SKILL.md` is a
    /// skill, whose path below `root` is its skill path (`root/acme/refunds/SKILL.md` is served
    /// at `skill://acme/refunds/SKILL.md`), and every file under it is one of its files. Files
    /// that belong to no skill are not served. Read once, by `build()`.
    pub fn dir(root: impl Into<PathBuf>) -> Self {
        Skills {
            source: Source::Dir(root.into()),
            scopes: Vec::new(),
        }
    }

    /// Skills built into the program: `(path, bytes)` pairs laid out as [`dir`](Self::dir)'s
    /// folder would be, e.g. `("release-notes/SKILL.md", include_bytes!("..."))`.
    pub fn embedded(files: &'static [(&'static str, &'static [u8])]) -> Self {
        Skills {
            source: Source::Embedded(files),
            scopes: Vec::new(),
        }
    }

    /// Reading these skills (listing them, `skills/get`, reading their files and folders) needs
    /// this OAuth scope, as a resource declaring `scope = "..."` does. May be given more than once.
    pub fn scope(mut self, scope: &'static str) -> Self {
        self.scopes.push(scope);
        self
    }
}
