//! Resources, prompts and completions from the client's side: `mcp-tasks-client`'s
//! `list_resources`, `list_resource_templates`, `read_resource`, `list_prompts`, `get_prompt`,
//! `complete`, and the `mcp-tasks` commands on them (`resources`, `read`, `prompts`, `prompt`,
//! `complete`), run as a user runs them.
//!
//! Against `@modelcontextprotocol/server-everything` 2026.8.31 (a server nobody here wrote; it
//! speaks 2025-11-25 only, over stdio and Streamable HTTP), and against
//! `tests/peers/catalog_server.py`, a wire-level 2026-07-28 fixture for what no third-party server
//! here offers in that era: `InputRequiredResult` rounds on `resources/read` and `prompts/get`,
//! and lists of 1,000 items in pages.
//!
//! Each server is a [`Fixture`]: what it serves and what reading it must give. Adding a server
//! (our `example_server`, once it serves resources and prompts) is one more entry in
//! [`fixtures`], with its `Fixture`.

use mcp_tasks_client::{
    Asked, Client, CompletionRef, Content, EraChoice, Error, ResourceContents, ResourceData,
    Scripted,
};
use mcp_tasks_tests::WAIT;
use mcp_tasks_tests::cli::mcp_tasks_bin;
use mcp_tasks_tests::peers::{install_peers, node};
use mcp_tasks_tests::workspace_root;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::time::timeout;

/// A server under test, and what it serves.
struct Fixture {
    /// For messages.
    name: &'static str,
    /// The command that runs it over stdio.
    command: fn() -> Vec<String>,
    /// How it is started over Streamable HTTP on a free port, if it can be.
    http: Option<fn(u16) -> HttpLaunch>,
    /// The era it speaks.
    era: EraChoice,
    /// A listed resource, and a piece of its text.
    text_resource: (&'static str, &'static str),
    /// A resource with binary contents, and the bytes they start with.
    blob_resource: (&'static str, &'static [u8]),
    /// A listed resource template.
    template: &'static str,
    /// A prompt, its required argument, a value for it, and a piece of the first message's text.
    prompt: (&'static str, &'static str, &'static str, &'static str),
    /// A completion and what it must suggest.
    completion: CompletionCase,
}

/// How a server is started over Streamable HTTP.
struct HttpLaunch {
    /// The command.
    argv: Vec<String>,
    /// Its environment (the port).
    env: Vec<(&'static str, String)>,
    /// What its stderr says once it listens.
    ready: &'static str,
}

/// A `completion/complete` and the values it must give.
struct CompletionCase {
    reference: CompletionRef,
    argument: &'static str,
    value: &'static str,
    context: &'static [(&'static str, &'static str)],
    expected: &'static [&'static str],
}

fn server_everything_js() -> String {
    install_peers("node");
    mcp_tasks_tests::peers::server_everything_index()
        .display()
        .to_string()
}

fn catalog_server() -> Vec<String> {
    vec![
        "python3".into(),
        workspace_root()
            .join("tests/peers/catalog_server.py")
            .display()
            .to_string(),
    ]
}

/// The servers every test here runs against. Adding one is a line here (and its [`Fixture`]).
fn fixtures() -> Vec<Fixture> {
    vec![server_everything()]
}

/// `@modelcontextprotocol/server-everything` 2026.8.31: 2025-11-25 only (it answers
/// `server/discover` with `-32601`), over stdio and Streamable HTTP (`PORT`).
fn server_everything() -> Fixture {
    Fixture {
        name: "server-everything",
        command: || vec![node(), server_everything_js(), "stdio".into()],
        http: Some(|port| HttpLaunch {
            argv: vec![node(), server_everything_js(), "streamableHttp".into()],
            env: vec![("PORT", port.to_string())],
            ready: "listening on port",
        }),
        era: EraChoice::Legacy,
        text_resource: (
            "demo://resource/static/document/features.md",
            "# Everything Server - Features",
        ),
        blob_resource: (
            "demo://resource/dynamic/blob/3",
            b"Resource 3: This is a base64 blob",
        ),
        template: "demo://resource/dynamic/text/{resourceId}",
        prompt: ("args-prompt", "city", "Paris", "What's weather in Paris?"),
        completion: CompletionCase {
            reference: CompletionRef::Prompt("completable-prompt".into()),
            argument: "name",
            value: "",
            context: &[("department", "Sales")],
            expected: &["David", "Eve", "Frank"],
        },
    }
}

async fn connect_stdio(f: &Fixture, handler: Scripted) -> Client {
    let argv = (f.command)();
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]).stderr(Stdio::null());
    timeout(
        WAIT,
        Client::builder()
            .era(f.era)
            .handler(handler)
            .connect_stdio(command),
    )
    .await
    .expect("connects in time")
    .unwrap_or_else(|e| panic!("{}: connects: {e}", f.name))
}

/// A server started over Streamable HTTP on a free port; killed when dropped.
struct HttpPeer {
    child: Child,
    url: String,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_http(f: &Fixture) -> Option<HttpPeer> {
    let start = f.http?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let HttpLaunch { argv, env, ready } = start(port);
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the HTTP server");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(ready) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("{}: no {ready:?} on stderr", f.name));
    Some(HttpPeer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    })
}

/// Everything the library offers, against one connection.
async fn library_checks(f: &Fixture, client: &Client, how: &str) {
    let at = format!("{} ({how})", f.name);
    let resources = client.list_resources().await.expect("resources/list");
    let (uri, text) = f.text_resource;
    assert!(
        resources.iter().any(|r| r.uri == uri && !r.name.is_empty()),
        "{at}: {uri} listed"
    );
    let templates = client
        .list_resource_templates()
        .await
        .expect("resources/templates/list");
    assert!(
        templates.iter().any(|t| t.uri_template == f.template),
        "{at}: {} listed",
        f.template
    );

    let read = client.read_resource(uri).await.expect("resources/read");
    let content = &read.contents[0];
    assert_eq!(content.uri, uri, "{at}");
    let got = content.data.as_text().expect("text contents");
    assert!(got.contains(text), "{at}: {got}");

    let (uri, prefix) = f.blob_resource;
    let read = client.read_resource(uri).await.expect("resources/read");
    match &read.contents[0].data {
        ResourceData::Blob(bytes) => assert!(bytes.starts_with(prefix), "{at}: {bytes:?}"),
        other => panic!("{at}: {uri} read as {other:?}"),
    }
    // The wire's base64 is kept in `raw`.
    assert!(read.raw["contents"][0]["blob"].is_string(), "{at}");

    // Unknown URI: the server's -32602, typed.
    match client.read_resource("demo://no/such/thing").await {
        Err(Error::ResourceNotFound { uri, error }) => {
            assert_eq!(uri, "demo://no/such/thing");
            assert_eq!(error.code, -32602, "{at}");
        }
        other => panic!("{at}: an unknown URI gave {other:?}"),
    }

    let (name, arg, value, says) = f.prompt;
    let prompts = client.list_prompts().await.expect("prompts/list");
    let info = prompts
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{at}: {name} listed"));
    assert!(
        info.arguments.iter().any(|a| a.name == arg && a.required),
        "{at}: {arg} is a required argument of {name}: {info:?}"
    );
    let got = client
        .get_prompt(name, json!({ arg: value }))
        .await
        .expect("prompts/get");
    match &got.messages[0].content {
        Content::Text { text, .. } => assert!(text.contains(says), "{at}: {text}"),
        other => panic!("{at}: {other:?}"),
    }

    // Unknown prompt, missing argument: the server's -32602.
    for (what, name, args) in [
        ("an unknown prompt", "no-such-prompt", json!({})),
        ("a missing argument", name, json!({})),
    ] {
        match client.get_prompt(name, args).await {
            Err(Error::Rpc { method, error }) => {
                assert_eq!(method, "prompts/get");
                assert_eq!(error.code, -32602, "{at}: {what}: {error}");
            }
            other => panic!("{at}: {what} gave {other:?}"),
        }
    }

    let CompletionCase {
        reference,
        argument,
        value,
        context,
        expected,
    } = &f.completion;
    let completion = client
        .complete(reference, argument, value, context)
        .await
        .expect("completion/complete");
    assert_eq!(completion.values, *expected, "{at}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_lists_reads_and_gets_over_stdio() {
    for f in fixtures() {
        let client = connect_stdio(&f, Scripted::new()).await;
        library_checks(&f, &client, "stdio").await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_lists_reads_and_gets_over_http() {
    for f in fixtures() {
        let Some(server) = start_http(&f) else {
            continue;
        };
        let client = timeout(
            WAIT,
            Client::builder()
                .era(f.era)
                .connect_http(server.url.clone()),
        )
        .await
        .expect("connects in time")
        .expect("connects");
        library_checks(&f, &client, "HTTP").await;
        client.close().await;
    }
}

/// server-everything's `resource-prompt` embeds a resource (text or blob) in a message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_prompt_embeds_a_resource() {
    let f = &server_everything();
    let client = connect_stdio(f, Scripted::new()).await;
    let got = client
        .get_prompt(
            "resource-prompt",
            json!({ "resourceType": "Text", "resourceId": "2" }),
        )
        .await
        .expect("prompts/get");
    assert_eq!(got.messages.len(), 2);
    match &got.messages[1].content {
        Content::Resource {
            resource: ResourceContents::Text { uri, text, .. },
            ..
        } => {
            assert_eq!(uri, "demo://resource/dynamic/text/2");
            assert!(text.starts_with("Resource 2: "), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // A template's variable completes too (`ref/resource`).
    let completion = client
        .complete(
            &CompletionRef::Resource("demo://resource/dynamic/text/{resourceId}".into()),
            "resourceId",
            "7",
            &[],
        )
        .await
        .expect("completion/complete");
    assert_eq!(completion.values, ["7"]);
    client.close().await;
}

async fn modern_catalog(script: &Scripted) -> Client {
    let argv = catalog_server();
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    timeout(
        WAIT,
        Client::builder()
            .era(EraChoice::Modern)
            .handler(script.clone())
            .connect_stdio(command),
    )
    .await
    .expect("connects in time")
    .expect("connects")
}

/// 2026-07-28: `resources/read` and `prompts/get` answered with an `InputRequiredResult` go to the
/// input handler and are sent again with its answer and the `requestState`, as `tools/call` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_read_and_prompt_take_input_rounds() {
    let script = Scripted::new()
        .accept(json!({ "name": "Ada" }))
        .accept(json!({ "name": "warm" }));
    let client = modern_catalog(&script).await;
    assert!(client.era().is_modern());

    let read = client.read_resource("secret://note").await.expect("read");
    assert_eq!(read.contents[0].data.as_text(), Some("for Ada only"));
    let got = client
        .get_prompt("greet", json!({ "name": "Grace" }))
        .await
        .expect("prompts/get");
    assert_eq!(got.description.as_deref(), Some("A greeting"));
    match (&got.messages[0].content, &got.messages[1].content) {
        (Content::Text { text, .. }, Content::ResourceLink { uri, .. }) => {
            assert_eq!(text, "Greet Grace (warm).");
            assert_eq!(uri, "item://0001");
        }
        other => panic!("{other:?}"),
    }
    let asked: Vec<String> = script
        .asked()
        .into_iter()
        .map(|a| match a {
            Asked::Elicit(q) => q.message,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        asked,
        ["Who is reading the note?", "How should the greeting sound?"]
    );

    // A blob, decoded; an unknown URI with SEP-2164's `data.uri`.
    let read = client.read_resource("bin://bytes").await.expect("read");
    assert_eq!(
        read.contents[0].data,
        ResourceData::Blob(vec![0, 159, 146, 150, 255])
    );
    match client.read_resource("nope://x").await {
        Err(Error::ResourceNotFound { uri, error }) => {
            assert_eq!(uri, "nope://x");
            assert_eq!(error.code, -32602);
            assert_eq!(error.data, Some(json!({ "uri": "nope://x" })));
        }
        other => panic!("{other:?}"),
    }
    client.close().await;
}

/// Every list follows `nextCursor` to the end: 1,000 items in pages of 100, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_of_1000_items_are_read_page_by_page() {
    let client = modern_catalog(&Scripted::new()).await;
    let tools = client.list_tools().await.expect("tools/list");
    let resources = client.list_resources().await.expect("resources/list");
    let templates = client.list_resource_templates().await.expect("templates");
    let prompts = client.list_prompts().await.expect("prompts/list");
    assert_eq!(tools.len(), 1000);
    assert_eq!(resources.len(), 1000);
    assert_eq!(templates.len(), 1000);
    assert_eq!(prompts.len(), 1000);
    assert_eq!(tools[999].name, "tool-0999");
    assert_eq!(resources[500].uri, "item://0500");
    assert_eq!(templates[0].uri_template, "family0000://{id}");
    assert!(prompts[2].arguments[0].required && !prompts[3].arguments[0].required);
    client.close().await;
}

// ---- The `mcp-tasks` command ----

/// What a finished `mcp-tasks` run did (stdout as bytes: `read` may write binary).
struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// `mcp-tasks <args> -- <server>` with no terminal; killed (and failed) after 60 s.
fn mcp_tasks(args: &[&str], server: &[String]) -> Run {
    let cache = std::env::temp_dir().join(format!("mcp-tasks-catalog-{}", std::process::id()));
    let mut child = Command::new(mcp_tasks_bin())
        .args(args)
        .args(["--server-stderr", "null", "--"])
        .args(server)
        .env("MCP_TASKS_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-tasks");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("mcp-tasks {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().expect("exited"),
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
    }
}

#[test]
fn cli_resources_read_prompts_prompt_complete() {
    for f in fixtures() {
        let server = (f.command)();
        let at = f.name;

        let run = mcp_tasks(&["resources"], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        let table = run.text();
        assert!(table.starts_with("URI "), "{at}: {table}");
        assert!(table.contains(f.text_resource.0), "{at}: {table}");
        assert!(table.contains("\nTEMPLATE "), "{at}: {table}");
        assert!(table.contains(f.template), "{at}: {table}");
        let run = mcp_tasks(&["resources", "--json"], &server);
        let listed: Value = serde_json::from_slice(&run.stdout).expect("JSON");
        assert!(
            listed["resources"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
        );
        assert!(listed["resourceTemplates"].as_array().is_some());

        // Text to stdout.
        let run = mcp_tasks(&["read", f.text_resource.0], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        assert!(run.text().contains(f.text_resource.1), "{at}");
        // Bytes to stdout when it is not a terminal, and to --output.
        let run = mcp_tasks(&["read", f.blob_resource.0], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        assert!(run.stdout.starts_with(f.blob_resource.1), "{at}");
        let file = std::env::temp_dir().join(format!("mcp-tasks-read-{}", std::process::id()));
        let path = file.display().to_string();
        let run = mcp_tasks(&["read", f.blob_resource.0, "--output", &path], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        assert!(
            run.stderr.contains(&format!("bytes to {path}")),
            "{}",
            run.stderr
        );
        assert!(std::fs::read(&file).unwrap().starts_with(f.blob_resource.1));
        let _ = std::fs::remove_file(&file);
        // An unknown URI: exit 2, said plainly.
        let run = mcp_tasks(&["read", "demo://no/such/thing"], &server);
        assert_eq!(run.code, 2, "{at}");
        assert!(
            run.stderr
                .contains("the server has no resource demo://no/such/thing (-32602"),
            "{at}: {}",
            run.stderr
        );

        let (name, arg, value, says) = f.prompt;
        let run = mcp_tasks(&["prompts"], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        assert!(run.text().starts_with("PROMPT "), "{at}");
        assert!(
            run.text().contains(&format!("{arg}*")),
            "{at}: {}",
            run.text()
        );
        let pair = format!("{arg}={value}");
        let run = mcp_tasks(&["prompt", name, "--args", &pair], &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        assert!(run.text().starts_with("[user]\n"), "{at}: {}", run.text());
        assert!(run.text().contains(says), "{at}: {}", run.text());
        let run = mcp_tasks(&["prompt", name, "--args", &pair, "--json"], &server);
        let raw: Value = serde_json::from_slice(&run.stdout).expect("JSON");
        assert!(raw["messages"][0]["content"]["text"].is_string(), "{raw}");

        // A missing argument and an unknown prompt: exit 2 before prompts/get is sent.
        let run = mcp_tasks(&["prompt", name, "--wire"], &server);
        assert_eq!(run.code, 2, "{at}");
        assert!(
            run.stderr.contains(&format!(
                "the prompt `{name}` needs `{arg}`: give --args {arg}=VALUE"
            )),
            "{at}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("\"prompts/get\""), "{}", run.stderr);
        let run = mcp_tasks(&["prompt", "no-such-prompt"], &server);
        assert_eq!(run.code, 2, "{at}");
        assert!(
            run.stderr
                .contains("the server has no prompt `no-such-prompt`; its prompts are "),
            "{at}: {}",
            run.stderr
        );
        let run = mcp_tasks(
            &["prompt", name, "--args", &pair, "--args", "zz=1"],
            &server,
        );
        assert_eq!(run.code, 2, "{at}");
        assert!(
            run.stderr
                .contains(&format!("the prompt `{name}` has no argument `zz`")),
            "{at}: {}",
            run.stderr
        );

        let CompletionCase {
            reference,
            argument,
            value,
            context,
            expected,
        } = &f.completion;
        let mut args = vec!["complete".to_owned()];
        match reference {
            CompletionRef::Prompt(p) => args.extend(["--prompt".into(), p.clone()]),
            CompletionRef::Resource(u) => args.extend(["--resource".into(), u.clone()]),
        }
        args.extend([argument.to_string(), value.to_string()]);
        for (k, v) in context.iter() {
            args.extend(["--args".into(), format!("{k}={v}")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = mcp_tasks(&args, &server);
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
        let lines: Vec<String> = run.text().lines().map(str::to_owned).collect();
        assert_eq!(lines, *expected, "{at}");
    }
}

/// 2026-07-28: the command answers a read's and a prompt's questions from `--answers`, as `call`
/// does.
#[test]
fn cli_answers_the_questions_of_a_modern_read_and_prompt() {
    let server = catalog_server();
    let run = mcp_tasks(
        &[
            "read",
            "secret://note",
            "--era",
            "modern",
            "--answers",
            r#"{"name": "Ada"}"#,
        ],
        &server,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.text(), "for Ada only");
    let run = mcp_tasks(
        &[
            "prompt",
            "greet",
            "--args",
            "name=Grace",
            "--era",
            "modern",
            "--answers",
            r#"{"name": "warm"}"#,
        ],
        &server,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.text(),
        "# A greeting\n\n[user]\nGreet Grace (warm).\n\n[assistant]\n[resource link: item://0001 (item 1); mcp-tasks read item://0001 ...]\n"
    );
}

/// On a terminal, `read` of binary contents writes no bytes to it: it says what they are and how
/// to save them.
#[test]
fn cli_read_does_not_write_bytes_to_a_terminal() {
    use expectrl::session::OsSession as Session;
    use expectrl::{Eof, Expect};
    let f = &server_everything();
    let mut cmd = Command::new(mcp_tasks_bin());
    cmd.args(["read", f.blob_resource.0, "--server-stderr", "null", "--"])
        .args((f.command)())
        .env("NO_COLOR", "1")
        .env(
            "MCP_TASKS_CACHE_DIR",
            std::env::temp_dir().join(format!("mcp-tasks-catalog-{}", std::process::id())),
        );
    let mut p = Session::spawn(cmd).expect("spawn mcp-tasks in a pty");
    p.set_expect_timeout(Some(Duration::from_secs(30)));
    // The blob's text ends with the time of day it was made ("... created at 9:54:04 PM"), so
    // its size depends on the hour.
    let said = format!(
        "mcp-tasks: {} is 5[56] bytes of text/plain \\(binary\\), not written to a terminal; save \
         it with --output FILE, or redirect stdout \\(> FILE\\)",
        f.blob_resource.0.replace('.', "\\.")
    );
    let seen = p
        .expect(expectrl::Regex(said.as_str()))
        .expect("what the contents are");
    let before = String::from_utf8_lossy(seen.before()).into_owned();
    let after = p.expect(Eof).expect("mcp-tasks exits");
    let after = String::from_utf8_lossy(after.get(0).unwrap_or_default()).into_owned();
    for screen in [&before, &after] {
        assert!(!screen.contains("Resource 3: "), "{screen}");
    }
    match p.get_process().wait().expect("wait") {
        expectrl::process::unix::WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("{other:?}"),
    }
}

/// 2026-07-28: a subscription is a `subscriptions/listen` stream; the updates the server sends on
/// it reach the caller, another subscription's do not, and `unsubscribe` cancels the stream (the
/// server then tells nobody).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_resource_subscriptions_deliver_updates_until_unsubscribed() {
    let client = modern_catalog(&Scripted::new()).await;
    let mut one = client.subscribe_resource("item://0001").await.expect("one");
    let mut two = client.subscribe_resource("item://0002").await.expect("two");
    let touch = |uri: &'static str| {
        let client = client.clone();
        async move {
            let result = client
                .call_tool("touch", json!({ "uri": uri }))
                .await
                .expect("touch")
                .result()
                .await
                .expect("touched");
            mcp_tasks_client::text(&result)
        }
    };
    assert_eq!(touch("item://0001").await, "notified 1");
    let got = timeout(WAIT, one.next()).await.expect("an update in time");
    assert_eq!(got.as_deref(), Some("item://0001"));
    assert_eq!(touch("item://0002").await, "notified 1");
    let got = timeout(WAIT, two.next()).await.expect("an update in time");
    assert_eq!(got.as_deref(), Some("item://0002"));
    // `one` saw nothing of `two`'s update.
    assert!(
        timeout(Duration::from_millis(300), one.next())
            .await
            .is_err()
    );
    one.unsubscribe().await.expect("unsubscribe");
    assert_eq!(touch("item://0001").await, "notified 0");
    two.unsubscribe().await.expect("unsubscribe");
    assert_eq!(touch("item://0002").await, "notified 0");

    // A URI the server leaves out of its acknowledgement; a listen never acknowledged.
    match client.subscribe_resource("refuse://x").await {
        Err(Error::SubscriptionRefused { uri, reason }) => {
            assert_eq!(uri, "refuse://x");
            assert!(reason.contains("does not list it"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    client.close().await;
    let argv = catalog_server();
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    let client = Client::builder()
        .era(EraChoice::Modern)
        .request_timeout(Some(Duration::from_secs(2)))
        .connect_stdio(command)
        .await
        .expect("connects");
    match client.subscribe_resource("silent://x").await {
        Err(Error::Timeout { method, .. }) => assert_eq!(method, "subscriptions/listen"),
        other => panic!("{other:?}"),
    }
    client.close().await;
}

/// 2025-11-25 (server-everything, stdio and HTTP): `resources/subscribe`, the updates on the
/// session; after `resources/unsubscribe` the server sends none for that URI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_resource_subscriptions_deliver_updates_until_unsubscribed() {
    let f = &server_everything();
    let server = start_http(f).expect("server-everything serves HTTP");
    for how in ["stdio", "HTTP"] {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let builder = Client::builder().era(f.era).on_wire({
            let seen = seen.clone();
            move |direction, text| {
                if direction == mcp_tasks_client::WireDirection::Received {
                    seen.lock().unwrap().push(text.to_owned());
                }
            }
        });
        let client = if how == "stdio" {
            let argv = (f.command)();
            let mut command = tokio::process::Command::new(&argv[0]);
            command.args(&argv[1..]).stderr(Stdio::null());
            builder.connect_stdio(command).await
        } else {
            builder.connect_http(server.url.clone()).await
        }
        .expect("connects");
        let (a, b) = (
            "demo://resource/static/document/features.md",
            "demo://resource/static/document/startup.md",
        );
        let mut sub_a = client.subscribe_resource(a).await.expect("subscribe");
        let mut sub_b = client.subscribe_resource(b).await.expect("subscribe");
        let toggle = || async {
            client
                .call_tool("toggle-subscriber-updates", json!({}))
                .await
                .expect("toggle")
                .result()
                .await
                .expect("toggled")
        };
        // On: one update for each subscribed URI at once (then every 5 s).
        toggle().await;
        let got = timeout(WAIT, sub_a.next()).await.expect("{how}: in time");
        assert_eq!(got.as_deref(), Some(a), "{how}");
        let got = timeout(WAIT, sub_b.next()).await.expect("{how}: in time");
        assert_eq!(got.as_deref(), Some(b), "{how}");
        sub_a.unsubscribe().await.expect("unsubscribe");
        let mark = seen.lock().unwrap().len();
        // Off, and on again: an update at once, for `b` only.
        toggle().await;
        toggle().await;
        let got = timeout(WAIT, sub_b.next()).await.expect("{how}: in time");
        assert_eq!(got.as_deref(), Some(b), "{how}");
        let after: Vec<String> = seen.lock().unwrap()[mark..].to_vec();
        assert!(
            !after
                .iter()
                .any(|m| m.contains("notifications/resources/updated") && m.contains(a)),
            "{how}: {after:?}"
        );
        toggle().await;
        client.close().await;
    }
}

/// A server that offers no resources, prompts or completions (no capability, `-32601`): each
/// command says so, exit 2.
#[test]
fn cli_says_when_a_server_offers_no_resources_prompts_or_completions() {
    let mut server = catalog_server();
    server.push("--bare".into());
    for (args, says) in [
        (
            &["resources"][..],
            "the server offers no resources (its capabilities have no `resources`)",
        ),
        (&["read", "item://0001"], "the server offers no resources"),
        (
            &["prompts"],
            "the server offers no prompts (its capabilities have no `prompts`)",
        ),
        (&["prompt", "greet"], "the server offers no prompts"),
        (
            &["complete", "--prompt", "greet", "name"],
            "the server offers no completions (its capabilities have no `completions`)",
        ),
    ] {
        let mut all = args.to_vec();
        all.extend(["--era", "modern"]);
        let run = mcp_tasks(&all, &server);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
}

// ---- our own example server ---------------------------------------------------------------------

/// The library against `example_server` in both eras: its notes (a fixed resource and a template),
/// `review_code` and its completions, the MCP App's view, and `-32602` / `-32002` with the URI for
/// one it does not have.
#[tokio::test]
async fn the_library_reads_and_gets_from_the_example_server_in_both_eras() {
    let bin = mcp_tasks_tests::example_bin("example_server");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let mut command = tokio::process::Command::new(&bin);
        command.stderr(Stdio::null());
        let client = timeout(WAIT, Client::builder().era(era).connect_stdio(command))
            .await
            .expect("in time")
            .expect("connects");
        let at = format!("{era:?}");
        let resources = client.list_resources().await.expect("resources/list");
        for uri in ["notes://index", "ui://forecast/view.html"] {
            assert!(resources.iter().any(|r| r.uri == uri), "{at}: {uri} listed");
        }
        let templates = client.list_resource_templates().await.expect("templates");
        assert!(
            templates
                .iter()
                .any(|t| t.uri_template == "notes://{title}"),
            "{at}"
        );
        let read = client.read_resource("notes://welcome").await.expect("read");
        assert!(
            read.contents[0]
                .data
                .as_text()
                .is_some_and(|t| t.contains("Read me")),
            "{at}: {read:?}"
        );
        let view = client
            .read_resource("ui://forecast/view.html")
            .await
            .expect("view");
        assert_eq!(
            view.contents[0].mime_type.as_deref(),
            Some("text/html;profile=mcp-app")
        );
        match client.read_resource("notes://nobody-wrote-this").await {
            Err(Error::ResourceNotFound { uri, .. }) => {
                assert_eq!(uri, "notes://nobody-wrote-this", "{at}")
            }
            other => panic!("{at}: {other:?}"),
        }
        let got = client
            .get_prompt(
                "review_code",
                json!({ "code": "fn main() {}", "language": "rust" }),
            )
            .await
            .expect("prompts/get");
        match &got.messages[0].content {
            Content::Text { text, .. } => assert!(text.contains("rust code"), "{at}: {text}"),
            other => panic!("{at}: {other:?}"),
        }
        let reference = CompletionRef::Prompt("review_code".into());
        let done = client
            .complete(&reference, "focus", "o", &[("language", "rust")])
            .await
            .expect("completion/complete");
        assert_eq!(done.values, ["ownership"], "{at}");
        client.close().await;
    }
}

/// The command against `example_server`: `resources`, `read`, `prompts`, `prompt`, `complete`.
#[test]
fn the_cli_reads_and_gets_from_the_example_server() {
    let server = vec![
        mcp_tasks_tests::example_bin("example_server")
            .display()
            .to_string(),
    ];
    let run = mcp_tasks(&["resources"], &server);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.text().contains("notes://index"), "{}", run.text());
    assert!(run.text().contains("notes://{title}"), "{}", run.text());
    let run = mcp_tasks(&["read", "notes://welcome"], &server);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.text().contains("Read me"), "{}", run.text());
    let run = mcp_tasks(&["read", "notes://nobody-wrote-this"], &server);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("notes://nobody-wrote-this"),
        "{}",
        run.stderr
    );
    let run = mcp_tasks(&["prompts"], &server);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.text().contains("review_code"), "{}", run.text());
    let run = mcp_tasks(
        &[
            "prompt",
            "review_code",
            "--args",
            "code=x",
            "--args",
            "language=rust",
        ],
        &server,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.text().contains("rust code"), "{}", run.text());
    let run = mcp_tasks(&["prompt", "review_code", "--args", "code=x"], &server);
    assert_eq!(run.code, 2, "a missing argument: {}", run.stderr);
    let run = mcp_tasks(
        &["complete", "--prompt", "review_code", "language", "ru"],
        &server,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.text().trim(), "rust");
}
