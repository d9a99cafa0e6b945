//! The skills as `build()` reads them: entries, digests, folders, and every rule a bad skill
//! breaks reported with its file.

use super::{SkillRegistry, Skills};
use crate::protocol::skill::{SkillFiles, check_skill_name, digest, parse_frontmatter};
use serde_json::json;

const GOOD: &[u8] = b"---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1\"\n---\n\n# PDF\n";

fn problems(files: &'static [(&'static str, &'static [u8])]) -> Vec<String> {
    match SkillRegistry::build(&[Skills::embedded(files)]) {
        Ok(_) => Vec::new(),
        Err(found) => found
            .into_iter()
            .map(|p| format!("{}: {}", p.file, p.rule))
            .collect(),
    }
}

#[test]
fn an_embedded_skill_has_its_entry_digests_and_folders() {
    let registry = SkillRegistry::build(&[Skills::embedded(&[
        ("pdf-processing/SKILL.md", GOOD),
        ("pdf-processing/references/FORMS.md", b"forms\n"),
        ("stray.txt", b"belongs to no skill"),
    ])])
    .expect("builds");
    let (entry, _) = registry
        .get("skill://pdf-processing/SKILL.md")
        .expect("the skill");
    assert_eq!(
        serde_json::Value::Object(entry.frontmatter.clone()),
        json!({
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "metadata": { "version": "2.1" },
        })
    );
    let SkillFiles::Listed(files) = &entry.resources else {
        panic!("listed files")
    };
    let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ]
    );
    assert_eq!(files[0].digest, digest(GOOD));
    assert_eq!(files[0].size, GOOD.len() as u64);
    assert_eq!(
        digest(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert!(registry.file("skill://stray.txt").is_none());
    let (children, _) = registry.dir("skill://pdf-processing").expect("the folder");
    let shown: Vec<(&str, &str)> = children
        .iter()
        .map(|c| (c.uri.as_str(), c.mime_type))
        .collect();
    assert_eq!(
        shown,
        [
            ("skill://pdf-processing/SKILL.md", "text/markdown"),
            ("skill://pdf-processing/references", "inode/directory"),
        ]
    );
    assert!(registry.dir("skill://pdf-processing/SKILL.md").is_none());
}

#[test]
fn a_name_that_is_not_the_folder_name_is_reported_with_its_file() {
    let found = problems(&[("pdf/SKILL.md", GOOD)]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "pdf/SKILL.md (embedded): frontmatter `name` equals the skill's folder name"
        ),
        "{found:?}"
    );
}

#[test]
fn missing_frontmatter_bad_names_and_missing_fields_are_each_reported() {
    let found = problems(&[
        ("plain/SKILL.md", b"# no frontmatter\n"),
        (
            "Bad--Name/SKILL.md",
            b"---\nname: Bad--Name\ndescription: x\n---\n",
        ),
        ("quiet/SKILL.md", b"---\nname: quiet\n---\n"),
        (
            "open/SKILL.md",
            b"---\nname: open\ndescription: never closed\n",
        ),
        ("SKILL.md", GOOD),
    ]);
    let joined = found.join("\n");
    assert!(
        joined.contains(
            "plain/SKILL.md (embedded): SKILL.md: it does not begin with YAML frontmatter"
        ),
        "{joined}"
    );
    assert!(
        joined.contains(
            "Bad--Name/SKILL.md (embedded): frontmatter `name`: a skill name has only lowercase"
        ),
        "{joined}"
    );
    assert!(
        joined.contains("quiet/SKILL.md (embedded): the frontmatter has a `description`"),
        "{joined}"
    );
    assert!(
        joined.contains("open/SKILL.md (embedded): SKILL.md: its frontmatter has no closing line"),
        "{joined}"
    );
    assert!(
        joined.contains("SKILL.md (embedded): a SKILL.md is in a folder named after its skill"),
        "{joined}"
    );
    assert_eq!(found.len(), 5, "{joined}");
}

#[test]
fn a_skill_over_512_files_is_refused() {
    let mut files: Vec<(&'static str, &'static [u8])> = vec![(
        "big/SKILL.md",
        b"---\nname: big\ndescription: many files\n---\n",
    )];
    for i in 0..512 {
        files.push((Box::leak(format!("big/f{i}.txt").into_boxed_str()), b"x"));
    }
    let found = problems(Box::leak(files.into_boxed_slice()));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("a skill has at most 512 files (this one has 513)"),
        "{found:?}"
    );
}

#[test]
fn a_nested_skill_is_its_enclosing_skills_files_too() {
    let registry = SkillRegistry::build(&[Skills::embedded(&[
        ("outer/SKILL.md", b"---\nname: outer\ndescription: o\n---\n"),
        (
            "outer/inner/SKILL.md",
            b"---\nname: inner\ndescription: i\n---\n",
        ),
    ])])
    .expect("builds");
    let (outer, _) = registry.get("skill://outer/SKILL.md").expect("outer");
    let SkillFiles::Listed(files) = &outer.resources else {
        panic!("listed")
    };
    assert_eq!(files.len(), 2);
    assert!(registry.get("skill://outer/inner/SKILL.md").is_some());
    assert_eq!(
        registry
            .file("skill://outer/inner/SKILL.md")
            .expect("file")
            .name,
        "inner"
    );
}

#[test]
fn a_folder_on_disk_is_read_and_its_errors_name_the_path() {
    let root = std::env::temp_dir().join(format!("mcp-tasks-skills-{}", std::process::id()));
    let skill = root.join("git-workflow");
    std::fs::create_dir_all(skill.join("references")).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: git-flow\ndescription: d\n---\n",
    )
    .expect("write");
    std::fs::write(skill.join("references/BRANCHES.md"), "main\n").expect("write");
    let found = SkillRegistry::build(&[Skills::dir(&root)]).expect_err("fails");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].file, skill.join("SKILL.md").display().to_string());
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: git-workflow\ndescription: d\n---\n",
    )
    .expect("write");
    let registry = SkillRegistry::build(&[Skills::dir(&root)]).expect("builds");
    assert!(
        registry
            .file("skill://git-workflow/references/BRANCHES.md")
            .is_some()
    );
    let missing = SkillRegistry::build(&[Skills::dir(root.join("nope"))]).expect_err("fails");
    assert!(
        missing[0].rule.starts_with("the folder cannot be read"),
        "{missing:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn frontmatter_is_read_as_json_verbatim() {
    let map = parse_frontmatter("\u{feff}---\r\nname: a\r\ndescription: \"b: c\"\r\nlicense: MIT\r\nn: 3\r\nf: 1.5\r\nok: true\r\ntags: [x, y]\r\n---\r\nbody").expect("parses");
    assert_eq!(
        serde_json::Value::Object(map),
        json!({"name": "a", "description": "b: c", "license": "MIT", "n": 3, "f": 1.5, "ok": true, "tags": ["x", "y"]})
    );
    assert!(parse_frontmatter("---\n- a\n---\n").is_err());
    assert!(parse_frontmatter("---\n---\n").is_err());
    assert!(parse_frontmatter("---\nname: [\n---\n").is_err());
}

#[test]
fn skill_names_follow_the_agent_skills_rules() {
    for good in ["a", "pdf-processing", "x1-2", &"a".repeat(64)] {
        assert_eq!(check_skill_name(good), Ok(()), "{good}");
    }
    for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", &"a".repeat(65)] {
        assert!(check_skill_name(bad).is_err(), "{bad}");
    }
}
