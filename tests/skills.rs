//! Skills (SEP-2640) as a user meets them: the example server's `research-notes` skill over real
//! stdio in both eras through the client library and the `mcp-tasks skills` command; a tampered
//! skill refused by the command, naming the file; bad skill folders refused by `build()`, naming
//! the file and the rule; skills behind an OAuth scope. (The official suite's `sep-2640-*`
//! scenarios run in `conformance.rs`, server side, and `interop.rs`, client side.)

use mcp_tasks_client::{Client, EraChoice, Error, SkillFiles};
use mcp_tasks_runtime::Principal;
use mcp_tasks_runtime::Server;
use mcp_tasks_runtime::skill::Skills;
use mcp_tasks_tests::cli::mcp_tasks_bin;
use mcp_tasks_tests::example_bin;
use serde_json::{Value, json};
use std::process::Command;

const SKILL_MD: &str = "skill://research-notes/SKILL.md";
const TOOLS_MD: &str = "skill://research-notes/references/TOOLS.md";

async fn example(era: EraChoice) -> Client {
    Client::builder()
        .era(era)
        .connect_stdio(tokio::process::Command::new(example_bin("example_server")))
        .await
        .expect("connected")
}

/// List, get, load, read a file, read the folders, and the errors, in both eras.
#[tokio::test]
async fn the_example_skill_over_stdio_in_both_eras() {
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = example(era).await;
        assert!(client.serves_skills(), "{era:?}: no skills extension");
        let extension =
            &client.server().capabilities["extensions"]["io.modelcontextprotocol/skills"];
        assert_eq!(extension, &json!({ "directoryRead": true }), "{era:?}");
        let skills = client.list_skills().await.expect("skills/list");
        assert_eq!(skills.len(), 1, "{era:?}: {skills:?}");
        let entry = &skills[0];
        assert_eq!(entry.uri, SKILL_MD);
        assert_eq!(entry.name(), Some("research-notes"));
        let SkillFiles::Listed(files) = &entry.resources else {
            panic!("{era:?}: files not listed");
        };
        let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(uris, [SKILL_MD, TOOLS_MD], "{era:?}");
        assert_eq!(
            &client.get_skill(SKILL_MD).await.expect("skills/get"),
            entry
        );

        let text = client.load_skill(entry).await.expect("loads");
        assert!(text.starts_with("---\nname: research-notes\n"), "{text}");
        assert!(text.contains("Call `research`"), "{text}");
        let tools = client
            .read_skill_file(entry, TOOLS_MD)
            .await
            .expect("TOOLS.md");
        assert!(String::from_utf8_lossy(&tools).contains("| `research` |"));
        match client
            .read_skill_file(entry, "skill://research-notes/EXTRA.md")
            .await
        {
            Err(Error::SkillVerification { uri, reason }) => {
                assert_eq!(uri, "skill://research-notes/EXTRA.md");
                assert!(reason.contains("does not list this file"), "{reason}");
            }
            other => panic!("{era:?}: an unlisted file was not refused: {other:?}"),
        }

        let root = client
            .request(
                "resources/directory/read",
                json!({ "uri": "skill://research-notes" }),
            )
            .await
            .expect("resources/directory/read");
        assert_eq!(
            root["resources"],
            json!([
                { "uri": SKILL_MD, "name": "SKILL.md", "mimeType": "text/markdown", "size": text.len() },
                { "uri": "skill://research-notes/references", "name": "references", "mimeType": "inode/directory" },
            ]),
            "{era:?}"
        );
        for not_a_folder in [SKILL_MD, "skill://elsewhere"] {
            let err = client
                .request("resources/directory/read", json!({ "uri": not_a_folder }))
                .await
                .expect_err("not a folder");
            assert_eq!(
                err.rpc_error().map(|e| e.code),
                Some(-32602),
                "{era:?}: {err}"
            );
        }
        let unknown = client
            .get_skill("skill://nope/SKILL.md")
            .await
            .expect_err("unknown");
        assert_eq!(
            unknown.rpc_error().map(|e| e.code),
            Some(-32602),
            "{unknown}"
        );

        let listed = client.list_resources().await.expect("resources/list");
        let skill_md = listed.iter().find(|r| r.uri == SKILL_MD).expect("listed");
        assert_eq!(skill_md.name, "research-notes");
        assert_eq!(skill_md.mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(skill_md.description.as_deref(), entry.description());
        client.close().await;
    }
}

fn mcp_tasks(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(mcp_tasks_bin())
        .args(args)
        .output()
        .expect("run mcp-tasks");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mcp-tasks skills list` and `skills get` (by name, by URI, a file) against the example server.
#[test]
fn the_command_lists_and_fetches_the_example_skill() {
    let server = example_bin("example_server");
    let server = server.to_str().expect("UTF-8 path");
    let (code, out, err) = mcp_tasks(&["skills", "list", "--", server]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAME"), "{out}");
    assert!(
        out.contains("research-notes  skill://research-notes/SKILL.md      2  Research a topic"),
        "{out}"
    );

    let (code, out, err) = mcp_tasks(&["skills", "get", "research-notes", "--", server]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("---\nname: research-notes\n"), "{out}");

    let (code, out, err) = mcp_tasks(&[
        "skills",
        "get",
        SKILL_MD,
        "--file",
        "references/TOOLS.md",
        "--era",
        "legacy",
        "--",
        server,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# Tools this skill uses"), "{out}");

    let (code, _, err) = mcp_tasks(&["skills", "get", "no-such-skill", "--", server]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the server lists no skill named `no-such-skill`"),
        "{err}"
    );
}

/// A server whose `SKILL.md` is not what its entry says (one byte changed, same size): the
/// command prints nothing of it and exits 2 naming the file.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_refuses_a_skill_whose_digest_does_not_match() {
    let url = tampered_server().await;
    let out = tokio::task::spawn_blocking(move || {
        mcp_tasks(&["skills", "get", "pdf-processing", "--url", &url])
    })
    .await
    .expect("joined");
    let (code, stdout, stderr) = out;
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert_eq!(stdout, "", "unverified content was printed");
    assert!(
        stderr.contains(
            "skill file skill://pdf-processing/SKILL.md failed verification: its digest is sha256:"
        ),
        "{stderr}"
    );
}

/// A 2026-07-28 HTTP server that lists `pdf-processing` with the digest of `Skill body.` and
/// serves `Evil body!!` (as the suite's `sep-2640-client-verify-digest` does).
async fn tampered_server() -> String {
    use axum::routing::post;
    const LISTED: &str =
        "---\nname: pdf-processing\ndescription: Extract PDF text\n---\n\nSkill body.\n";
    let served = LISTED.replace("Skill body.", "Evil body!!");
    let app = axum::Router::new().route(
        "/mcp",
        post(move |body: String| {
            let served = served.clone();
            async move {
                let req: Value = serde_json::from_str(&body).unwrap_or_default();
                let result = match req["method"].as_str() {
                    Some("server/discover") => json!({
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {
                            "resources": {},
                            "extensions": { "io.modelcontextprotocol/skills": {} },
                        },
                        "serverInfo": { "name": "tampered", "version": "1.0.0" },
                    }),
                    Some("skills/list") => json!({
                        "skills": [{
                            "uri": "skill://pdf-processing/SKILL.md",
                            "frontmatter": { "name": "pdf-processing", "description": "Extract PDF text" },
                            "resources": [{
                                "uri": "skill://pdf-processing/SKILL.md",
                                "digest": mcp_tasks_runtime::protocol::skill::digest(LISTED.as_bytes()),
                                "size": LISTED.len(),
                            }],
                        }],
                        "ttlMs": 0,
                        "cacheScope": "private",
                    }),
                    Some("resources/read") => json!({
                        "contents": [{
                            "uri": "skill://pdf-processing/SKILL.md",
                            "mimeType": "text/markdown",
                            "text": served,
                        }],
                        "ttlMs": 0,
                        "cacheScope": "private",
                    }),
                    _ => json!({}),
                };
                let mut result = result;
                result["resultType"] = json!("complete");
                let reply = json!({ "jsonrpc": "2.0", "id": req["id"], "result": result });
                ([("content-type", "application/json")], reply.to_string())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

/// A folder of skills with a name that is not its folder's and a SKILL.md without frontmatter:
/// `build()` fails with both, each naming its file and the rule.
#[test]
fn bad_skill_folders_fail_build_naming_the_file_and_the_rule() {
    let root = std::env::temp_dir().join(format!("mcp-tasks-bad-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for dir in ["git-workflow", "plain"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    let renamed = root.join("git-workflow/SKILL.md");
    std::fs::write(
        &renamed,
        "---\nname: git-flow\ndescription: Branching\n---\n",
    )
    .expect("write");
    let plain = root.join("plain/SKILL.md");
    std::fs::write(&plain, "# Plain\n\nNo frontmatter.\n").expect("write");
    let err = Server::builder("skills", "1.0.0")
        .skills(Skills::dir(&root))
        .build()
        .expect_err("bad skills");
    let text = err.to_string();
    assert!(
        text.starts_with("the server cannot start (2 problems):"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "skill file `{}`: frontmatter `name` equals the skill's folder name (the URI's last segment): `git-flow` is in the folder `git-workflow`",
            renamed.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "skill file `{}`: SKILL.md: it does not begin with YAML frontmatter",
            plain.display()
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Skills registered with `.scope("skills")`: a caller whose token lacks it is not shown them and
/// is refused each of their methods; one with it reads them.
#[tokio::test]
async fn skills_behind_a_scope_are_checked_as_resources_are() {
    static FILES: &[(&str, &[u8])] = &[
        (
            "private/SKILL.md",
            b"---\nname: private\ndescription: Secret ways\n---\n",
        ),
        ("private/notes/a.md", b"a\n"),
    ];
    let server = Server::builder("scoped", "1.0.0")
        .skills(Skills::embedded(FILES).scope("skills"))
        .build()
        .expect("builds");
    let connect = |scopes: &[&str]| {
        Client::builder()
            .era(EraChoice::Modern)
            .connect_in_process_as(
                &server,
                Principal::new("alice").with_scopes(scopes.to_vec()),
            )
    };
    let plain = connect(&["profile"]).await.expect("connected");
    assert!(plain.list_skills().await.expect("skills/list").is_empty());
    let listed = plain.list_resources().await.expect("resources/list");
    assert!(listed.is_empty(), "{listed:?}");
    let refusals = [
        ("skills/get", json!({ "uri": "skill://private/SKILL.md" })),
        (
            "resources/read",
            json!({ "uri": "skill://private/notes/a.md" }),
        ),
        (
            "resources/directory/read",
            json!({ "uri": "skill://private/notes" }),
        ),
    ];
    for (method, params) in refusals {
        let err = plain.request(method, params).await.expect_err("refused");
        let rpc = err.rpc_error().expect("a JSON-RPC error");
        assert_eq!(rpc.code, -32600, "{method}: {err}");
        assert_eq!(
            rpc.data.as_ref().unwrap()["error"],
            "insufficient_scope",
            "{method}"
        );
    }
    let scoped = connect(&["skills"]).await.expect("connected");
    let skills = scoped.list_skills().await.expect("skills/list");
    assert_eq!(skills.len(), 1);
    assert!(scoped.load_skill(&skills[0]).await.is_ok());
    let dir = (scoped
        .request(
            "resources/directory/read",
            json!({ "uri": "skill://private/notes" }),
        )
        .await)
        .expect("read");
    assert_eq!(dir["resources"][0]["uri"], "skill://private/notes/a.md");
}

/// `skills/list` in pages of whole entries (`page_size` 2 over three skills), and a folder read
/// in pages too; the client follows the cursors.
#[tokio::test]
async fn skills_list_pages_never_split_an_entry() {
    static FILES: &[(&str, &[u8])] = &[
        ("a/SKILL.md", b"---\nname: a\ndescription: first\n---\n"),
        ("a/one.md", b"1\n"),
        ("a/two.md", b"2\n"),
        ("b/SKILL.md", b"---\nname: b\ndescription: second\n---\n"),
        ("c/SKILL.md", b"---\nname: c\ndescription: third\n---\n"),
    ];
    let server = Server::builder("paged", "1.0.0")
        .skills(Skills::embedded(FILES))
        .config(mcp_tasks_runtime::ServerConfig::default().page_size(2))
        .build()
        .expect("builds");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let client = Client::builder()
            .era(era)
            .connect_in_process(&server)
            .await
            .expect("connected");
        let first = client
            .request("skills/list", json!({}))
            .await
            .expect("page 1");
        let uris = |page: &Value| -> Vec<String> {
            (page["skills"].as_array().expect("skills").iter())
                .map(|s| s["uri"].as_str().expect("uri").to_owned())
                .collect()
        };
        assert_eq!(
            uris(&first),
            ["skill://a/SKILL.md", "skill://b/SKILL.md"],
            "{era:?}"
        );
        assert_eq!(
            first["skills"][0]["resources"].as_array().map(Vec::len),
            Some(3)
        );
        let cursor = first["nextCursor"].as_str().expect("a next page");
        let second = (client
            .request("skills/list", json!({ "cursor": cursor }))
            .await)
            .expect("page 2");
        assert_eq!(uris(&second), ["skill://c/SKILL.md"], "{era:?}");
        assert!(second.get("nextCursor").is_none());
        assert_eq!(client.list_skills().await.expect("all").len(), 3);
        let dir = client
            .request("resources/directory/read", json!({ "uri": "skill://a" }))
            .await
            .expect("folder page 1");
        assert_eq!(dir["resources"].as_array().map(Vec::len), Some(2), "{dir}");
        let cursor = dir["nextCursor"].as_str().expect("a next page");
        let rest = client
            .request(
                "resources/directory/read",
                json!({ "uri": "skill://a", "cursor": cursor }),
            )
            .await
            .expect("folder page 2");
        assert_eq!(rest["resources"][0]["uri"], "skill://a/two.md", "{rest}");
        client.close().await;
    }
}
