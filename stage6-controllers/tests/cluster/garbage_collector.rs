//! The garbage collector against the API server: the cases of
//! test/integration/garbagecollector's `garbage_collector_test.go` a workshop
//! meets.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{DeleteParams, PostParams, PropagationPolicy};
use stage6_controllers::app::options::{
    GARBAGE_COLLECTOR_CONTROLLER, REPLICASET_CONTROLLER,
};

use crate::common::{Cluster, replica_set, wait_until};

fn config_map(name: &str, owners: Vec<OwnerReference>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn owner(kind: &str, api_version: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        ..OwnerReference::default()
    }
}

fn propagation(policy: PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(policy),
        ..DeleteParams::default()
    }
}

/// `TestCascadingDeletion` and `TestCreateWithNonExistentOwner`: a dependent
/// whose only owner is deleted goes; one that names an owner that never
/// existed goes; one with another owner alive stays, and loses the reference
/// to the dead one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_cascading_deletion_and_non_existent_owners() {
    let cluster = Cluster::start(&[GARBAGE_COLLECTOR_CONTROLLER]).await;
    let maps = cluster.api::<ConfigMap>();
    let post = PostParams::default();
    let to_be_deleted = maps
        .create(&post, &config_map("owner-doomed", vec![]))
        .await
        .expect("owner");
    let remaining = maps
        .create(&post, &config_map("owner-alive", vec![]))
        .await
        .expect("owner");
    let doomed = owner(
        "ConfigMap",
        "v1",
        "owner-doomed",
        to_be_deleted.metadata.uid.as_deref().expect("uid"),
    );
    let alive = owner(
        "ConfigMap",
        "v1",
        "owner-alive",
        remaining.metadata.uid.as_deref().expect("uid"),
    );
    maps.create(&post, &config_map("only-doomed", vec![doomed.clone()]))
        .await
        .expect("dependent");
    maps.create(
        &post,
        &config_map("both", vec![doomed.clone(), alive.clone()]),
    )
    .await
    .expect("dependent");
    maps.create(&post, &config_map("only-alive", vec![alive]))
        .await
        .expect("dependent");
    maps.create(
        &post,
        &config_map(
            "never-owned",
            vec![owner(
                "ConfigMap",
                "v1",
                "ghost",
                "0b1d0e5c-0000-4000-8000-000000000000",
            )],
        ),
    )
    .await
    .expect("dependent of nobody");
    wait_until(
        &maps,
        "the dependent of a non-existent owner deleted",
        |maps| !maps.contains_key("never-owned"),
    )
    .await;

    maps.delete("owner-doomed", &DeleteParams::default())
        .await
        .expect("delete");
    let left = wait_until(&maps, "only-doomed deleted, both released", |maps| {
        !maps.contains_key("only-doomed")
            && maps.get("both").is_some_and(|cm| {
                cm.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .all(|o| o.uid != doomed.uid)
            })
    })
    .await;
    let names: Vec<&String> = left.keys().collect();
    assert_eq!(names, ["both", "only-alive", "owner-alive"]);
    cluster.stop().await;
}

/// Deleting a ReplicaSet in the background (apps/v1's default) deletes its
/// pods after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_deletion_of_a_replica_set_deletes_its_pods() {
    let cluster =
        Cluster::start(&[REPLICASET_CONTROLLER, GARBAGE_COLLECTOR_CONTROLLER]).await;
    let sets = cluster.api::<ReplicaSet>();
    let pods = cluster.api::<Pod>();
    sets.create(&PostParams::default(), &replica_set("bg", 3))
        .await
        .expect("create");
    wait_until(&pods, "3 pods", |pods| pods.len() == 3).await;
    sets.delete("bg", &DeleteParams::default())
        .await
        .expect("delete");
    wait_until(&pods, "no pods", BTreeMap::is_empty).await;
    assert!(sets.get_opt("bg").await.expect("get").is_none());
    cluster.stop().await;
}

/// `TestOrphaning`: with `propagationPolicy=Orphan` the owner carries the
/// `orphan` finalizer until every dependent has lost its reference, then goes;
/// the dependents stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_orphaning() {
    let cluster =
        Cluster::start(&[REPLICASET_CONTROLLER, GARBAGE_COLLECTOR_CONTROLLER]).await;
    let sets = cluster.api::<ReplicaSet>();
    let pods = cluster.api::<Pod>();
    sets.create(&PostParams::default(), &replica_set("keep", 2))
        .await
        .expect("create");
    wait_until(&pods, "2 pods", |pods| pods.len() == 2).await;
    sets.delete("keep", &propagation(PropagationPolicy::Orphan))
        .await
        .expect("delete");
    wait_until(&sets, "the ReplicaSet gone", |sets| {
        !sets.contains_key("keep")
    })
    .await;
    let left = pods.list(&Default::default()).await.expect("list").items;
    assert_eq!(left.len(), 2, "the pods stay");
    for pod in &left {
        assert!(
            pod.metadata
                .owner_references
                .as_ref()
                .is_none_or(Vec::is_empty),
            "{:?} still names its owner",
            pod.metadata.name
        );
    }
    cluster.stop().await;
}

/// `TestBlockingOwnerRefDoesBlock` with foreground deletion: the owner stays,
/// with its deletionTimestamp and the `foregroundDeletion` finalizer, until
/// its blocking dependents are gone; when it goes, no pod is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_deletion_waits_for_the_dependents() {
    let cluster =
        Cluster::start(&[REPLICASET_CONTROLLER, GARBAGE_COLLECTOR_CONTROLLER]).await;
    let sets = cluster.api::<ReplicaSet>();
    let pods = cluster.api::<Pod>();
    sets.create(&PostParams::default(), &replica_set("fg", 2))
        .await
        .expect("create");
    wait_until(&pods, "2 pods", |pods| pods.len() == 2).await;
    let deleting = sets
        .delete("fg", &propagation(PropagationPolicy::Foreground))
        .await
        .expect("delete")
        .left()
        .expect("the ReplicaSet stays while its pods go");
    assert!(deleting.metadata.deletion_timestamp.is_some());
    assert_eq!(
        deleting.metadata.finalizers.as_deref(),
        Some(&["foregroundDeletion".to_string()][..])
    );
    wait_until(&sets, "the ReplicaSet gone", |sets| {
        !sets.contains_key("fg")
    })
    .await;
    let left = pods.list(&Default::default()).await.expect("list").items;
    assert!(left.is_empty(), "the owner went before {} pods", left.len());
    cluster.stop().await;
}
