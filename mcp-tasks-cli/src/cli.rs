//! The command line as clap parses it: what `mcp-tasks` accepts, with its help text. It is
//! checked into a [`Command`](crate::command::Command) before anything connects.

use crate::duration::{RequestTimeout, parse_duration, parse_timeout};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
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
        task_timeout: TaskTimeoutArgs,
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
        output: Option<PathBuf>,
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
    /// The server's skills (SEP-2640): list them, or load one, checked against its entry.
    Skills {
        #[command(subcommand)]
        action: SkillsSub,
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
        session: SessionArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Ask the server to cancel a task (`tasks/cancel`).
    Cancel {
        /// The task's id (it may start with `-`: ids are base64url).
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        session: SessionArgs,
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
        task_timeout: TaskTimeoutArgs,
        #[command(flatten)]
        session: SessionArgs,
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
        session: SessionArgs,
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
        hide_env_values = true,
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
    #[arg(
        long,
        value_name = "FILE",
        env = "MCP_TASKS_CA_CERT",
        hide_env_values = true
    )]
    pub ca_cert: Vec<PathBuf>,
    /// Which protocol era to speak: probe (`auto`), or one pinned.
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    pub era: EraArg,
    /// How long to wait for the server's answer to any one request before giving up with exit 2
    /// (progress for the request starts the clock again): e.g. `30s`, `500ms`, `2m`, a number of
    /// seconds, or `none`. Default: 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<RequestTimeout>,
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

/// `--session`, for the commands that act on a task by its id.
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// For `--url`: join this 2025-11-25 session (its `Mcp-Session-Id`, which `call` names when it
    /// starts a task) instead of opening one: a legacy server knows a task only in its session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

/// `--task-timeout`, for the commands that follow a task.
#[derive(Debug, Args)]
pub struct TaskTimeoutArgs {
    /// How long the whole call may take, its task included, before the task is cancelled and
    /// the command exits 2. Default: no limit.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub task_timeout: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    /// Probe: `server/discover` (a 2026-07-28 server answers it), else `initialize`; the era
    /// found is remembered per server.
    Auto,
    /// 2025-11-25 (`initialize`, sessions).
    Legacy,
    /// 2026-07-28 (stateless).
    Modern,
}

#[cfg(test)]
mod tests;

/// `mcp-tasks skills ...`.
#[derive(Debug, Subcommand)]
pub enum SkillsSub {
    /// List the server's skills: name, URI, files and description. Reads no skill file.
    List {
        /// Print the entries as JSON (the `skills` of `skills/list`) on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Load a skill and print its SKILL.md (or, with --file, another of its files), each
    /// checked against the skill's entry (size, sha256 digest, frontmatter) before it is shown.
    Get {
        /// The skill: the URI of its SKILL.md (`skill://name/SKILL.md`), or its name as listed.
        skill: String,
        /// One of the skill's other files, by its path in the skill (`references/GUIDE.md`) or
        /// its URI; read after SKILL.md checked out.
        #[arg(long, value_name = "PATH|URI")]
        file: Option<String>,
        /// Write the file to FILE instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Print `{"skill": <entry>, "text": <SKILL.md>}` as JSON on stdout (without --file).
        #[arg(long, conflicts_with_all = ["file", "output"])]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
}
