//! The change feed and the wake-ups it brings (see [`RedisTaskStore`](super::RedisTaskStore),
//! "Wake-ups"): every change is published on `P:changes`; each store keeps one subscriber
//! connection ([`listen`]) and hands each message to its local waiters ([`Waiter`], what
//! [`TaskStore::changed`](crate::store::TaskStore::changed) waits on) and subscribers
//! ([`TaskStore::subscribe`](crate::store::TaskStore::subscribe)).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt as _;
use redis::{Client, RedisError};
use tokio::sync::watch;

use super::{Shared, lock};
use crate::protocol::task::{Owner, TaskId};
use crate::store::{StoreError, TaskEvent, TaskRecord};

/// What a local waiter learns from the change feed.
#[derive(Debug, Clone)]
pub(super) enum Note {
    /// Nothing yet.
    Quiet,
    /// The task reached this version; the record comes along for client-visible changes.
    Changed(u64, Option<Arc<TaskRecord>>),
    /// The task was deleted.
    Removed,
    /// The feed was interrupted: re-read the task.
    Resync,
}

/// A change-feed message: `["kind",version,"id"]\n<payload>`.
pub(super) fn note(kind: &str, version: u64, id: &TaskId, payload: &str) -> String {
    let head = serde_json::to_string(&(kind, version, id)).expect("a tuple of strings encodes");
    format!("{head}\n{payload}")
}

/// The subscriber loop: keeps one pub/sub connection subscribed to the change channel, hands each
/// message to local waiters and subscribers, and reconnects (then resyncs every waiter) when the
/// connection is lost. Ends when the store is dropped.
pub(super) async fn listen(client: Client, shared: std::sync::Weak<Shared>) {
    let mut delay = Duration::from_millis(50);
    loop {
        let (channel, timeout) = match shared.upgrade() {
            Some(shared) => (shared.keys.channel.clone(), shared.timeout),
            None => return,
        };
        let subscribed = tokio::time::timeout(timeout, async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, RedisError>(pubsub)
        })
        .await;
        match subscribed {
            Ok(Ok(pubsub)) => {
                delay = Duration::from_millis(50);
                {
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    shared.online.store(true, Ordering::Relaxed);
                    shared.listening.send_replace(true);
                    // Changes made while nobody listened went unheard: every waiter re-reads.
                    for waiter in lock(&shared.waiters).values() {
                        waiter.send_replace(Note::Resync);
                    }
                }
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    shared.dispatch(message.get_payload_bytes());
                }
                if let Some(shared) = shared.upgrade() {
                    shared.online.store(false, Ordering::Relaxed);
                }
                tracing::warn!("the Redis change feed was interrupted; reconnecting");
            }
            Ok(Err(error)) => tracing::debug!(%error, "the Redis change feed cannot connect"),
            Err(_) => tracing::debug!("the Redis change feed timed out connecting"),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(1));
    }
}

impl Shared {
    /// Waits (up to the timeout) until the change feed has been subscribed once, so that no
    /// change this store makes can go unheard by its own waiters and subscribers.
    pub(super) async fn ready(&self) -> Result<(), StoreError> {
        if *self.listening.borrow() {
            return Ok(());
        }
        let mut listening = self.listening.subscribe();
        match tokio::time::timeout(self.timeout, listening.wait_for(|on| *on)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StoreError::backend("Redis is unreachable (no change feed)")),
        }
    }

    /// Handles one message of the change feed: `[kind, version, id]\n<payload>`, where kind is
    /// `u` (visible change, payload: the record), `i` (invisible change, no payload) or `d`
    /// (deleted, payload: the owner).
    fn dispatch(&self, message: &[u8]) {
        let Some(split) = message.iter().position(|b| *b == b'\n') else {
            return;
        };
        let (head, body) = (&message[..split], &message[split + 1..]);
        let Ok((kind, version, id)) = serde_json::from_slice::<(String, u64, TaskId)>(head) else {
            tracing::warn!("ignoring a malformed message on the Redis change feed");
            return;
        };
        let waiter = lock(&self.waiters).get(&id).cloned();
        let wanted = self.events.receiver_count() > 0;
        match kind.as_str() {
            "u" | "i" => {
                let record = if kind == "u" && (wanted || waiter.is_some()) {
                    serde_json::from_slice::<TaskRecord>(body)
                        .ok()
                        .map(Arc::new)
                } else {
                    None
                };
                if let Some(waiter) = waiter {
                    waiter.send_replace(Note::Changed(version, record.clone()));
                }
                if let (true, Some(record)) = (wanted, record) {
                    let _ = self.events.send(TaskEvent::Updated(record));
                }
            }
            "d" => {
                if let Some(waiter) = waiter {
                    waiter.send_replace(Note::Removed);
                }
                if wanted && let Ok(owner) = serde_json::from_slice::<Owner>(body) {
                    let _ = self.events.send(TaskEvent::Removed { id, owner });
                }
            }
            _ => tracing::warn!(kind, "ignoring an unknown message on the Redis change feed"),
        }
    }

    pub(super) async fn changed(
        self: &Arc<Self>,
        id: &TaskId,
        seen: u64,
    ) -> Result<TaskRecord, StoreError> {
        // Listen before reading, so a change between the read and the wait is not missed.
        let mut notes = Waiter::register(self, id);
        let mut record = self.load(id).await?.ok_or(StoreError::NotFound)?;
        loop {
            if record.version > seen {
                return Ok(record);
            }
            let note = {
                let receiver = notes.receiver();
                if receiver.changed().await.is_err() {
                    return Err(StoreError::NotFound);
                }
                receiver.borrow_and_update().clone()
            };
            record = match note {
                Note::Quiet => continue,
                Note::Removed => return Err(StoreError::NotFound),
                Note::Changed(version, _) if version <= seen => continue,
                Note::Changed(_, Some(changed)) => Arc::unwrap_or_clone(changed),
                Note::Changed(_, None) | Note::Resync => {
                    self.load(id).await?.ok_or(StoreError::NotFound)?
                }
            };
        }
    }
}

/// A registration in the local waiter table; removes the table entry when the last waiter of
/// its task leaves.
pub(super) struct Waiter {
    shared: Arc<Shared>,
    id: TaskId,
    receiver: Option<watch::Receiver<Note>>,
}

impl Waiter {
    fn register(shared: &Arc<Shared>, id: &TaskId) -> Self {
        let receiver = lock(&shared.waiters)
            .entry(id.clone())
            .or_insert_with(|| watch::channel(Note::Quiet).0)
            .subscribe();
        Waiter {
            shared: shared.clone(),
            id: id.clone(),
            receiver: Some(receiver),
        }
    }

    fn receiver(&mut self) -> &mut watch::Receiver<Note> {
        self.receiver.as_mut().expect("present until drop")
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut waiters = lock(&self.shared.waiters);
        if waiters
            .get(&self.id)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            waiters.remove(&self.id);
        }
    }
}
