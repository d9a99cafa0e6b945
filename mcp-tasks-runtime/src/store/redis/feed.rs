//! The change feed (see [`RedisTaskStore`](super::RedisTaskStore), "Wake-ups", and
//! [`crate::store::feed`]): every change is published on `P:changes`, this store's own
//! included; the store hears them all on its subscriber connection.

use std::time::Duration;

use futures_util::StreamExt as _;

use super::Shared;
use crate::protocol::task::TaskId;
use crate::store::StoreError;
use crate::store::feed::{self, Listener, Messages};

/// A change-feed message (see [`feed::message`]); Redis messages have no origin (every store
/// hears its own) and no limit on their length.
pub(super) fn note(kind: &str, version: u64, id: &TaskId, payload: &str) -> String {
    feed::message(kind, version, id, None, payload, usize::MAX).expect("a tuple of strings encodes")
}

impl Listener for Shared {
    const NAME: &'static str = "Redis";

    fn feed(&self) -> &feed::Feed {
        &self.feed
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn reconnect_max(&self) -> Duration {
        Duration::from_secs(1)
    }

    async fn connect(&self) -> Result<Messages, String> {
        let mut pubsub = (self.client.get_async_pubsub().await).map_err(|e| e.to_string())?;
        (pubsub.subscribe(&self.keys.channel).await).map_err(|e| e.to_string())?;
        let messages = pubsub.into_on_message();
        Ok(Box::pin(messages.map(|m| m.get_payload_bytes().to_vec())))
    }

    async fn dispatch(&self, message: Vec<u8>) {
        let read = |id: TaskId| async move { self.load(&id).await.ok().flatten() };
        self.feed.dispatch(&message, None, read).await;
    }
}

impl Shared {
    /// Waits (up to the timeout) until the change feed has been subscribed once, so that no
    /// change this store makes can go unheard by its own waiters and subscribers.
    pub(super) async fn ready(&self) -> Result<(), StoreError> {
        let error = "Redis is unreachable (no change feed)";
        self.feed.listening(self.timeout, error).await
    }
}
