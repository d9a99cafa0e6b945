//! Skills (SEP-2640) the example servers ship, built into their binaries: the example server's
//! `research-notes` (how to use its `research` task and its notes), and the conformance fixture's
//! `pdf-processing` (with a subfolder, for `resources/directory/read`).

use mcp_tasks_runtime::skill::Skills;

/// `skill://research-notes/SKILL.md` and its `references/TOOLS.md` (`examples/skills/`).
pub fn example_skills() -> Skills {
    Skills::embedded(&[
        (
            "research-notes/SKILL.md",
            include_bytes!("../skills/research-notes/SKILL.md"),
        ),
        (
            "research-notes/references/TOOLS.md",
            include_bytes!("../skills/research-notes/references/TOOLS.md"),
        ),
    ])
}

/// `skill://pdf-processing/SKILL.md` and its `references/FORMS.md` (`examples/conformance-skills/`).
pub fn conformance_skills() -> Skills {
    Skills::embedded(&[
        (
            "pdf-processing/SKILL.md",
            include_bytes!("../conformance-skills/pdf-processing/SKILL.md"),
        ),
        (
            "pdf-processing/references/FORMS.md",
            include_bytes!("../conformance-skills/pdf-processing/references/FORMS.md"),
        ),
    ])
}
