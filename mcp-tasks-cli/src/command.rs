//! The checked command line: what clap parsed ([`Cli`]) checked into a [`Command`] before
//! anything connects, so every usage mistake is an exit-2 message and nothing else.

use crate::answers::{Answers, parse_answers};
use crate::args::ArgSpec;
use crate::cli::{
    Cli, EraArg, SessionArgs, SkillsSub, Sub, TargetArgs, TaskSub, TaskTimeoutArgs, TasksSub,
};
use crate::duration::RequestTimeout;
use std::time::Duration;

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
    Skills {
        action: crate::skills::SkillsCommand,
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
            | Command::Complete { conn, .. }
            | Command::Skills { conn, .. } => conn,
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
                conn: target.check(None, None)?,
            }),
            Sub::Call {
                tool,
                args,
                json,
                answers: given,
                task_timeout: TaskTimeoutArgs { task_timeout },
                target,
            } => Ok(Command::Call {
                tool,
                args: ArgSpec::parse(&args)?,
                json,
                answers: answers(given)?,
                conn: target.check(None, task_timeout)?,
            }),
            Sub::Task { action } => match action {
                TaskSub::Get {
                    id,
                    json,
                    session: SessionArgs { session },
                    target,
                } => Ok(Command::TaskGet {
                    id: task_id(id)?,
                    json,
                    conn: target.check(session, None)?,
                }),
                TaskSub::Cancel {
                    id,
                    session: SessionArgs { session },
                    target,
                } => Ok(Command::TaskCancel {
                    id: task_id(id)?,
                    conn: target.check(session, None)?,
                }),
                TaskSub::Watch {
                    id,
                    json,
                    answers: given,
                    task_timeout: TaskTimeoutArgs { task_timeout },
                    session: SessionArgs { session },
                    target,
                } => Ok(Command::TaskWatch {
                    id: task_id(id)?,
                    json,
                    answers: answers(given)?,
                    conn: target.check(session, task_timeout)?,
                }),
            },
            Sub::Tasks {
                action:
                    TasksSub::List {
                        json,
                        session: SessionArgs { session },
                        target,
                    },
            } => Ok(Command::TasksList {
                json,
                conn: target.check(session, None)?,
            }),
            Sub::Resources { json, target } => Ok(Command::Resources {
                json,
                conn: target.check(None, None)?,
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
                    conn: target.check(None, None)?,
                })
            }
            Sub::Skills { action } => {
                let (action, conn) = check_skills(action, |target| target.check(None, None))?;
                Ok(Command::Skills { action, conn })
            }
            Sub::Prompts { json, target } => Ok(Command::Prompts {
                json,
                conn: target.check(None, None)?,
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
                conn: target.check(None, None)?,
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
                conn: target.check(None, None)?,
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

/// Checks `skills ...` (`check` checks the target).
fn check_skills(
    sub: SkillsSub,
    check: impl FnOnce(TargetArgs) -> Result<Conn, String>,
) -> Result<(crate::skills::SkillsCommand, Conn), String> {
    match sub {
        SkillsSub::List { json, target } => {
            Ok((crate::skills::SkillsCommand::List { json }, check(target)?))
        }
        SkillsSub::Get {
            skill,
            file,
            output,
            json,
            target,
        } => {
            if skill.trim().is_empty() {
                return Err("the skill is empty".into());
            }
            let command = crate::skills::SkillsCommand::Get {
                skill,
                file,
                output,
                json,
            };
            Ok((command, check(target)?))
        }
    }
}

impl TargetArgs {
    /// Checked, with `--session` and `--task-timeout` where the command has them.
    fn check(
        self,
        session: Option<String>,
        task_timeout: Option<Duration>,
    ) -> Result<Conn, String> {
        Ok(Conn {
            era: self.era,
            timeout: self.timeout,
            task_timeout,
            shown: Shown {
                quiet: self.quiet,
                verbose: self.verbose,
                wire: self.wire,
            },
            target: self.target(session)?,
        })
    }

    fn target(self, session: Option<String>) -> Result<Target, String> {
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
                if session.is_some() && self.era == EraArg::Modern {
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
                    session,
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
                if session.is_some() {
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
