//! The command line: what `mcp-tasks` accepts, checked into a [`Command`] before anything
//! connects, so every usage mistake is an exit-2 message and nothing else.

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};
use std::time::Duration;

/// Try MCP servers from the terminal: list their tools, call one, follow it as a task (progress,
/// questions, Ctrl-C to cancel); list and read their resources, list and get their prompts.
#[derive(Debug, Parser)]
#[command(name = "mcp-tasks", version, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success, 1 the tool reported an error (isError), \
2 protocol or usage error, 130 interrupted (the task was cancelled)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, Subcommand)]
pub enum Sub {
    /// List the server's tools and their task support.
    Tools {
        /// Print the tools as JSON (the `tools/list` result) on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Call a tool; a task is followed to its end.
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments: a JSON object, `@FILE` (a JSON object in a file), or `KEY=VALUE` (the
        /// value typed by the tool's input schema: `n=3` a number where the schema says so, else
        /// text). Repeatable; later ones win.
        #[arg(long, value_name = "JSON|@FILE|KEY=VALUE")]
        args: Vec<String>,
        /// Print the final result as JSON on stdout (progress and logs go to stderr).
        #[arg(long)]
        json: bool,
        /// Answers to the tool's questions by field name, a JSON object, e.g.
        /// '{"confirm": true}'. `"@action": "decline"|"cancel"` refuses every question;
        /// `"@sampling": "text"` answers a sampling request.
        #[arg(long, value_name = "JSON")]
        answers: Option<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// One task by its id: show it, cancel it, or follow it to its end.
    Task {
        #[command(subcommand)]
        action: TaskSub,
    },
    /// The server's tasks (legacy era, where the server offers `tasks/list`).
    Tasks {
        #[command(subcommand)]
        action: TasksSub,
    },
    /// List the server's resources and resource templates.
    Resources {
        /// Print them as JSON (`{"resources": [...], "resourceTemplates": [...]}`) on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Read a resource: text to stdout; bytes to stdout when it is not a terminal, or to
    /// `--output FILE`.
    Read {
        /// The resource's URI (a listed one, or one a template describes).
        uri: String,
        /// Write the contents (text or bytes) to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
        /// Print the `resources/read` result as JSON (blobs base64) on stdout.
        #[arg(long, conflicts_with = "output")]
        json: bool,
        /// Answers to the server's questions (2026-07-28 servers may ask before a read), as for
        /// `call`.
        #[arg(long, value_name = "JSON")]
        answers: Option<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List the server's prompts and their arguments.
    Prompts {
        /// Print the prompts as JSON (the `prompts/list` result) on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Get a prompt with its arguments and print its messages.
    Prompt {
        /// The prompt's name.
        name: String,
        /// The arguments, as for `call`: a JSON object, `@FILE` or `KEY=VALUE` (prompt arguments
        /// are strings). Repeatable; later ones win.
        #[arg(long, value_name = "JSON|@FILE|KEY=VALUE")]
        args: Vec<String>,
        /// Print the `prompts/get` result as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Answers to the server's questions (2026-07-28 servers may ask before answering), as
        /// for `call`.
        #[arg(long, value_name = "JSON")]
        answers: Option<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Suggest values for a prompt's argument or a resource template's variable
    /// (`completion/complete`), one per line.
    Complete {
        /// The prompt whose argument to complete.
        #[arg(
            long,
            value_name = "NAME",
            required_unless_present = "resource",
            conflicts_with = "resource"
        )]
        prompt: Option<String>,
        /// The resource template (or URI) whose variable to complete.
        #[arg(long, value_name = "URI_TEMPLATE")]
        resource: Option<String>,
        /// The argument (or template variable) to complete.
        argument: String,
        /// What is typed so far (default: nothing).
        #[arg(default_value = "")]
        value: String,
        /// The values already chosen for the other arguments, as for `call`'s `--args`
        /// (strings).
        #[arg(long, value_name = "JSON|@FILE|KEY=VALUE")]
        args: Vec<String>,
        /// Print the `completion` object as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum TaskSub {
    /// Show a task's state (`tasks/get`).
    Get {
        /// The task's id (it may start with `-`: ids are base64url).
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// Print the task as the server sent it (JSON) on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Ask the server to cancel a task (`tasks/cancel`).
    Cancel {
        /// The task's id (it may start with `-`: ids are base64url).
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Follow a task to its end, answering its questions, like `call` (e.g. one whose `call` died).
    Watch {
        /// The task's id (it may start with `-`: ids are base64url).
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// Print the final result as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Answers to the task's questions, as for `call`.
        #[arg(long, value_name = "JSON")]
        answers: Option<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum TasksSub {
    /// List the tasks the server shows this client (`tasks/list`, 2025-11-25 only).
    List {
        /// Print the tasks as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
}

/// Where the server is: `--url` (Streamable HTTP) or a command after `--` (stdio).
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// The server's Streamable HTTP endpoint.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A bearer token for `--url` (an OAuth access token got elsewhere, or a static one).
    #[arg(
        long,
        value_name = "T",
        env = "MCP_TASKS_TOKEN",
        hide_env_values = true,
        conflicts_with = "client_id"
    )]
    pub token: Option<String>,
    /// For `--url` on a server protected by OAuth: get access tokens with the client credentials
    /// grant as this client (found from the server's `401`: its resource metadata, then its
    /// authorization server's token endpoint); needs `--client-secret`.
    #[arg(
        long,
        value_name = "ID",
        env = "MCP_TASKS_CLIENT_ID",
        requires = "client_secret"
    )]
    pub client_id: Option<String>,
    /// The secret of `--client-id`.
    #[arg(
        long,
        value_name = "SECRET",
        env = "MCP_TASKS_CLIENT_SECRET",
        hide_env_values = true,
        requires = "client_id"
    )]
    pub client_secret: Option<String>,
    /// With `--client-id`: the OAuth scopes to ask for, space-separated (else those the server's
    /// challenge or metadata name).
    #[arg(long, value_name = "SCOPES", requires = "client_id")]
    pub scope: Option<String>,
    /// For an `https://` `--url` (and the authorization server it sends to): also trust the CA
    /// certificate(s) in this PEM file, besides the Mozilla roots built in: a private CA or a
    /// self-signed certificate. Repeat for several files.
    #[arg(long, value_name = "FILE", env = "MCP_TASKS_CA_CERT")]
    pub ca_cert: Vec<std::path::PathBuf>,
    /// For `--url`: join this 2025-11-25 session (its `Mcp-Session-Id`, which `call` names when it
    /// starts a task) instead of opening one: a legacy server knows a task only in its session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Which protocol era to speak: probe (`auto`), or one pinned.
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    pub era: EraArg,
    /// How long to wait for the server's answer to any one request before giving up with exit 2
    /// (progress for the request starts the clock again): e.g. `30s`, `500ms`, `2m`, a number of
    /// seconds, or `none`. Default: 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<RequestTimeout>,
    /// For `call` and `task watch`: how long the whole call may take, its task included, before
    /// the task is cancelled and the command exits 2. Default: no limit.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub task_timeout: Option<Duration>,
    /// Show only questions, results and errors: no progress, status or server log lines.
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Show every log message the server sends (else only warnings and worse).
    #[arg(long, short)]
    pub verbose: bool,
    /// Print every JSON-RPC message on stderr as it goes (`-->` sent, `<--` received).
    #[arg(long)]
    pub wire: bool,
    /// Where a stdio server's stderr goes: `inherit` (this terminal, the default), `null`, or a
    /// file (appended to).
    #[arg(long, value_name = "FILE|inherit|null")]
    pub server_stderr: Option<String>,
    /// The server command and its arguments (after `--`), spoken to over stdio.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    /// Probe: `ping` over stdio, then `server/discover` or `initialize`; `server/discover` over
    /// HTTP, falling back to `initialize`.
    Auto,
    /// 2025-11-25 (`initialize`, sessions).
    Legacy,
    /// 2026-07-28 (stateless).
    Modern,
}

/// A checked target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Http {
        url: String,
        token: Option<String>,
        /// `--client-id`, `--client-secret`, `--scope`: the client credentials grant.
        credentials: Option<Credentials>,
        /// `--session`: a 2025-11-25 session to join.
        session: Option<String>,
        /// `--ca-cert`: the PEM text of each file, read when the arguments are checked.
        ca_certs: Vec<Vec<u8>>,
    },
    Stdio {
        program: String,
        args: Vec<String>,
        stderr: ServerStderr,
    },
}

/// `--client-id`, `--client-secret`, `--scope`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
}

/// `--server-stderr`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerStderr {
    #[default]
    Inherit,
    Null,
    File(std::path::PathBuf),
}

/// `--args`, read: the JSON objects merged, and the `KEY=VALUE` pairs, typed once the tool's
/// schema is known ([`ArgSpec::resolve`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgSpec {
    pub object: Map<String, Value>,
    pub pairs: Vec<(String, String)>,
}

impl ArgSpec {
    /// Reads each `--args` value: `{...}`, `@FILE` or `KEY=VALUE`.
    pub fn parse(values: &[String]) -> Result<ArgSpec, String> {
        let mut spec = ArgSpec::default();
        for v in values {
            let t = v.trim_start();
            if let Some(path) = t.strip_prefix('@') {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--args @{path}: cannot read it: {e}"))?;
                let obj = json_object(&format!("--args @{path}"), &text)?;
                spec.pairs.retain(|(k, _)| !obj.contains_key(k));
                spec.object.extend(obj);
            } else if t.starts_with('{') || t.starts_with('[') || !t.contains('=') {
                if !(t.starts_with('{') || t.starts_with('[')) {
                    return Err(format!(
                        "--args {v:?} is neither a JSON object, @FILE nor KEY=VALUE"
                    ));
                }
                let obj = json_object("--args", t)?;
                spec.pairs.retain(|(k, _)| !obj.contains_key(k));
                spec.object.extend(obj);
            } else {
                let (key, value) = t.split_once('=').expect("checked");
                if key.is_empty() {
                    return Err(format!("--args {v:?}: the key before `=` is empty"));
                }
                spec.object.remove(key);
                spec.pairs.retain(|(k, _)| k != key);
                spec.pairs.push((key.to_owned(), value.to_owned()));
            }
        }
        Ok(spec)
    }

    /// The arguments, each `KEY=VALUE` typed by the tool's input schema (`properties.KEY.type`):
    /// a string as written, a number, integer or boolean parsed (a value that does not parse is
    /// an error naming the key and the type), an array or object as JSON; a key the schema does
    /// not type is JSON if it parses, else text.
    pub fn resolve(&self, schema: Option<&Value>) -> Result<Map<String, Value>, String> {
        let mut out = self.object.clone();
        for (key, text) in &self.pairs {
            let prop = schema
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(key));
            let types: Vec<&str> = match prop.and_then(|p| p.get("type")) {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            out.insert(key.clone(), typed(key, text, &types)?);
        }
        Ok(out)
    }
}

fn typed(key: &str, text: &str, types: &[&str]) -> Result<Value, String> {
    let json = serde_json::from_str::<Value>(text).ok();
    let fits = |v: &Value, t: &str| match t {
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    };
    if types.is_empty() {
        return Ok(json.unwrap_or_else(|| Value::String(text.to_owned())));
    }
    if let Some(v) = &json
        && types.iter().any(|t| fits(v, t))
    {
        return Ok(v.clone());
    }
    if types.contains(&"string") {
        return Ok(Value::String(text.to_owned()));
    }
    Err(format!(
        "--args {key}={text}: `{key}` takes {} (from the tool's input schema)",
        types
            .iter()
            .map(|t| match *t {
                "integer" => "an integer",
                "number" => "a number",
                "boolean" => "true or false",
                "array" => "a JSON array",
                "object" => "a JSON object",
                "null" => "null",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" or ")
    ))
}

/// How to reach the server, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Conn {
    pub target: Target,
    pub era: EraArg,
    /// `--timeout`: `None` leaves the client's default.
    pub timeout: Option<RequestTimeout>,
    /// `--task-timeout`.
    pub task_timeout: Option<Duration>,
    /// `--quiet`, `--verbose`, `--wire`.
    pub shown: Shown,
}

/// `--timeout`: a duration, or `none` (no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

fn parse_timeout(text: &str) -> Result<RequestTimeout, String> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(RequestTimeout(None));
    }
    parse_duration(text).map(|d| RequestTimeout(Some(d)))
}

/// `1.5s`, `500ms`, `2m`, `1h`, or a number of seconds; more than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (like 30s, 500ms, 2m)"))?;
    let seconds = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ms, s, m or h)"
            ));
        }
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A checked command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Tools {
        json: bool,
        conn: Conn,
    },
    Call {
        tool: String,
        args: ArgSpec,
        json: bool,
        answers: Answers,
        conn: Conn,
    },
    TaskGet {
        id: String,
        json: bool,
        conn: Conn,
    },
    TaskCancel {
        id: String,
        conn: Conn,
    },
    TaskWatch {
        id: String,
        json: bool,
        answers: Answers,
        conn: Conn,
    },
    TasksList {
        json: bool,
        conn: Conn,
    },
    Resources {
        json: bool,
        conn: Conn,
    },
    Read {
        uri: String,
        output: Option<std::path::PathBuf>,
        json: bool,
        answers: Answers,
        conn: Conn,
    },
    Prompts {
        json: bool,
        conn: Conn,
    },
    Prompt {
        name: String,
        args: ArgSpec,
        json: bool,
        answers: Answers,
        conn: Conn,
    },
    Complete {
        reference: mcp_tasks_client::CompletionRef,
        argument: String,
        value: String,
        context: ArgSpec,
        json: bool,
        conn: Conn,
    },
}

/// What `--answers` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers {
    /// Whether `--answers` was given at all.
    pub given: bool,
    /// Field name -> answer.
    pub fields: Map<String, Value>,
    /// `@action`: refuse every question this way.
    pub refuse: Option<Refusal>,
    /// `@sampling`: the reply to sampling requests.
    pub sampling: Option<String>,
}

/// How a question is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Decline,
    Cancel,
}

impl Command {
    /// How to reach the server.
    pub fn conn(&self) -> &Conn {
        match self {
            Command::Tools { conn, .. }
            | Command::Call { conn, .. }
            | Command::TaskGet { conn, .. }
            | Command::TaskCancel { conn, .. }
            | Command::TaskWatch { conn, .. }
            | Command::TasksList { conn, .. }
            | Command::Resources { conn, .. }
            | Command::Read { conn, .. }
            | Command::Prompts { conn, .. }
            | Command::Prompt { conn, .. }
            | Command::Complete { conn, .. } => conn,
        }
    }
}

impl Cli {
    /// Checks what clap parsed.
    pub fn into_command(self) -> Result<Command, String> {
        let answers =
            |a: Option<String>| a.as_deref().map_or(Ok(Answers::default()), parse_answers);
        match self.command {
            Sub::Tools { json, target } => Ok(Command::Tools {
                json,
                conn: target.check()?,
            }),
            Sub::Call {
                tool,
                args,
                json,
                answers: given,
                target,
            } => Ok(Command::Call {
                tool,
                args: ArgSpec::parse(&args)?,
                json,
                answers: answers(given)?,
                conn: target.check()?,
            }),
            Sub::Task { action } => match action {
                TaskSub::Get { id, json, target } => Ok(Command::TaskGet {
                    id: task_id(id)?,
                    json,
                    conn: target.check()?,
                }),
                TaskSub::Cancel { id, target } => Ok(Command::TaskCancel {
                    id: task_id(id)?,
                    conn: target.check()?,
                }),
                TaskSub::Watch {
                    id,
                    json,
                    answers: given,
                    target,
                } => Ok(Command::TaskWatch {
                    id: task_id(id)?,
                    json,
                    answers: answers(given)?,
                    conn: target.check()?,
                }),
            },
            Sub::Tasks {
                action: TasksSub::List { json, target },
            } => Ok(Command::TasksList {
                json,
                conn: target.check()?,
            }),
            Sub::Resources { json, target } => Ok(Command::Resources {
                json,
                conn: target.check()?,
            }),
            Sub::Read {
                uri,
                output,
                json,
                answers: given,
                target,
            } => {
                if uri.trim().is_empty() {
                    return Err("the URI is empty".into());
                }
                Ok(Command::Read {
                    uri,
                    output,
                    json,
                    answers: answers(given)?,
                    conn: target.check()?,
                })
            }
            Sub::Prompts { json, target } => Ok(Command::Prompts {
                json,
                conn: target.check()?,
            }),
            Sub::Prompt {
                name,
                args,
                json,
                answers: given,
                target,
            } => Ok(Command::Prompt {
                name,
                args: ArgSpec::parse(&args)?,
                json,
                answers: answers(given)?,
                conn: target.check()?,
            }),
            Sub::Complete {
                prompt,
                resource,
                argument,
                value,
                args,
                json,
                target,
            } => Ok(Command::Complete {
                reference: match (prompt, resource) {
                    (Some(name), None) => mcp_tasks_client::CompletionRef::Prompt(name),
                    (None, Some(uri)) => mcp_tasks_client::CompletionRef::Resource(uri),
                    _ => return Err("give either --prompt NAME or --resource URI_TEMPLATE".into()),
                },
                argument,
                value,
                context: ArgSpec::parse(&args)?,
                json,
                conn: target.check()?,
            }),
        }
    }
}

fn task_id(id: String) -> Result<String, String> {
    if id.trim().is_empty() {
        return Err("the task id is empty".into());
    }
    Ok(id)
}

impl TargetArgs {
    fn check(self) -> Result<Conn, String> {
        Ok(Conn {
            era: self.era,
            timeout: self.timeout,
            task_timeout: self.task_timeout,
            shown: Shown {
                quiet: self.quiet,
                verbose: self.verbose,
                wire: self.wire,
            },
            target: self.target()?,
        })
    }

    fn target(self) -> Result<Target, String> {
        match (self.url, self.command.split_first()) {
            (Some(_), Some(_)) => Err("give either --url URL or -- CMD [ARGS...], not both".into()),
            (None, None) => Err(
                "no server: give --url URL (Streamable HTTP) or -- CMD [ARGS...] (stdio)".into(),
            ),
            (Some(url), None) => {
                if self.server_stderr.is_some() {
                    return Err(
                        "--server-stderr is for a stdio server (-- CMD); an HTTP server's stderr is not ours"
                            .into(),
                    );
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("--url {url:?} is not an http:// or https:// URL"));
                }
                if self.session.is_some() && self.era == EraArg::Modern {
                    return Err(
                        "--session joins a 2025-11-25 session; 2026-07-28 (--era modern) has none"
                            .into(),
                    );
                }
                let credentials =
                    self.client_id
                        .zip(self.client_secret)
                        .map(|(client_id, client_secret)| Credentials {
                            client_id,
                            client_secret,
                            scope: self.scope,
                        });
                let mut ca_certs = Vec::new();
                for path in &self.ca_cert {
                    let pem = std::fs::read(path)
                        .map_err(|e| format!("--ca-cert {}: {e}", path.display()))?;
                    if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
                        return Err(format!(
                            "--ca-cert {}: no PEM certificate in it (expected a `-----BEGIN CERTIFICATE-----` block)",
                            path.display()
                        ));
                    }
                    ca_certs.push(pem);
                }
                Ok(Target::Http {
                    url,
                    token: self.token,
                    credentials,
                    session: self.session,
                    ca_certs,
                })
            }
            (None, Some((program, args))) => {
                if self.token.is_some() || self.client_id.is_some() {
                    return Err(
                        "--token and --client-id are for --url; a stdio server gets no token"
                            .into(),
                    );
                }
                if self.session.is_some() {
                    return Err(
                        "--session is for --url; a stdio server's session is its process".into(),
                    );
                }
                if !self.ca_cert.is_empty() {
                    return Err("--ca-cert is for an https:// --url; stdio has no TLS".into());
                }
                let stderr = match self.server_stderr.as_deref() {
                    None | Some("inherit") => ServerStderr::Inherit,
                    Some("null") => ServerStderr::Null,
                    Some("") => return Err("--server-stderr needs FILE, inherit or null".into()),
                    Some(file) => ServerStderr::File(file.into()),
                };
                Ok(Target::Stdio {
                    program: program.clone(),
                    args: args.to_vec(),
                    stderr,
                })
            }
        }
    }
}

/// A JSON object given on the command line, or a message naming the flag.
pub fn json_object(flag: &str, text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "{flag} must be a JSON object, like '{{\"key\": 1}}'; got {}",
            kind(&other)
        )),
        Err(e) => Err(format!("{flag} is not valid JSON: {e}")),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads `--answers`.
pub fn parse_answers(text: &str) -> Result<Answers, String> {
    let mut fields = json_object("--answers", text)?;
    let refuse = match fields.remove("@action") {
        None => None,
        Some(Value::String(s)) if s == "decline" => Some(Refusal::Decline),
        Some(Value::String(s)) if s == "cancel" => Some(Refusal::Cancel),
        Some(Value::String(s)) if s == "accept" => None,
        Some(other) => {
            return Err(format!(
                "--answers \"@action\" must be \"accept\", \"decline\" or \"cancel\"; got {other}"
            ));
        }
    };
    let sampling = match fields.remove("@sampling") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            return Err(format!(
                "--answers \"@sampling\" must be a string (the reply); got {}",
                kind(&other)
            ));
        }
    };
    if let Some(key) = fields.keys().find(|k| k.starts_with('@')) {
        return Err(format!(
            "--answers has an unknown key {key:?} (the special keys are \"@action\" and \"@sampling\")"
        ));
    }
    Ok(Answers {
        given: true,
        fields,
        refuse,
        sampling,
    })
}

/// `--quiet`, `--verbose`, `--wire`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shown {
    /// No progress, status or server log lines (questions, results and errors still).
    pub quiet: bool,
    /// Every server log message (else warnings and worse).
    pub verbose: bool,
    /// Every JSON-RPC message, both ways.
    pub wire: bool,
}

#[cfg(test)]
mod tests;
