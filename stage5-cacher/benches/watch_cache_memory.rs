//! `watch_cache_memory`: bytes the watch cache holds per pod, for 100,000 realistic
//! pods (about 900 bytes of JSON each: three labels, an owner reference, one
//! container with resources and a port, a running status with a condition and a pod
//! IP), spread over 100 namespaces and 50 nodes.
//!
//! The pods are decoded once, outside the measurement. Each fill hands the cache its
//! own deep copy of every pod, as the Reflector hands it what the storage decoded
//! from etcd, so what `workspace_allocator::measure` still counts when a fill returns
//! (the cache outlives it) is what the cache keeps:
//!
//! - `replace`: one relist of every pod (`watchCache.Replace`): the store and its
//!   namespace and node indexes, no event history;
//! - `events`: one Added event per pod (`watchCache.processEvent`): the store plus a
//!   ring that, all events being fresh, grows to hold every one of them (up to
//!   102,400), as after a burst of creations.
//!
//! Run with `cargo bench -p stage5-cacher --bench watch_cache_memory`. It prints
//! the bytes, and criterion times one relist of 1,000 of the pods into a fresh
//! cache, dropped at the end (`watch_cache_replace/1000`).

use std::hint::black_box;
use std::sync::Arc;
use workspace_allocator as _;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

use apimachinery::runtime::cache_encode;
use apimachinery::runtime::serializer::protobuf;
use apimachinery::watch::EventType;
use stage5_cacher::{WatchCache, WatchCacheOptions};
use stage5_storage::{Object, ResourceInfo};

/// Pods when measuring (`cargo bench`); `cargo test --benches` only smoke-tests
/// with a thousand.
fn pods_to_measure() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        100_000
    } else {
        1_000
    }
}
const NAMESPACES: usize = 100;
const NODES: usize = 50;

/// A pod of a Deployment, about 900 bytes as compact JSON.
const POD_JSON: &str = r#"{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "web-7d9c6b5f4d-x2x8q",
    "namespace": "shop",
    "uid": "5b3f2c1e-8a47-4c1b-9f0e-2d6a7c8b9e10",
    "resourceVersion": "48213345",
    "creationTimestamp": "2025-03-14T09:26:53Z",
    "labels": {"app": "web", "pod-template-hash": "7d9c6b5f4d", "tier": "frontend"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c6b5f4d",
      "uid": "0c2d4e6f-1a3b-4c5d-8e7f-9a0b1c2d3e4f", "controller": true, "blockOwnerDeletion": true}]
  },
  "spec": {
    "containers": [{"name": "web", "image": "registry.example.com/shop/web:v2.14.3",
      "ports": [{"containerPort": 8080, "protocol": "TCP"}],
      "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
      "imagePullPolicy": "IfNotPresent"}],
    "restartPolicy": "Always",
    "dnsPolicy": "ClusterFirst",
    "nodeName": "worker-3"
  },
  "status": {
    "phase": "Running",
    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-03-14T09:27:04Z"}],
    "podIP": "10.244.3.41",
    "qosClass": "Burstable"
  }
}"#;

/// `count` pods from the one document, each with its own name, namespace, node, uid,
/// resource version and IP.
fn realistic_pods(count: usize) -> Vec<Object> {
    let template: Object =
        serde_json::from_str(POD_JSON).expect("the pod document is valid");
    (0..count)
        .map(|i| {
            let mut pod = template.clone();
            pod.metadata.name = Some(format!("web-7d9c6b5f4d-{i:05x}q"));
            pod.metadata.namespace = Some(format!("shop-{}", i % NAMESPACES));
            pod.metadata.uid = Some(format!("5b3f2c1e-8a47-4c1b-9f0e-{i:012x}"));
            pod.metadata.resource_version = Some((1 + i).to_string());
            pod.data["spec"]["nodeName"] = format!("worker-{}", i % NODES).into();
            pod.data["status"]["podIP"] =
                format!("10.{}.{}.41", i / 250 % 250, i % 250).into();
            pod
        })
        .collect()
}

fn new_cache() -> WatchCache {
    WatchCache::new(ResourceInfo::PODS, WatchCacheOptions::default(), None, None)
}

/// A fresh cache after one relist of its own copies of `pods`.
fn relisted(pods: &[Object]) -> WatchCache {
    let cache = new_cache();
    let copies: Vec<Arc<Object>> =
        pods.iter().map(|p| Arc::new(p.clone())).collect();
    cache
        .replace_objects(copies, &pods.len().to_string())
        .expect("replace");
    cache
}

fn report_memory() {
    let count = pods_to_measure();
    let pods = realistic_pods(count);
    let json_bytes = serde_json::to_vec(&pods[0]).expect("encodes").len();

    let mut kept = None;
    let replace = workspace_allocator::measure(|| {
        kept = Some(relisted(&pods));
    });
    drop(kept.take());

    let events = workspace_allocator::measure(|| {
        let cache = new_cache();
        cache.replace_objects(Vec::new(), "0").expect("replace");
        for pod in &pods {
            cache
                .process_event(EventType::Added, Arc::new(pod.clone()))
                .expect("add");
        }
        assert_eq!(cache.len(), count, "the ring holds every event");
        kept = Some(cache);
    });
    drop(kept.take());

    // A second format: each pod's protobuf body, kept by its element the
    // first time a protobuf list asks (upstream's `cachingObject`).
    let cache = relisted(&pods);
    let elements = cache.read().all_events_from_store();
    let protobuf = workspace_allocator::measure(|| {
        for element in &elements {
            cache_encode(element.object.as_ref(), "protobuf", |json| {
                let value: serde_json::Value =
                    serde_json::from_slice(json).map_err(|e| e.to_string())?;
                let raw = protobuf::marshal("v1", "Pod", &value)
                    .map_err(|e| e.to_string())?;
                Ok(bytes::Bytes::from(protobuf::envelope("v1", "Pod", &raw)))
            })
            .expect("a pod encodes");
        }
    });
    drop((elements, cache));

    let per_pod = |n: i64| n as f64 / count as f64;
    println!(
        "watch_cache_memory: {count} pods of {json_bytes} bytes of JSON, {NAMESPACES} namespaces, {NODES} nodes"
    );
    println!(
        "  replace (store + indexes):           {:8.1} bytes/pod ({:.1} allocations/pod)",
        per_pod(replace.bytes_current),
        per_pod(replace.count_current)
    );
    println!(
        "  events (store + indexes + ring):     {:8.1} bytes/pod ({:.1} allocations/pod)",
        per_pod(events.bytes_current),
        per_pod(events.count_current)
    );
    println!(
        "  + protobuf, once asked for:          {:8.1} bytes/pod ({:.1} allocations/pod)",
        per_pod(protobuf.bytes_current),
        per_pod(protobuf.count_current)
    );
}

/// The bytes, then a timed relist of 1,000 pods into a fresh cache, and the
/// cache dropped: each iteration hands the cache fresh copies, as the Reflector
/// does, and pays for every object's whole stay (kept decoded, or encoded and
/// the decoded copy dropped at once).
fn memory(c: &mut Criterion) {
    report_memory();
    let pods = realistic_pods(1_000);
    c.bench_function("watch_cache_replace/1000", |b| {
        b.iter_batched(
            || pods.iter().map(|p| Arc::new(p.clone())).collect::<Vec<_>>(),
            |copies| {
                let cache = new_cache();
                cache.replace_objects(copies, "1000").expect("replace");
                // Dropped here, timed: the objects' whole stay in the cache.
                drop(black_box(cache));
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, memory);
criterion_main!(benches);
