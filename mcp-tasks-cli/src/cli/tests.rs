use super::*;
use crate::answers::{Refusal, parse_answers};
use crate::args::ArgSpec;
use crate::command::{Command, Conn, ServerStderr, Shown, Target};
use crate::duration::{RequestTimeout, parse_duration, parse_timeout};
use serde_json::{Value, json};

fn parse(args: &[&str]) -> Result<Command, String> {
    let mut all = vec!["mcp-tasks"];
    all.extend_from_slice(args);
    Cli::try_parse_from(all)
        .map_err(|e| e.to_string())?
        .into_command()
}

#[test]
fn tools_over_stdio_and_http() {
    assert_eq!(
        parse(&["tools", "--", "server", "--flag", "x"]),
        Ok(Command::Tools {
            json: false,
            conn: Conn {
                era: EraArg::Auto,
                timeout: None,
                task_timeout: None,
                shown: Shown::default(),
                target: Target::Stdio {
                    program: "server".into(),
                    args: vec!["--flag".into(), "x".into()],
                    stderr: ServerStderr::Inherit,
                }
            }
        })
    );
    assert_eq!(
        parse(&[
            "tools",
            "--json",
            "--era",
            "modern",
            "--url",
            "http://h/mcp",
            "--token",
            "t",
            "--timeout",
            "1.5s",
        ]),
        Ok(Command::Tools {
            json: true,
            conn: Conn {
                era: EraArg::Modern,
                timeout: Some(RequestTimeout(Some(Duration::from_millis(1500)))),
                task_timeout: None,
                shown: Shown::default(),
                target: Target::Http {
                    url: "http://h/mcp".into(),
                    token: Some("t".into()),
                    credentials: None,
                    session: None,
                    ca_certs: Vec::new(),
                }
            }
        })
    );
}

#[test]
fn call_reads_args_and_answers() {
    let Ok(Command::Call {
        tool,
        args,
        answers,
        json,
        ..
    }) = parse(&[
        "call",
        "confirm_delete",
        "--args",
        r#"{"path": "/tmp/x"}"#,
        "--json",
        "--answers",
        r#"{"confirm": true, "@sampling": "hi"}"#,
        "--",
        "srv",
    ])
    else {
        panic!("parses")
    };
    assert_eq!(tool, "confirm_delete");
    assert!(json);
    assert_eq!(Value::Object(args.object), json!({"path": "/tmp/x"}));
    assert!(answers.given);
    assert_eq!(Value::Object(answers.fields), json!({"confirm": true}));
    assert_eq!(answers.sampling.as_deref(), Some("hi"));
    assert_eq!(answers.refuse, None);
}

#[test]
fn usage_mistakes_get_precise_messages() {
    let err = |a: &[&str]| parse(a).unwrap_err();
    assert!(err(&["tools"]).starts_with("no server: give --url URL"));
    assert!(err(&["tools", "--url", "http://h", "--", "srv"]).contains("not both"));
    assert!(err(&["tools", "--url", "h:1"]).contains("is not an http:// or https:// URL"));
    assert!(
        err(&["tools", "--token", "t", "--", "srv"])
            .contains("--token and --client-id are for --url")
    );
    assert!(
        err(&["call", "t", "--args", "[1]", "--", "s"]).contains("--args must be a JSON object")
    );
    assert!(err(&["call", "t", "--args", "{", "--", "s"]).contains("--args is not valid JSON"));
    assert!(
        err(&[
            "call",
            "t",
            "--answers",
            r#"{"@action": "maybe"}"#,
            "--",
            "s"
        ])
        .contains("\"@action\" must be")
    );
    assert!(
        err(&["call", "t", "--answers", r#"{"@x": 1}"#, "--", "s"]).contains("unknown key \"@x\"")
    );
    assert!(err(&["call", "--", "s"]).contains("<TOOL>"));
    assert!(err(&["tools", "--era", "old", "--", "s"]).contains("invalid value 'old'"));
}

#[test]
fn task_commands_take_an_id() {
    let Ok(Command::TaskWatch {
        id, json, answers, ..
    }) = parse(&[
        "task",
        "watch",
        "abc",
        "--json",
        "--answers",
        r#"{"n": 1}"#,
        "--url",
        "http://h/mcp",
    ])
    else {
        panic!("parses")
    };
    assert_eq!((id.as_str(), json), ("abc", true));
    assert_eq!(Value::Object(answers.fields), json!({"n": 1}));
    assert!(matches!(
        parse(&["task", "get", "abc", "--", "srv"]),
        Ok(Command::TaskGet { json: false, .. })
    ));
    assert!(matches!(
        parse(&["task", "cancel", "abc", "--", "srv"]),
        Ok(Command::TaskCancel { .. })
    ));
    assert!(matches!(
        parse(&["tasks", "list", "--json", "--", "srv"]),
        Ok(Command::TasksList { json: true, .. })
    ));
    assert!(
        parse(&["task", "get", "", "--", "srv"])
            .unwrap_err()
            .contains("task id is empty")
    );
    assert!(
        parse(&["task", "get", "--", "srv"])
            .unwrap_err()
            .contains("<ID>")
    );
    // Ids are base64url: one in 64 starts with `-`.
    for sub in ["get", "cancel", "watch"] {
        match parse(&["task", sub, "-Sx_1", "--url", "http://h/mcp"]) {
            Ok(Command::TaskGet { id, .. })
            | Ok(Command::TaskCancel { id, .. })
            | Ok(Command::TaskWatch { id, .. }) => assert_eq!(id, "-Sx_1", "{sub}"),
            other => panic!("{sub}: {other:?}"),
        }
    }
}

#[test]
fn args_as_pairs_typed_by_the_schema_and_files() {
    let schema = json!({"properties": {
        "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"},
        "s": {"type": "string"}, "tags": {"type": "array"}, "maybe": {"type": ["integer", "null"]}
    }});
    let spec = ArgSpec::parse(&[
        r#"{"s": "from json", "n": 1}"#.into(),
        "n=3".into(),
        "x=2.5".into(),
        "ok=true".into(),
        "s=42".into(),
        "tags=[\"a\"]".into(),
        "maybe=null".into(),
        "free=7".into(),
        "word=hello".into(),
        "eq=a=b".into(),
    ])
    .unwrap();
    assert_eq!(
        Value::Object(spec.resolve(Some(&schema)).unwrap()),
        json!({"n": 3, "x": 2.5, "ok": true, "s": "42", "tags": ["a"], "maybe": null,
               "free": 7, "word": "hello", "eq": "a=b"})
    );
    let bad = ArgSpec::parse(&["n=three".into()]).unwrap();
    assert_eq!(
        bad.resolve(Some(&schema)).unwrap_err(),
        "--args n=three: `n` takes an integer (from the tool's input schema)"
    );
    let bad = ArgSpec::parse(&["ok=yes".into()]).unwrap();
    assert!(
        bad.resolve(Some(&schema))
            .unwrap_err()
            .contains("takes true or false")
    );
    assert!(
        ArgSpec::parse(&["=1".into()])
            .unwrap_err()
            .contains("key before `=` is empty")
    );
    assert!(
        ArgSpec::parse(&["plain".into()])
            .unwrap_err()
            .contains("neither a JSON object")
    );
    assert!(
        ArgSpec::parse(&["@/no/such/file.json".into()])
            .unwrap_err()
            .starts_with("--args @/no/such/file.json: cannot read it")
    );
    let file = std::env::temp_dir().join(format!("mcp-tasks-args-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"s": "file", "n": 5}"#).unwrap();
    let spec = ArgSpec::parse(&["n=1".into(), format!("@{}", file.display())]).unwrap();
    assert_eq!(
        Value::Object(spec.resolve(None).unwrap()),
        json!({"s": "file", "n": 5})
    );
    std::fs::write(&file, "[1]").unwrap();
    assert!(
        ArgSpec::parse(&[format!("@{}", file.display())])
            .unwrap_err()
            .contains("must be a JSON object")
    );
    let _ = std::fs::remove_file(&file);
    assert!(
        parse(&["tools", "--server-stderr", "null", "--url", "http://h"])
            .unwrap_err()
            .contains("--server-stderr is for a stdio server")
    );
    assert!(matches!(
        parse(&["tools", "--server-stderr", "/tmp/log", "--", "s"]),
        Ok(Command::Tools {
            conn: Conn {
                target: Target::Stdio {
                    stderr: ServerStderr::File(_),
                    ..
                },
                ..
            },
            ..
        })
    ));
}

#[test]
fn resources_prompts_and_completions() {
    assert!(matches!(
        parse(&["resources", "--json", "--", "srv"]),
        Ok(Command::Resources { json: true, .. })
    ));
    let Ok(Command::Read { uri, output, .. }) =
        parse(&["read", "file:///a b", "-o", "out.bin", "--", "srv"])
    else {
        panic!("parses")
    };
    assert_eq!(uri, "file:///a b");
    assert_eq!(output, Some("out.bin".into()));
    assert!(
        parse(&["read", " ", "--", "s"])
            .unwrap_err()
            .contains("the URI is empty")
    );
    assert!(
        parse(&["read", "x://", "--json", "-o", "f", "--", "s"])
            .unwrap_err()
            .contains("cannot be used with")
    );
    let Ok(Command::Prompt { name, args, .. }) = parse(&[
        "prompt",
        "greet",
        "--args",
        "name=Ada",
        "--args",
        r#"{"mood": "warm"}"#,
        "--",
        "srv",
    ]) else {
        panic!("parses")
    };
    assert_eq!(name, "greet");
    assert_eq!(args.pairs, [("name".to_owned(), "Ada".to_owned())]);
    assert_eq!(Value::Object(args.object), json!({"mood": "warm"}));
    let Ok(Command::Complete {
        reference,
        argument,
        value,
        context,
        ..
    }) = parse(&[
        "complete",
        "--prompt",
        "team",
        "name",
        "A",
        "--args",
        "department=Sales",
        "--",
        "s",
    ])
    else {
        panic!("parses")
    };
    assert_eq!(
        reference,
        mcp_tasks_client::CompletionRef::Prompt("team".into())
    );
    assert_eq!((argument.as_str(), value.as_str()), ("name", "A"));
    assert_eq!(context.pairs.len(), 1);
    assert!(matches!(
        parse(&["complete", "--resource", "notes://{title}", "title", "--", "s"]),
        Ok(Command::Complete { value, reference: mcp_tasks_client::CompletionRef::Resource(_), .. }) if value.is_empty()
    ));
    assert!(
        parse(&["complete", "name", "--", "s"])
            .unwrap_err()
            .contains("--prompt")
    );
    assert!(
        parse(&[
            "complete",
            "--prompt",
            "p",
            "--resource",
            "r",
            "a",
            "--",
            "s"
        ])
        .unwrap_err()
        .contains("cannot be used with")
    );
}

#[test]
fn durations() {
    assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert!(parse_duration("0").unwrap_err().contains("more than zero"));
    assert!(parse_duration("5d").unwrap_err().contains("unknown unit"));
    assert!(
        parse_duration("soon")
            .unwrap_err()
            .contains("not a duration")
    );
    assert_eq!(parse_timeout("none"), Ok(RequestTimeout(None)));
    assert!(
        parse(&["tools", "--timeout", "x", "--", "s"])
            .unwrap_err()
            .contains("not a duration")
    );
}

#[test]
fn answers_can_refuse() {
    let a = parse_answers(r#"{"@action": "cancel"}"#).unwrap();
    assert_eq!(a.refuse, Some(Refusal::Cancel));
    assert!(a.given && a.fields.is_empty());
    assert_eq!(
        parse_answers(r#"{"@action": "decline"}"#).unwrap().refuse,
        Some(Refusal::Decline)
    );
}

/// `--task-timeout` only where a task is followed (`call`, `task watch`), `--session` only where
/// a task is named by its id (`task get|cancel|watch`, `tasks list`): neither is offered, in the
/// help or on the command line, where it means nothing.
#[test]
fn task_timeout_and_session_only_where_they_apply() {
    for args in [
        &["call", "t", "--task-timeout", "2m", "--", "s"][..],
        &["task", "watch", "x", "--task-timeout", "2m", "--", "s"],
    ] {
        let conn = parse(args).expect("accepted").conn().clone();
        assert_eq!(
            conn.task_timeout,
            Some(Duration::from_secs(120)),
            "{args:?}"
        );
    }
    for args in [
        &[
            "task",
            "get",
            "x",
            "--session",
            "s",
            "--url",
            "http://h/mcp",
        ][..],
        &[
            "task",
            "cancel",
            "x",
            "--session",
            "s",
            "--url",
            "http://h/mcp",
        ],
        &[
            "task",
            "watch",
            "x",
            "--session",
            "s",
            "--url",
            "http://h/mcp",
        ],
        &["tasks", "list", "--session", "s", "--url", "http://h/mcp"],
    ] {
        let conn = parse(args).expect("accepted").conn().clone();
        assert!(
            matches!(conn.target, Target::Http { session: Some(ref s), .. } if s == "s"),
            "{args:?}"
        );
    }
    for args in [
        &["tools", "--task-timeout", "2m", "--", "s"][..],
        &["resources", "--task-timeout", "2m", "--", "s"],
        &["tools", "--session", "s", "--url", "http://h/mcp"],
        &["call", "t", "--session", "s", "--url", "http://h/mcp"],
    ] {
        let err = parse(args).expect_err("refused");
        assert!(err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// The help names the environment variables as `[env: NAME]`, with no stray `=` after an unset
/// one, and no values (secrets) either.
#[test]
fn help_names_environment_variables_plainly() {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    let tools = cli.find_subcommand_mut("tools").expect("tools");
    let help = tools.render_long_help().to_string();
    for name in [
        "MCP_TASKS_TOKEN",
        "MCP_TASKS_CLIENT_ID",
        "MCP_TASKS_CLIENT_SECRET",
        "MCP_TASKS_CA_CERT",
    ] {
        assert!(help.contains(&format!("[env: {name}]")), "{name}: {help}");
    }
    assert!(!help.contains("=]"), "{help}");
}
