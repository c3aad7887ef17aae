//! watchChan benches.
//!
//! - `watch_chan/embedded_100k`: 100,000 pod puts (distinct pods in `default`) are
//!   written into an `EmbeddedKv` first; one iteration then starts a watchChan
//!   (`WatchChan::start`, a list watch with `prev_kv`, as
//!   `Etcd3Store::watch_objects` does) from the revision before the puts and
//!   consumes the 100,000 decoded events from its result channel (`Watch<Object>`):
//!   replay, parse, decode, filter and the two channels of 100. Throughput is
//!   decoded events per second.
//! - `watch_chan/etcd_100k` (feature `etcd`): the same over `EtcdKv` against a real
//!   etcd started on loopback by `stage5_storage::testing::EtcdServer`; skipped with
//!   a message when `etcd` is not installed.
//!
//! Run with `cargo bench -p stage5-storage --bench watch_chan [--features etcd]`.

use std::sync::Arc;
use std::time::{Duration, Instant};
use workspace_allocator as _;

use apimachinery::watch::WatchEvent;
use bytes::Bytes;
use criterion::{
    Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use futures::StreamExt;
use serde_json::json;
use stage5_storage::etcd3::{WatchChan, WatchChanOptions, encode};
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};
use stage5_storage::{list_prefix, object_key};
use tokio::runtime::Runtime;

const EVENTS: usize = 100_000;
/// How many puts are in flight while pre-writing (matters for a real etcd).
const WRITE_CONCURRENCY: usize = 64;
const WAIT: Duration = Duration::from_secs(60);

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

// ANCHOR: watch_chan_setup
/// Writes [`EVENTS`] pod puts and answers the revision before the first.
async fn pre_write(kv: &Arc<dyn Kv>) -> i64 {
    let puts = futures::stream::iter(0..EVENTS)
        .map(|i| {
            let name = format!("pod-{i:06}");
            let mut pod = Object::new(&ResourceInfo::PODS, Some("default"), &name)
                .with_labels([("app", "bench")])
                .with_data(json!({
                    "spec": {"nodeName": format!("node-{}", i % 100), "containers": [{"name": "c", "image": "busybox"}]},
                    "status": {"phase": "Running"},
                }));
            let key = Bytes::from(object_key(&ResourceInfo::PODS, Some("default"), &name));
            let value = encode(&mut pod).expect("encode");
            let kv = Arc::clone(kv);
            async move { kv.put(key, value).await.expect("put").0 }
        })
        .buffer_unordered(WRITE_CONCURRENCY);
    let revisions: Vec<i64> = puts.collect().await;
    let first = revisions.iter().copied().min().expect("puts");
    first - 1
}

/// Replays the [`EVENTS`] puts after `from` through a new watchChan and consumes
/// them.
async fn replay(kv: &Arc<dyn Kv>, from: i64) -> Duration {
    let start = Instant::now();
    let mut watch = WatchChan::start(
        Arc::clone(kv),
        ResourceInfo::PODS,
        list_prefix(&ResourceInfo::PODS, Some("default")),
        WatchChanOptions {
            initial_rev: u64::try_from(from).unwrap_or(0),
            force_initial_events: false,
            recursive: true,
            progress_notify: false,
            predicate: SelectionPredicate::default(),
            initial_events_end_bookmark: false,
            progress_registry: None,
        },
    );
    let consumed = tokio::time::timeout(WAIT, async {
        let mut n = 0;
        while n < EVENTS {
            match watch.next().await {
                Some(Ok(WatchEvent::Added(obj))) => {
                    std::hint::black_box(obj);
                    n += 1;
                }
                Some(Ok(WatchEvent::Bookmark(_))) => {}
                other => panic!("unexpected watch item: {other:?}"),
            }
        }
    });
    consumed.await.expect("the replay finishes in time");
    let elapsed = start.elapsed();
    drop(watch);
    elapsed
}
// ANCHOR_END: watch_chan_setup

fn bench_replay(c: &mut Criterion, name: &str, rt: &Runtime, kv: &Arc<dyn Kv>) {
    let mut group = c.benchmark_group("watch_chan");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(EVENTS as u64));
    let mut from: Option<i64> = None;
    group.bench_function(name, |b| {
        let from = *from.get_or_insert_with(|| rt.block_on(pre_write(kv)));
        // ANCHOR: watch_chan_iter
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += replay(kv, from).await;
                }
                total
            })
        });
        // ANCHOR_END: watch_chan_iter
    });
    group.finish();
}

fn embedded_100k(c: &mut Criterion) {
    let rt = runtime();
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    bench_replay(c, "embedded_100k", &rt, &kv);
}

#[cfg(feature = "etcd")]
fn etcd_100k(c: &mut Criterion) {
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::{EtcdServer, etcd_available};
    if !etcd_available() {
        eprintln!(
            "\n**********\n SKIPPED watch_chan/etcd_100k: `etcd` is not on PATH (apt-get install etcd-server)\n**********\n"
        );
        return;
    }
    let server = match EtcdServer::start() {
        Ok(server) => server,
        Err(error) => {
            eprintln!(
                "\n**********\n SKIPPED watch_chan/etcd_100k: could not start etcd: {error}\n**********\n"
            );
            return;
        }
    };
    let rt = runtime();
    let kv: Arc<dyn Kv> = Arc::new(
        rt.block_on(EtcdKv::connect([server.client_url()]))
            .expect("connect to etcd"),
    );
    bench_replay(c, "etcd_100k", &rt, &kv);
    drop(kv);
    drop(rt);
    drop(server);
}

#[cfg(not(feature = "etcd"))]
fn etcd_100k(_c: &mut Criterion) {
    eprintln!("watch_chan/etcd_100k needs `--features etcd`; skipped");
}

criterion_group!(benches, embedded_100k, etcd_100k);
criterion_main!(benches);
