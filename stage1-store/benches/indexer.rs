//! Stage 1 benches.
//!
//! - `indexer_update` mirrors client-go's `BenchmarkIndexer`
//!   (thread_safe_store_test.go): 5000 string objects `object-number-i`, one
//!   identity index, round-robin updates of unchanged values.
//! - `by_index` queries one namespace of 100,000 pods spread over 100 namespaces.
//! - Before the timed benches, allocations per update, the namespace index's bytes
//!   per object, and what the cached `list_keys` and `list` snapshots add per
//!   object are counted and printed.
//!
//! Run with `cargo bench -p stage1-store --bench indexer`.

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use workspace_allocator as _;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use stage1_store::{
    Cache, KeyLister, NAMESPACE_INDEX, Store, ThreadSafeStore, index_func, indexers,
    meta_namespace_key_func, new_store,
};

const OBJECTS: usize = 5000;
const PODS: usize = 100_000;
const NAMESPACES: usize = 100;

fn identity_store() -> (ThreadSafeStore<String>, Vec<Arc<String>>) {
    let store = ThreadSafeStore::new(indexers([(
        "testmodes",
        index_func(|s: &String| Ok(smallvec::smallvec![Cow::Borrowed(s.as_str())])),
    )]));
    let objects: Vec<Arc<String>> = (0..OBJECTS)
        .map(|i| Arc::new(format!("object-number-{i}")))
        .collect();
    for obj in &objects {
        store.add(obj, Arc::clone(obj)).unwrap();
    }
    (store, objects)
}

fn pods() -> Vec<Arc<Pod>> {
    (0..PODS)
        .map(|i| {
            Arc::new(Pod {
                metadata: ObjectMeta {
                    name: Some(format!("pod-{i}")),
                    namespace: Some(format!("ns-{}", i % NAMESPACES)),
                    ..ObjectMeta::default()
                },
                ..Pod::default()
            })
        })
        .collect()
}

/// Counts what the benches cannot show as time: allocations per unchanged update,
/// and the bytes the namespace index adds per object.
fn report_memory() {
    let (store, objects) = identity_store();
    let updates = 10 * OBJECTS;
    let info = workspace_allocator::measure(|| {
        for i in 0..updates {
            let obj = &objects[i % OBJECTS];
            store.update(obj, Arc::clone(obj)).unwrap();
        }
    });
    println!(
        "indexer_update: {:.2} allocations/op, {:.1} bytes/op",
        info.count_total as f64 / updates as f64,
        info.bytes_total as f64 / updates as f64
    );

    let pods = pods();
    let key_func: stage1_store::KeyFunc<Pod> =
        Arc::new(meta_namespace_key_func::<Pod>);
    // Keep each store alive past the measurement, so `bytes_current` is what it
    // holds.
    let mut plain_store = None;
    let plain = workspace_allocator::measure(|| {
        let store = new_store(key_func.clone());
        store.replace(pods.clone(), "1").unwrap();
        plain_store = Some(store);
    });
    let mut indexed_store = None;
    let indexed = workspace_allocator::measure(|| {
        let store = Cache::<Pod>::for_resources();
        store.replace(pods.clone(), "1").unwrap();
        indexed_store = Some(store);
    });
    black_box((&plain_store, &indexed_store));
    println!(
        "store of {PODS} pods (objects not counted): {:.1} bytes/object without indexes; the namespace index adds {:.1} bytes/object",
        plain.bytes_current as f64 / PODS as f64,
        (indexed.bytes_current as f64 - plain.bytes_current as f64) / PODS as f64,
    );
    let store = indexed_store.expect("the store built above");
    let snapshots = workspace_allocator::measure(|| {
        black_box((store.list_keys(), store.list()));
    });
    println!(
        "cached list_keys and list snapshots add {:.1} bytes/object until the next write",
        snapshots.bytes_current as f64 / PODS as f64,
    );
}

fn indexer_update(c: &mut Criterion) {
    let (store, objects) = identity_store();
    let mut i = 0usize;
    c.bench_function("indexer_update", |b| {
        b.iter(|| {
            let obj = &objects[i % OBJECTS];
            store.update(obj, Arc::clone(obj)).unwrap();
            i = i.wrapping_add(1);
        })
    });
}

fn by_index(c: &mut Criterion) {
    let store = Cache::<Pod>::for_resources();
    store.replace(pods(), "1").unwrap();
    let mut i = 0usize;
    c.bench_function("by_index", |b| {
        b.iter(|| {
            let namespace = format!("ns-{}", i % NAMESPACES);
            i = i.wrapping_add(1);
            let found = store
                .thread_safe_store()
                .by_index(NAMESPACE_INDEX, &namespace)
                .unwrap();
            assert_eq!(found.len(), PODS / NAMESPACES);
            black_box(found)
        })
    });
}

fn memory(_: &mut Criterion) {
    report_memory();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = memory, indexer_update, by_index
}
criterion_main!(benches);
