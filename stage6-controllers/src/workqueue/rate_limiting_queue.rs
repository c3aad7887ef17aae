//! [`RateLimitingQueue`]: a delaying queue that asks a [`RateLimiter`] how long
//! an item waits before it is retried, client-go's `rateLimitingType`.
//!
//! Mirrors
//! [rate_limiting_queue.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/rate_limiting_queue.go).
//! A worker whose reconcile failed calls
//! [`add_rate_limited`](RateLimitingQueue::add_rate_limited); one that succeeded (or
//! gave up) calls [`forget`](RateLimitingQueue::forget), so that the limiter stops
//! tracking the item, and then, either way, [`done`](RateLimitingQueue::done).
//!
//! ## Memory usage
//!
//! Per-item limiters keep a count for every item that failed until it is
//! forgotten: a controller that never calls `forget` tracks failures forever.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::default_rate_limiters::RateLimiter;
use super::delaying_queue::{DelayingQueue, DelayingQueueConfig};
use super::metrics::MetricsProvider;
use super::queue::Item;

/// Mirrors client-go's `TypedRateLimitingQueueConfig[T]`: how to build a
/// [`RateLimitingQueue`]. (Go's `Clock` has no counterpart: time is tokio's.)
#[must_use]
pub struct RateLimitingQueueConfig<T> {
    /// Mirrors `Name`: an unnamed queue reports no metrics.
    pub name: String,
    /// Mirrors `MetricsProvider`; `None` uses the global one.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
    /// Mirrors `DelayingQueue`: the delaying queue underneath; `None` makes one
    /// with the same name and provider.
    pub delaying_queue: Option<DelayingQueue<T>>,
}

impl<T> Default for RateLimitingQueueConfig<T> {
    fn default() -> Self {
        RateLimitingQueueConfig {
            name: String::new(),
            metrics_provider: None,
            delaying_queue: None,
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueueConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field("delaying_queue", &self.delaying_queue.is_some())
            .finish()
    }
}

impl<T> RateLimitingQueueConfig<T> {
    /// Names the queue (its metrics carry the name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Reports the metrics to `provider` instead of the global one.
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Delays into `queue` instead of a new delaying queue.
    pub fn delaying_queue(mut self, queue: DelayingQueue<T>) -> Self {
        self.delaying_queue = Some(queue);
        self
    }
}

/// Mirrors client-go's `rateLimitingType` (`TypedRateLimitingInterface[T]`): a
/// [`DelayingQueue`] whose retries wait as long as its [`RateLimiter`] says.
///
/// A cheap handle: clones share the queue and the limiter.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    rate_limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            rate_limiter: Arc::clone(&self.rate_limiter),
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Item> RateLimitingQueue<T> {
    /// Mirrors client-go's `NewTypedRateLimitingQueue`: unnamed, without metrics.
    /// Remember to call [`forget`](RateLimitingQueue::forget)!
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime: the delaying queue's loop is a tokio task.
    pub fn new(rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        RateLimitingQueue::with_config(
            rate_limiter,
            RateLimitingQueueConfig::default(),
        )
    }

    /// Mirrors client-go's `NewTypedRateLimitingQueueWithConfig`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, unless `config` brings its delaying queue.
    pub fn with_config(
        rate_limiter: impl RateLimiter<T> + 'static,
        config: RateLimitingQueueConfig<T>,
    ) -> Self {
        let RateLimitingQueueConfig {
            name,
            metrics_provider,
            delaying_queue,
        } = config;
        let queue = delaying_queue.unwrap_or_else(|| {
            let mut config = DelayingQueueConfig::default().name(name);
            config.metrics_provider = metrics_provider;
            DelayingQueue::with_config(config)
        });
        RateLimitingQueue {
            queue,
            rate_limiter: Arc::new(rate_limiter),
        }
    }

    // ANCHOR: add_rate_limited
    /// Mirrors client-go's `rateLimitingType.AddRateLimited`: adds `item` after
    /// the delay the rate limiter gives it (which counts one more failure).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.rate_limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Mirrors client-go's `rateLimitingType.Forget`: the item is finished being
    /// retried, whether it succeeded or failed for good; the limiter stops
    /// tracking it. The worker still calls [`done`](RateLimitingQueue::done).
    pub fn forget(&self, item: &T) {
        self.rate_limiter.forget(item);
    }

    /// Mirrors client-go's `rateLimitingType.NumRequeues`: how many times the
    /// item was requeued with
    /// [`add_rate_limited`](RateLimitingQueue::add_rate_limited) since it was
    /// last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.rate_limiter.num_requeues(item)
    }
    // ANCHOR_END: add_rate_limited

    /// Mirrors [`DelayingQueue::add_after`].
    pub fn add_after(&self, item: T, duration: Duration) {
        self.queue.add_after(item, duration);
    }

    /// Mirrors [`Queue::add`](super::Queue::add).
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// Mirrors [`Queue::len`](super::Queue::len).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no item is ready and waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Mirrors [`Queue::get`](super::Queue::get).
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// Mirrors [`Queue::done`](super::Queue::done).
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// Mirrors [`DelayingQueue::shut_down`].
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// Mirrors [`DelayingQueue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.queue.shut_down_with_drain().await;
    }

    /// Mirrors [`Queue::shutting_down`](super::Queue::shutting_down).
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }
}

#[cfg(test)]
mod tests {
    //! client-go's rate_limiting_queue_test.go.

    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;
    use crate::workqueue::ItemExponentialFailureRateLimiter;
    use crate::workqueue::metrics::RetryMetrics;
    use crate::workqueue::queue::Queue;

    /// TestRateLimitingQueue: each `add_rate_limited` hands the delaying queue the
    /// limiter's delay (1 ms, 2 ms, ... per item), and `forget` starts over.
    #[tokio::test(start_paused = true)]
    async fn test_rate_limiting_queue() {
        let limiter = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_secs(1),
        );
        // As upstream, a delaying queue without its loop, to read what arrives.
        let delaying_queue = DelayingQueue::without_waiting_loop(
            Queue::new(),
            RetryMetrics::new("", None),
        );
        let queue = RateLimitingQueue::with_config(
            limiter,
            RateLimitingQueueConfig::default()
                .delaying_queue(delaying_queue.clone()),
        );
        let wait_entry = |expected_item: &str| {
            let mut arrivals = delaying_queue.take_arrivals();
            assert_eq!(arrivals.len(), 1);
            let entry = arrivals.remove(0);
            assert_eq!(entry.data, expected_item);
            entry.ready_at - Instant::now()
        };

        queue.add_rate_limited("one");
        assert_eq!(wait_entry("one"), Duration::from_millis(1));
        queue.add_rate_limited("one");
        assert_eq!(wait_entry("one"), Duration::from_millis(2));
        assert_eq!(queue.num_requeues(&"one"), 2);

        queue.add_rate_limited("two");
        assert_eq!(wait_entry("two"), Duration::from_millis(1));
        queue.add_rate_limited("two");
        assert_eq!(wait_entry("two"), Duration::from_millis(2));

        queue.forget(&"one");
        assert_eq!(queue.num_requeues(&"one"), 0);
        queue.add_rate_limited("one");
        assert_eq!(wait_entry("one"), Duration::from_millis(1));
    }
}
