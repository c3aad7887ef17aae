//! client-go's `util/workqueue`: the queues every controller feeds from.
//!
//! As the package comment of
//! [doc.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/doc.go)
//! puts it, the queue is
//!
//! - **fair**: items are processed in the order in which they are added;
//! - **stingy**: one item is never processed by two workers at once, and an item
//!   added several times before it is processed is processed once;
//! - for **many producers and consumers**: an item may be added again while it is
//!   being processed, and is then processed again after that;
//! - **shut down** explicitly, with or without waiting for the work in flight.
//!
//! Three layers, each a cheap-to-clone handle over shared state (Go embeds each in
//! the next; here each holds the one below and repeats its methods):
//!
//! - [`Queue`] (`queue.go`): `add`, `get().await`, `done`;
//! - [`DelayingQueue`] (`delaying_queue.go`): `add_after`, with one waiting-loop task;
//! - [`RateLimitingQueue`] (`rate_limiting_queue.go`): `add_rate_limited`, `forget`,
//!   `num_requeues`, asking a [`RateLimiter`] (`default_rate_limiters.go`) how long
//!   to wait.
//!
//! A queue with a name reports the metrics of [`metrics`] (`metrics.go`) through a
//! [`MetricsProvider`]; [`PrometheusMetricsProvider`] registers them in a
//! `prometheus_client` registry for `/metrics`.
//!
//! Time comes from tokio's clock, so tests pause it
//! (`#[tokio::test(start_paused = true)]`) where client-go's tests use a fake clock.
//!
//! ## Where this differs from client-go
//!
//! - Only the typed API (`NewTyped…`, `Typed…`); the deprecated `any` variants
//!   have no counterpart. Configs have no `Clock` (tokio's) and no `Logger`.
//! - `get` is `async` and returns `Option<T>`: `None` is Go's `shutdown == true`.
//! - Go's `dirty` and `processing` sets are one map of each key's state (see
//!   [`queue`]); `done` for an item that is not being processed does nothing,
//!   where Go would queue a waiting item a second time.
//! - `add_after` never blocks: arrivals wait in an inbox the loop empties, not a
//!   channel of 1,000 slots. `shut_down_with_drain` of a delaying queue stops the
//!   loop at once (Go's stops within `maxWait`, having nothing left to add).
//! - `shut_down` aborts the unfinished-work task instead of waiting for it
//!   (it cannot be running an update once the queue is shutting down).
//! - The exponential limiter caps a backoff of 2^63 ns or more; Go's converts
//!   exactly 2^63 into a negative duration.

pub mod default_rate_limiters;
pub mod delaying_queue;
pub mod metrics;
pub mod queue;
pub mod rate_limiting_queue;

pub use default_rate_limiters::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter,
    default_controller_rate_limiter, default_item_based_rate_limiter,
};
pub use delaying_queue::{DelayingQueue, DelayingQueueConfig, MAX_WAIT};
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider,
    PrometheusMetricsProvider, SettableGaugeMetric, SummaryMetric, set_provider,
};
pub use queue::{DefaultQueue, Item, Queue, QueueConfig, QueueStorage};
pub use rate_limiting_queue::{RateLimitingQueue, RateLimitingQueueConfig};
