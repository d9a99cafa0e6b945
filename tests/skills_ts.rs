//! The official TypeScript client's skills host side (`SkillsClient` of
//! `@modelcontextprotocol/client/ext/skills`, pinned in `tests/browser/package-lock.json`) against
//! the example server over Streamable HTTP: it lists the skills, gets `research-notes`, reads
//! and verifies each of its files (size, digest, frontmatter) and reads its folder
//! (`tests/browser/skills.mjs`).

use mcp_tasks_tests::browser;
use mcp_tasks_tests::http::HttpServer;
use std::process::Command;

#[test]
fn the_typescript_skills_client_reads_and_verifies_the_example_skill() {
    let (node, _) = browser::install();
    browser::stage("skills.mjs");
    let server = HttpServer::start_bin("example_server", &[]);
    let out = Command::new(node)
        .current_dir(browser::browser_dir())
        .arg("skills.mjs")
        .arg(&server.url)
        .output()
        .expect("run skills.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let shown = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.lines().last() == Some("PASS"),
        "{shown}"
    );
    for line in [
        "listed: skill://research-notes/SKILL.md",
        "read skill://research-notes/SKILL.md: verified true",
        "read skill://research-notes/references/TOOLS.md: verified true",
        "folder skill://research-notes: skill://research-notes/SKILL.md (text/markdown), \
         skill://research-notes/references (inode/directory)",
    ] {
        assert!(stdout.contains(line), "missing `{line}`:\n{shown}");
    }
}
