//! Builds an indexer over a few pods, the way an informer's cache holds them, and
//! asks it by-namespace and by-label questions.
//!
//! Run with `cargo run -p stage1-store --example pods-by-namespace`.

// ANCHOR: helpers
use std::collections::BTreeMap;
use std::sync::Arc;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use stage1_store::{
    Cache, Indexer, NAMESPACE_INDEX, Store, StoreError, index_func, indexers,
    labels_index_func,
};

fn pod(namespace: &str, name: &str, app: &str) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

fn names(pods: &[Arc<Pod>]) -> String {
    let mut names: Vec<&str> = pods
        .iter()
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    names.sort();
    names.join(", ")
}
// ANCHOR_END: helpers

// ANCHOR: main
fn main() -> Result<(), StoreError> {
    // The default informer cache: keyed by namespace/name, indexed by namespace.
    let cache = Cache::<Pod>::for_resources();
    // A second index can be added at any time, even with items present.
    cache.add_indexers(indexers([("labels", index_func(labels_index_func))]))?;

    for (namespace, name, app) in [
        ("default", "web-0", "web"),
        ("default", "web-1", "web"),
        ("default", "db-0", "db"),
        ("kube-system", "coredns-0", "dns"),
        ("team-a", "web-0", "web"),
    ] {
        cache.add(pod(namespace, name, app))?;
    }

    println!("{} pods cached", cache.len());
    for namespace in cache.list_index_func_values(NAMESPACE_INDEX)? {
        let pods = cache.by_index(NAMESPACE_INDEX, &namespace)?;
        println!(
            "namespace {namespace:<12} {} pod(s): {}",
            pods.len(),
            names(&pods)
        );
    }
    println!(
        "label app=web: {:?}",
        cache.index_keys("labels", "app=web")?
    );

    // A pod moves: its key moves between index sets, and the empty set disappears.
    cache.update(pod("default", "db-0", "web"))?;
    cache.delete(pod("kube-system", "coredns-0", "dns"))?;
    println!("after db-0 relabelled and coredns-0 deleted:");
    println!(
        "  label values: {:?}",
        cache.list_index_func_values("labels")?
    );
    println!(
        "  namespaces:   {:?}",
        cache.list_index_func_values(NAMESPACE_INDEX)?
    );
    Ok(())
}
// ANCHOR_END: main
