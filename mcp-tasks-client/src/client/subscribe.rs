//! Resource subscriptions: `notifications/resources/updated` for one URI, delivered to the caller.
//! 2025-11-25: `resources/subscribe` / `resources/unsubscribe`, the notifications on the session.
//! 2026-07-28: a `subscriptions/listen` request with `notifications.resourceSubscriptions`, held
//! open for the subscription's life; its notifications carry the request's id
//! (`io.modelcontextprotocol/subscriptionId`), and ending it ends the subscription.

use super::Client;
use crate::error::Error;
use crate::peer::Notification;
use crate::session::Session;
use mcp_tasks_runtime::__internal::race::{Either, first};
use mcp_tasks_runtime::protocol::RpcError;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::{broadcast, oneshot};

/// The `_meta` key that ties a notification to its `subscriptions/listen` request.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A subscription to one resource's changes, from [`Client::subscribe_resource`]. Wait for the
/// next change with [`next`](Self::next); end it with [`unsubscribe`](Self::unsubscribe).
/// Dropping it stops a 2026-07-28 subscription (the listen request is cancelled); a 2025-11-25
/// server keeps sending until the session ends, unless told with `unsubscribe`.
#[derive(Debug)]
pub struct ResourceSubscription {
    uri: String,
    session: Arc<Session>,
    notes: broadcast::Receiver<Notification>,
    listen: Option<Listen>,
}

/// The `subscriptions/listen` request behind a 2026-07-28 subscription.
#[derive(Debug)]
struct Listen {
    id: Value,
    task: tokio::task::JoinHandle<()>,
    /// Resolves when the request is answered (the server ended the subscription) or failed.
    ended: oneshot::Receiver<Result<Result<Value, RpcError>, Error>>,
}

impl Drop for ResourceSubscription {
    fn drop(&mut self) {
        if let Some(listen) = &self.listen {
            // Dropping the request tells the server (`notifications/cancelled`, or the HTTP
            // response stream closed).
            listen.task.abort();
        }
    }
}

fn subscription_id(params: &Value) -> Option<&Value> {
    params.get("_meta").and_then(|m| m.get(SUBSCRIPTION_ID))
}

impl ResourceSubscription {
    /// The URI subscribed to.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the next `notifications/resources/updated` of this subscription and returns the
    /// URI it names (the subscribed one, or one under it: a server may name a sub-resource).
    /// `None` when the subscription or the connection has ended. Notifications missed because
    /// the caller fell far behind count as one change.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            let note = match &mut self.listen {
                // A notification already there before the end.
                Some(listen) => match first(self.notes.recv(), &mut listen.ended).await {
                    Either::Left(note) => note,
                    Either::Right(_) => return None,
                },
                None => self.notes.recv().await,
            };
            let note = match note {
                Ok(n) => n,
                Err(broadcast::error::RecvError::Lagged(_)) => return Some(self.uri.clone()),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            if note.method != "notifications/resources/updated" {
                continue;
            }
            let Some(uri) = note.params.get("uri").and_then(Value::as_str) else {
                continue;
            };
            let ours = match &self.listen {
                Some(listen) => subscription_id(&note.params) == Some(&listen.id),
                None => {
                    uri == self.uri
                        || uri
                            .strip_prefix(self.uri.as_str())
                            .is_some_and(|rest| rest.starts_with('/') || self.uri.ends_with('/'))
                }
            };
            if ours {
                return Some(uri.to_owned());
            }
        }
    }

    /// Ends the subscription: `resources/unsubscribe` (2025-11-25), or the `subscriptions/listen`
    /// request cancelled (2026-07-28).
    pub async fn unsubscribe(mut self) -> Result<(), Error> {
        match self.listen.take() {
            Some(Listen { task, .. }) => {
                task.abort();
                // Once the request's future is gone, the server has been told.
                let _ = task.await;
                Ok(())
            }
            None => self
                .session
                .call("resources/unsubscribe", json!({ "uri": self.uri }))
                .await
                .map(drop),
        }
    }
}

impl Client {
    /// Subscribes to a resource's changes: each `notifications/resources/updated` the server
    /// sends for it is delivered by the [`ResourceSubscription`]. 2025-11-25:
    /// `resources/subscribe` (a server without subscriptions answers with an error,
    /// [`Error::Rpc`]). 2026-07-28: a `subscriptions/listen` stream for this URI, ready once the
    /// server acknowledged it; a server that acknowledges without the URI is
    /// [`Error::SubscriptionRefused`], one that does not acknowledge within the request timeout
    /// [`Error::Timeout`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<ResourceSubscription, Error> {
        let session = self.inner.clone();
        let mut notes = session.peer().subscribe();
        if !session.era.is_modern() {
            session
                .call("resources/subscribe", json!({ "uri": uri }))
                .await?;
            return Ok(ResourceSubscription {
                uri: uri.to_owned(),
                session,
                notes,
                listen: None,
            });
        }
        let method = "subscriptions/listen";
        let peer = session.peer().clone();
        let id = peer.next_request_id();
        let id_value = id.to_value();
        let params = session.params(json!({
            "notifications": { "resourceSubscriptions": [uri] }
        }));
        let limit = peer.timeout();
        let (tx, ended) = oneshot::channel();
        let task = tokio::spawn(async move {
            let outcome = peer.request_as(id, method, params).await;
            let _ = tx.send(outcome);
        });
        let abort = task.abort_handle();
        let listen = Listen {
            id: id_value.clone(),
            task,
            ended,
        };
        let acknowledged = async {
            let mut listen = listen;
            loop {
                // The acknowledgement, if it came, before the end.
                match first(notes.recv(), &mut listen.ended).await {
                    Either::Right(outcome) => {
                        return Err(match outcome {
                            Ok(Ok(Err(error))) => Error::Rpc {
                                method: method.into(),
                                error,
                            },
                            Ok(Err(e)) => e,
                            _ => Error::SubscriptionRefused {
                                uri: uri.to_owned(),
                                reason: "the server ended the subscription before acknowledging it"
                                    .into(),
                            },
                        });
                    }
                    Either::Left(note) => match note {
                        Ok(n)
                            if n.method == "notifications/subscriptions/acknowledged"
                                && subscription_id(&n.params) == Some(&id_value) =>
                        {
                            let agreed = n
                                .params
                                .pointer("/notifications/resourceSubscriptions")
                                .and_then(Value::as_array)
                                .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri)));
                            if !agreed {
                                listen.task.abort();
                                return Err(Error::SubscriptionRefused {
                                    uri: uri.to_owned(),
                                    reason: "the server's acknowledgement does not list it".into(),
                                });
                            }
                            return Ok(listen);
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => {
                            listen.task.abort();
                            return Err(Error::transport("the connection closed"));
                        }
                    },
                }
            }
        };
        let listen = match limit {
            None => acknowledged.await?,
            Some(after) => match tokio::time::timeout(after, acknowledged).await {
                Ok(listen) => listen?,
                Err(_) => {
                    abort.abort();
                    return Err(Error::Timeout {
                        method: method.into(),
                        after,
                    });
                }
            },
        };
        Ok(ResourceSubscription {
            uri: uri.to_owned(),
            session,
            notes,
            listen: Some(listen),
        })
    }
}
