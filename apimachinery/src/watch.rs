//! Watch events and the [`Watch`] stream.
//!
//! Mirrors apimachinery's [`pkg/watch/watch.go`]: the `Event` with its `EventType`
//! (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) and `watch.Interface`,
//! whose `ResultChan()` delivers events until the producer closes it or the consumer
//! calls `Stop()`.
//!
//! In Rust a [`Watch`] is a [`Stream`] of `Result<WatchEvent<T>, E>` plus
//! [`Watch::stop`]. Go's channel carries only events: a failure of the stream
//! itself arrives as an `ERROR` event whose object is a `Status`. Here the error
//! type is a parameter instead, so each side says what can break a stream: the
//! client's Reflector (stage 3) uses its own error (a broken connection, an
//! undecodable event, an object of the wrong type), and the server's storage
//! (stage 5) uses its storage error. This module knows nothing about HTTP or
//! kube-client: stage 5 builds the same events on the server side and hands the
//! same `Watch` to its clients.
//!
//! [`pkg/watch/watch.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/watch/watch.go

use std::collections::BTreeMap;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use futures::future::FutureExt;
use futures::stream::BoxStream;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The annotation on the bookmark that ends the initial events of a streaming list
/// (`metav1.InitialEventsAnnotationKey`).
pub const INITIAL_EVENTS_ANNOTATION_KEY: &str = "k8s.io/initial-events-end";

/// Mirrors apimachinery's `watch.EventType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `ADDED`
    Added,
    /// `MODIFIED`
    Modified,
    /// `DELETED`
    Deleted,
    /// `BOOKMARK`
    Bookmark,
    /// `ERROR`
    Error,
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
            EventType::Error => "ERROR",
        })
    }
}

/// A bookmark: the server has sent everything up to `resource_version`.
///
/// client-go receives a bookmark as an object of the watched type with only
/// `metadata.resourceVersion` (and possibly annotations) set. Here it is its own
/// small type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// The resource version the watch has reached.
    pub resource_version: String,
    /// The object's annotations; see [`INITIAL_EVENTS_ANNOTATION_KEY`].
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// A plain bookmark at `resource_version`.
    pub fn new(resource_version: impl Into<String>) -> Self {
        Bookmark {
            resource_version: resource_version.into(),
            annotations: BTreeMap::new(),
        }
    }

    /// The bookmark that ends the initial events of a streaming list, annotated
    /// `k8s.io/initial-events-end: "true"`.
    pub fn initial_events_end(resource_version: impl Into<String>) -> Self {
        let mut bookmark = Bookmark::new(resource_version);
        bookmark.annotations.insert(
            INITIAL_EVENTS_ANNOTATION_KEY.to_string(),
            "true".to_string(),
        );
        bookmark
    }

    /// Whether this bookmark ends the initial events of a streaming list.
    pub fn is_initial_events_end(&self) -> bool {
        self.annotations
            .get(INITIAL_EVENTS_ANNOTATION_KEY)
            .is_some_and(|value| value == "true")
    }
}

// ANCHOR: watch_event
/// Mirrors apimachinery's `watch.Event`: one change to a watched collection.
#[derive(Debug)]
pub enum WatchEvent<T> {
    /// The object was created (or, in a streaming list, is part of the initial
    /// state).
    Added(Arc<T>),
    /// The object changed; this is its new state.
    Modified(Arc<T>),
    /// The object was deleted; this is its last state.
    Deleted(Arc<T>),
    /// No change, only progress: the watch has reached a resource version.
    Bookmark(Bookmark),
    /// The server reports a failure and ends the watch. The status is kept as sent.
    Error(Box<Status>),
}
// ANCHOR_END: watch_event

impl<T> WatchEvent<T> {
    /// The event's type.
    pub fn event_type(&self) -> EventType {
        match self {
            WatchEvent::Added(_) => EventType::Added,
            WatchEvent::Modified(_) => EventType::Modified,
            WatchEvent::Deleted(_) => EventType::Deleted,
            WatchEvent::Bookmark(_) => EventType::Bookmark,
            WatchEvent::Error(_) => EventType::Error,
        }
    }

    /// The object of an `Added`, `Modified` or `Deleted` event.
    pub fn object(&self) -> Option<&Arc<T>> {
        match self {
            WatchEvent::Added(obj)
            | WatchEvent::Modified(obj)
            | WatchEvent::Deleted(obj) => Some(obj),
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => None,
        }
    }
}

// Cloning shares the object, it never copies it.
impl<T> Clone for WatchEvent<T> {
    fn clone(&self) -> Self {
        match self {
            WatchEvent::Added(obj) => WatchEvent::Added(Arc::clone(obj)),
            WatchEvent::Modified(obj) => WatchEvent::Modified(Arc::clone(obj)),
            WatchEvent::Deleted(obj) => WatchEvent::Deleted(Arc::clone(obj)),
            WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark.clone()),
            WatchEvent::Error(status) => WatchEvent::Error(status.clone()),
        }
    }
}

/// One item of a [`Watch`]: an event, or an error from the stream itself (on the
/// client a broken connection, an undecodable event, an object of the wrong type).
pub type WatchItem<T, E> = Result<WatchEvent<T>, E>;

// ANCHOR: watch
/// Mirrors apimachinery's `watch.Interface`: a stream of events that ends when the
/// producer closes it or the consumer stops it.
///
/// The producer is any `Stream` of [`WatchItem`]s: an HTTP response body in stage
/// 3's `KubeListerWatcher`, a channel in its `FakeListerWatcher`, a cache watcher
/// in stage 5. `E` is what can break the stream itself.
///
/// [`stop`](Watch::stop) drops the producer at once (closing its connection or
/// channel) and may be called any number of times; the stream then yields `None`. A
/// [`WatchStopper`] stops the watch from elsewhere, like calling `Stop()` from
/// another goroutine.
pub struct Watch<T, E> {
    events: Option<BoxStream<'static, WatchItem<T, E>>>,
    stop: CancellationToken,
    stopped: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<T, E> Watch<T, E> {
    /// Wraps a stream of events.
    pub fn new(
        events: impl Stream<Item = WatchItem<T, E>> + Send + 'static,
    ) -> Self {
        let stop = CancellationToken::new();
        Watch {
            events: Some(Box::pin(events)),
            stopped: Box::pin(stop.clone().cancelled_owned()),
            stop,
        }
    }

    /// A watch that delivers these items, then ends.
    pub fn from_items(items: impl IntoIterator<Item = WatchItem<T, E>>) -> Self
    where
        T: Send + Sync + 'static,
        E: Send + 'static,
    {
        let items: Vec<_> = items.into_iter().collect();
        Watch::new(futures::stream::iter(items))
    }

    /// Mirrors `watch.Interface.Stop`: ends the stream and releases the producer.
    /// Stopping a stopped watch does nothing.
    pub fn stop(&mut self) {
        self.stop.cancel();
        self.events = None;
    }

    // ANCHOR_END: watch

    /// Whether [`stop`](Watch::stop) (or a [`WatchStopper`]) has stopped this watch.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// A handle that stops this watch from another task.
    pub fn stopper(&self) -> WatchStopper {
        WatchStopper {
            stop: self.stop.clone(),
        }
    }
}

impl<T, E> Stream for Watch<T, E> {
    type Item = WatchItem<T, E>;

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // Registers the waker, so that a stop from another task wakes a pending
        // consumer.
        if this.stopped.poll_unpin(cx).is_ready() {
            this.events = None;
            return Poll::Ready(None);
        }
        match this.events.as_mut() {
            Some(events) => {
                let item = events.as_mut().poll_next(cx);
                if let Poll::Ready(None) = item {
                    this.events = None;
                }
                item
            }
            None => Poll::Ready(None),
        }
    }
}

impl<T, E> fmt::Debug for Watch<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("stopped", &self.is_stopped())
            .field("ended", &self.events.is_none())
            .finish()
    }
}

/// Stops a [`Watch`] from another task. Cheap to clone; stopping twice is fine.
#[derive(Clone, Debug)]
pub struct WatchStopper {
    stop: CancellationToken,
}

impl WatchStopper {
    /// Stops the watch: its consumer sees the end of the stream.
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    #[tokio::test]
    async fn stopping_twice_is_fine_and_ends_the_stream() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<WatchItem<u32, ()>>();
        let mut watch = Watch::new(rx);
        tx.unbounded_send(Ok(WatchEvent::Added(Arc::new(1))))
            .expect("receiver alive");
        assert!(matches!(watch.next().await, Some(Ok(WatchEvent::Added(_)))));
        watch.stop();
        watch.stop();
        assert!(watch.is_stopped());
        assert!(watch.next().await.is_none());
        // The producer sees that the consumer is gone.
        assert!(tx.is_closed());
    }

    #[tokio::test]
    async fn a_stopper_wakes_a_pending_consumer() {
        let (_tx, rx) = futures::channel::mpsc::unbounded::<WatchItem<u32, ()>>();
        let mut watch = Watch::new(rx);
        let stopper = watch.stopper();
        let consumer = tokio::spawn(async move { watch.next().await.is_none() });
        tokio::task::yield_now().await;
        stopper.stop();
        let ended =
            tokio::time::timeout(std::time::Duration::from_secs(5), consumer)
                .await
                .expect("the stop must wake the consumer")
                .expect("the consumer must not panic");
        assert!(ended);
    }

    #[test]
    fn initial_events_end_bookmark_is_recognised() {
        assert!(Bookmark::initial_events_end("7").is_initial_events_end());
        assert!(!Bookmark::new("7").is_initial_events_end());
        let event: WatchEvent<()> = WatchEvent::Bookmark(Bookmark::new("1"));
        assert_eq!(event.event_type().to_string(), "BOOKMARK");
    }
}
