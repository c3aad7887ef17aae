//! The queue metrics: depth, adds, queue latency, work duration, unfinished work,
//! the longest running processor and retries, per queue name.
//!
//! Mirrors
//! [metrics.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/metrics.go):
//! a queue asks a [`MetricsProvider`] for one metric of each kind, under its name,
//! and updates them as it works:
//!
//! | metric                                         | updated                                   |
//! |------------------------------------------------|-------------------------------------------|
//! | depth (gauge)                                  | +1 on each add that queues, −1 on get     |
//! | adds (counter)                                 | each add that marks an item dirty         |
//! | queue latency (histogram, seconds)             | on get: time since the item was added     |
//! | work duration (histogram, seconds)             | on done: time since the item was gotten   |
//! | unfinished work seconds (gauge)                | every 500 ms: the ages of all items in flight, summed |
//! | longest running processor seconds (gauge)      | every 500 ms: the oldest of them          |
//! | retries (counter)                              | each `add_after` of a delaying queue      |
//!
//! An unnamed queue, or one without a provider, reports nothing and starts no
//! task. The provider is the queue's own ([`QueueConfig::metrics_provider`]) or the
//! process-wide one that [`set_provider`] sets once.
//!
//! client-go leaves the Prometheus side to component-base's
//! `metrics/prometheus/workqueue`; [`PrometheusMetricsProvider`] is that package
//! here, over the `prometheus-client` crate: [`PrometheusMetricsProvider::register`]
//! puts the `workqueue_*` families in a registry that a process serves on
//! `/metrics`.
//!
//! [`QueueConfig::metrics_provider`]: super::QueueConfig::metrics_provider

use std::fmt;
use std::hash::Hash;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use hashbrown::HashMap;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// Mirrors client-go's `GaugeMetric`: a value that goes up and down.
pub trait GaugeMetric: Send + Sync {
    /// Mirrors `Inc`.
    fn inc(&self);
    /// Mirrors `Dec`.
    fn dec(&self);
}

/// Mirrors client-go's `SettableGaugeMetric`: a value that is set.
pub trait SettableGaugeMetric: Send + Sync {
    /// Mirrors `Set`.
    fn set(&self, value: f64);
}

/// Mirrors client-go's `CounterMetric`: a value that only goes up.
pub trait CounterMetric: Send + Sync {
    /// Mirrors `Inc`.
    fn inc(&self);
}

/// Mirrors client-go's `SummaryMetric` (declared upstream, asked of no provider).
pub trait SummaryMetric: Send + Sync {
    /// Mirrors `Observe`.
    fn observe(&self, value: f64);
}

/// Mirrors client-go's `HistogramMetric`: counts observations.
pub trait HistogramMetric: Send + Sync {
    /// Mirrors `Observe`.
    fn observe(&self, value: f64);
}

// ANCHOR: metrics_provider
/// Mirrors client-go's `MetricsProvider`: makes the metrics of the queue called
/// `name`.
pub trait MetricsProvider: Send + Sync {
    /// Mirrors `NewDepthMetric`.
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// Mirrors `NewAddsMetric`.
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Mirrors `NewLatencyMetric`.
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Mirrors `NewWorkDurationMetric`.
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Mirrors `NewUnfinishedWorkSecondsMetric`.
    fn new_unfinished_work_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// Mirrors `NewLongestRunningProcessorSecondsMetric`.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// Mirrors `NewRetriesMetric`.
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
}
// ANCHOR_END: metrics_provider

/// Mirrors `globalMetricsProvider` (the no-op provider until set).
static GLOBAL_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Mirrors client-go's `SetProvider`: the metrics provider of every queue built
/// from now on without one of its own. Only the first call has an effect.
pub fn set_provider(provider: Arc<dyn MetricsProvider>) {
    // Later calls lose, as Go's `sync.Once` makes them.
    let _ = GLOBAL_PROVIDER.set(provider);
}

/// The provider a queue uses: its own, else the global one, else none (Go's
/// `noopMetricsProvider`).
fn provider_for(
    own: Option<&Arc<dyn MetricsProvider>>,
) -> Option<&Arc<dyn MetricsProvider>> {
    own.or_else(|| GLOBAL_PROVIDER.get())
}

/// Mirrors the `queueMetrics[T]` interface with its two implementations,
/// `noMetrics` and `defaultQueueMetrics`. The queue calls it with its lock held.
pub(crate) enum QueueMetrics<T> {
    /// Mirrors `noMetrics`.
    Disabled,
    /// Mirrors `defaultQueueMetrics`.
    Enabled(Box<DefaultQueueMetrics<T>>),
}

/// Mirrors `defaultQueueMetrics`.
pub(crate) struct DefaultQueueMetrics<T> {
    depth: Box<dyn GaugeMetric>,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    /// When each waiting item was first added.
    add_times: HashMap<T, Instant>,
    /// When each item in flight was handed out.
    processing_start_times: HashMap<T, Instant>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
}

impl<T: Hash + Eq + Clone> QueueMetrics<T> {
    /// Mirrors `newQueueMetrics`: nothing for an unnamed queue or without a
    /// provider.
    pub(crate) fn new(own: Option<&Arc<dyn MetricsProvider>>, name: &str) -> Self {
        let Some(provider) = provider_for(own).filter(|_| !name.is_empty()) else {
            return QueueMetrics::Disabled;
        };
        QueueMetrics::Enabled(Box::new(DefaultQueueMetrics {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            add_times: HashMap::new(),
            processing_start_times: HashMap::new(),
            unfinished_work_seconds: provider
                .new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider
                .new_longest_running_processor_seconds_metric(name),
        }))
    }

    /// Whether there is anything to update (Go: not `noMetrics`).
    #[inline]
    pub(crate) fn is_enabled(&self) -> bool {
        matches!(self, QueueMetrics::Enabled(_))
    }

    // ANCHOR: queue_metrics
    /// Mirrors `defaultQueueMetrics.add`.
    #[inline]
    pub(crate) fn add(&mut self, item: &T) {
        let QueueMetrics::Enabled(m) = self else {
            return;
        };
        m.adds.inc();
        m.depth.inc();
        if !m.add_times.contains_key(item) {
            m.add_times.insert(item.clone(), Instant::now());
        }
    }

    /// Mirrors `defaultQueueMetrics.get`.
    #[inline]
    pub(crate) fn get(&mut self, item: &T) {
        let QueueMetrics::Enabled(m) = self else {
            return;
        };
        m.depth.dec();
        let now = Instant::now();
        m.processing_start_times.insert(item.clone(), now);
        if let Some(start) = m.add_times.remove(item) {
            m.latency.observe(seconds_since(start, now));
        }
    }

    /// Mirrors `defaultQueueMetrics.done`.
    #[inline]
    pub(crate) fn done(&mut self, item: &T) {
        let QueueMetrics::Enabled(m) = self else {
            return;
        };
        if let Some(start) = m.processing_start_times.remove(item) {
            m.work_duration
                .observe(seconds_since(start, Instant::now()));
        }
    }
    // ANCHOR_END: queue_metrics

    // ANCHOR: update_unfinished_work
    /// Mirrors `defaultQueueMetrics.updateUnfinishedWork`.
    pub(crate) fn update_unfinished_work(&self) {
        let QueueMetrics::Enabled(m) = self else {
            return;
        };
        let now = Instant::now();
        let mut total = 0.0;
        let mut oldest = 0.0;
        for start in m.processing_start_times.values() {
            let age = seconds_since(*start, now);
            total += age;
            if age > oldest {
                oldest = age;
            }
        }
        m.unfinished_work_seconds.set(total);
        m.longest_running_processor.set(oldest);
    }
    // ANCHOR_END: update_unfinished_work
}

/// Mirrors `defaultQueueMetrics.sinceInSeconds`.
fn seconds_since(start: Instant, now: Instant) -> f64 {
    now.saturating_duration_since(start).as_secs_f64()
}

/// Mirrors the `retryMetrics` interface with `defaultRetryMetrics` (and its nil
/// receiver, which counts nothing).
pub(crate) struct RetryMetrics {
    retries: Option<Box<dyn CounterMetric>>,
}

impl RetryMetrics {
    /// Mirrors `newRetryMetrics`: nothing for an unnamed queue.
    pub(crate) fn new(name: &str, own: Option<&Arc<dyn MetricsProvider>>) -> Self {
        RetryMetrics {
            retries: provider_for(own)
                .filter(|_| !name.is_empty())
                .map(|provider| provider.new_retries_metric(name)),
        }
    }

    /// Mirrors `defaultRetryMetrics.retry`.
    pub(crate) fn retry(&self) {
        if let Some(retries) = &self.retries {
            retries.inc();
        }
    }
}

impl GaugeMetric for Gauge {
    fn inc(&self) {
        Gauge::inc(self);
    }
    fn dec(&self) {
        Gauge::dec(self);
    }
}

impl SettableGaugeMetric for Gauge<f64, AtomicU64> {
    fn set(&self, value: f64) {
        Gauge::set(self, value);
    }
}

impl CounterMetric for Counter {
    fn inc(&self) {
        Counter::inc(self);
    }
}

impl HistogramMetric for Histogram {
    fn observe(&self, value: f64) {
        Histogram::observe(self, value);
    }
}

/// The one label of every workqueue series: the queue's name.
type NameLabel = [(&'static str, String); 1];

/// A float gauge.
type FloatGauge = Gauge<f64, AtomicU64>;

/// The buckets of the latency and work-duration histograms, as component-base's:
/// 10 ns to 10 s, a factor of 10 apart.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 10))
}

/// Mirrors component-base's `metrics/prometheus/workqueue` provider: the
/// `workqueue_*` series, one of each per queue name (`name` label).
///
/// | series                                         | kind      |
/// |------------------------------------------------|-----------|
/// | `workqueue_depth`                              | gauge     |
/// | `workqueue_adds_total`                         | counter   |
/// | `workqueue_queue_duration_seconds`             | histogram |
/// | `workqueue_work_duration_seconds`              | histogram |
/// | `workqueue_unfinished_work_seconds`            | gauge     |
/// | `workqueue_longest_running_processor_seconds`  | gauge     |
/// | `workqueue_retries_total`                      | counter   |
///
/// Clones share the series. Queues of the same name share theirs, as in a
/// Prometheus vector.
#[derive(Clone, Debug)]
pub struct PrometheusMetricsProvider {
    depth: Family<NameLabel, Gauge>,
    adds: Family<NameLabel, Counter>,
    latency: Family<NameLabel, Histogram, fn() -> Histogram>,
    work_duration: Family<NameLabel, Histogram, fn() -> Histogram>,
    unfinished_work_seconds: Family<NameLabel, FloatGauge>,
    longest_running_processor_seconds: Family<NameLabel, FloatGauge>,
    retries: Family<NameLabel, Counter>,
}

impl PrometheusMetricsProvider {
    /// Registers the `workqueue_*` families in `registry` and returns the provider
    /// that feeds them: give it to [`set_provider`] or to a queue's config.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use prometheus_client::registry::Registry;
    /// use stage6_controllers::workqueue::{PrometheusMetricsProvider, set_provider};
    ///
    /// let mut registry = Registry::default();
    /// set_provider(Arc::new(PrometheusMetricsProvider::register(&mut registry)));
    /// ```
    pub fn register(registry: &mut Registry) -> Self {
        let provider = PrometheusMetricsProvider {
            depth: Family::default(),
            adds: Family::default(),
            latency: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            unfinished_work_seconds: Family::default(),
            longest_running_processor_seconds: Family::default(),
            retries: Family::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            provider.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            provider.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            provider.latency.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            provider.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been \
             observed by work_duration. Large values indicate stuck threads. One can \
             deduce the number of stuck threads by observing the rate at which this \
             increases.",
            provider.unfinished_work_seconds.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been \
             running.",
            provider.longest_running_processor_seconds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            provider.retries.clone(),
        );
        provider
    }
}

fn name_label(name: &str) -> NameLabel {
    [("name", name.to_string())]
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        Box::new(self.depth.get_or_create_owned(&name_label(name)))
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.adds.get_or_create_owned(&name_label(name)))
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.latency.get_or_create_owned(&name_label(name)))
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.work_duration.get_or_create_owned(&name_label(name)))
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(
            self.unfinished_work_seconds
                .get_or_create_owned(&name_label(name)),
        )
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(
            self.longest_running_processor_seconds
                .get_or_create_owned(&name_label(name)),
        )
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.retries.get_or_create_owned(&name_label(name)))
    }
}

impl<T> fmt::Debug for QueueMetrics<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QueueMetrics::Disabled => "QueueMetrics::Disabled",
            QueueMetrics::Enabled(_) => "QueueMetrics::Enabled",
        })
    }
}

#[cfg(test)]
mod tests {
    //! client-go's metrics_test.go.

    use std::sync::Arc;
    use std::time::Duration;

    use parking_lot::Mutex;
    use tokio::sync::mpsc;
    use tokio::time::{advance, timeout};

    use super::*;
    use crate::workqueue::queue::{Queue, QueueConfig, Storage};

    const PATIENCE: Duration = Duration::from_secs(30);

    /// client-go's `testMetric`: records what the queue does to one metric, and
    /// says so on `notify` if set.
    #[derive(Default)]
    struct TestMetric {
        state: Mutex<TestMetricState>,
    }

    #[derive(Default)]
    struct TestMetricState {
        inc: i64,
        dec: i64,
        set: f64,
        observed_value: f64,
        observed_count: usize,
        notify: Option<mpsc::UnboundedSender<()>>,
    }

    impl TestMetric {
        fn change(&self, f: impl FnOnce(&mut TestMetricState)) {
            let mut state = self.state.lock();
            f(&mut state);
            if let Some(notify) = &state.notify {
                let _ = notify.send(());
            }
        }
        fn gauge_value(&self) -> f64 {
            let state = self.state.lock();
            if state.set != 0.0 {
                return state.set;
            }
            (state.inc - state.dec) as f64
        }
        fn observation_value(&self) -> f64 {
            self.state.lock().observed_value
        }
        fn observation_count(&self) -> usize {
            self.state.lock().observed_count
        }
        fn notify_on_change(&self) -> mpsc::UnboundedReceiver<()> {
            let (tx, rx) = mpsc::unbounded_channel();
            self.state.lock().notify = Some(tx);
            rx
        }
    }

    /// Hands the queue a shared [`TestMetric`].
    struct Shared(Arc<TestMetric>);

    impl GaugeMetric for Shared {
        fn inc(&self) {
            self.0.change(|s| s.inc += 1);
        }
        fn dec(&self) {
            self.0.change(|s| s.dec += 1);
        }
    }
    impl CounterMetric for Shared {
        fn inc(&self) {
            self.0.change(|s| s.inc += 1);
        }
    }
    impl SettableGaugeMetric for Shared {
        fn set(&self, value: f64) {
            self.0.change(|s| s.set = value);
        }
    }
    impl HistogramMetric for Shared {
        fn observe(&self, value: f64) {
            self.0.change(|s| {
                s.observed_value = value;
                s.observed_count += 1;
            });
        }
    }

    /// client-go's `testMetricsProvider`.
    #[derive(Default)]
    struct TestMetricsProvider {
        depth: Arc<TestMetric>,
        adds: Arc<TestMetric>,
        latency: Arc<TestMetric>,
        duration: Arc<TestMetric>,
        unfinished: Arc<TestMetric>,
        longest: Arc<TestMetric>,
        retries: Arc<TestMetric>,
    }

    impl MetricsProvider for TestMetricsProvider {
        fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
            Box::new(Shared(Arc::clone(&self.depth)))
        }
        fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            Box::new(Shared(Arc::clone(&self.adds)))
        }
        fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            Box::new(Shared(Arc::clone(&self.latency)))
        }
        fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            Box::new(Shared(Arc::clone(&self.duration)))
        }
        fn new_unfinished_work_seconds_metric(
            &self,
            _: &str,
        ) -> Box<dyn SettableGaugeMetric> {
            Box::new(Shared(Arc::clone(&self.unfinished)))
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            _: &str,
        ) -> Box<dyn SettableGaugeMetric> {
            Box::new(Shared(Arc::clone(&self.longest)))
        }
        fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            Box::new(Shared(Arc::clone(&self.retries)))
        }
    }

    /// TestMetricShutdown: the unfinished-work updates stop when the queue shuts
    /// down.
    #[tokio::test(start_paused = true)]
    async fn test_metric_shutdown() {
        let mp = Arc::new(TestMetricsProvider::default());
        let mut updated = mp.unfinished.notify_on_change();
        let metrics = QueueMetrics::<&str>::new(
            Some(&(Arc::clone(&mp) as Arc<dyn MetricsProvider>)),
            "test",
        );
        let q =
            Queue::from_parts(Storage::default(), metrics, Duration::from_millis(1));

        advance(Duration::from_millis(1)).await;
        timeout(PATIENCE, updated.recv())
            .await
            .expect("an update after one period")
            .expect("the metric is alive");
        q.shut_down();

        advance(Duration::from_secs(3600)).await;
        assert!(
            updated.try_recv().is_err(),
            "unexpected update after shutdown was called"
        );
        assert!(q.background_task_stopped());
    }

    /// TestMetrics: each metric moves as upstream's test expects, in fake (here
    /// paused) time.
    #[tokio::test(start_paused = true)]
    async fn test_metrics() {
        let mp = Arc::new(TestMetricsProvider::default());
        let config = QueueConfig::default()
            .name("test")
            .metrics_provider(Arc::clone(&mp) as Arc<dyn MetricsProvider>);
        let q = Queue::with_update_period(config, Duration::from_millis(1));

        q.add("foo");
        assert_eq!(mp.adds.gauge_value(), 1.0);
        assert_eq!(mp.depth.gauge_value(), 1.0);

        advance(Duration::from_micros(50)).await;

        // Start processing.
        let i = q.get().await.expect("an item");
        assert_eq!(i, "foo");
        assert_eq!(mp.latency.observation_value(), 5e-05);
        assert_eq!(mp.latency.observation_count(), 1);

        // Add it back while processing; multiple adds of the same item are
        // de-duped.
        for _ in 0..5 {
            q.add(i);
        }
        assert_eq!(mp.adds.gauge_value(), 2.0);
        // One thing remains in the queue.
        assert_eq!(mp.depth.gauge_value(), 1.0);

        advance(Duration::from_micros(25)).await;

        // Finish it up.
        q.done(&i);
        assert_eq!(mp.duration.observation_value(), 2.5e-05);
        assert_eq!(mp.duration.observation_count(), 1);
        // One thing remains in the queue.
        assert_eq!(mp.depth.gauge_value(), 1.0);

        // It should be back on the queue.
        let i = q.get().await.expect("an item");
        assert_eq!(i, "foo");
        assert_eq!(mp.latency.observation_value(), 2.5e-05);
        assert_eq!(mp.latency.observation_count(), 2);

        // Look at the gauges only once the update has set them.
        let mut unfinished = mp.unfinished.notify_on_change();
        let mut longest = mp.longest.notify_on_change();
        advance(Duration::from_millis(1)).await;
        timeout(PATIENCE, unfinished.recv())
            .await
            .expect("the unfinished gauge is set")
            .expect("alive");
        assert_eq!(mp.unfinished.gauge_value(), 0.001);
        timeout(PATIENCE, longest.recv())
            .await
            .expect("the longest gauge is set")
            .expect("alive");
        assert_eq!(mp.longest.gauge_value(), 0.001);

        // Finish that one up.
        q.done(&i);
        assert_eq!(mp.duration.observation_value(), 0.001);
        assert_eq!(mp.duration.observation_count(), 2);
        q.shut_down();
    }

    /// The retries counter counts each `add_after` of a named delaying queue.
    #[tokio::test(start_paused = true)]
    async fn retries_count_add_after() {
        let mp = Arc::new(TestMetricsProvider::default());
        let q = crate::workqueue::DelayingQueue::with_config(
            crate::workqueue::DelayingQueueConfig::default()
                .name("test")
                .metrics_provider(Arc::clone(&mp) as Arc<dyn MetricsProvider>),
        );
        q.add_after("a", Duration::from_millis(5));
        q.add_after("b", Duration::ZERO);
        assert_eq!(mp.retries.gauge_value(), 2.0);
        q.shut_down();
    }

    /// An unnamed queue asks its provider for nothing (Go's `noMetrics`).
    #[tokio::test(start_paused = true)]
    async fn unnamed_queue_has_no_metrics() {
        let mp = Arc::new(TestMetricsProvider::default());
        let q = Queue::with_config(
            QueueConfig::default()
                .metrics_provider(Arc::clone(&mp) as Arc<dyn MetricsProvider>),
        );
        q.add("foo");
        assert_eq!(mp.adds.gauge_value(), 0.0);
        assert!(q.background_task_stopped());
    }
}
