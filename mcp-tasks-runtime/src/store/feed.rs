//! The change feed of a store that several server instances share (Redis, Postgres): every
//! change is a message on a channel of the backend's (Redis pub/sub, Postgres `NOTIFY`); each
//! store keeps one connection that listens there ([`listen`]), reconnects when it is lost, and
//! hands each message to the store's local waiters ([`Feed::wait`], what
//! [`TaskStore::changed`](super::TaskStore::changed) waits on) and subscribers
//! ([`TaskStore::subscribe`](super::TaskStore::subscribe)). What differs between the backends
//! (how to connect and listen, whether a store hears its own changes) stays with them.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use tokio::sync::{broadcast, watch};

use super::{StoreError, TaskEvent, TaskRecord};
use crate::protocol::task::{Owner, TaskId};

/// How many events a [`TaskStore::subscribe`](super::TaskStore::subscribe) receiver may fall
/// behind before it lags.
const EVENT_CAPACITY: usize = 1024;

/// What a local waiter learns.
#[derive(Debug, Clone)]
enum Note {
    /// Nothing yet.
    Quiet,
    /// The task reached this version; the record comes along when it is at hand.
    Changed(u64, Option<Arc<TaskRecord>>),
    /// The task was deleted.
    Removed,
    /// Messages may have been missed: re-read the task.
    Resync,
}

/// A message of the feed: `["kind",version,"id","origin"]\n<body>`, where kind is `u` (visible
/// change; body: the record, or empty when it is too large for the channel), `i` (invisible
/// change, no body) or `d` (deleted; body: the owner). `origin` names the store that made the
/// change, for a store that skips its own (the Redis store's messages have none); `limit` is the
/// longest message the channel carries.
pub(super) fn message(
    kind: &str,
    version: u64,
    id: &TaskId,
    origin: Option<&str>,
    body: &str,
    limit: usize,
) -> Result<String, StoreError> {
    let head = match origin {
        Some(origin) => serde_json::to_string(&(kind, version, id, origin)),
        None => serde_json::to_string(&(kind, version, id)),
    };
    let head = head.map_err(StoreError::backend)?;
    if head.len() + 1 + body.len() > limit {
        return Ok(format!("{head}\n"));
    }
    Ok(format!("{head}\n{body}"))
}

/// The head of a [`message`]: kind, version, task, origin (if any).
#[derive(wire::Deserialize)]
struct Head(String, u64, TaskId, #[serde(default)] Option<String>);

/// A store's local waiters and subscribers, and whether its listener listens. Not nameable
/// outside this crate.
#[derive(Debug)]
pub struct Feed {
    /// Local waiters of `changed`, by task.
    waiters: Mutex<HashMap<TaskId, watch::Sender<Note>>>,
    events: broadcast::Sender<TaskEvent>,
    /// Set once the listener has listened for the first time.
    listening: watch::Sender<bool>,
    online: AtomicBool,
    /// How many times the listener has connected.
    connections: AtomicU64,
    /// How often a waiter re-reads its task when nothing woke it, if ever: the bound on a wake-up
    /// lost with an instance that died between making a change and sending its message.
    resync: Option<Duration>,
}

impl Feed {
    pub(super) fn new(resync: Option<Duration>) -> Self {
        Feed {
            waiters: Mutex::default(),
            events: broadcast::channel(EVENT_CAPACITY).0,
            listening: watch::channel(false).0,
            online: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            resync,
        }
    }

    /// [`TaskStore::subscribe`](super::TaskStore::subscribe).
    pub(super) fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.events.subscribe()
    }

    /// Whether the listener is connected now.
    pub(super) fn online(&self) -> bool {
        self.online.load(Ordering::Relaxed)
    }

    /// How many times the listener has connected: each time after the first, the backend may
    /// have restarted meanwhile.
    pub(super) fn connections(&self) -> u64 {
        self.connections.load(Ordering::Acquire)
    }

    /// Waits (up to `timeout`) until the listener has listened once; else fails with `error`.
    pub(super) async fn listening(
        &self,
        timeout: Duration,
        error: &'static str,
    ) -> Result<(), StoreError> {
        if *self.listening.borrow() {
            return Ok(());
        }
        let mut listening = self.listening.subscribe();
        match tokio::time::timeout(timeout, listening.wait_for(|on| *on)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StoreError::backend(error)),
        }
    }

    /// The listener (re)connected: messages sent while nobody listened went unheard, so every
    /// waiter re-reads.
    fn connected(&self) {
        self.connections.fetch_add(1, Ordering::AcqRel);
        self.online.store(true, Ordering::Relaxed);
        self.listening.send_replace(true);
        for waiter in lock(&self.waiters).values() {
            waiter.send_replace(Note::Resync);
        }
    }

    /// The task reached `version`, with its record when at hand; subscribers hear of a visible
    /// change that brings its record. A waiter that knows of a later version already keeps it.
    pub(super) fn changed(
        &self,
        id: &TaskId,
        version: u64,
        record: Option<Arc<TaskRecord>>,
        visible: bool,
    ) {
        if let Some(waiter) = lock(&self.waiters).get(id) {
            waiter.send_if_modified(|note| match note {
                Note::Changed(seen, _) if *seen >= version => false,
                _ => {
                    *note = Note::Changed(version, record.clone());
                    true
                }
            });
        }
        if let (true, Some(record)) = (visible, record)
            && self.events.receiver_count() > 0
        {
            let _ = self.events.send(TaskEvent::Updated(record));
        }
    }

    /// The task was deleted: its waiters fail, subscribers hear of it (when the owner is known).
    pub(super) fn removed(&self, id: TaskId, owner: Option<Owner>) {
        if let Some(waiter) = lock(&self.waiters).get(&id) {
            waiter.send_replace(Note::Removed);
        }
        if let Some(owner) = owner
            && self.events.receiver_count() > 0
        {
            let _ = self.events.send(TaskEvent::Removed { id, owner });
        }
    }

    /// Handles one message of the feed (see [`message`]); one whose origin is `ignore` (a store
    /// that tells its own waiters of its changes directly) is skipped. The record of a visible
    /// change too large to travel is read with `read` when subscribers want it. Returns the task
    /// the message says was deleted.
    pub(super) async fn dispatch<F, R>(
        &self,
        message: &[u8],
        ignore: Option<&str>,
        read: F,
    ) -> Option<TaskId>
    where
        F: FnOnce(TaskId) -> R,
        R: Future<Output = Option<TaskRecord>>,
    {
        let split = message.iter().position(|b| *b == b'\n')?;
        let (head, body) = (&message[..split], &message[split + 1..]);
        let Ok(Head(kind, version, id, origin)) = serde_json::from_slice(head) else {
            tracing::warn!("ignoring a malformed message on the change feed");
            return None;
        };
        if ignore.is_some() && ignore == origin.as_deref() {
            return None;
        }
        let waited = lock(&self.waiters).contains_key(&id);
        let wanted = self.events.receiver_count() > 0;
        match kind.as_str() {
            "u" | "i" => {
                let visible = kind == "u";
                let mut record = if visible && !body.is_empty() && (wanted || waited) {
                    serde_json::from_slice::<TaskRecord>(body)
                        .ok()
                        .map(Arc::new)
                } else {
                    None
                };
                if record.is_none() && visible && wanted {
                    // Too large to travel: read it back (in order, on the listener's loop).
                    record = read(id.clone()).await.map(Arc::new);
                }
                self.changed(&id, version, record, visible);
                None
            }
            "d" => {
                let owner = serde_json::from_slice::<Owner>(body).ok();
                self.removed(id.clone(), owner);
                Some(id)
            }
            _ => {
                tracing::warn!(kind, "ignoring an unknown message on the change feed");
                None
            }
        }
    }

    /// The task once its version is past `seen` (or behind it: see below), read with `read` first and whenever a message
    /// does not bring it (see [`TaskStore::changed`](super::TaskStore::changed)). Listens before
    /// reading, so a change between the read and the wait is not missed. A re-read that fails
    /// (the backend away, say) is tried again at the next message or resync rather than failing
    /// the waiter.
    pub(super) async fn wait<F, R>(
        &self,
        id: &TaskId,
        seen: u64,
        read: F,
    ) -> Result<TaskRecord, StoreError>
    where
        F: Fn() -> R,
        R: Future<Output = Result<Option<TaskRecord>, StoreError>>,
    {
        let mut notes = Waiter::register(self, id);
        let mut record = read().await?.ok_or(StoreError::NotFound)?;
        loop {
            // Past `seen`, or behind it: a store restored from an older copy (Redis from its
            // last snapshot) has lost the versions up to `seen`, and waiting for one past it
            // would miss every change until the task got that far again.
            if record.version != seen {
                return Ok(record);
            }
            let note = {
                let receiver = notes.receiver();
                let woken = match self.resync {
                    Some(every) => tokio::time::timeout(every, receiver.changed()).await,
                    None => Ok(receiver.changed().await),
                };
                match woken {
                    Ok(Ok(())) => receiver.borrow_and_update().clone(),
                    Ok(Err(_)) => return Err(StoreError::NotFound),
                    Err(_) => Note::Resync,
                }
            };
            record = match note {
                Note::Quiet => continue,
                Note::Removed => return Err(StoreError::NotFound),
                Note::Changed(version, _) if version <= seen => continue,
                Note::Changed(_, Some(changed)) => Arc::unwrap_or_clone(changed),
                Note::Changed(_, None) | Note::Resync => match read().await {
                    Ok(Some(record)) => record,
                    Ok(None) => return Err(StoreError::NotFound),
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
struct Waiter<'a> {
    feed: &'a Feed,
    id: TaskId,
    receiver: Option<watch::Receiver<Note>>,
}

impl<'a> Waiter<'a> {
    fn register(feed: &'a Feed, id: &TaskId) -> Self {
        let receiver = lock(&feed.waiters)
            .entry(id.clone())
            .or_insert_with(|| watch::channel(Note::Quiet).0)
            .subscribe();
        Waiter {
            feed,
            id: id.clone(),
            receiver: Some(receiver),
        }
    }

    fn receiver(&mut self) -> &mut watch::Receiver<Note> {
        self.receiver.as_mut().expect("present until drop")
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut waiters = lock(&self.feed.waiters);
        if waiters
            .get(&self.id)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            waiters.remove(&self.id);
        }
    }
}

/// The messages of one connection to the channel; it ends when the connection does.
pub(super) type Messages = Pin<Box<dyn Stream<Item = Vec<u8>> + Send>>;

/// What a store gives its listener: its feed, how to connect to the channel, how to handle a
/// message.
pub(super) trait Listener: Send + Sync + 'static {
    /// The backend's name, for the logs.
    const NAME: &'static str;

    fn feed(&self) -> &Feed;

    /// How long a connection attempt may take.
    fn timeout(&self) -> Duration;

    /// The longest pause between attempts to connect.
    fn reconnect_max(&self) -> Duration;

    /// Connects and listens on the channel.
    fn connect(&self) -> impl Future<Output = Result<Messages, String>> + Send;

    /// Handles one message.
    fn dispatch(&self, message: Vec<u8>) -> impl Future<Output = ()> + Send;
}

/// The listener loop: keeps one connection listening on the channel, hands each message to the
/// store, and reconnects (then has every waiter re-read) when the connection is lost. Ends when
/// the store is dropped.
pub(super) async fn listen<S: Listener>(store: Weak<S>) {
    let mut delay = Duration::from_millis(50);
    loop {
        let Some(most) = store.upgrade().map(|s| s.reconnect_max()) else {
            return;
        };
        let connected = match store.upgrade() {
            Some(s) => tokio::time::timeout(s.timeout(), s.connect()).await,
            None => return,
        };
        match connected {
            Ok(Ok(mut messages)) => {
                delay = Duration::from_millis(50);
                match store.upgrade() {
                    Some(s) => s.feed().connected(),
                    None => return,
                }
                while let Some(message) = messages.next().await {
                    let Some(s) = store.upgrade() else {
                        return;
                    };
                    s.dispatch(message).await;
                }
                drop(messages);
                if let Some(s) = store.upgrade() {
                    s.feed().online.store(false, Ordering::Relaxed);
                }
                tracing::warn!("the {} change feed was interrupted; reconnecting", S::NAME);
            }
            Ok(Err(error)) => tracing::debug!(%error, "the {} change feed cannot connect", S::NAME),
            Err(_) => tracing::debug!("the {} change feed timed out connecting", S::NAME),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(most);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The waiter table stays consistent (single inserts and removes).
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
