//! Embedded KV benches.
//!
//! - `embedded_kv/put`: puts of a 1 KiB value, round-robin over 1,000 keys (etcd's
//!   `BenchmarkStorePut` in `mvcc/kvstore_bench_test.go`, in process). The store is
//!   compacted every 65,536 puts, as the apiserver's compactor would, so history
//!   does not grow without bound.
//! - `embedded_kv/watch_fanout_100`: 100 watchers on one prefix, each read by its
//!   own task; one iteration is a put and the wait until all 100 watchers have
//!   received it (etcd's `BenchmarkWatchableStoreWatchPutSync` shape). Throughput
//!   counts delivered events.
//!
//! Run with `cargo bench -p stage5-storage --bench kv`.

use std::sync::Arc;
use std::time::{Duration, Instant};
use workspace_allocator as _;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::{FutureExt, StreamExt};
use stage5_storage::kv::{EmbeddedKv, Kv, WatchRequest};

const KEYS: usize = 1000;
const WATCHERS: usize = 100;
const COMPACT_EVERY: u64 = 65_536;

fn keys() -> Vec<Bytes> {
    (0..KEYS)
        .map(|i| Bytes::from(format!("/registry/pods/default/pod-{i:04}")))
        .collect()
}

fn put(c: &mut Criterion) {
    let kv = EmbeddedKv::new();
    let keys = keys();
    let value = Bytes::from(vec![b'x'; 1024]);
    let mut group = c.benchmark_group("embedded_kv");
    group.throughput(Throughput::Elements(1));
    let mut i: u64 = 0;
    group.bench_function("put", |b| {
        b.iter(|| {
            let key = keys[(i % KEYS as u64) as usize].clone();
            let put = kv.put(key, value.clone()).now_or_never();
            let (revision, _) = put
                .expect("the embedded put is ready at once")
                .expect("put");
            i += 1;
            if i.is_multiple_of(COMPACT_EVERY) {
                let compact = kv.compact(revision).now_or_never();
                compact.expect("ready").expect("compact");
            }
            revision
        });
    });
    group.finish();
}

fn watch_fanout_100(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let kv = Arc::new(EmbeddedKv::new());
    let (delivered_tx, mut delivered) =
        tokio::sync::mpsc::unbounded_channel::<i64>();
    let tasks: Vec<_> = (0..WATCHERS)
        .map(|_| {
            let delivered_tx = delivered_tx.clone();
            let mut watch = rt
                .block_on(kv.watch(WatchRequest {
                    key: Bytes::from_static(b"/registry/pods/"),
                    prefix: true,
                    prev_kv: true,
                    ..WatchRequest::default()
                }))
                .expect("watch");
            rt.spawn(async move {
                while let Some(Ok(response)) = watch.responses.next().await {
                    for event in &response.events {
                        if delivered_tx.send(event.kv.mod_revision).is_err() {
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    let keys = keys();
    let value = Bytes::from(vec![b'x'; 1024]);
    let mut group = c.benchmark_group("embedded_kv");
    group.throughput(Throughput::Elements(WATCHERS as u64));
    let mut i: usize = 0;
    group.bench_function("watch_fanout_100", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let key = keys[i % KEYS].clone();
                    i += 1;
                    let (revision, _) =
                        kv.put(key, value.clone()).await.expect("put");
                    for _ in 0..WATCHERS {
                        let got = tokio::time::timeout(
                            Duration::from_secs(10),
                            delivered.recv(),
                        )
                        .await
                        .expect("all watchers receive the event in time")
                        .expect("watchers alive");
                        assert_eq!(got, revision);
                    }
                }
                start.elapsed()
            })
        });
    });
    group.finish();
    for task in tasks {
        task.abort();
    }
}

criterion_group!(benches, put, watch_fanout_100);
criterion_main!(benches);
