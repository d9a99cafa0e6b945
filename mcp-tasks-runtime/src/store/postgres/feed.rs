//! Wake-ups and events (see [`PostgresTaskStore`](super::PostgresTaskStore), "Wake-ups and
//! events"): changes this store commits are announced to its own waiters and subscribers directly
//! ([`Shared::announce`]); changes other instances commit arrive as notifications on the change
//! channel, which one dedicated connection listens to ([`listen`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::{mpsc, watch};
use tokio_postgres::{AsyncMessage, NoTls};

use super::{Shared, lock};
use crate::protocol::task::{Owner, TaskId};
use crate::store::{StoreError, TaskEvent, TaskRecord};

/// The largest notification payload Postgres takes is 8000 bytes; a record that fits (with the
/// header) travels along, a larger one is read back by the instances that need it.
const PAYLOAD_LIMIT: usize = 7900;

/// How often a waiter re-reads its task when nothing woke it: the bound on a wake-up lost with
/// an instance that died between committing a change and notifying it.
const RESYNC_EVERY: Duration = Duration::from_secs(5);

/// What a local waiter learns.
#[derive(Debug, Clone)]
pub(super) enum Note {
    /// Nothing yet.
    Quiet,
    /// The task reached this version; the record comes along when it is at hand.
    Changed(u64, Option<Arc<TaskRecord>>),
    /// The task was deleted.
    Removed,
    /// Notifications may have been missed: re-read the task.
    Resync,
}

/// A change-channel payload: `["kind",version,"id","origin"]\n<body>`, where kind is `u`
/// (visible change; body: the record, or empty when it is too large), `i` (invisible change, no
/// body) or `d` (deleted; body: the owner). `origin` names the store that made the change, which
/// ignores its own notifications (it announced them already).
pub(super) fn payload(
    kind: &str,
    version: u64,
    id: &TaskId,
    origin: &str,
    body: &str,
) -> Result<String, StoreError> {
    let head = serde_json::to_string(&(kind, version, id, origin)).map_err(StoreError::backend)?;
    if head.len() + 1 + body.len() > PAYLOAD_LIMIT {
        return Ok(format!("{head}\n"));
    }
    Ok(format!("{head}\n{body}"))
}

/// The listener loop: keeps one connection listening on the change channel, hands each
/// notification to local waiters and subscribers, and reconnects (then wakes every waiter to
/// re-read) when the connection is lost. Ends when the store is dropped.
pub(super) async fn listen(shared: Weak<Shared>) {
    let mut delay = Duration::from_millis(50);
    loop {
        let Some((config, channel, timeout, most)) = shared.upgrade().map(|s| {
            (
                s.config.clone(),
                s.channel.clone(),
                s.timeout,
                s.reconnect_max,
            )
        }) else {
            return;
        };
        let connected = tokio::time::timeout(timeout, async {
            let (client, mut connection) = config.connect(NoTls).await?;
            let (sender, receiver) = mpsc::unbounded_channel();
            // The connection's messages: notifications go to the loop below; the task ends
            // (closing the channel) when the connection does.
            let driver = tokio::spawn(async move {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(message) = messages.next().await {
                    match message {
                        Ok(AsyncMessage::Notification(n)) => {
                            if sender.send(n.payload().to_owned()).is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::debug!(%error, "the Postgres change listener failed");
                            return;
                        }
                    }
                }
            });
            client
                .batch_execute(&format!("LISTEN \"{channel}\""))
                .await?;
            Ok::<_, tokio_postgres::Error>((client, receiver, driver))
        })
        .await;
        match connected {
            Ok(Ok((client, mut receiver, driver))) => {
                delay = Duration::from_millis(50);
                {
                    let Some(shared) = shared.upgrade() else {
                        driver.abort();
                        return;
                    };
                    shared.online.store(true, Ordering::Relaxed);
                    shared.listening.send_replace(true);
                    // Changes committed while nobody listened went unheard: every waiter
                    // re-reads.
                    for waiter in lock(&shared.waiters).values() {
                        waiter.send_replace(Note::Resync);
                    }
                }
                while let Some(message) = receiver.recv().await {
                    let Some(shared) = shared.upgrade() else {
                        driver.abort();
                        return;
                    };
                    shared.dispatch(&message).await;
                }
                drop(client);
                if let Some(shared) = shared.upgrade() {
                    shared.online.store(false, Ordering::Relaxed);
                }
                tracing::warn!("the Postgres change listener was disconnected; reconnecting");
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "the Postgres change listener cannot connect")
            }
            Err(_) => tracing::debug!("the Postgres change listener timed out connecting"),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(most);
    }
}

impl Shared {
    /// Waits (up to the timeout) until the listener has listened once.
    pub(super) async fn listening(&self) -> Result<(), StoreError> {
        if *self.listening.borrow() {
            return Ok(());
        }
        let mut listening = self.listening.subscribe();
        match tokio::time::timeout(self.timeout, listening.wait_for(|on| *on)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StoreError::backend(
                "Postgres is unreachable: the change listener did not connect in time",
            )),
        }
    }

    /// Tells this store's waiters and subscribers about a change it committed.
    pub(super) fn announce(&self, record: &Arc<TaskRecord>, visible: bool) {
        self.keep_ended(record);
        if let Some(waiter) = lock(&self.waiters).get(&record.id) {
            waiter.send_if_modified(|note| match note {
                Note::Changed(version, _) if *version >= record.version => false,
                _ => {
                    *note = Note::Changed(record.version, Some(record.clone()));
                    true
                }
            });
        }
        if visible && self.events.receiver_count() > 0 {
            let _ = self.events.send(TaskEvent::Updated(record.clone()));
        }
    }

    /// Tells this store's waiters and subscribers that a task was deleted.
    pub(super) fn announce_removed(&self, id: TaskId, owner: Owner) {
        lock(&self.ended).remove(&id);
        if let Some(waiter) = lock(&self.waiters).get(&id) {
            waiter.send_replace(Note::Removed);
        }
        if self.events.receiver_count() > 0 {
            let _ = self.events.send(TaskEvent::Removed { id, owner });
        }
    }

    /// Handles one notification of another instance's change (see [`payload`]).
    async fn dispatch(&self, message: &str) {
        let Some((head, body)) = message.split_once('\n') else {
            return;
        };
        let Ok((kind, version, id, origin)) =
            serde_json::from_str::<(String, u64, TaskId, String)>(head)
        else {
            tracing::warn!("ignoring a malformed notification on the Postgres change channel");
            return;
        };
        if origin == self.origin {
            return;
        }
        let waiter = lock(&self.waiters).get(&id).cloned();
        let wanted = self.events.receiver_count() > 0;
        match kind.as_str() {
            "u" | "i" => {
                let mut record = if kind == "u" && !body.is_empty() && (wanted || waiter.is_some())
                {
                    serde_json::from_str::<TaskRecord>(body).ok().map(Arc::new)
                } else {
                    None
                };
                if record.is_none() && kind == "u" && wanted {
                    // Too large to travel: read it back (in order, on this loop).
                    record = self.read(&id, None).await.ok().flatten().map(Arc::new);
                }
                if let Some(waiter) = waiter {
                    waiter.send_replace(Note::Changed(version, record.clone()));
                }
                if let (true, Some(record)) = (wanted, record) {
                    let _ = self.events.send(TaskEvent::Updated(record));
                }
            }
            "d" => {
                lock(&self.ended).remove(&id);
                if let Some(waiter) = waiter {
                    waiter.send_replace(Note::Removed);
                }
                if wanted && let Ok(owner) = serde_json::from_str::<Owner>(body) {
                    let _ = self.events.send(TaskEvent::Removed { id, owner });
                }
            }
            _ => tracing::warn!(
                kind,
                "ignoring an unknown notification on the Postgres change channel"
            ),
        }
    }

    pub(super) async fn changed(
        self: &Arc<Self>,
        id: &TaskId,
        seen: u64,
    ) -> Result<TaskRecord, StoreError> {
        // Listen before reading, so a change between the read and the wait is not missed.
        let mut notes = Waiter::register(self, id);
        let mut record = self.read(id, None).await?.ok_or(StoreError::NotFound)?;
        loop {
            if record.version > seen {
                return Ok(record);
            }
            let note = {
                let receiver = notes.receiver();
                match tokio::time::timeout(RESYNC_EVERY, receiver.changed()).await {
                    Ok(Ok(())) => receiver.borrow_and_update().clone(),
                    Ok(Err(_)) => return Err(StoreError::NotFound),
                    // A notification can be lost (an instance that died between its commit and
                    // its notification): re-read now and then.
                    Err(_) => Note::Resync,
                }
            };
            record = match note {
                Note::Quiet => continue,
                Note::Removed => return Err(StoreError::NotFound),
                Note::Changed(version, _) if version <= seen => continue,
                Note::Changed(_, Some(changed)) => Arc::unwrap_or_clone(changed),
                Note::Changed(_, None) | Note::Resync => match self.read(id, None).await {
                    Ok(Some(record)) => record,
                    Ok(None) => return Err(StoreError::NotFound),
                    // Postgres is away (restarting, say): a waiter waits on, and reads again on
                    // the next wake-up or resync, rather than failing the task it waits for.
                    Err(error) => {
                        tracing::debug!(%error, task = %id, "a waiter could not re-read its task; waiting on");
                        continue;
                    }
                },
            };
        }
    }
}

/// A registration in the local waiter table; removes the table entry when the last waiter of
/// its task leaves.
struct Waiter {
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
