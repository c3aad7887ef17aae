//! Not part of the API: lets benches and tests drive one processorListener directly,
//! the way client-go's `BenchmarkListener` does.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::task::TaskTracker;

use crate::handler::{Notification, ResourceEventHandler};
use crate::listener::{ProcessorListener, SyncTracker};

/// One started listener with its handler.
pub struct ListenerHarness<K> {
    listener: Arc<ProcessorListener<K>>,
    tracker: TaskTracker,
}

impl<K: Send + Sync + 'static> ListenerHarness<K> {
    /// Starts a listener for `handler` on the current tokio runtime.
    pub fn start(handler: impl ResourceEventHandler<K>) -> Self {
        let listener = Arc::new(ProcessorListener::new(
            Arc::new(handler),
            Duration::ZERO,
            Duration::ZERO,
            tokio::time::Instant::now(),
            Arc::new(SyncTracker::new(Box::new(|| true))),
        ));
        let tracker = TaskTracker::new();
        listener.start(&tracker);
        Self { listener, tracker }
    }

    /// `processorListener.add`.
    pub fn add(&self, notification: Notification<K>) {
        self.listener.add(notification);
    }

    /// Notifications added and not yet handled.
    pub fn pending(&self) -> usize {
        self.listener.pending()
    }

    /// Closes the listener and waits until its tasks have ended.
    pub async fn stop(self) {
        self.listener.close();
        self.tracker.close();
        self.tracker.wait().await;
    }
}
