//! Stage 2 benches.
//!
//! - `deltafifo_list_keys` mirrors client-go's `BenchmarkDeltaFIFOListKeys`: 20,000
//!   queued items, `list_keys` called from 2 threads at once (like Go's
//!   `RunParallel` on 2 cores: the time per op is wall time divided by the calls of
//!   both threads). The queue does not change, so every call shares one cached
//!   snapshot.
//! - `deltafifo_list_keys_after_change`: the other extreme, a pop and an add before
//!   every `list_keys` (one thread), so every call builds a new snapshot of the
//!   20,000 keys.
//! - `add_pop_100k`: 100,000 adds, then pops until empty.
//! - `replace_100k`: a replace of 100,000 objects against 100,000 known objects, 1%
//!   of them missing from the list (so 1,000 tombstones).
//! - Printed first: bytes per queued item, and what a cached `list_keys` snapshot
//!   adds per queued key.
//!
//! Run with `cargo bench -p stage2-deltafifo --bench deltafifo`.

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use workspace_allocator as _;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use stage1_store::{Cache, KeyFunc, Store, new_store};
use stage2_deltafifo::{DeltaFifo, DeltaFifoOptions};

#[derive(Debug)]
struct Obj {
    name: String,
    val: usize,
}

fn key_func() -> KeyFunc<Obj> {
    Arc::new(|o: &Obj| Ok(o.name.clone()))
}

fn objects(n: usize) -> Vec<Arc<Obj>> {
    (0..n)
        .map(|i| {
            Arc::new(Obj {
                name: format!("namespace-{}/object-{i}", i % 100),
                val: i,
            })
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime")
}

fn report_memory() {
    let objs = objects(100_000);
    let mut keep = None;
    let info = workspace_allocator::measure(|| {
        let fifo = DeltaFifo::new(DeltaFifoOptions::new(key_func()));
        for o in &objs {
            fifo.add(Arc::clone(o)).unwrap();
        }
        keep = Some(fifo);
    });
    black_box(&keep);
    println!(
        "deltafifo: {:.1} bytes per queued item (key, map entry, queue slot, one inline delta; objects not counted)",
        info.bytes_current as f64 / objs.len() as f64
    );
    let fifo = keep.expect("the queue built above");
    let snapshot = workspace_allocator::measure(|| {
        black_box(fifo.list_keys());
    });
    println!(
        "deltafifo: a cached list_keys snapshot adds {:.1} bytes per queued key while the queue is unchanged",
        snapshot.bytes_current as f64 / objs.len() as f64
    );
}

fn deltafifo_list_keys(c: &mut Criterion) {
    let fifo = Arc::new(DeltaFifo::new(DeltaFifoOptions::new(key_func())));
    for o in objects(20_000) {
        fifo.add(o).unwrap();
    }
    c.bench_function("deltafifo_list_keys", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for share in [iters / 2, iters - iters / 2] {
                    let fifo = Arc::clone(&fifo);
                    scope.spawn(move || {
                        for _ in 0..share {
                            black_box(fifo.list_keys());
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
}

fn deltafifo_list_keys_after_change(c: &mut Criterion) {
    let fifo = DeltaFifo::new(DeltaFifoOptions::new(key_func()));
    for o in objects(20_000) {
        fifo.add(o).unwrap();
    }
    let rt = runtime();
    c.bench_function("deltafifo_list_keys_after_change", |b| {
        b.iter(|| {
            let deltas = rt
                .block_on(fifo.pop(|d, _| Ok::<_, Infallible>(d)))
                .unwrap();
            let obj = deltas.newest().and_then(|d| d.object().cloned()).unwrap();
            fifo.add(obj).unwrap();
            black_box(fifo.list_keys());
        })
    });
}

fn add_pop_100k(c: &mut Criterion) {
    let objs = objects(100_000);
    let rt = runtime();
    let mut group = c.benchmark_group("add_pop_100k");
    group.throughput(Throughput::Elements(2 * objs.len() as u64));
    group.sample_size(10);
    group.bench_function("add_pop_100k", |b| {
        b.iter(|| {
            let fifo = DeltaFifo::new(DeltaFifoOptions::new(key_func()));
            for o in &objs {
                fifo.add(Arc::clone(o)).unwrap();
            }
            rt.block_on(async {
                for _ in 0..objs.len() {
                    fifo.pop(|d, _| Ok::<_, Infallible>(d)).await.unwrap();
                }
            });
            assert!(fifo.is_empty());
        })
    });
    group.finish();
}

fn replace_100k(c: &mut Criterion) {
    let objs = objects(100_000);
    let known: Arc<Cache<Obj>> = Arc::new(new_store(key_func()));
    known.replace(objs.clone(), "1").unwrap();
    let listed: Vec<Arc<Obj>> =
        objs.iter().filter(|o| o.val % 100 != 0).cloned().collect();
    let mut group = c.benchmark_group("replace_100k");
    group.throughput(Throughput::Elements(objs.len() as u64));
    group.sample_size(10);
    group.bench_function("replace_100k", |b| {
        b.iter_batched(
            || {
                let fifo = DeltaFifo::new(
                    DeltaFifoOptions::new(key_func())
                        .known_objects(known.clone())
                        .emit_delta_type_replaced(true),
                );
                (fifo, listed.clone())
            },
            |(fifo, list)| {
                fifo.replace(list, "2").unwrap();
                assert_eq!(fifo.len(), 100_000);
                fifo
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn memory(_: &mut Criterion) {
    report_memory();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = memory, deltafifo_list_keys, deltafifo_list_keys_after_change,
        add_pop_100k, replace_100k
}
criterion_main!(benches);
