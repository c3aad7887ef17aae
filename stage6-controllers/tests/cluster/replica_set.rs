//! The ReplicaSet controller against the API server: the cases of
//! test/integration/replicaset's `replicaset_test.go` that need no kubelet.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use stage6_controllers::app::options::{
    GARBAGE_COLLECTOR_CONTROLLER, REPLICASET_CONTROLLER,
};

use crate::common::{Cluster, replica_set, wait_until};

/// The pods whose controller is the ReplicaSet `uid`.
fn controlled_by(
    pods: &std::collections::BTreeMap<String, Pod>,
    uid: &str,
) -> usize {
    pods.values()
        .filter(|pod| {
            pod.metadata.owner_references.iter().flatten().any(|owner| {
                owner.uid == uid
                    && owner.controller == Some(true)
                    && owner.kind == "ReplicaSet"
            })
        })
        .count()
}

/// `TestAdoption`, `TestSpecReplicasChange`, `TestDeletingAndFailedPods`
/// (the deleting half): pods are made to the count, a matching orphan is
/// adopted, a deleted pod is replaced, and the count follows the spec.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_set_makes_adopts_replaces_and_scales_pods() {
    let cluster = Cluster::start(&[REPLICASET_CONTROLLER]).await;
    let sets = cluster.api::<ReplicaSet>();
    let pods = cluster.api::<Pod>();

    let rs = sets
        .create(&PostParams::default(), &replica_set("web", 3))
        .await
        .expect("create");
    let uid = rs.metadata.uid.clone().expect("uid");
    let seen = wait_until(&pods, "3 pods of web", |pods| {
        controlled_by(pods, &uid) == 3
    })
    .await;
    for pod in seen.values() {
        assert!(
            pod.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("web-")),
            "{pod:?}"
        );
        let owner = &pod.metadata.owner_references.as_ref().expect("owner")[0];
        assert_eq!(owner.block_owner_deletion, Some(true));
        assert_eq!(owner.api_version, "apps/v1");
    }
    wait_until(&sets, "web's status.replicas = 3", |sets| {
        sets.get("web")
            .and_then(|rs| rs.status.as_ref())
            .is_some_and(|status| {
                status.replicas == 3 && status.observed_generation == Some(1)
            })
    })
    .await;

    // A matching pod without an owner is adopted, and one pod too many goes.
    let orphan = Pod {
        metadata: ObjectMeta {
            name: Some("stray".into()),
            labels: Some([("app".to_string(), "web".to_string())].into()),
            ..ObjectMeta::default()
        },
        spec: replica_set("web", 1).spec.template.and_then(|t| t.spec),
        ..Pod::default()
    };
    pods.create(&PostParams::default(), &orphan)
        .await
        .expect("create stray");
    wait_until(&pods, "web back at 3 pods, all its own", |pods| {
        pods.len() == 3 && controlled_by(pods, &uid) == 3
    })
    .await;

    // A deleted pod is replaced by a new one.
    let victim = pods
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .next()
        .and_then(|pod| pod.metadata.name)
        .expect("a pod");
    pods.delete(&victim, &DeleteParams::default())
        .await
        .expect("delete");
    wait_until(&pods, "a replacement pod", |pods| {
        controlled_by(pods, &uid) == 3 && !pods.contains_key(&victim)
    })
    .await;

    // Scale up, then down.
    for replicas in [5, 1] {
        sets.patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
        )
        .await
        .expect("scale");
        wait_until(&pods, &format!("{replicas} pods"), |pods| {
            pods.len() == replicas && controlled_by(pods, &uid) == replicas
        })
        .await;
    }
    cluster.stop().await;
}

/// `TestReplicaSetsControllerReleasesPods` (`TestUpdateSelectorToRemoveControllerRef`):
/// a pod whose labels stop matching is released (its controller reference
/// removed) and replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_that_stops_matching_is_released_and_replaced() {
    let cluster =
        Cluster::start(&[REPLICASET_CONTROLLER, GARBAGE_COLLECTOR_CONTROLLER]).await;
    let sets = cluster.api::<ReplicaSet>();
    let pods = cluster.api::<Pod>();
    let rs = sets
        .create(&PostParams::default(), &replica_set("api", 2))
        .await
        .expect("create");
    let uid = rs.metadata.uid.clone().expect("uid");
    let seen = wait_until(&pods, "2 pods of api", |pods| {
        controlled_by(pods, &uid) == 2
    })
    .await;
    let released = seen.keys().next().expect("a pod").clone();
    pods.patch(
        &released,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "elsewhere"}}})),
    )
    .await
    .expect("relabel");
    let after =
        wait_until(&pods, "the relabelled pod released and replaced", |pods| {
            controlled_by(pods, &uid) == 2
                && pods.get(&released).is_some_and(|pod| {
                    pod.metadata
                        .owner_references
                        .as_ref()
                        .is_none_or(Vec::is_empty)
                })
        })
        .await;
    assert_eq!(after.len(), 3, "{:?}", after.keys());
    cluster.stop().await;
}
