//! Cacher benches.
//!
//! - `cacher_get_list/<expected>`: upstream's `BenchmarkCacher_GetList`. 5,000 pods
//!   in namespace `default`, each with a 2 KiB random `spec.nodeSelector` value;
//!   every (5000 / expected)-th pod runs on `node-0`. One iteration is a list at
//!   resourceVersion 12345 from the cache with field selector
//!   `spec.nodeName=node-0` as the server's list handler asks for it,
//!   [`Cacher::get_list_encoded_cached`] (each item the JSON the cache keeps), and
//!   the pieces of the answer's body as the HTTP edge hands them to hyper (head,
//!   items with commas between, tail: shared, not copied); it checks that the
//!   list has `expected` pods. Upstream's `GetList` returns objects its handler
//!   has yet to serialize, so this does more than its counterpart. To reach
//!   revision 12345 honestly, 7,400 filler keys are written into the `EmbeddedKv`
//!   under `/registry/filler/` before the pods, so the pods take revisions
//!   7,401..12,400 and the Cacher lists them at 12,400.
//! - `cacher_get_list_objects/<expected>`: the same lists as decoded objects,
//!   through [`Cacher::get_list_cached`] (what a Table answer and the server's own
//!   callers use). The cache keeps each object encoded, so this decodes every item
//!   it returns.
//! - `dispatch_fanout/<variant>/<watchers>`: one Cacher over an `EmbeddedKv`, 1,000
//!   or 10,000 watchers each drained by its own consumer task through
//!   `CacherWatch::into_encoded` (the server's path), and pod writes going the real
//!   way: `EmbeddedKv` put → watchChan (decode) → Reflector → watch cache →
//!   dispatcher → cacheWatcher → consumer. One criterion iteration is one event (a
//!   put) and waits until it has been delivered, so the time reported is the time
//!   per event and the throughput is deliveries per second. Variants:
//!   - `trigger`: watcher `i` selects `spec.nodeName=node-<i>`; the events are
//!     spread over the nodes, so each event interests exactly one watcher, found
//!     through the trigger index;
//!   - `all`: every watcher is unfiltered, so each event goes to every watcher;
//!   - `label_mismatch`: every watcher selects `app=nomatch`, which no event
//!     matches, plus one unfiltered watcher that tells when an event is through; the
//!     cost of uninterested watchers.
//!
//!   Before criterion measures, a fixed report run (10,000 events; 1,000 where an
//!   event costs 10,000 deliveries or filter evaluations) prints events/s,
//!   deliveries/s and the bytes serialized per event (from `encode_counters()`
//!   deltas: one encoding per event however many watchers send it).
//!
//! Run with `cargo bench -p stage5-cacher --bench cacher`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use workspace_allocator as _;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use bytes::Bytes;
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};
use futures::StreamExt;
use rand::distr::{Alphanumeric, SampleString};
use serde_json::json;
use stage5_cacher::caching_object::encode_counters;
use stage5_cacher::{Cacher, CacherConfig};
use stage5_storage::etcd3::{Etcd3Store, encode};
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};
use stage5_storage::{list_prefix, object_key};
use tokio::runtime::Runtime;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const WAIT: Duration = Duration::from_secs(30);
const TOTAL_PODS: usize = 5000;
const FILLER_KEYS: usize = 7400;
const LIST_RV: &str = "12345";

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Whether criterion measures (`cargo bench`) rather than smoke-tests (`cargo test
/// --benches`).
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

async fn ready_cacher(kv: &Arc<dyn Kv>, config: CacherConfig) -> Arc<Cacher> {
    let store = Etcd3Store::new(Arc::clone(kv), ResourceInfo::PODS);
    let cacher = Cacher::new(store, config);
    tokio::time::timeout(WAIT, async {
        while !cacher.is_ready() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the cacher becomes ready");
    cacher
}

// ANCHOR: get_list_setup
/// The Cacher of upstream's `BenchmarkCacher_GetList`: filler keys until revision
/// 12345 is passed, then 5,000 pods with a 2 KiB random node selector, every `5000 /
/// expected`-th on `node-0`.
async fn get_list_fixture(expected: usize) -> Arc<Cacher> {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    for i in 0..FILLER_KEYS {
        let key = Bytes::from(format!("/registry/filler/{i}"));
        kv.put(key, Bytes::from_static(b"x"))
            .await
            .expect("filler put");
    }
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let mut rng = rand::rng();
    for i in 0..TOTAL_PODS {
        let name = format!("pod-{i}");
        let mut spec = json!({"nodeSelector": {"key": Alphanumeric.sample_string(&mut rng, 2048)}});
        if i % (TOTAL_PODS / expected) == 0 {
            spec["nodeName"] = json!("node-0");
        }
        let pod = Object::new(&ResourceInfo::PODS, Some("default"), &name)
            .with_data(json!({"spec": spec}));
        let key = object_key(&ResourceInfo::PODS, Some("default"), &name);
        store.create_object(key, pod).await.expect("create pod");
    }
    let cacher = ready_cacher(&kv, CacherConfig::default()).await;
    assert!(
        cacher.watch_cache().resource_version() >= 12345,
        "the cache has reached 12345"
    );
    cacher
}
// ANCHOR_END: get_list_setup

/// The list of `BenchmarkCacher_GetList`: the pods of `default` on `node-0`, at
/// resourceVersion 12345.
#[derive(Clone)]
struct ListQuery {
    prefix: String,
    options: ListOptions,
    predicate: SelectionPredicate,
}

fn list_query() -> ListQuery {
    ListQuery {
        prefix: list_prefix(&ResourceInfo::PODS, Some("default")),
        options: ListOptions {
            resource_version: LIST_RV.into(),
            ..ListOptions::default()
        },
        predicate: SelectionPredicate::parse(
            &ResourceInfo::PODS,
            "",
            "spec.nodeName=node-0",
        )
        .expect("selector"),
    }
}

/// One group of list benches: for each size, a fixture Cacher, then `list`
/// (which checks the count) timed per iteration.
fn bench_lists<F, Fut>(c: &mut Criterion, name: &str, sizes: &[usize], list: F)
where
    F: Fn(Arc<Cacher>, ListQuery, usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let rt = runtime();
    let mut group = c.benchmark_group(name);
    for &expected in sizes {
        let mut fixture: Option<Arc<Cacher>> = None;
        group.bench_function(BenchmarkId::from_parameter(expected), |b| {
            let cacher = fixture
                .get_or_insert_with(|| rt.block_on(get_list_fixture(expected)));
            // Parsed once; each iteration clones it, as a caller holds its own.
            let query = list_query();
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        list(Arc::clone(cacher), query.clone(), expected).await;
                    }
                    start.elapsed()
                })
            });
        });
        if let Some(cacher) = fixture.take() {
            rt.block_on(cacher.stop());
        }
    }
    group.finish();
}

/// `cacher_get_list_objects/<expected>`: the list as decoded objects.
fn cacher_get_list_objects(c: &mut Criterion) {
    bench_lists(
        c,
        "cacher_get_list_objects",
        &[50, 500, 5000],
        |cacher, q, n| async move {
            let list = cacher
                .get_list_cached(q.prefix, q.options, q.predicate)
                .await
                .expect("list");
            assert_eq!(list.items.len(), n);
            std::hint::black_box(list);
        },
    );
}

/// `cacher_get_list/<expected>`: the list the server's handler asks for, made
/// into the pieces of a list answer's body, as the HTTP edge does.
fn cacher_get_list(c: &mut Criterion) {
    bench_lists(
        c,
        "cacher_get_list",
        &[50, 500, 1000, 2500, 5000],
        |cacher, q, n| async move {
            std::hint::black_box(list_body(&cacher, q, n).await);
        },
    );
}

/// A list answer's body, as the HTTP edge hands it to hyper: the head, the
/// items' shared JSON with commas between ([`stage5_storage::EncodedListResult::item_chunks`]),
/// the tail. No item is copied.
async fn list_body(cacher: &Cacher, q: ListQuery, expected: usize) -> Vec<Bytes> {
    let list = cacher
        .get_list_encoded_cached(q.prefix, q.options, q.predicate)
        .await
        .expect("list");
    assert_eq!(list.items.len(), expected);
    let mut body = Vec::with_capacity(list.items.len() * 2 + 2);
    body.push(Bytes::from(format!(
        r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{}"}},"items":["#,
        list.resource_version
    )));
    body.extend(list.item_chunks());
    body.push(Bytes::from_static(b"]}"));
    body
}

/// How the fan-out watchers select.
#[derive(Clone, Copy, Debug)]
enum Variant {
    /// `spec.nodeName=node-<i>`: the indexed trigger.
    Trigger,
    /// Unfiltered.
    All,
    /// `app=nomatch`, plus one unfiltered watcher that counts.
    LabelMismatch,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Trigger => "trigger",
            Variant::All => "all",
            Variant::LabelMismatch => "label_mismatch",
        }
    }
}

/// How many events may be in flight (written but not yet delivered): below every
/// watcher's channel size, so the dispatcher never has to block on a watcher in
/// steady state.
const WINDOW: u64 = 256;
/// Distinct pods the events write (event `k` updates `pod-<k % PODS>`).
const PODS: usize = 10_000;

/// Counters the consumer tasks share with the writer.
#[derive(Default)]
struct Progress {
    delivered: AtomicU64,
    line_bytes: AtomicU64,
    wake_at: AtomicU64,
    notify: Notify,
}

impl Progress {
    fn delivered_one(&self, line_len: usize) {
        self.line_bytes
            .fetch_add(line_len as u64, Ordering::Relaxed);
        let n = self.delivered.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.wake_at.load(Ordering::SeqCst)
            && self.wake_at.swap(u64::MAX, Ordering::SeqCst) != u64::MAX
        {
            self.notify.notify_one();
        }
    }

    async fn wait_for(&self, target: u64, cacher: &Cacher) {
        loop {
            if self.delivered.load(Ordering::SeqCst) >= target {
                return;
            }
            let notified = self.notify.notified();
            self.wake_at.store(target, Ordering::SeqCst);
            if self.delivered.load(Ordering::SeqCst) >= target {
                return;
            }
            if tokio::time::timeout(WAIT, notified).await.is_err() {
                panic!(
                    "deliveries stalled at {} of {target}; stats: {:?}",
                    self.delivered.load(Ordering::SeqCst),
                    cacher.stats()
                );
            }
        }
    }
}

struct Fanout {
    kv: Arc<dyn Kv>,
    cacher: Arc<Cacher>,
    puts: Vec<(Bytes, Bytes)>,
    next: usize,
    /// Deliveries the consumers count per event.
    per_event: u64,
    /// Wait until every watcher's input is empty at the end of a batch.
    drain_check: bool,
    progress: Arc<Progress>,
    consumers: Vec<JoinHandle<()>>,
}

// ANCHOR: fanout_setup
/// A Cacher with `watchers` watchers of `variant`, each drained by a consumer task
/// that reads the encoded lines (serialize once: every consumer shares the event's
/// JSON).
async fn fanout_fixture(variant: Variant, watchers: usize) -> Fanout {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    // A fixed ring of the largest size (as `--watch-cache-sizes` would set it):
    // channel sizes 10 for trigger watchers, 1,000 for the others.
    let cacher = ready_cacher(&kv, CacherConfig::default().capacity(102_400)).await;
    let prefix = list_prefix(&ResourceInfo::PODS, Some("default"));
    let options = WatchOptions {
        resource_version: cacher.watch_cache().resource_version().to_string(),
        ..WatchOptions::default()
    };
    let progress = Arc::new(Progress::default());
    let mut consumers = Vec::with_capacity(watchers + 1);
    let mut selectors: Vec<(String, String)> = (0..watchers)
        .map(|i| match variant {
            Variant::Trigger => (String::new(), format!("spec.nodeName=node-{i}")),
            Variant::All => (String::new(), String::new()),
            Variant::LabelMismatch => ("app=nomatch".into(), String::new()),
        })
        .collect();
    if matches!(variant, Variant::LabelMismatch) {
        selectors.push((String::new(), String::new()));
    }
    for (labels, fields) in selectors {
        let predicate =
            SelectionPredicate::parse(&ResourceInfo::PODS, &labels, &fields)
                .expect("selector");
        let watch = cacher
            .watch_cached(&prefix, &options, predicate)
            .await
            .expect("watch");
        let mut lines = watch.into_encoded();
        let progress = Arc::clone(&progress);
        consumers.push(tokio::spawn(async move {
            while let Some(event) = lines.next().await {
                progress.delivered_one(event.line.len());
            }
        }));
    }
    // Event `k` writes pod `k % PODS` on node `k % watchers` (watchers divides PODS,
    // so a pod stays on its node and each event interests one trigger watcher).
    let puts = (0..PODS)
        .map(|k| {
            let name = format!("pod-{k}");
            let mut pod = Object::new(&ResourceInfo::PODS, Some("default"), &name)
                .with_labels([("app", "bench")])
                .with_data(json!({
                    "spec": {"nodeName": format!("node-{}", k % watchers), "containers": [{"name": "c", "image": "busybox"}]},
                    "status": {"phase": "Running"},
                }));
            let key = Bytes::from(object_key(&ResourceInfo::PODS, Some("default"), &name));
            (key, encode(&mut pod).expect("encode"))
        })
        .collect();
    let per_event = match variant {
        Variant::Trigger | Variant::LabelMismatch => 1,
        Variant::All => watchers as u64,
    };
    Fanout {
        kv,
        cacher,
        puts,
        next: 0,
        per_event,
        drain_check: matches!(variant, Variant::LabelMismatch),
        progress,
        consumers,
    }
}
// ANCHOR_END: fanout_setup

impl Fanout {
    // ANCHOR: fanout_run
    /// Writes `events` pod updates (at most [`WINDOW`] ahead of the deliveries) and
    /// waits until all are delivered (and, for uninterested watchers, until
    /// every input queue is empty).
    async fn run(&mut self, events: u64) -> Duration {
        let base = self.progress.delivered.load(Ordering::SeqCst);
        let start = Instant::now();
        for i in 0..events {
            if i >= WINDOW {
                let target = base + (i - WINDOW) * self.per_event;
                self.progress.wait_for(target, &self.cacher).await;
            }
            let (key, value) = self.puts[self.next % PODS].clone();
            self.next += 1;
            self.kv.put(key, value).await.expect("put");
        }
        self.progress
            .wait_for(base + events * self.per_event, &self.cacher)
            .await;
        if self.drain_check {
            let drained = tokio::time::timeout(WAIT, async {
                while self.cacher.watchers_info().iter().any(|w| w.buffered > 0) {
                    tokio::task::yield_now().await;
                }
            });
            drained.await.expect("uninterested watchers drain");
        }
        start.elapsed()
    }
    // ANCHOR_END: fanout_run

    async fn stop(self) {
        self.cacher.stop().await;
        for consumer in self.consumers {
            let _ = tokio::time::timeout(WAIT, consumer).await;
        }
    }
}

fn report(name: &str, fanout: &mut Fanout, rt: &Runtime, events: u64) {
    let (objects_before, bytes_before) = encode_counters();
    let lines_before = fanout.progress.line_bytes.load(Ordering::Relaxed);
    let elapsed = rt.block_on(fanout.run(events));
    let (objects_after, bytes_after) = encode_counters();
    let lines = fanout.progress.line_bytes.load(Ordering::Relaxed) - lines_before;
    let secs = elapsed.as_secs_f64();
    let per_event = |x: u64| x as f64 / events as f64;
    eprintln!(
        "dispatch_fanout/{name}: {events} events in {:.3} s: {:.0} events/s, {:.1} µs/event, {:.0} deliveries/s; \
         {:.2} encodings/event, {:.0} bytes serialized/event, {:.0} line bytes delivered/event; slow-closed watchers: {}",
        secs,
        events as f64 / secs,
        secs * 1e6 / events as f64,
        (events * fanout.per_event) as f64 / secs,
        per_event(objects_after - objects_before),
        per_event(bytes_after - bytes_before),
        per_event(lines),
        fanout.cacher.stats().watchers_terminated_slow,
    );
}

fn dispatch_fanout(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch_fanout");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for variant in [Variant::Trigger, Variant::LabelMismatch, Variant::All] {
        for watchers in [1000usize, 10_000] {
            let rt = runtime();
            let id = BenchmarkId::new(variant.name(), watchers);
            let name = format!("{}/{watchers}", variant.name());
            let mut fixture: Option<Fanout> = None;
            let per_event = match variant {
                Variant::All => watchers as u64,
                _ => 1,
            };
            group.throughput(Throughput::Elements(per_event));
            group.bench_function(id, |b| {
                let fanout = fixture.get_or_insert_with(|| {
                    let mut fanout = rt.block_on(fanout_fixture(variant, watchers));
                    if measuring() {
                        let heavy = !matches!(variant, Variant::Trigger)
                            && watchers >= 10_000;
                        report(
                            &name,
                            &mut fanout,
                            &rt,
                            if heavy { 1000 } else { 10_000 },
                        );
                    }
                    fanout
                });
                b.iter_custom(|iters| rt.block_on(fanout.run(iters)));
            });
            if let Some(fanout) = fixture.take() {
                rt.block_on(fanout.stop());
            }
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    cacher_get_list,
    cacher_get_list_objects,
    dispatch_fanout
);
criterion_main!(benches);
