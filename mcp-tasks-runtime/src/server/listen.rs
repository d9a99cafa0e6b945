//! `subscriptions/listen` for task and resource notifications (2026-07-28). Resources: the client
//! names URIs in `params.notifications.resourceSubscriptions` (and may ask for
//! `resourcesListChanged`); the ones that name a resource of this server are acknowledged, and
//! each change the application announces through its `ResourceNotifier` comes as
//! `notifications/resources/updated` (or `notifications/resources/list_changed`).
//!
//! Tasks (tasks extension): the client names
//! task ids in `params.notifications.taskIds`; the server acknowledges the ones it agreed to
//! (`notifications/subscriptions/acknowledged`, always the first message of the subscription),
//! then sends `notifications/tasks` (the task as `tasks/get` shows it, without `resultType`) each
//! time one of them changes, until the client cancels the request (`notifications/cancelled`,
//! or closing the HTTP response). Every message carries the subscription id (the request's id)
//! in `_meta`.
//!
//! Only the caller's own tasks are agreed to: an id that is unknown, expired or someone else's is
//! left out of the acknowledgement and never reported, so a subscription tells nothing about
//! tasks the caller does not own. Changes come from the store's feed
//! ([`TaskStore::subscribe`](crate::store::TaskStore::subscribe)), one notification per visible
//! change in order; a listener that falls behind re-reads its tasks.

use super::inner::ServerInner;
use super::peer::Peer;
use crate::protocol::Params;
use crate::protocol::jsonrpc::{RequestId, RpcError, notification_message};
use crate::protocol::meta;
use crate::protocol::task::{Owner, TaskId};
use crate::race::{Either, first, or_never, unless};
use crate::resource::ResourceEvent;
use crate::store::{TaskEvent, TaskRecord};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// What a `subscriptions/listen` request asks for, read and checked before anything is sent.
pub(crate) struct Listen {
    task_ids: Vec<TaskId>,
    /// `resourceSubscriptions`, when asked for.
    resources: Option<Vec<String>>,
    /// `resourcesListChanged: true`.
    resources_list_changed: bool,
}

impl Listen {
    /// Reads `params.notifications`. `declared`: whether the request declares the tasks
    /// extension; asking for task notifications without it is `-32021` (`missing`).
    pub(crate) fn parse(
        params: &Params,
        declared: bool,
        missing: impl FnOnce() -> RpcError,
    ) -> Result<Listen, RpcError> {
        let notifications = match params.value("notifications") {
            None => {
                return Err(RpcError::invalid_params(
                    "missing required parameter `notifications`",
                ));
            }
            Some(Value::Object(n)) => n,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`notifications` must be an object",
                ));
            }
        };
        let task_ids = match notifications.get("taskIds") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(ids)) => {
                if !declared {
                    return Err(missing());
                }
                ids.iter()
                    .map(|id| match id {
                        Value::String(id) => Ok(TaskId::from(id.as_str())),
                        _ => Err(RpcError::invalid_params(
                            "`notifications.taskIds` must be an array of strings",
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`notifications.taskIds` must be an array of strings",
                ));
            }
        };
        let resources = match notifications.get("resourceSubscriptions") {
            None | Some(Value::Null) => None,
            Some(Value::Array(uris)) => Some(
                uris.iter()
                    .map(|uri| match uri {
                        Value::String(uri) => Ok(uri.clone()),
                        _ => Err(RpcError::invalid_params(
                            "`notifications.resourceSubscriptions` must be an array of strings",
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`notifications.resourceSubscriptions` must be an array of strings",
                ));
            }
        };
        let resources_list_changed = match notifications.get("resourcesListChanged") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`notifications.resourcesListChanged` must be a boolean",
                ));
            }
        };
        Ok(Listen {
            task_ids,
            resources,
            resources_list_changed,
        })
    }

    /// Acknowledges, then reports every change of the agreed tasks until `cancel`. Returns only
    /// when cancelled (no response is due then).
    pub(crate) async fn run(
        self,
        server: &ServerInner,
        peer: &dyn Peer,
        id: &RequestId,
        owner: Owner,
        cancel: CancellationToken,
    ) -> Option<Result<Value, RpcError>> {
        let store = server.engine().store().clone();
        // Listening starts before the tasks are read, so no change between the two is missed.
        let mut events = store.subscribe();
        let mut resource_events = server.resource_notifier.subscribe();
        // Only URIs that name a resource of this server are agreed to, as only known tasks are.
        let has_resources = !server.resources.is_empty();
        let resources: Option<Vec<String>> = self.resources.map(|uris| {
            let mut agreed: Vec<String> = Vec::new();
            for uri in uris {
                if server.resources.find(&uri).is_some() && !agreed.contains(&uri) {
                    agreed.push(uri);
                }
            }
            agreed
        });
        let list_changed = self.resources_list_changed && has_resources;
        let mut agreed: Vec<TaskRecord> = Vec::new();
        for task in self.task_ids {
            if agreed.iter().any(|r| r.id == task) {
                continue;
            }
            match store.get(&task, &owner).await {
                Ok(Some(record)) => agreed.push(record),
                Ok(None) => {}
                Err(e) => return Some(Err(e.into())),
            }
        }
        let sub = Subscription {
            peer,
            id: id.to_value(),
        };
        let ids: Vec<&str> = agreed.iter().map(|r| r.id.as_str()).collect();
        let mut acknowledged = json!({ "taskIds": ids });
        if let Some(uris) = &resources {
            acknowledged["resourceSubscriptions"] = json!(uris);
        }
        if list_changed {
            acknowledged["resourcesListChanged"] = json!(true);
        }
        sub.send(
            "notifications/subscriptions/acknowledged",
            json!({ "notifications": acknowledged }),
        );
        let resources = resources.unwrap_or_default();
        let watch_resources = !resources.is_empty() || list_changed;
        let mut watching: Vec<Watched> = Vec::new();
        for record in agreed {
            let mut watched = Watched {
                id: record.id.clone(),
                version: 0,
                last: None,
            };
            if watched.report(&sub, &record) {
                watching.push(watched);
            }
        }
        while !watching.is_empty() || watch_resources {
            // The resources' feed before the tasks': the store's feed carries every task's
            // changes, and may always have one ready on a busy server.
            let resource_event = or_never(watch_resources.then(|| resource_events.recv()));
            let task_event = or_never((!watching.is_empty()).then(|| events.recv()));
            let event = match unless(cancel.cancelled(), first(resource_event, task_event)).await {
                None => return None,
                Some(Either::Right(event)) => event,
                Some(Either::Left(event)) => {
                    match event {
                        Ok(ResourceEvent::Updated(uri)) if resources.contains(&uri) => {
                            sub.send("notifications/resources/updated", json!({ "uri": uri }))
                        }
                        Ok(ResourceEvent::ListChanged) if list_changed => {
                            sub.send("notifications/resources/list_changed", json!({}));
                        }
                        _ => {}
                    }
                    continue;
                }
            };
            match event {
                Ok(TaskEvent::Updated(record)) => {
                    if record.owner != owner {
                        continue;
                    }
                    if let Some(at) = watching.iter().position(|w| w.id == record.id)
                        && !watching[at].report(&sub, &record)
                    {
                        watching.swap_remove(at);
                    }
                }
                Ok(TaskEvent::Removed { id, .. }) => watching.retain(|w| w.id != id),
                // Fell behind the feed: what each task is now is what counts.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let mut still = Vec::new();
                    for mut watched in watching {
                        if let Ok(Some(record)) = store.get(&watched.id, &owner).await
                            && watched.report(&sub, &record)
                        {
                            still.push(watched);
                        }
                    }
                    watching = still;
                }
                Err(broadcast::error::RecvError::Closed) => {
                    watching.clear();
                    if !watch_resources {
                        break;
                    }
                }
            }
        }
        // Nothing more to report; the subscription stays open until the client ends it.
        cancel.cancelled().await;
        None
    }
}

/// Where a subscription's messages go, and its id.
struct Subscription<'a> {
    peer: &'a dyn Peer,
    id: Value,
}

impl Subscription<'_> {
    fn send(&self, method: &str, mut params: Value) {
        if let Value::Object(p) = &mut params {
            p.insert("_meta".into(), json!({ meta::SUBSCRIPTION_ID: self.id }));
        }
        self.peer.send(notification_message(method, params));
    }
}

/// One subscribed task: the newest version reported and what it showed.
struct Watched {
    id: TaskId,
    version: u64,
    last: Option<Value>,
}

impl Watched {
    /// Sends `notifications/tasks` for `record` if it is newer than what was reported and shows
    /// something new (a lease renewal, say, shows nothing). `false` once the task is terminal:
    /// nothing more will change.
    fn report(&mut self, sub: &Subscription<'_>, record: &TaskRecord) -> bool {
        if record.version <= self.version {
            return true;
        }
        self.version = record.version;
        let params = record.modern_notification_params();
        if self.last.as_ref() != Some(&params) {
            sub.send("notifications/tasks", params.clone());
            self.last = Some(params);
        }
        !record.status.is_terminal()
    }
}
