//! `queue`: the work queue's add, get and done.
//!
//! - `queue/string` and `queue/arc_str` mirror client-go's `BenchmarkQueue`
//!   (queue_test.go, v0.36): one iteration is 100 rounds of add one key, get it,
//!   done, on a fresh unnamed queue (built outside the measurement), over 100
//!   `key-<n>` keys. Go's keys are strings, shared without copying; `string` clones
//!   a `String` per add (an allocation, as a Rust caller with `String` keys pays),
//!   `arc_str` an `Arc<str>` (a count, like Go's string header).
//! - `queue_parallel/<workers>`: add/get/done throughput, one producer adding
//!   distinct `u64` keys while 1 or more workers get and finish them, on a tokio
//!   runtime of 2 threads (the machine's cores). One iteration is one key, from its
//!   add until a worker's `done`. client-go v0.36 has no parallel queue benchmark;
//!   `benches/go/queue_parallel_test.go` is its Go side, written to the same shape
//!   (`BenchmarkQueueParallel/<workers>`).
//!
//! The target is at most 0.5× client-go's time on the same machine.
//!
//! Run with `cargo bench -p stage6-controllers --bench queue`; `cargo test
//! --benches` runs each once, as a smoke test.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use workspace_allocator as _;

use criterion::{
    BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use stage6_controllers::workqueue::{Item, Queue};
use tokio::sync::Notify;

/// client-go's `keys`: `key-0` .. `key-99`.
const KEYS: usize = 100;

/// One `BenchmarkQueue` iteration per call: 100 add/get/done rounds.
fn bench_queue<T: Item>(c: &mut Criterion, name: &str, keys: Vec<T>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let q = Queue::new();
                    let start = Instant::now();
                    for key in &keys {
                        q.add(key.clone());
                        let key = q.get().await.expect("the key just added");
                        q.done(black_box(&key));
                    }
                    total += start.elapsed();
                }
                total
            })
        });
    });
}

fn queue(c: &mut Criterion) {
    let strings: Vec<String> = (0..KEYS).map(|i| format!("key-{i}")).collect();
    let arcs: Vec<Arc<str>> =
        strings.iter().map(|k| Arc::from(k.as_str())).collect();
    bench_queue(c, "queue/string", strings);
    bench_queue(c, "queue/arc_str", arcs);
}

/// `iters` distinct keys through a queue served by `workers` workers: the time
/// from the first add until the last key is done.
async fn run_parallel(workers: usize, iters: u64) -> Duration {
    let q: Queue<u64> = Queue::new();
    let processed = Arc::new(AtomicU64::new(0));
    let all_done = Arc::new(Notify::new());
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        let q = q.clone();
        let processed = Arc::clone(&processed);
        let all_done = Arc::clone(&all_done);
        tasks.push(tokio::spawn(async move {
            while let Some(key) = q.get().await {
                q.done(&key);
                if processed.fetch_add(1, Ordering::Relaxed) + 1 == iters {
                    all_done.notify_one();
                }
            }
        }));
    }
    let start = Instant::now();
    for key in 0..iters {
        q.add(key);
    }
    tokio::time::timeout(Duration::from_secs(600), all_done.notified())
        .await
        .expect("the workers finish every key");
    let elapsed = start.elapsed();
    q.shut_down();
    for task in tasks {
        task.await.expect("a worker panicked");
    }
    elapsed
}

fn queue_parallel(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut group = c.benchmark_group("queue_parallel");
    group.throughput(Throughput::Elements(1));
    for workers in [1usize, 2, 8] {
        group.bench_with_input(
            BenchmarkId::from_parameter(workers),
            &workers,
            |b, &workers| {
                b.iter_custom(|iters| {
                    runtime.block_on(run_parallel(workers, iters))
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, queue, queue_parallel);
criterion_main!(benches);
