//! The Deployment controller end to end: an in-process mini-apiserver, one
//! informer factory, the ReplicaSet controller and the Deployment controller
//! over it. There is no kubelet: [`mark_ready`] plays its part, marking the
//! pods of a ReplicaSet `Running` and `Ready` through `pods/status` (pods
//! without a node are deleted at once, so scaling down needs nothing more).
//!
//! Every wait is bounded: [`wait_for`] checks again after every change the
//! cluster reports until a condition holds or [`WAIT`] passes, and every
//! request runs under a timeout.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use stage6_controllers::app::options::{
    ControllerManagerOptions, DEPLOYMENT_CONTROLLER, REPLICASET_CONTROLLER,
};
use stage6_controllers::deployment::util::deployment_util::{
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
};
use tokio::time::timeout;

use crate::common::{self, Changes, WAIT, wait_for};

const NS: &str = "default";
const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// A mini-apiserver with the ReplicaSet and Deployment controllers of a
/// controller manager over it.
struct Cluster {
    inner: common::Cluster,
    client: Client,
}

impl Cluster {
    async fn start() -> Self {
        // One ReplicaSet worker: a ReplicaSet's resizes reach its pods in the
        // order the Deployment controller wrote them.
        let options = ControllerManagerOptions {
            concurrent_replicaset_syncs: 1,
            concurrent_deployment_syncs: 2,
            ..ControllerManagerOptions::only(&[
                REPLICASET_CONTROLLER,
                DEPLOYMENT_CONTROLLER,
            ])
        };
        let inner = common::Cluster::start_with(&options).await;
        let client = inner.client.clone();
        Self { inner, client }
    }

    fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.client.clone(), NS)
    }

    fn replica_sets(&self) -> Api<ReplicaSet> {
        Api::namespaced(self.client.clone(), NS)
    }

    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Stops the controllers, then the server.
    async fn stop(self) {
        self.inner.stop().await;
    }

    async fn create(&self, deployment: Deployment) -> Deployment {
        timeout(
            WAIT,
            self.deployments()
                .create(&PostParams::default(), &deployment),
        )
        .await
        .expect("in time")
        .expect("the deployment is created")
    }

    async fn get(&self, name: &str) -> Deployment {
        timeout(WAIT, self.deployments().get(name))
            .await
            .expect("in time")
            .expect("the deployment")
    }

    /// The ReplicaSets `name` owns, oldest revision first
    /// (what `kubectl rollout history` lists).
    async fn owned_replica_sets(&self, name: &str) -> Vec<ReplicaSet> {
        let uid = self.get(name).await.metadata.uid;
        let list = timeout(WAIT, self.replica_sets().list(&ListParams::default()))
            .await
            .expect("in time")
            .expect("replica sets");
        let mut owned: Vec<ReplicaSet> = list
            .items
            .into_iter()
            .filter(|rs| owner_uid(&rs.metadata) == uid)
            .collect();
        owned.sort_by_key(revision);
        owned
    }

    async fn all_pods(&self) -> Vec<Pod> {
        timeout(WAIT, self.pods().list(&ListParams::default()))
            .await
            .expect("in time")
            .expect("pods")
            .items
    }

    /// `kubectl set image` (a strategic merge patch of the template), with
    /// the change cause `kubectl rollout history` shows.
    async fn set_image(&self, name: &str, image: &str) {
        let patch = json!({
            "metadata": {"annotations": {CHANGE_CAUSE: format!("kubectl set image deployment/{name} web={image}")}},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}},
        });
        timeout(
            WAIT,
            self.deployments().patch(
                name,
                &PatchParams::default(),
                &Patch::Strategic(patch),
            ),
        )
        .await
        .expect("in time")
        .expect("the image is set");
    }

    /// `kubectl scale` (through the scale subresource).
    async fn scale(&self, name: &str, replicas: i32) {
        timeout(
            WAIT,
            self.deployments().patch_scale(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": replicas}})),
            ),
        )
        .await
        .expect("in time")
        .expect("scaled");
    }

    /// Marks at most `at_most` not-ready pods of ReplicaSet `rs` `Running` and
    /// `Ready` through `pods/status`, as a kubelet would; how many it marked.
    async fn mark_ready(&self, rs: &str, at_most: usize) -> usize {
        let mut marked = 0;
        for pod in self.all_pods().await {
            if marked == at_most {
                break;
            }
            let owned = pod
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.name == rs);
            if !owned || is_ready(&pod) || pod.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            let now = k8s_openapi::jiff::Timestamp::now().to_string();
            let status = json!({"status": {
                "phase": "Running",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": now},
                    {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
                ],
            }});
            let name = pod.metadata.name.clone().unwrap_or_default();
            match timeout(
                WAIT,
                self.pods().patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(status),
                ),
            )
            .await
            .expect("in time")
            {
                Ok(_) => marked += 1,
                // Deleted meanwhile (scaled down).
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(error) => panic!("marking {name} ready: {error}"),
            }
        }
        marked
    }

    /// Marks the pods of every ReplicaSet of `name` ready until `kubectl
    /// rollout status` would say the rollout finished.
    async fn roll_out(&self, name: &str) -> Deployment {
        wait_for(
            &self.client,
            &format!("the rollout of {name} to finish"),
            || async {
                for rs in self.owned_replica_sets(name).await {
                    self.mark_ready(
                        rs.metadata.name.as_deref().unwrap_or_default(),
                        usize::MAX,
                    )
                    .await;
                }
                let d = self.get(name).await;
                rollout_status_done(&d).then_some(d)
            },
        )
        .await
    }
}

fn deployment(name: &str, replicas: i32, strategy: serde_json::Value) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))
    .expect("a deployment")
}

fn owner_uid(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<String> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.clone())
}

fn annotation(rs: &ReplicaSet, key: &str) -> Option<String> {
    rs.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .cloned()
}

fn revision(rs: &ReplicaSet) -> i64 {
    annotation(rs, REVISION_ANNOTATION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn hash_of(rs: &ReplicaSet) -> Option<String> {
    rs.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY))
        .cloned()
}

fn pod_hash(pod: &Pod) -> Option<String> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY))
        .cloned()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

fn status_replicas(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().map_or(0, |s| s.replicas)
}

/// The condition of `type_`: `(status, reason)`.
fn condition(d: &Deployment, type_: &str) -> Option<(String, String)> {
    d.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_.as_deref() == Some(type_))
        .map(|c| {
            (
                c.status.clone().unwrap_or_default(),
                c.reason.clone().unwrap_or_default(),
            )
        })
}

/// What `kubectl rollout status` checks (its `DeploymentStatusViewer`): the
/// latest generation observed, not timed out, every replica updated, no old
/// replica left, every updated replica available.
fn rollout_status_done(d: &Deployment) -> bool {
    let Some(status) = d.status.as_ref() else {
        return false;
    };
    let count = |v: Option<i32>| v.unwrap_or(0);
    let replicas = d.spec.replicas.unwrap_or(1);
    assert_ne!(
        condition(d, "Progressing").map(|c| c.1).as_deref(),
        Some("ProgressDeadlineExceeded"),
        "the rollout exceeded its progress deadline"
    );
    d.metadata.generation.unwrap_or(0) <= status.observed_generation.unwrap_or(0)
        && count(status.updated_replicas) >= replicas
        && count(status.replicas) <= count(status.updated_replicas)
        && count(status.available_replicas) >= count(status.updated_replicas)
}

/// (a) A Deployment of 3 gets one ReplicaSet, named and labelled by its
/// template's hash, and 3 pods; once they are ready the status says 3
/// updated, ready and available, with Progressing=True
/// (NewReplicaSetAvailable) and Available=True.
#[tokio::test]
async fn a_deployment_of_three_gets_one_replica_set_and_three_available_pods() {
    let cluster = Cluster::start().await;
    let created = cluster.create(deployment("web", 3, json!({}))).await;

    let rs = wait_for(&cluster.client, "one replica set with 3 pods", || async {
        let rss = cluster.owned_replica_sets("web").await;
        let [rs] = rss.as_slice() else { return None };
        let name = rs.metadata.name.clone()?;
        let pods = cluster.all_pods().await;
        let owned = pods
            .iter()
            .filter(|p| owner_uid(&p.metadata) == rs.metadata.uid)
            .count();
        (owned == 3)
            .then(|| rs.clone())
            .filter(|_| name.starts_with("web-"))
    })
    .await;
    let hash = hash_of(&rs).expect("the pod-template-hash label");
    assert_eq!(rs.metadata.name, Some(format!("web-{hash}")));
    assert_eq!(
        rs.spec
            .selector
            .match_labels
            .as_ref()
            .and_then(|l| l.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)),
        Some(&hash)
    );
    let template_labels = rs
        .spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    assert_eq!(
        template_labels,
        BTreeMap::from([
            ("app".to_string(), "web".to_string()),
            (
                DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(),
                hash.clone()
            ),
        ])
    );
    assert_eq!(owner_uid(&rs.metadata), created.metadata.uid);
    assert_eq!(annotation(&rs, REVISION_ANNOTATION).as_deref(), Some("1"));
    assert_eq!(
        annotation(&rs, DESIRED_REPLICAS_ANNOTATION).as_deref(),
        Some("3")
    );
    // 3 + maxSurge (the default 25% of 3, rounded up).
    assert_eq!(
        annotation(&rs, MAX_REPLICAS_ANNOTATION).as_deref(),
        Some("4")
    );
    for pod in cluster.all_pods().await {
        assert_eq!(pod_hash(&pod), Some(hash.clone()));
    }

    let rs_name = rs.metadata.name.clone().unwrap_or_default();
    let d = wait_for(
        &cluster.client,
        "3 updated, ready and available replicas",
        || async {
            cluster.mark_ready(&rs_name, usize::MAX).await;
            let d = cluster.get("web").await;
            let status = d.status.clone()?;
            (status.updated_replicas == Some(3)
                && status.ready_replicas == Some(3)
                && status.available_replicas == Some(3)
                && status.replicas == Some(3)
                && condition(&d, "Progressing")
                    .is_some_and(|c| c.1 == "NewReplicaSetAvailable"))
            .then_some(d)
        },
    )
    .await;
    assert!(rollout_status_done(&d));
    assert_eq!(
        condition(&d, "Progressing"),
        Some(("True".into(), "NewReplicaSetAvailable".into()))
    );
    assert_eq!(
        condition(&d, "Available"),
        Some(("True".into(), "MinimumReplicasAvailable".into()))
    );
    let status = d.status.clone().unwrap_or_default();
    assert_eq!(status.observed_generation, d.metadata.generation);
    assert_eq!(status.unavailable_replicas, Some(0));
    cluster.stop().await;
}

/// (b) `kubectl scale` to 5 and then to 1: the one ReplicaSet follows, with
/// its `desired-replicas` annotation, and so do the pods and the status.
#[tokio::test]
async fn scaling_to_five_and_to_one_resizes_the_replica_set() {
    let cluster = Cluster::start().await;
    cluster.create(deployment("web", 3, json!({}))).await;
    cluster.roll_out("web").await;

    for replicas in [5, 1] {
        cluster.scale("web", replicas).await;
        let d = wait_for(
            &cluster.client,
            &format!("{replicas} available replicas"),
            || async {
                for rs in cluster.owned_replica_sets("web").await {
                    cluster
                        .mark_ready(
                            rs.metadata.name.as_deref().unwrap_or_default(),
                            usize::MAX,
                        )
                        .await;
                }
                let d = cluster.get("web").await;
                let status = d.status.clone()?;
                (rollout_status_done(&d)
                    && status.replicas == Some(replicas)
                    && status.available_replicas == Some(replicas))
                .then_some(d)
            },
        )
        .await;
        let rss = cluster.owned_replica_sets("web").await;
        assert_eq!(rss.len(), 1, "still one replica set");
        assert_eq!(spec_replicas(&rss[0]), replicas);
        assert_eq!(
            annotation(&rss[0], DESIRED_REPLICAS_ANNOTATION),
            Some(replicas.to_string())
        );
        let pods =
            wait_for(&cluster.client, &format!("{replicas} pods"), || async {
                let pods = cluster.all_pods().await;
                (pods.len() == usize::try_from(replicas).unwrap_or(0))
                    .then_some(pods)
            })
            .await;
        assert!(pods.iter().all(is_ready));
        assert_eq!(
            condition(&d, "Available"),
            Some(("True".into(), "MinimumReplicasAvailable".into()))
        );
    }
    cluster.stop().await;
}

/// A consistent view of a rollout in which the ReplicaSet controller has
/// caught up: every ReplicaSet observed its latest generation and runs as
/// many pods as its spec says.
struct Settled {
    rss: Vec<ReplicaSet>,
    pods: Vec<Pod>,
}

/// The rollout's state, if it is settled; the ReplicaSets listed before and
/// after the pods are the same versions.
async fn settled(cluster: &Cluster, name: &str) -> Option<Settled> {
    let before = cluster.owned_replica_sets(name).await;
    let pods = cluster.all_pods().await;
    let after = cluster.owned_replica_sets(name).await;
    let versions = |rss: &[ReplicaSet]| -> Vec<Option<String>> {
        rss.iter()
            .map(|rs| rs.metadata.resource_version.clone())
            .collect()
    };
    if versions(&before) != versions(&after) {
        return None;
    }
    for rs in &after {
        let observed = rs.status.as_ref().and_then(|s| s.observed_generation);
        let owned = pods
            .iter()
            .filter(|p| owner_uid(&p.metadata) == rs.metadata.uid)
            .count();
        if observed != rs.metadata.generation
            || status_replicas(rs) != spec_replicas(rs)
            || owned != usize::try_from(spec_replicas(rs)).unwrap_or(0)
        {
            return None;
        }
    }
    Some(Settled { rss: after, pods })
}

/// (c) A new image rolls out within maxSurge and maxUnavailable: 4 replicas,
/// maxSurge 1, maxUnavailable 1. At every settled step the test observes there
/// are at most 5 pods and at least 3 ready ones, and at every look the
/// ReplicaSets together want at most 5; the test makes one new pod ready per
/// step. The old ReplicaSet ends at 0, the new one at revision 2 with the
/// change cause.
#[tokio::test]
async fn a_new_image_rolls_out_within_max_surge_and_max_unavailable() {
    let cluster = Cluster::start().await;
    let strategy = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}});
    cluster.create(deployment("web", 4, strategy)).await;
    cluster.roll_out("web").await;
    let old = cluster.owned_replica_sets("web").await.remove(0);
    let old_name = old.metadata.name.clone().unwrap_or_default();

    cluster.set_image("web", "nginx:1.28").await;

    let mut changes = Changes::follow(&cluster.client).await;
    let mut steps = 0;
    let new_name = loop {
        let wanted: i32 = cluster
            .owned_replica_sets("web")
            .await
            .iter()
            .map(spec_replicas)
            .sum();
        assert!(
            wanted <= 5,
            "the replica sets want {wanted} pods, more than replicas + maxSurge"
        );
        let step = wait_for(&cluster.client, "a settled step", || {
            settled(&cluster, "web")
        })
        .await;
        let pods = step.pods.len();
        let ready = step.pods.iter().filter(|p| is_ready(p)).count();
        assert!(pods <= 5, "{pods} pods: more than replicas + maxSurge");
        assert!(
            ready >= 3,
            "{ready} ready pods: fewer than replicas - maxUnavailable"
        );
        steps += 1;

        let new = step
            .rss
            .iter()
            .find(|rs| rs.metadata.name.as_deref() != Some(&old_name));
        if let Some(new) = new {
            let name = new.metadata.name.clone().unwrap_or_default();
            let old_now = step
                .rss
                .iter()
                .find(|rs| rs.metadata.name.as_deref() == Some(&old_name));
            let d = cluster.get("web").await;
            if rollout_status_done(&d)
                && old_now.is_some_and(|o| spec_replicas(o) == 0)
            {
                break name;
            }
            // One new pod becomes ready per step.
            cluster.mark_ready(&name, 1).await;
        }
        changes.next("the rollout to finish").await;
    };
    assert!(steps >= 4, "a rolling update takes steps (saw {steps})");
    let rss = cluster.owned_replica_sets("web").await;
    assert_eq!(rss.len(), 2);
    let (old, new) = (&rss[0], &rss[1]);
    assert_eq!(old.metadata.name.as_deref(), Some(old_name.as_str()));
    assert_eq!(new.metadata.name.as_deref(), Some(new_name.as_str()));
    assert_eq!((spec_replicas(old), status_replicas(old)), (0, 0));
    assert_eq!((spec_replicas(new), status_replicas(new)), (4, 4));
    // What `kubectl rollout history` lists: revisions and change causes.
    assert_eq!(annotation(old, REVISION_ANNOTATION).as_deref(), Some("1"));
    assert_eq!(annotation(new, REVISION_ANNOTATION).as_deref(), Some("2"));
    assert_eq!(
        annotation(new, CHANGE_CAUSE).as_deref(),
        Some("kubectl set image deployment/web web=nginx:1.28")
    );
    let image = new
        .spec
        .template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.containers[0].image.clone());
    assert_eq!(image.as_deref(), Some("nginx:1.28"));
    assert_ne!(hash_of(old), hash_of(new));
    cluster.stop().await;
}

/// (d) `kubectl rollout undo`: the Deployment's template is patched back to
/// revision 1's (kubectl's JSON patch, without the hash label); the
/// controller finds that ReplicaSet as the new one, gives it revision 3
/// (remembering 1 in `revision-history`) and scales it back up. No new
/// ReplicaSet is made.
#[tokio::test]
async fn an_undo_makes_the_first_replica_set_new_again_at_revision_three() {
    let cluster = Cluster::start().await;
    cluster.create(deployment("web", 2, json!({}))).await;
    cluster.roll_out("web").await;
    cluster.set_image("web", "nginx:1.28").await;
    cluster.roll_out("web").await;
    let rss = cluster.owned_replica_sets("web").await;
    assert_eq!(rss.len(), 2);
    let first = rss[0].clone();
    assert_eq!(revision(&first), 1);

    // kubectl's rollback: revision 1's template, without the hash label.
    let mut template = first.spec.template.clone().expect("a template");
    if let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut())
    {
        labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
    }
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "replace", "path": "/spec/template", "value": template},
    ]))
    .expect("a JSON patch");
    timeout(
        WAIT,
        cluster.deployments().patch(
            "web",
            &PatchParams::default(),
            &Patch::<serde_json::Value>::Json(patch),
        ),
    )
    .await
    .expect("in time")
    .expect("rolled back");

    let d = cluster.roll_out("web").await;
    let rss = wait_for(
        &cluster.client,
        "the first replica set at revision 3",
        || async {
            let rss = cluster.owned_replica_sets("web").await;
            (rss.len() == 2
                && rss[1].metadata.uid == first.metadata.uid
                && revision(&rss[1]) == 3
                && spec_replicas(&rss[0]) == 0)
                .then_some(rss)
        },
    )
    .await;
    let (second, first_again) = (&rss[0], &rss[1]);
    assert_eq!(revision(second), 2);
    assert_eq!(
        annotation(first_again, REVISION_HISTORY_ANNOTATION).as_deref(),
        Some("1")
    );
    assert_eq!(
        (spec_replicas(first_again), status_replicas(first_again)),
        (2, 2)
    );
    assert_eq!(d.status.and_then(|s| s.updated_replicas), Some(2));
    for pod in cluster.all_pods().await {
        assert_eq!(pod_hash(&pod), hash_of(first_again));
    }
    cluster.stop().await;
}

/// (e) With `revisionHistoryLimit: 1`, after three revisions only the new
/// ReplicaSet and the latest old one are left.
#[tokio::test]
async fn revision_history_limit_one_keeps_one_old_replica_set() {
    let cluster = Cluster::start().await;
    let mut d = deployment("web", 2, json!({}));
    d.spec.revision_history_limit = Some(1);
    cluster.create(d).await;
    cluster.roll_out("web").await;
    for image in ["nginx:1.28", "nginx:1.29"] {
        cluster.set_image("web", image).await;
        cluster.roll_out("web").await;
    }
    let rss = wait_for(&cluster.client, "one old replica set left", || async {
        let rss = cluster.owned_replica_sets("web").await;
        (rss.len() == 2).then_some(rss)
    })
    .await;
    assert_eq!(rss.iter().map(revision).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(spec_replicas(&rss[0]), 0);
    assert_eq!(spec_replicas(&rss[1]), 2);
    cluster.stop().await;
}

/// (f) Recreate: the old ReplicaSet goes to 0 and its pods are gone before
/// the new ReplicaSet exists, and no look ever finds old and new pods
/// together.
#[tokio::test]
async fn recreate_scales_the_old_replica_set_to_zero_before_the_new_one_gets_pods() {
    let cluster = Cluster::start().await;
    cluster
        .create(deployment("web", 2, json!({"type": "Recreate"})))
        .await;
    cluster.roll_out("web").await;
    let old = cluster.owned_replica_sets("web").await.remove(0);
    let old_hash = hash_of(&old);

    cluster.set_image("web", "nginx:1.28").await;
    let mut changes = Changes::follow(&cluster.client).await;
    let mut saw_new_replica_set = false;
    loop {
        // The ReplicaSets first, then the pods: a new ReplicaSet seen here
        // was created before the pods are listed.
        let rss = cluster.owned_replica_sets("web").await;
        let pods = cluster.all_pods().await;
        let old_pods = pods.iter().filter(|p| pod_hash(p) == old_hash).count();
        let new_pods = pods.len() - old_pods;
        let new_rs = rss.iter().find(|rs| hash_of(rs) != old_hash);
        if let Some(new_rs) = new_rs {
            saw_new_replica_set = true;
            assert_eq!(old_pods, 0, "the new replica set exists while old pods run");
            let old_now = rss
                .iter()
                .find(|rs| hash_of(rs) == old_hash)
                .expect("the old one");
            assert_eq!(spec_replicas(old_now), 0);
            cluster
                .mark_ready(
                    new_rs.metadata.name.as_deref().unwrap_or_default(),
                    usize::MAX,
                )
                .await;
        }
        assert!(
            old_pods == 0 || new_pods == 0,
            "old and new pods run together"
        );
        let d = cluster.get("web").await;
        if saw_new_replica_set && rollout_status_done(&d) {
            break;
        }
        changes.next("the rollout to finish").await;
    }
    let rss = cluster.owned_replica_sets("web").await;
    assert_eq!(rss.iter().map(spec_replicas).collect::<Vec<_>>(), [0, 2]);
    assert_eq!(rss.iter().map(revision).collect::<Vec<_>>(), [1, 2]);
    cluster.stop().await;
}
