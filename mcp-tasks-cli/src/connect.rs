//! Connecting to the server: the client built from the checked command line (era, auth, TLS,
//! the stdio server's process), with the era remembered between commands.

use crate::answers::Answers;
use crate::cli::EraArg;
use crate::command::{Conn, ServerStderr, Target};
use crate::duration::RequestTimeout;
use crate::era_cache::{EraCache, cache_key};
use crate::handler::CliHandler;
use crate::outcome::{Outcome, timeout_hint};
use crate::ui::Ui;
use mcp_tasks_client::{Client, EraChoice, Error};
use std::sync::Arc;
use std::time::Duration;

/// Connects. With `--era auto`, a server whose era an earlier command found is spoken to in that
/// era at once (see [`EraCache`]): the client's era probe (`server/discover`, then `initialize`
/// if the server does not answer it as a 2026-07-28 server; see `EraChoice::Auto`) runs once
/// per server, not on every command. A remembered era that no longer works is forgotten and the
/// probe runs again; so is a remembered 2025-11-25 that a call shows wrong (see
/// [`forget_era`]).
///
/// Connecting (the probe, `initialize`, a probe again after a remembered era failed) is bounded
/// as a whole by `--timeout` (60 s by default), so a server that answers nothing fails after
/// that time, not after the sum of each request's wait.
pub async fn connect(conn: &Conn, ui: &Arc<Ui>, answers: Answers) -> Result<Client, Outcome> {
    let limit = match conn.timeout {
        None => Some(DEFAULT_TIMEOUT),
        Some(RequestTimeout(limit)) => limit,
    };
    let Some(limit) = limit else {
        return connect_unbounded(conn, ui, answers).await;
    };
    match tokio::time::timeout(limit, connect_unbounded(conn, ui, answers)).await {
        Ok(connected) => connected,
        Err(_) => {
            eprintln!(
                "mcp-tasks: could not connect: no answer to {} within {}; the server is stuck or \
                 slow (--timeout DURATION waits longer)",
                ui.last_request()
                    .unwrap_or_else(|| "the first request".into()),
                spaced(limit)
            );
            Err(Outcome::Failure)
        }
    }
}

/// The client's own default request timeout, which bounds connecting when `--timeout` is not
/// given.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the era probe waits for its first answer at most (the client's default).
const PROBE_WAIT: Duration = Duration::from_secs(5);

/// `1 s`, `500 ms`, `1.5 s`: as the client says a timeout.
fn spaced(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

async fn connect_unbounded(conn: &Conn, ui: &Arc<Ui>, answers: Answers) -> Result<Client, Outcome> {
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

/// Forgets the era remembered for the server of `conn`, when the era was not chosen on the
/// command line; whether it was remembered (so that connecting again probes).
pub fn forget_era(conn: &Conn) -> bool {
    let joins = matches!(
        &conn.target,
        Target::Http {
            session: Some(_),
            ..
        }
    );
    if conn.era != EraArg::Auto || joins {
        return false;
    }
    let cache = EraCache::open();
    let key = cache_key(&conn.target);
    let known = cache.get(&key).is_some();
    cache.forget(&key);
    known
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
    // The probe's wait is a part of the whole connection's (see `connect`): at most half of it,
    // so that `initialize` still has its turn after a probe that went unanswered.
    let builder = match conn.timeout.map_or(Some(DEFAULT_TIMEOUT), |t| t.0) {
        Some(limit) => builder.discover_timeout(PROBE_WAIT.min(limit / 2)),
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
