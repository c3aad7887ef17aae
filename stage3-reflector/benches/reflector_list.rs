//! Mirrors client-go's `BenchmarkReflectorList` (`tools/cache/reflector_test.go`): a
//! paging lister-watcher that builds 100 fully populated pods per page, listed by a
//! reflector with a page size of 100 into a store keyed by name. Building the pods
//! is part of what is measured, as it is upstream.
//!
//! Two variants:
//! - `reflector_list/PodList`: every list fetches 3 pages of 100 pods (300 pods per
//!   list).
//! - `reflector_list/PodList_as_upstream`: the page counter is never reset, as in
//!   client-go's `TestPagingPodsLW`, so only the first list pages; every later list
//!   is a single page of 100 pods. This is the work behind client-go's 1.18 ms/op
//!   figure.
//! - `reflector_list/build_and_drop_100_pods`: only the fixture, for reference.
//!
//! Like every bench, it runs on the workspace's allocator, mimalloc
//! (`workspace-allocator`); `cargo bench -p stage3-reflector --bench
//! reflector_list --features workspace-allocator/system` runs the same on the
//! system allocator.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use workspace_allocator as _;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{
    Affinity, Container, ContainerStatus, HostAlias, LocalObjectReference,
    NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodCondition, PodSpec, PodStatus, PreferredSchedulingTerm, ResourceRequirements,
    TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use stage1_store::{Cache, KeyError, new_store};
use stage3_reflector::{
    Error, ListOptions, ListPage, ListerWatcher, Reflector, ReflectorOptions, Watch,
    WatchOptions,
};
use tokio_util::sync::CancellationToken;

const ITEMS_PER_PAGE: usize = 100;
const PAGES: usize = 3;

/// How the page counter behaves between lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counter {
    /// Starts over with every list: 3 pages every time.
    PerList,
    /// Never starts over, as client-go's `TestPagingPodsLW`.
    AsUpstream,
}

/// client-go's `TestPagingPodsLW`: builds a page of pods on every list call.
struct PagingPodsLister {
    total_pages: usize,
    fetched_pages: AtomicUsize,
    counter: Counter,
}

impl PagingPodsLister {
    fn new(total_pages: usize, counter: Counter) -> Self {
        PagingPodsLister {
            total_pages,
            fetched_pages: AtomicUsize::new(0),
            counter,
        }
    }
}

impl ListerWatcher<Pod> for PagingPodsLister {
    async fn list(&self, options: ListOptions) -> Result<ListPage<Pod>, Error> {
        if self.counter == Counter::PerList && options.continue_token.is_empty() {
            self.fetched_pages.store(0, Ordering::Relaxed);
        }
        let fetched = self.fetched_pages.fetch_add(1, Ordering::Relaxed);
        let items = pod_list_items(fetched * ITEMS_PER_PAGE, ITEMS_PER_PAGE);
        let page = ListPage::new(items, "");
        if fetched + 1 >= self.total_pages {
            Ok(page)
        } else {
            Ok(page.with_continue("true"))
        }
    }

    async fn watch(&self, _options: WatchOptions) -> Result<Watch<Pod>, Error> {
        Ok(Watch::from_items([]))
    }
}

fn quantity(value: &str) -> Quantity {
    Quantity(value.to_string())
}

fn resources(cpu: &str, memory: &str) -> BTreeMap<String, Quantity> {
    BTreeMap::from([
        ("cpu".to_string(), quantity(cpu)),
        ("memory".to_string(), quantity(memory)),
    ])
}

fn container(name: &str, requests: (&str, &str), limits: (&str, &str)) -> Container {
    Container {
        name: name.to_string(),
        image: Some("alpine".to_string()),
        resources: Some(ResourceRequirements {
            requests: Some(resources(requests.0, requests.1)),
            limits: Some(resources(limits.0, limits.1)),
            ..ResourceRequirements::default()
        }),
        ..Container::default()
    }
}

fn container_status(name: &str) -> ContainerStatus {
    ContainerStatus {
        container_id: Some("docker://numbers".to_string()),
        image: "alpine".to_string(),
        name: name.to_string(),
        ready: false,
        ..ContainerStatus::default()
    }
}

fn match_foo() -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: Some(vec![NodeSelectorRequirement {
            key: "foo".to_string(),
            ..NodeSelectorRequirement::default()
        }]),
        ..NodeSelectorTerm::default()
    }
}

/// client-go's `getPodListItems`: `count` pods with the same rich spec and status.
fn pod_list_items(start: usize, count: usize) -> Vec<Arc<Pod>> {
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    (0..count)
        .map(|i| {
            Arc::new(Pod {
                metadata: ObjectMeta {
                    name: Some(format!("pod-{}", i + start)),
                    namespace: Some("default".to_string()),
                    labels: Some(BTreeMap::from([(
                        "label-key-1".to_string(),
                        "label-value-1".to_string(),
                    )])),
                    annotations: Some(BTreeMap::from([(
                        "annotations-key-1".to_string(),
                        "annotations-value-1".to_string(),
                    )])),
                    ..ObjectMeta::default()
                },
                spec: Some(PodSpec {
                    overhead: Some(resources("3", "8")),
                    node_selector: Some(BTreeMap::from([
                        ("foo".to_string(), "bar".to_string()),
                        ("baz".to_string(), "quux".to_string()),
                    ])),
                    affinity: Some(Affinity {
                        node_affinity: Some(NodeAffinity {
                            required_during_scheduling_ignored_during_execution:
                                Some(NodeSelector {
                                    node_selector_terms: vec![match_foo()],
                                }),
                            preferred_during_scheduling_ignored_during_execution:
                                Some(vec![PreferredSchedulingTerm {
                                    preference: match_foo(),
                                    ..PreferredSchedulingTerm::default()
                                }]),
                        }),
                        ..Affinity::default()
                    }),
                    topology_spread_constraints: Some(vec![
                        TopologySpreadConstraint {
                            topology_key: "foo".to_string(),
                            ..TopologySpreadConstraint::default()
                        },
                    ]),
                    host_aliases: Some(vec![
                        HostAlias {
                            ip: "1.1.1.1".to_string(),
                            ..HostAlias::default()
                        },
                        HostAlias {
                            ip: "2.2.2.2".to_string(),
                            ..HostAlias::default()
                        },
                    ]),
                    image_pull_secrets: Some(vec![
                        LocalObjectReference {
                            name: "secret1".to_string(),
                        },
                        LocalObjectReference {
                            name: "secret2".to_string(),
                        },
                    ]),
                    containers: vec![
                        container("foobar", ("1", "5"), ("2", "10")),
                        container("foobar2", ("4", "12"), ("8", "24")),
                    ],
                    init_containers: Some(vec![
                        container("small-init", ("1", "5"), ("1", "5")),
                        container("big-init", ("40", "120"), ("80", "240")),
                    ]),
                    hostname: Some(format!("node-{i}")),
                    ..PodSpec::default()
                }),
                status: Some(PodStatus {
                    phase: Some("Running".to_string()),
                    container_statuses: Some(vec![
                        container_status("foobar"),
                        container_status("foobar2"),
                    ]),
                    init_container_statuses: Some(vec![
                        container_status("small-init"),
                        container_status("big-init"),
                    ]),
                    conditions: Some(vec![PodCondition {
                        type_: "PodScheduled".to_string(),
                        status: "True".to_string(),
                        reason: Some("successfully".to_string()),
                        message: Some("sync pod successfully".to_string()),
                        last_probe_time: Some(now.clone()),
                        last_transition_time: Some(now.clone()),
                        ..PodCondition::default()
                    }]),
                    ..PodStatus::default()
                }),
            })
        })
        .collect()
}

/// The upstream benchmark's store: no indexes, keyed by name.
fn name_key(pod: &Pod) -> Result<String, KeyError> {
    pod.metadata
        .name
        .clone()
        .ok_or_else(|| KeyError::new("a pod", "object has no name"))
}

fn bench_reflector_list(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let shutdown = CancellationToken::new();
    let mut group = c.benchmark_group("reflector_list");
    for (name, counter) in [
        ("PodList", Counter::PerList),
        ("PodList_as_upstream", Counter::AsUpstream),
    ] {
        let store: Arc<Cache<Pod>> = Arc::new(new_store(Arc::new(name_key)));
        let reflector = Reflector::new(
            PagingPodsLister::new(PAGES, counter),
            Arc::clone(&store),
            ReflectorOptions::default()
                .name("bench")
                .page_size(ITEMS_PER_PAGE as u32),
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime
                    .block_on(reflector.list(&shutdown))
                    .expect("the paging lister does not fail");
                black_box(store.len());
            });
        });
    }
    // For reference: building and dropping one page of pods, without any reflector.
    group.bench_function("build_and_drop_100_pods", |b| {
        b.iter(|| black_box(pod_list_items(0, ITEMS_PER_PAGE)));
    });
    group.finish();
}

criterion_group!(benches, bench_reflector_list);
criterion_main!(benches);
