//! `cache_memory`: bytes held per pod by the informer cache, against kube-runtime's
//! reflector store, for 100,000 realistic pods.
//!
//! The pods are deserialized once from one `kubectl get pod -o json`-like document
//! (a pod of a Deployment: labels, annotations, an owner reference, one container
//! with image, resources, env, ports and the service-account volume mount,
//! tolerations, and a running status with conditions, pod IP and container status;
//! `managedFields` left out, as informers that care about memory strip them with a
//! transform). Each pod then gets its own name, uid, IPs and container id. Both
//! stores are filled from these same pods, and each gets its own copy of every pod,
//! as it would from the wire:
//!
//! - ours: a `SharedIndexInformer` lists them from stage 3's `FakeListerWatcher`
//!   (Reflector → DeltaFIFO → indexer), on a current-thread runtime, so that every
//!   allocation is counted on this thread. Then only the indexer is kept: the
//!   informer, its queue and the fake are dropped. Measured twice: without indexes
//!   (like kube-runtime's store) and with the `"namespace"` index that
//!   `SharedInformerFactory` gives every informer.
//! - kube-runtime: `reflector::store::<Pod>()`'s writer applies `Init`, one
//!   `InitApply` per pod, then `InitDone`, as its watcher does for an initial list.
//!   The writer copies each pod out of the event into its own `Arc`.
//!
//! `workspace_allocator::measure` gives the bytes still allocated when a fill
//! returns: the stores are kept alive past the measurement, so that is what each
//! store holds. The pods themselves (an `Arc<Pod>` each, the same in both stores)
//! are measured once on their own, and subtracted to give each store's overhead per
//! pod (keys, map slots, index entries).
//!
//! Run with `cargo bench -p stage4-shared-informer --bench cache_memory`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use workspace_allocator as _;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kube_runtime::reflector::store::Writer;
use kube_runtime::watcher;
use stage1_store::{Cache, Indexers};
use stage3_reflector::FakeListerWatcher;
use stage4_shared_informer::SharedIndexInformer;
use tokio_util::sync::CancellationToken;

const PODS: usize = 100_000;
const NAMESPACES: usize = 100;
/// The longest the informer may take to list the pods before the bench fails.
const BOUND: Duration = Duration::from_secs(120);

/// A pod of a Deployment as the API server returns it, less `managedFields`.
const POD_JSON: &str = r#"{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "checkout-7d9c6b5f4d-x2x8q",
    "generateName": "checkout-7d9c6b5f4d-",
    "namespace": "shop",
    "uid": "5b3f2c1e-8a47-4c1b-9f0e-2d6a7c8b9e10",
    "resourceVersion": "48213345",
    "creationTimestamp": "2025-03-14T09:26:53Z",
    "labels": {
      "app.kubernetes.io/name": "checkout",
      "app.kubernetes.io/part-of": "shop",
      "pod-template-hash": "7d9c6b5f4d",
      "tier": "backend"
    },
    "annotations": {
      "kubectl.kubernetes.io/restartedAt": "2025-03-14T09:26:40Z",
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "9090"
    },
    "ownerReferences": [
      {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "checkout-7d9c6b5f4d",
        "uid": "0c2d4e6f-1a3b-4c5d-8e7f-9a0b1c2d3e4f",
        "controller": true,
        "blockOwnerDeletion": true
      }
    ]
  },
  "spec": {
    "containers": [
      {
        "name": "checkout",
        "image": "registry.example.com/shop/checkout:v2.14.3",
        "imagePullPolicy": "IfNotPresent",
        "ports": [
          {"name": "http", "containerPort": 8080, "protocol": "TCP"},
          {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}
        ],
        "env": [
          {"name": "LOG_LEVEL", "value": "info"},
          {"name": "PAYMENTS_URL", "value": "http://payments.shop.svc.cluster.local:8080"},
          {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}
        ],
        "resources": {
          "requests": {"cpu": "250m", "memory": "256Mi"},
          "limits": {"cpu": "1", "memory": "512Mi"}
        },
        "readinessProbe": {
          "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
          "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3
        },
        "volumeMounts": [
          {"name": "kube-api-access-7xk2p", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
      }
    ],
    "volumes": [
      {
        "name": "kube-api-access-7xk2p",
        "projected": {
          "defaultMode": 420,
          "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
          ]
        }
      }
    ],
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "serviceAccountName": "checkout",
    "serviceAccount": "checkout",
    "nodeName": "worker-3",
    "securityContext": {},
    "schedulerName": "default-scheduler",
    "tolerations": [
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    ],
    "priority": 0,
    "enableServiceLinks": true,
    "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": "2025-03-14T09:26:55Z"},
      {"type": "Initialized", "status": "True", "lastTransitionTime": "2025-03-14T09:26:53Z"},
      {"type": "Ready", "status": "True", "lastTransitionTime": "2025-03-14T09:27:04Z"},
      {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2025-03-14T09:27:04Z"},
      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-03-14T09:26:53Z"}
    ],
    "hostIP": "10.0.3.17",
    "hostIPs": [{"ip": "10.0.3.17"}],
    "podIP": "10.244.3.41",
    "podIPs": [{"ip": "10.244.3.41"}],
    "startTime": "2025-03-14T09:26:53Z",
    "containerStatuses": [
      {
        "name": "checkout",
        "state": {"running": {"startedAt": "2025-03-14T09:26:55Z"}},
        "lastState": {},
        "ready": true,
        "restartCount": 0,
        "image": "registry.example.com/shop/checkout:v2.14.3",
        "imageID": "registry.example.com/shop/checkout@sha256:9f1c0a7e3b5d2c4f6a8e0b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a",
        "containerID": "containerd://4e1f0c7a2b9d8e3f6a5c4b1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
        "started": true
      }
    ],
    "qosClass": "Burstable"
  }
}"#;

/// `PODS` pods from the one document, each with its own name, uid, IPs and container
/// id, spread over `NAMESPACES` namespaces.
fn realistic_pods() -> Vec<Pod> {
    let template: Pod =
        serde_json::from_str(POD_JSON).expect("the pod document is valid");
    (0..PODS)
        .map(|i| {
            let mut pod = template.clone();
            let (a, b) = (i / 250 % 250, i % 250);
            pod.metadata.name = Some(format!("checkout-7d9c6b5f4d-{i:05x}q"));
            pod.metadata.namespace = Some(format!("shop-{}", i % NAMESPACES));
            pod.metadata.uid = Some(format!("5b3f2c1e-8a47-4c1b-9f0e-{i:012x}"));
            pod.metadata.resource_version = Some((48_213_345 + i).to_string());
            if let Some(status) = pod.status.as_mut() {
                let ip = format!("10.{a}.{b}.41");
                status.pod_ip = Some(ip.clone());
                status.pod_ips =
                    Some(vec![k8s_openapi::api::core::v1::PodIP { ip }]);
                for container in status.container_statuses.iter_mut().flatten() {
                    container.container_id = Some(format!(
                        "containerd://4e1f0c7a2b9d8e3f6a5c4b1d0e9f{i:036x}"
                    ));
                }
            }
            pod
        })
        .collect()
}

/// Lists `pods` into a new informer and returns its indexer, the only thing left
/// holding them.
fn informer_cache(pods: &[Pod], indexers: Indexers<Pod>) -> Arc<Cache<Pod>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let fake = FakeListerWatcher::<Pod>::new();
    for pod in pods {
        fake.add(pod.clone()).expect("bench pods are named");
    }
    let informer = SharedIndexInformer::new(fake.clone(), Duration::ZERO, indexers);
    let indexer = informer.get_indexer();
    runtime.block_on(async {
        let token = CancellationToken::new();
        let run = informer.run(token.clone());
        let synced = async {
            while !informer.has_synced() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            token.cancel();
        };
        tokio::time::timeout(BOUND, async { tokio::join!(run, synced) })
            .await
            .expect("the informer lists 100,000 pods in time");
    });
    assert_eq!(indexer.len(), PODS);
    drop(informer);
    drop(fake);
    drop(runtime);
    indexer
}

/// Applies an initial list of `pods` to a new kube-runtime store writer.
fn kube_runtime_store(pods: &[Pod]) -> Writer<Pod> {
    let mut writer = Writer::<Pod>::default();
    writer.apply_watcher_event(&watcher::Event::Init);
    for pod in pods {
        writer.apply_watcher_event(&watcher::Event::InitApply(pod.clone()));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
    assert_eq!(writer.as_reader().len(), PODS);
    writer
}

fn per_pod(bytes: i64) -> f64 {
    bytes as f64 / PODS as f64
}

fn report_memory() {
    let pods = realistic_pods();

    // The objects alone: one `Arc<Pod>` each, as both stores hold them. The Vec that
    // keeps them alive is not part of any store.
    let mut objects: Vec<Arc<Pod>> = Vec::with_capacity(PODS);
    let alone = workspace_allocator::measure(|| {
        objects.extend(pods.iter().cloned().map(Arc::new));
    });
    let object_bytes = per_pod(alone.bytes_current);
    drop(objects);

    // Each store outlives its measurement, so `bytes_current` is what it holds; it
    // is dropped after that, so that the machine holds at most two copies of the
    // pods at once.
    let mut ours_plain = None;
    let plain = workspace_allocator::measure(|| {
        ours_plain = Some(informer_cache(&pods, Indexers::new()));
    });
    drop(black_box(ours_plain));
    let mut ours_indexed = None;
    let indexed = workspace_allocator::measure(|| {
        ours_indexed =
            Some(informer_cache(&pods, stage1_store::namespace_indexers()));
    });
    drop(black_box(ours_indexed));
    let mut theirs = None;
    let kube = workspace_allocator::measure(|| {
        theirs = Some(kube_runtime_store(&pods));
    });
    drop(black_box(theirs));

    println!("cache_memory: {PODS} realistic pods in {NAMESPACES} namespaces");
    println!(
        "  the pod object alone (Arc<Pod>):             {object_bytes:8.1} bytes/pod (size_of::<Pod>() = {})",
        std::mem::size_of::<Pod>()
    );
    for (name, info) in [
        ("stage 4 informer cache, no index", &plain),
        ("stage 4 informer cache, namespace index", &indexed),
        ("kube-runtime reflector store", &kube),
    ] {
        let total = per_pod(info.bytes_current);
        println!(
            "  {name:<42} {total:8.1} bytes/pod including the object, {:6.1} bytes/pod overhead",
            total - object_bytes
        );
    }
}

fn memory(_: &mut Criterion) {
    report_memory();
}

criterion_group!(benches, memory);
criterion_main!(benches);
