//! Connecting to the server: the client built from the checked command line (era, auth, TLS,
//! the stdio server's process), with the era remembered between commands.

use crate::answers::Answers;
use crate::cli::EraArg;
use crate::command::{Conn, ServerStderr, Target};
use crate::era_cache::{EraCache, cache_key};
use crate::handler::CliHandler;
use crate::outcome::{Outcome, timeout_hint};
use crate::ui::Ui;
use mcp_tasks_client::{Client, EraChoice, Error};
use std::sync::Arc;

/// Connects. With `--era auto`, a server whose era an earlier command found is spoken to in that
/// era at once (see [`EraCache`]): the client's era probe (`ping`, then `server/discover` or
/// `initialize`; see `EraChoice::Auto`) runs once per server, not on every command. A pinned era
/// that no longer works is forgotten and the probe runs again.
pub async fn connect(conn: &Conn, ui: &Arc<Ui>, answers: Answers) -> Result<Client, Outcome> {
    let cache = EraCache::open();
    let key = cache_key(&conn.target);
    let joins = matches!(
        &conn.target,
        Target::Http {
            session: Some(_),
            ..
        }
    );
    let pinned = match conn.era {
        // A joined session is 2025-11-25 whatever the cache says; nothing to remember either.
        EraArg::Auto if joins => Some(EraChoice::Legacy),
        EraArg::Auto => cache.get(&key),
        EraArg::Legacy => Some(EraChoice::Legacy),
        EraArg::Modern => Some(EraChoice::Modern),
    };
    let mut connected = connect_as(conn, ui, &answers, pinned.unwrap_or(EraChoice::Auto)).await;
    if conn.era == EraArg::Auto && pinned.is_some() && !joins {
        match &connected {
            Ok(Ok(_)) => {}
            _ => {
                // The server changed: probe again.
                cache.forget(&key);
                connected = connect_as(conn, ui, &answers, EraChoice::Auto).await;
            }
        }
    }
    match connected {
        Ok(Ok(client)) => {
            if conn.era == EraArg::Auto && !joins {
                cache.remember(
                    &key,
                    if client.era().is_modern() {
                        EraChoice::Modern
                    } else {
                        EraChoice::Legacy
                    },
                );
            }
            Ok(client)
        }
        Ok(Err(e)) => {
            eprintln!("mcp-tasks: could not connect: {e}{}", timeout_hint(&e));
            Err(Outcome::Failure)
        }
        Err(outcome) => Err(outcome),
    }
}

/// One connection attempt in `era`; the outer `Err` is a usage mistake already reported.
async fn connect_as(
    conn: &Conn,
    ui: &Arc<Ui>,
    answers: &Answers,
    era: EraChoice,
) -> Result<Result<Client, Error>, Outcome> {
    let builder = Client::builder()
        .client_info("mcp-tasks-cli", env!("CARGO_PKG_VERSION"))
        .era(era)
        .handler(CliHandler {
            ui: ui.clone(),
            answers: Arc::new(answers.clone()),
        })
        .on_wire({
            let ui = ui.clone();
            move |direction, text| ui.wire(direction, text)
        });
    // Warnings and worse unless --verbose; --quiet shows none, so asks for the fewest.
    let builder = builder.log_level(match (conn.shown.verbose, conn.shown.quiet) {
        (true, _) => "debug",
        (_, true) => "emergency",
        _ => "warning",
    });
    let builder = match conn.timeout {
        Some(t) => builder.request_timeout(t.0),
        None => builder,
    };
    Ok(match &conn.target {
        Target::Http {
            url,
            token,
            credentials,
            session,
            ca_certs,
        } => {
            let builder =
                (ca_certs.iter()).fold(builder, |b, pem| b.root_certificate_pem(pem.clone()));
            let builder = match (token, credentials) {
                (Some(t), _) => builder.bearer_token(t.clone()),
                (None, Some(c)) => {
                    let builder = builder.client_credentials(&c.client_id, &c.client_secret);
                    match &c.scope {
                        Some(scope) => builder.oauth_scopes(scope.clone()),
                        None => builder,
                    }
                }
                (None, None) => builder,
            };
            let builder = match session {
                Some(id) => builder.legacy_session(id.clone()),
                None => builder,
            };
            builder.connect_http(url.clone()).await
        }
        Target::Stdio {
            program,
            args,
            stderr,
        } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            match stderr {
                ServerStderr::Inherit => {}
                ServerStderr::Null => {
                    command.stderr(std::process::Stdio::null());
                }
                ServerStderr::File(path) => {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path);
                    match file {
                        Ok(f) => {
                            command.stderr(f);
                        }
                        Err(e) => {
                            eprintln!(
                                "mcp-tasks: --server-stderr {}: cannot open it: {e}",
                                path.display()
                            );
                            return Err(Outcome::Failure);
                        }
                    }
                }
            }
            // Its own process group: Ctrl-C at the terminal is ours to handle (by cancelling the
            // task), not a signal that kills the server before it hears `tasks/cancel`.
            command.process_group(0);
            builder.connect_stdio(command).await
        }
    })
}
