//! Wake-ups and events (see [`PostgresTaskStore`](super::PostgresTaskStore), "Wake-ups and
//! events", and [`crate::store::feed`]): changes this store commits are announced to its own
//! waiters and subscribers directly ([`Shared::announce`]); changes other instances commit arrive
//! as notifications on the change channel, which one dedicated connection listens to.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

use super::{Shared, lock};
use crate::protocol::task::{Owner, TaskId};
use crate::store::feed::{self, Listener, Messages};
use crate::store::{StoreError, TaskRecord};

/// The largest notification payload Postgres takes is 8000 bytes; a record that fits (with the
/// header) travels along, a larger one is read back by the instances that need it.
const PAYLOAD_LIMIT: usize = 7900;

/// How often a waiter re-reads its task when nothing woke it: the bound on a wake-up lost with
/// an instance that died between committing a change and notifying it.
pub(super) const RESYNC_EVERY: Duration = Duration::from_secs(5);

/// A change-channel payload (see [`feed::message`]); `origin` names the store that made the
/// change, which ignores its own notifications (it announced them already).
pub(super) fn payload(
    kind: &str,
    version: u64,
    id: &TaskId,
    origin: &str,
    body: &str,
) -> Result<String, StoreError> {
    feed::message(kind, version, id, Some(origin), body, PAYLOAD_LIMIT)
}

/// Aborts the task that drives the listening connection once its messages are dropped.
struct Driver(JoinHandle<()>);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Listener for Shared {
    const NAME: &'static str = "Postgres";

    fn feed(&self) -> &feed::Feed {
        &self.feed
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn reconnect_max(&self) -> Duration {
        self.reconnect_max
    }

    async fn connect(&self) -> Result<Messages, String> {
        let (client, mut connection) =
            (self.config.connect(NoTls).await).map_err(|e| e.to_string())?;
        let (sender, receiver) = mpsc::unbounded_channel::<String>();
        // The connection's messages: notifications go to the stream below; the task ends
        // (closing the channel) when the connection does.
        let driver = Driver(tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
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
        }));
        let listen = format!("LISTEN \"{}\"", self.channel);
        client
            .batch_execute(&listen)
            .await
            .map_err(|e| e.to_string())?;
        // The stream keeps the client and the driver for as long as it is read.
        let messages = futures_util::stream::unfold(
            (client, receiver, driver),
            |(client, mut receiver, driver)| async move {
                let message = receiver.recv().await?;
                Some((message.into_bytes(), (client, receiver, driver)))
            },
        );
        Ok(Box::pin(messages))
    }

    async fn dispatch(&self, message: Vec<u8>) {
        let read = |id: TaskId| async move { self.read(&id, None).await.ok().flatten() };
        let origin = Some(self.origin.as_str());
        if let Some(removed) = self.feed.dispatch(&message, origin, read).await {
            lock(&self.ended).remove(&removed);
        }
    }
}

impl Shared {
    /// Waits (up to the timeout) until the listener has listened once.
    pub(super) async fn listening(&self) -> Result<(), StoreError> {
        let error = "Postgres is unreachable: the change listener did not connect in time";
        self.feed.listening(self.timeout, error).await
    }

    /// Tells this store's waiters and subscribers about a change it committed.
    pub(super) fn announce(&self, record: &Arc<TaskRecord>, visible: bool) {
        self.keep_ended(record);
        let (id, version) = (&record.id, record.version);
        self.feed
            .changed(id, version, Some(record.clone()), visible);
    }

    /// Tells this store's waiters and subscribers that a task was deleted.
    pub(super) fn announce_removed(&self, id: TaskId, owner: Owner) {
        lock(&self.ended).remove(&id);
        self.feed.removed(id, Some(owner));
    }
}
