//! [`ResourceNotifier`]: the handle an application keeps to tell clients that a resource changed
//! (`notifications/resources/updated`, to the clients subscribed to it) or that the list of
//! resources did (`notifications/resources/list_changed`).

use tokio::sync::broadcast;

/// A change to announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceEvent {
    /// The resource at this URI changed: subscribers should read it again.
    Updated(String),
    /// Resources were added or removed: clients should list them again.
    ListChanged,
}

/// Tells subscribed clients that a resource changed. A cheap handle (`Clone` shares it); get it
/// from [`ServerBuilder::resource_notifier`](crate::ServerBuilder::resource_notifier) or
/// [`Server::resource_notifier`](crate::Server::resource_notifier), or take it in a tool (or a
/// task, or a resource) as a `State<ResourceNotifier>` parameter: the server registers it as
/// application state.
///
/// - a 2025-11-25 client subscribes with `resources/subscribe` and gets
///   `notifications/resources/updated` on its session;
/// - a 2026-07-28 client names the URIs in `subscriptions/listen`
///   (`notifications.resourceSubscriptions`) and gets them on that stream.
///
/// Sending never waits and never fails: with no subscriber, nothing goes anywhere.
#[derive(Debug, Clone)]
pub struct ResourceNotifier {
    feed: broadcast::Sender<ResourceEvent>,
}

impl Default for ResourceNotifier {
    fn default() -> Self {
        ResourceNotifier {
            feed: broadcast::channel(256).0,
        }
    }
}

impl ResourceNotifier {
    /// The resource at `uri` changed: `notifications/resources/updated` to each client
    /// subscribed to it.
    pub fn updated(&self, uri: impl Into<String>) {
        let _ = self.feed.send(ResourceEvent::Updated(uri.into()));
    }

    /// The list of resources changed: `notifications/resources/list_changed` to each client
    /// that listens for it.
    pub fn list_changed(&self) {
        let _ = self.feed.send(ResourceEvent::ListChanged);
    }

    /// The feed of changes, from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ResourceEvent> {
        self.feed.subscribe()
    }
}
