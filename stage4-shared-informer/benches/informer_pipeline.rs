//! `informer_pipeline`: 100,000 watch events through a whole shared informer.
//!
//! Stage 3's `FakeListerWatcher<Pod>` plays the API server. Each iteration builds a
//! fresh fake and a fresh informer (with the `"namespace"` index, as
//! `SharedInformerFactory` builds it) that has three counting handlers. It starts
//! the informer, waits until it has synced and its watch is open, and only then
//! starts the clock. The bench thread then adds 50,000 pods and modifies
//! each of them once, all through the fake's live watch. The clock stops when every
//! handler has seen all 100,000 events:
//!
//! ```text
//!  fake.add/modify ─► watch ─► Reflector ─► DeltaFIFO ─► pop ─► indexer ─► processor ─┬─► listener ─► handler 1
//!                                                                                      ├─► listener ─► handler 2
//!                                                                                      └─► listener ─► handler 3
//! ```
//!
//! The time includes the fake's own work per event (its key, history and broadcast),
//! which runs on the bench thread concurrently with the informer's tasks. Building
//! the pods and starting and stopping the informer are outside it. Criterion reports
//! events per second. The runtime is a multi-threaded tokio runtime (one worker per
//! core), built once. Every wait is bounded.
//!
//! Run with `cargo bench -p stage4-shared-informer --bench informer_pipeline`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use workspace_allocator as _;

use criterion::{
    Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use stage3_reflector::FakeListerWatcher;
use stage4_shared_informer::{ResourceEventHandler, SharedIndexInformer};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Pods added; each is then modified once, so twice as many events flow.
const PODS: usize = 50_000;
const EVENTS: usize = 2 * PODS;
const HANDLERS: usize = 3;
/// The longest any single wait may take before the bench fails.
const BOUND: Duration = Duration::from_secs(60);

/// The counts of all handlers, and a signal once every one of them has seen every
/// event.
struct Tally {
    seen: [AtomicUsize; HANDLERS],
    handlers_done: AtomicUsize,
    all_done: Notify,
}

impl Tally {
    fn new() -> Self {
        Self {
            seen: std::array::from_fn(|_| AtomicUsize::new(0)),
            handlers_done: AtomicUsize::new(0),
            all_done: Notify::new(),
        }
    }

    fn count(&self, handler: usize) {
        if self.seen[handler].fetch_add(1, Ordering::Relaxed) + 1 == EVENTS
            && self.handlers_done.fetch_add(1, Ordering::AcqRel) + 1 == HANDLERS
        {
            // `notify_one` keeps a permit, so a waiter that arrives late still
            // wakes.
            self.all_done.notify_one();
        }
    }

    fn counts(&self) -> [usize; HANDLERS] {
        std::array::from_fn(|i| self.seen[i].load(Ordering::Relaxed))
    }
}

/// A handler that counts adds and updates.
struct Counting {
    tally: Arc<Tally>,
    index: usize,
}

impl ResourceEventHandler<Pod> for Counting {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        self.tally.count(self.index);
    }
    fn on_update(&self, _: &Arc<Pod>, _: &Arc<Pod>) {
        self.tally.count(self.index);
    }
}

/// Pods with a name, a namespace and a few labels: what the pipeline moves is an
/// `Arc`, so the size of the pod barely matters here (see the `cache_memory` bench
/// for realistic pods).
fn pods() -> Vec<Pod> {
    (0..PODS)
        .map(|i| Pod {
            metadata: ObjectMeta {
                name: Some(format!("web-{i}")),
                namespace: Some(format!("ns-{}", i % 100)),
                labels: Some(BTreeMap::from([
                    ("app".to_string(), "web".to_string()),
                    ("pod-template-hash".to_string(), "5d4f8c7b9".to_string()),
                ])),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
        .collect()
}

/// The same pods with one label changed, for the modifications.
fn modified(pods: &[Pod]) -> Vec<Pod> {
    pods.iter()
        .cloned()
        .map(|mut pod| {
            if let Some(labels) = pod.metadata.labels.as_mut() {
                labels.insert("generation".to_string(), "2".to_string());
            }
            pod
        })
        .collect()
}

async fn bounded<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(BOUND, future)
        .await
        .unwrap_or_else(|_| panic!("timed out after {BOUND:?} waiting for {what}"))
}

async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    bounded(what, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
}

/// One iteration: builds, starts and syncs an informer (untimed), pushes the events
/// and waits for the handlers (timed), then stops the informer (untimed).
fn one_run(
    runtime: &tokio::runtime::Runtime,
    adds: Vec<Pod>,
    modifies: Vec<Pod>,
) -> Duration {
    let fake = FakeListerWatcher::<Pod>::new();
    let informer = SharedIndexInformer::new(
        fake.clone(),
        Duration::ZERO,
        stage1_store::namespace_indexers(),
    );
    let tally = Arc::new(Tally::new());
    for index in 0..HANDLERS {
        informer
            .add_event_handler(Counting {
                tally: Arc::clone(&tally),
                index,
            })
            .expect("a new informer takes handlers");
    }
    let token = CancellationToken::new();
    let task = runtime.spawn({
        let informer = informer.clone();
        let token = token.clone();
        async move { informer.run(token).await }
    });
    runtime.block_on(until("the informer to sync and open its watch", || {
        informer.has_synced() && fake.open_watches() == 1
    }));

    let start = Instant::now();
    for pod in adds {
        fake.add(pod).expect("bench pods are named");
    }
    for pod in modifies {
        fake.modify(pod).expect("bench pods are named");
    }
    runtime.block_on(bounded(
        "all three handlers to see every event",
        tally.all_done.notified(),
    ));
    let elapsed = start.elapsed();

    assert_eq!(tally.counts(), [EVENTS; HANDLERS]);
    assert_eq!(informer.get_indexer().len(), PODS);
    token.cancel();
    runtime
        .block_on(bounded("the informer to stop", task))
        .expect("the informer task does not panic");
    elapsed
}

fn informer_pipeline(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let pods = pods();
    let modifies = modified(&pods);
    let mut group = c.benchmark_group("informer_pipeline");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function("fake_watch_100k_events_3_handlers", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| one_run(&runtime, pods.clone(), modifies.clone()))
                .sum()
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10))
}

criterion_group! {
    name = benches;
    config = config();
    targets = informer_pipeline
}
criterion_main!(benches);
