//! The work queues as a controller uses them: workers that retry failures with
//! backoff, a shutdown that waits for them, and the metrics on `/metrics`.
//! (client-go's own test cases are ported next to the code they test.)

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::registry::Registry;
use stage6_controllers::workqueue::{
    DelayingQueue, ItemExponentialFailureRateLimiter, MetricsProvider,
    PrometheusMetricsProvider, Queue, QueueConfig, RateLimitingQueue,
    RateLimitingQueueConfig, default_controller_rate_limiter,
};
use tokio::time::{Instant, timeout};

const PATIENCE: Duration = Duration::from_secs(3600);

/// Every public handle can be shared between tasks and threads.
#[test]
fn handles_are_send_sync_and_clone() {
    fn shared<Q: Send + Sync + Clone + 'static>() {}
    shared::<Queue<String>>();
    shared::<DelayingQueue<String>>();
    shared::<RateLimitingQueue<String>>();
    shared::<PrometheusMetricsProvider>();
}

/// A worker whose reconcile fails twice for one key: the key comes back after 5
/// ms, then 10 ms later (the default limiter's exponential part), is then
/// forgotten, and the drain waits for the worker's last `done`.
#[tokio::test(start_paused = true)]
async fn failed_keys_are_retried_with_exponential_backoff() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter::<String>());
    let (attempted, mut attempts) = tokio::sync::mpsc::unbounded_channel();
    let start = Instant::now();
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move {
            let mut failures = 0;
            while let Some(key) = queue.get().await {
                let _ = attempted.send((key.clone(), start.elapsed()));
                if key == "default/flaky" && failures < 2 {
                    failures += 1;
                    queue.add_rate_limited(key.clone());
                } else {
                    queue.forget(&key);
                }
                queue.done(&key);
            }
        }
    });

    queue.add("default/flaky".to_string());
    queue.add("default/steady".to_string());
    // The paused clock jumps to each retry's ready time while the test waits.
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(
            timeout(PATIENCE, attempts.recv())
                .await
                .expect("an attempt")
                .expect("the worker runs"),
        );
    }
    assert_eq!(
        queue.num_requeues(&"default/flaky".to_string()),
        0,
        "forgotten"
    );
    timeout(PATIENCE, queue.shut_down_with_drain())
        .await
        .expect("the drain ends");
    timeout(PATIENCE, worker)
        .await
        .expect("the worker ends")
        .expect("no panic");

    let at = |ms: u64| Duration::from_millis(ms);
    assert_eq!(
        seen,
        vec![
            ("default/flaky".to_string(), at(0)),
            ("default/steady".to_string(), at(0)),
            ("default/flaky".to_string(), at(5)),
            ("default/flaky".to_string(), at(15)),
        ]
    );
}

/// The work queue's `add` (exercise `ex6-queue-add`) as a controller meets it.
mod ex6_queue_add {
    use super::*;

    /// A key added again while its worker is busy is processed again after `done`,
    /// once, however often it was added meanwhile (the informer's updates collapse).
    #[tokio::test(start_paused = true)]
    async fn updates_during_processing_collapse_into_one_more_run() {
        let queue: Queue<&str> = Queue::new();
        queue.add("ns/a");
        let key = queue.get().await.expect("a key");
        for _ in 0..10 {
            queue.add("ns/a");
        }
        assert_eq!(queue.len(), 0, "not handed out while processed");
        queue.done(&key);
        assert_eq!(queue.len(), 1, "back once");
        let again = queue.get().await.expect("the key again");
        queue.done(&again);
        queue.shut_down();
        assert_eq!(timeout(PATIENCE, queue.get()).await.expect("answers"), None);
    }
}

/// A named rate-limiting queue with the Prometheus provider: the `workqueue_*`
/// series appear on the registry's text output, labelled with the queue's name.
#[tokio::test(start_paused = true)]
async fn named_queue_metrics_reach_the_registry() {
    let mut registry = Registry::default();
    let provider: Arc<dyn MetricsProvider> =
        Arc::new(PrometheusMetricsProvider::register(&mut registry));
    let queue = RateLimitingQueue::with_config(
        ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1),
        ),
        RateLimitingQueueConfig::default()
            .name("pods")
            .metrics_provider(Arc::clone(&provider)),
    );
    queue.add("default/web-0");
    queue.add("default/web-1");
    let key = queue.get().await.expect("a key");
    tokio::time::advance(Duration::from_millis(2)).await;
    queue.add_rate_limited(key);
    queue.done(&key);
    // Past one unfinished-work period (500 ms), with web-1 still waiting.
    tokio::time::advance(Duration::from_millis(600)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }

    let mut text = String::new();
    encode(&mut text, &registry).expect("the registry encodes");
    for line in [
        r#"workqueue_depth{name="pods"} 2"#,
        r#"workqueue_adds_total{name="pods"} 3"#,
        r#"workqueue_queue_duration_seconds_count{name="pods"} 1"#,
        r#"workqueue_work_duration_seconds_count{name="pods"} 1"#,
        r#"workqueue_work_duration_seconds_sum{name="pods"} 0.002"#,
        r#"workqueue_retries_total{name="pods"} 1"#,
        r#"workqueue_unfinished_work_seconds{name="pods"} 0.0"#,
        r#"workqueue_longest_running_processor_seconds{name="pods"} 0.0"#,
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
    queue.shut_down();

    // A second queue of another name gets its own series.
    let other = Queue::<u32>::with_config(
        QueueConfig::default()
            .name("nodes")
            .metrics_provider(provider),
    );
    other.add(1);
    let mut text = String::new();
    encode(&mut text, &registry).expect("the registry encodes");
    assert!(
        text.contains(r#"workqueue_depth{name="nodes"} 1"#),
        "{text}"
    );
    other.shut_down();
}
