//! The ReplicaSet controller: mirrors kubernetes'
//! [`pkg/controller/replicaset/replica_set.go`] (`ReplicaSetController`, its
//! event handlers `addRS`/`updateRS`/`deleteRS`/`addPod`/`updatePod`/`deletePod`,
//! `syncReplicaSet`, `manageReplicas`, `getPodsToDelete`, `claimPods`) and
//! `replica_set_utils.go` (`calculateStatus`, `updateReplicaSetStatus`).
//!
//! ```text
//!  ReplicaSet informer ──addRS/updateRS/deleteRS──┐
//!  Pod informer ──addPod/updatePod/deletePod──────┴─► queue of ReplicaSet keys
//!     (a pod's controller reference names its ReplicaSet;   │
//!      an orphan's matching ReplicaSets are all woken)      ▼
//!  worker: syncReplicaSet(key)
//!     1. the ReplicaSet from the lister (gone: forget its expectations)
//!     2. its namespace's active pods, claimed (adopt orphans, release strays)
//!     3. expectations met? manageReplicas: create or delete the difference,
//!        in slow-start batches, recording what it expects to see
//!     4. the status (replicas, ready, available) through `…/status`
//! ```
//!
//! [`pkg/controller/replicaset/replica_set.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/replicaset/replica_set.go

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{
    ReplicaSet, ReplicaSetCondition, ReplicaSetStatus,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, PostParams};
use kube::core::{Selector, SelectorExt};
use stage4_shared_informer::{
    DeletedObject, KubeSource, Lister, ResourceEventHandlerFuncs,
    SharedInformerFactory,
};

use crate::controller::{
    Controller, Reconcile, SyncError, SyncResult, weak_handlers,
};
use crate::controller_ref_manager::ControllerRefManager;
use crate::controller_utils::{
    BURST_REPLICAS, PodControl, SLOW_START_INITIAL_BATCH_SIZE,
    UidTrackingControllerExpectations, deletion_order, filter_active_pods,
    get_controller_of, is_pod_available, is_pod_ready, key_of, new_controller_ref,
    slow_start_batch,
};
use crate::record::{EventRecorder, ObjectReference, WARNING};
use crate::workqueue::{
    RateLimitingQueue, RateLimitingQueueConfig, default_controller_rate_limiter,
};

/// The group version and kind the controller owns pods as.
const API_VERSION: &str = "apps/v1";
/// The kind.
const KIND: &str = "ReplicaSet";

// ANCHOR: replica_set_controller
/// Mirrors `ReplicaSetController`.
pub struct ReplicaSetController {
    client: kube::Client,
    rs_lister: Lister<ReplicaSet>,
    pod_lister: Lister<Pod>,
    /// Creations and deletions made and not seen yet, per ReplicaSet key.
    expectations: UidTrackingControllerExpectations,
    pod_control: PodControl,
    recorder: EventRecorder,
    queue: RateLimitingQueue<String>,
    /// At most this many creates or deletes per sync (`burstReplicas`).
    burst_replicas: usize,
}
// ANCHOR_END: replica_set_controller

impl std::fmt::Debug for ReplicaSetController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaSetController")
            .finish_non_exhaustive()
    }
}

/// The controller's name in logs, events and metrics.
pub const NAME: &str = "replicaset-controller";

impl ReplicaSetController {
    /// Mirrors `NewReplicaSetController`: the controller over `factory`'s
    /// ReplicaSet and Pod informers (whose handlers it registers), writing
    /// through `client`. Run the returned [`Controller`] after starting the
    /// factory.
    pub fn new(
        client: kube::Client,
        factory: &SharedInformerFactory<KubeSource>,
    ) -> Result<(Arc<Self>, Arc<Controller<Self>>), SyncError> {
        let queue = RateLimitingQueue::with_config(
            default_controller_rate_limiter(),
            RateLimitingQueueConfig::default().name("replicaset"),
        );
        let recorder = EventRecorder::new(client.clone(), NAME);
        let rs = factory.for_resource::<ReplicaSet>();
        let pods = factory.pods();
        let controller = Arc::new(Self {
            pod_control: PodControl::new(client.clone(), recorder.clone()),
            client,
            rs_lister: rs.lister(),
            pod_lister: pods.lister(),
            expectations: UidTrackingControllerExpectations::new(),
            recorder,
            queue: queue.clone(),
            burst_replicas: BURST_REPLICAS,
        });
        let weak = Arc::downgrade(&controller);
        rs.informer()
            .add_event_handler(rs_handlers(Weak::clone(&weak)))?;
        pods.informer().add_event_handler(pod_handlers(weak))?;
        let runner = Arc::new(Controller::new(
            "replicaset",
            queue,
            Arc::clone(&controller),
        ));
        Ok((controller, runner))
    }

    /// Mirrors `enqueueRS`.
    fn enqueue(&self, rs: &ReplicaSet) {
        self.queue.add(key_of(&rs.metadata));
    }

    /// Mirrors `resolveControllerRef`: the ReplicaSet a pod's controller
    /// reference names, if it is one of ours with the same uid.
    fn resolve_controller_ref(&self, pod: &Pod) -> Option<Arc<ReplicaSet>> {
        let owner = get_controller_of(&pod.metadata)?;
        if owner.kind != KIND {
            return None;
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let rs = self.rs_lister.namespaced(namespace).get(&owner.name).ok()?;
        (rs.metadata.uid.as_deref() == Some(owner.uid.as_str())).then_some(rs)
    }

    /// Mirrors `getPodReplicaSets`: the ReplicaSets of the pod's namespace
    /// whose selector matches it.
    fn get_pod_replica_sets(&self, pod: &Pod) -> Vec<Arc<ReplicaSet>> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        self.rs_lister
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|rs| {
                selector_of(rs)
                    .is_some_and(|s| !s.selects_all() && s.matches(&labels))
            })
            .collect()
    }

    // ANCHOR: add_pod
    /// Mirrors `addPod`.
    fn add_pod(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp.is_some() {
            // A pod that shows up already being deleted: a deletion.
            self.delete_pod(&DeletedObject::Object(Arc::clone(pod)));
            return;
        }
        if get_controller_of(&pod.metadata).is_some() {
            if let Some(rs) = self.resolve_controller_ref(pod) {
                let key = key_of(&rs.metadata);
                self.expectations.creation_observed(&key);
                self.queue.add(key);
            }
            return;
        }
        // An orphan: wake every ReplicaSet that may adopt it.
        for rs in self.get_pod_replica_sets(pod) {
            self.enqueue(&rs);
        }
    }
    // ANCHOR_END: add_pod

    /// Mirrors `updatePod`.
    fn update_pod(&self, old: &Arc<Pod>, cur: &Arc<Pod>) {
        if old.metadata.resource_version == cur.metadata.resource_version {
            // A resync: nothing changed.
            return;
        }
        let labels_changed = old.metadata.labels != cur.metadata.labels;
        if cur.metadata.deletion_timestamp.is_some() {
            // A graceful delete marks the pod first; act on it now, not when
            // the kubelet finally removes it.
            self.delete_pod(&DeletedObject::Object(Arc::clone(cur)));
            if labels_changed {
                self.delete_pod(&DeletedObject::Object(Arc::clone(old)));
            }
            return;
        }
        let old_ref = get_controller_of(&old.metadata).cloned();
        let cur_ref = get_controller_of(&cur.metadata).cloned();
        let ref_changed = old_ref != cur_ref;
        if ref_changed
            && old_ref.is_some()
            && let Some(rs) = self.resolve_controller_ref(old)
        {
            self.enqueue(&rs);
        }
        if cur_ref.is_some() {
            if let Some(rs) = self.resolve_controller_ref(cur) {
                self.enqueue(&rs);
                let min_ready = min_ready_seconds(&rs);
                if !is_pod_ready(old) && is_pod_ready(cur) && min_ready > 0 {
                    // Look again once the pod may count as available.
                    self.queue.add_after(
                        key_of(&rs.metadata),
                        Duration::from_secs(
                            u64::try_from(min_ready).unwrap_or(0) + 1,
                        ),
                    );
                }
            }
            return;
        }
        if labels_changed || ref_changed {
            for rs in self.get_pod_replica_sets(cur) {
                self.enqueue(&rs);
            }
        }
    }

    // ANCHOR: delete_pod
    /// Mirrors `deletePod`: the pod's ReplicaSet observed one deletion.
    fn delete_pod(&self, deleted: &DeletedObject<Pod>) {
        let pod = match deleted {
            DeletedObject::Object(pod) => Arc::clone(pod),
            DeletedObject::Tombstone(tombstone) => match &tombstone.obj {
                Some(pod) => Arc::clone(pod),
                None => return,
            },
        };
        if get_controller_of(&pod.metadata).is_none() {
            return;
        }
        let Some(rs) = self.resolve_controller_ref(&pod) else {
            return;
        };
        let key = key_of(&rs.metadata);
        self.expectations
            .deletion_observed(&key, &key_of(&pod.metadata));
        self.queue.add(key);
    }
    // ANCHOR_END: delete_pod

    // ANCHOR: sync_replica_set

    /// Mirrors `syncReplicaSet`.
    async fn sync_replica_set(&self, key: &str) -> Result<SyncResult, SyncError> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let rs = match self.rs_lister.namespaced(namespace).get(name) {
            Ok(rs) => rs,
            Err(error) if error.is_not_found() => {
                tracing::debug!(%key, "replica set has been deleted");
                self.expectations.delete_expectations(key);
                return Ok(SyncResult::done());
            }
            Err(error) => return Err(error.into()),
        };
        let rs_needs_sync = self.expectations.satisfied_expectations(key);
        let Some(selector) = selector_of(&rs) else {
            // An invalid selector is a user error; nothing to do until fixed.
            tracing::warn!(%key, "the replica set's selector does not parse");
            return Ok(SyncResult::done());
        };
        let all_pods = self
            .pod_lister
            .namespaced(namespace)
            .list(&Selector::default());
        let active = filter_active_pods(&all_pods);
        let filtered = self.claim_pods(&rs, &selector, &active).await?;
        let manage_error =
            if rs_needs_sync && rs.metadata.deletion_timestamp.is_none() {
                self.manage_replicas(&filtered, &rs).await.err()
            } else {
                None
            };
        let new_status = calculate_status(&rs, &filtered, manage_error.as_deref());
        let updated = self.update_replica_set_status(&rs, new_status).await?;
        if let Some(error) = manage_error {
            return Err(error);
        }
        let min_ready = min_ready_seconds(&updated);
        let status = updated.status.clone().unwrap_or_default();
        let replicas = updated.spec.replicas.unwrap_or(1);
        if min_ready > 0
            && status.ready_replicas.unwrap_or(0) == replicas
            && status.available_replicas.unwrap_or(0) != replicas
        {
            return Ok(SyncResult::requeue_after(Duration::from_secs(
                u64::try_from(min_ready).unwrap_or(0),
            )));
        }
        Ok(SyncResult::done())
    }
    // ANCHOR_END: sync_replica_set

    /// Mirrors `claimPods`: the active pods this ReplicaSet owns, after
    /// adopting and releasing.
    async fn claim_pods(
        &self,
        rs: &ReplicaSet,
        selector: &Selector,
        pods: &[Arc<Pod>],
    ) -> Result<Vec<Arc<Pod>>, SyncError> {
        let namespace = rs.metadata.namespace.clone().unwrap_or_default();
        let name = rs.metadata.name.clone().unwrap_or_default();
        let uid = rs.metadata.uid.clone();
        let client = self.client.clone();
        let manager = ControllerRefManager::<Pod>::new(
            self.client.clone(),
            &rs.metadata,
            new_controller_ref(&rs.metadata, API_VERSION, KIND),
            selector,
            move || {
                let api: Api<ReplicaSet> =
                    Api::namespaced(client.clone(), &namespace);
                let (name, uid) = (name.clone(), uid.clone());
                async move {
                    api.get(&name).await.is_ok_and(|fresh| {
                        fresh.metadata.uid == uid
                            && fresh.metadata.deletion_timestamp.is_none()
                    })
                }
            },
        );
        Ok(manager.claim(pods).await?)
    }

    // ANCHOR: manage_replicas
    /// Mirrors `manageReplicas`: creates or deletes the difference between the
    /// pods it owns and the replicas it wants, at most `burst_replicas` at a
    /// time, after recording the expectations.
    async fn manage_replicas(
        &self,
        filtered: &[Arc<Pod>],
        rs: &ReplicaSet,
    ) -> Result<(), SyncError> {
        let key = key_of(&rs.metadata);
        let wanted = rs.spec.replicas.unwrap_or(1);
        let diff = replica_diff(filtered.len(), wanted, self.burst_replicas);
        let owner = ObjectReference::of(API_VERSION, KIND, &rs.metadata);
        if diff < 0 {
            let count = diff.unsigned_abs() as usize;
            self.expectations.expect_creations(&key, count);
            let template = rs.spec.template.clone().unwrap_or_default();
            let namespace = rs.metadata.namespace.clone().unwrap_or_default();
            let controller_ref = new_controller_ref(&rs.metadata, API_VERSION, KIND);
            let (created, error) =
                slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, || async {
                    self.pod_control
                        .create_pod(&namespace, &template, &owner, &controller_ref)
                        .await
                        .map(|_| ())
                })
                .await;
            // The creates never made will never be observed.
            let skipped = count - created;
            if skipped > 0 {
                self.expectations.lower_expectations(&key, skipped, 0);
            }
            return error.map_or(Ok(()), |e| Err(e.into()));
        }
        if diff > 0 {
            let count = diff as usize;
            let to_delete = get_pods_to_delete(filtered, count);
            let keys: Vec<String> =
                to_delete.iter().map(|p| key_of(&p.metadata)).collect();
            self.expectations.expect_deletions(&key, &keys);
            let results = futures::future::join_all(
                to_delete
                    .iter()
                    .map(|pod| self.pod_control.delete_pod(pod, &owner)),
            )
            .await;
            let mut first_error = None;
            for (pod, result) in to_delete.iter().zip(results) {
                if let Err(error) = result {
                    // A delete that failed will never be observed.
                    self.expectations
                        .deletion_observed(&key, &key_of(&pod.metadata));
                    first_error.get_or_insert(error);
                }
            }
            return first_error.map_or(Ok(()), |e| Err(e.into()));
        }
        Ok(())
    }
    // ANCHOR_END: manage_replicas

    /// Mirrors `updateReplicaSetStatus`: writes the status through `…/status`
    /// when it changed (or the generation moved), and answers the ReplicaSet as
    /// stored.
    async fn update_replica_set_status(
        &self,
        rs: &Arc<ReplicaSet>,
        status: ReplicaSetStatus,
    ) -> Result<Arc<ReplicaSet>, SyncError> {
        if rs.status.as_ref() == Some(&status) {
            return Ok(Arc::clone(rs));
        }
        let mut next = (**rs).clone();
        next.status = Some(status);
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let stored = api
            .replace_status(
                rs.metadata.name.as_deref().unwrap_or_default(),
                &PostParams::default(),
                &next,
            )
            .await?;
        Ok(Arc::new(stored))
    }
}

// ANCHOR: replica_diff
/// The heart of `manageReplicas`: how many pods to create (negative) or delete
/// (positive), at most `burst` either way.
pub fn replica_diff(owned: usize, wanted: i32, burst: usize) -> i64 {
    // ANCHOR: ex6-replica-diff
    let owned = i64::try_from(owned).unwrap_or(i64::MAX);
    let burst = i64::try_from(burst).unwrap_or(i64::MAX);
    let diff = owned - i64::from(wanted.max(0));
    diff.clamp(-burst, burst)
    // ANCHOR_END: ex6-replica-diff
}
// ANCHOR_END: replica_diff

// ANCHOR: get_pods_to_delete
/// Mirrors `getPodsToDelete` with `getPodsRankedByRelatedPodsOnSameNode`: the
/// `count` cheapest pods to delete, a pod ranked higher the more pods of this
/// ReplicaSet run on its node.
pub fn get_pods_to_delete(pods: &[Arc<Pod>], count: usize) -> Vec<Arc<Pod>> {
    let node = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default()
    };
    let mut per_node: HashMap<String, usize> = HashMap::new();
    for pod in pods {
        *per_node.entry(node(pod)).or_default() += 1;
    }
    let mut ranked: Vec<(Arc<Pod>, usize)> = pods
        .iter()
        .map(|p| {
            let node = node(p);
            let rank = if node.is_empty() { 0 } else { per_node[&node] };
            (Arc::clone(p), rank)
        })
        .collect();
    ranked.sort_by(deletion_order);
    ranked.into_iter().take(count).map(|(p, _)| p).collect()
}
// ANCHOR_END: get_pods_to_delete

/// The ReplicaSet's selector, if it parses (`metav1.LabelSelectorAsSelector`).
fn selector_of(rs: &ReplicaSet) -> Option<Selector> {
    Selector::try_from(rs.spec.selector.clone()).ok()
}

fn min_ready_seconds(rs: &ReplicaSet) -> i64 {
    i64::from(rs.spec.min_ready_seconds.unwrap_or(0))
}

/// `ReplicaSetReplicaFailure`, the condition a failed create or delete sets.
const REPLICA_FAILURE: &str = "ReplicaFailure";

// ANCHOR: calculate_status
/// Mirrors `calculateStatus`: replicas, fully labeled, ready and available
/// pods among those it owns, the generation it saw, and the `ReplicaFailure`
/// condition while a create or delete fails.
pub fn calculate_status(
    rs: &ReplicaSet,
    filtered: &[Arc<Pod>],
    manage_error: Option<&(dyn std::error::Error + Send + Sync)>,
) -> ReplicaSetStatus {
    let mut status = rs.status.clone().unwrap_or_default();
    let template_labels = rs
        .spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let template_selector: Selector = template_labels.clone().into_iter().collect();
    let now = k8s_openapi::jiff::Timestamp::now();
    let min_ready = min_ready_seconds(rs);
    let count = |f: &dyn Fn(&Pod) -> bool| -> i32 {
        i32::try_from(filtered.iter().filter(|p| f(p)).count()).unwrap_or(i32::MAX)
    };
    status.replicas = count(&|_| true);
    status.fully_labeled_replicas = Some(count(&|p| {
        template_selector
            .matches(p.metadata.labels.as_ref().unwrap_or(&Default::default()))
    }));
    status.ready_replicas = Some(count(&|p| is_pod_ready(p)));
    status.available_replicas =
        Some(count(&|p| is_pod_available(p, min_ready, now)));
    status.observed_generation = rs.metadata.generation;
    let mut conditions: Vec<ReplicaSetCondition> =
        status.conditions.take().unwrap_or_default();
    let existing = conditions
        .iter()
        .position(|c| c.type_.as_deref() == Some(REPLICA_FAILURE));
    match (manage_error, existing) {
        (Some(error), None) => {
            let wanted = rs.spec.replicas.unwrap_or(1);
            let reason = if usize::try_from(wanted).unwrap_or(0) > filtered.len() {
                "FailedCreate"
            } else {
                "FailedDelete"
            };
            conditions.push(ReplicaSetCondition {
                type_: Some(REPLICA_FAILURE.into()),
                status: Some("True".into()),
                reason: Some(reason.into()),
                message: Some(error.to_string()),
                last_transition_time: Some(Time(now)),
            });
        }
        (None, Some(index)) => {
            conditions.remove(index);
        }
        _ => {}
    }
    status.conditions = (!conditions.is_empty()).then_some(conditions);
    status
}
// ANCHOR_END: calculate_status

impl Reconcile for ReplicaSetController {
    fn sync(&self, key: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>> {
        let key = key.to_string();
        Box::pin(async move {
            let result = self.sync_replica_set(&key).await;
            if let Err(error) = &result
                && let Some((namespace, name)) = key.split_once('/')
                && let Ok(rs) = self.rs_lister.namespaced(namespace).get(name)
            {
                self.recorder.event(
                    &ObjectReference::of(API_VERSION, KIND, &rs.metadata),
                    WARNING,
                    "SyncFailed",
                    &error.to_string(),
                );
            }
            result
        })
    }
}

/// The handlers on the ReplicaSet informer: `addRS`, `updateRS`, `deleteRS`.
fn rs_handlers(
    controller: Weak<ReplicaSetController>,
) -> ResourceEventHandlerFuncs<ReplicaSet> {
    weak_handlers(
        controller,
        |c, rs| c.enqueue(rs),
        |c, old, cur| {
            if old.metadata.uid != cur.metadata.uid {
                // Deleted and recreated under the same name.
                c.expectations.delete_expectations(&key_of(&old.metadata));
            }
            c.enqueue(cur);
        },
        |c, deleted| {
            let key = match deleted {
                DeletedObject::Object(rs) => key_of(&rs.metadata),
                DeletedObject::Tombstone(t) => t.key.to_string(),
            };
            c.expectations.delete_expectations(&key);
            c.queue.add(key);
        },
    )
}

/// The handlers on the Pod informer: `addPod`, `updatePod`, `deletePod`.
fn pod_handlers(
    controller: Weak<ReplicaSetController>,
) -> ResourceEventHandlerFuncs<Pod> {
    weak_handlers(
        controller,
        ReplicaSetController::add_pod,
        ReplicaSetController::update_pod,
        ReplicaSetController::delete_pod,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::ReplicaSetSpec;
    use k8s_openapi::api::core::v1::{
        PodCondition, PodSpec, PodStatus, PodTemplateSpec,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector, ObjectMeta,
    };

    /// The tests of `replica_diff` (exercise `ex6-replica-diff`).
    mod ex6_replica_diff {
        use super::*;

        /// replica_set_test.go's `TestSyncReplicaSetDoesNothing`: as many pods
        /// as replicas, nothing to do.
        #[test]
        fn nothing_to_do_at_the_count() {
            assert_eq!(replica_diff(3, 3, 500), 0);
            assert_eq!(replica_diff(0, 0, 500), 0);
        }

        /// Too few pods: create the rest (negative); too many: delete the
        /// extra (positive). `TestSyncReplicaSetCreateFailures` wants 100 pods
        /// of a ReplicaSet that has none.
        #[test]
        fn too_few_create_and_too_many_delete() {
            assert_eq!(replica_diff(0, 3, 500), -3);
            assert_eq!(replica_diff(1, 3, 500), -2);
            assert_eq!(replica_diff(0, 100, 500), -100);
            assert_eq!(replica_diff(5, 3, 500), 2);
            assert_eq!(replica_diff(1000, 0, 500), 500);
        }

        /// `TestControllerBurstReplicas`' bursts: with a burst of 5, a
        /// ReplicaSet of 12 creates 5, then 5, then 2 (and of 30, 5 at a
        /// time); scaled to 0 it deletes 5 at a time. With a burst of 3, a
        /// ReplicaSet of 2 creates both at once.
        #[test]
        fn at_most_the_burst_either_way() {
            assert_eq!(replica_diff(0, 12, 5), -5);
            assert_eq!(replica_diff(5, 12, 5), -5);
            assert_eq!(replica_diff(10, 12, 5), -2);
            assert_eq!(replica_diff(0, 30, 5), -5);
            assert_eq!(replica_diff(12, 0, 5), 5);
            assert_eq!(replica_diff(2, 0, 5), 2);
            assert_eq!(replica_diff(0, 2, 3), -2);
            assert_eq!(replica_diff(0, 1000, 500), -500);
        }

        /// A negative spec (which validation refuses) wants no pod.
        #[test]
        fn a_negative_spec_wants_no_pod() {
            assert_eq!(replica_diff(2, -1, 500), 2);
            assert_eq!(replica_diff(0, -1, 500), 0);
        }
    }

    fn pod(
        name: &str,
        node: &str,
        ready: bool,
        labels: &[(&str, &str)],
    ) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                node_name: (!node.is_empty()).then(|| node.to_string()),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some(
                    if node.is_empty() {
                        "Pending"
                    } else {
                        "Running"
                    }
                    .into(),
                ),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    last_transition_time: Some(Time(
                        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                    )),
                    ..PodCondition::default()
                }]),
                ..PodStatus::default()
            }),
        })
    }

    fn rs(replicas: i32) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("ns".into()),
                generation: Some(4),
                ..ObjectMeta::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: Some(
                        [("app".to_string(), "web".to_string())].into(),
                    ),
                    ..LabelSelector::default()
                },
                template: Some(PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(
                            [("app", "web"), ("tier", "fe")]
                                .iter()
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .collect(),
                        ),
                        ..ObjectMeta::default()
                    }),
                    spec: None,
                }),
                ..ReplicaSetSpec::default()
            },
            status: None,
        }
    }

    /// replica_set_utils_test.go's `TestCalculateStatus`: replicas, fully
    /// labeled, ready and available counts, and the generation.
    #[test]
    fn test_calculate_status() {
        let pods = vec![
            pod("a", "n1", true, &[("app", "web"), ("tier", "fe")]),
            pod("b", "n1", false, &[("app", "web")]),
            pod("c", "", false, &[("app", "web"), ("tier", "fe")]),
        ];
        let status = calculate_status(&rs(3), &pods, None);
        assert_eq!(status.replicas, 3);
        assert_eq!(status.fully_labeled_replicas, Some(2));
        assert_eq!(status.ready_replicas, Some(1));
        assert_eq!(status.available_replicas, Some(1));
        assert_eq!(status.observed_generation, Some(4));
        assert_eq!(status.conditions, None);
    }

    /// replica_set_utils_test.go's `TestCalculateStatusConditions`: a failed
    /// create sets `ReplicaFailure`, a later success clears it.
    #[test]
    fn test_calculate_status_conditions() {
        let error: Box<dyn std::error::Error + Send + Sync> =
            "quota exceeded".into();
        let mut failing = rs(2);
        let status = calculate_status(&failing, &[], Some(error.as_ref()));
        let condition = &status.conditions.as_ref().expect("a condition")[0];
        assert_eq!(condition.type_.as_deref(), Some("ReplicaFailure"));
        assert_eq!(condition.reason.as_deref(), Some("FailedCreate"));
        assert_eq!(condition.message.as_deref(), Some("quota exceeded"));
        failing.status = Some(status);
        let cleared = calculate_status(&failing, &[], None);
        assert_eq!(cleared.conditions, None);
    }

    /// replica_set_test.go's `TestGetPodsToDelete`: unassigned and not-ready
    /// pods go first, then pods on crowded nodes.
    #[test]
    fn test_get_pods_to_delete() {
        let pods = vec![
            pod("ready-alone", "n1", true, &[]),
            pod("ready-crowded-1", "n2", true, &[]),
            pod("ready-crowded-2", "n2", true, &[]),
            pod("not-ready", "n3", false, &[]),
            pod("unassigned", "", false, &[]),
        ];
        let names = |pods: Vec<Arc<Pod>>| -> Vec<String> {
            pods.iter()
                .map(|p| p.metadata.name.clone().unwrap_or_default())
                .collect()
        };
        assert_eq!(
            names(get_pods_to_delete(&pods, 2)),
            ["unassigned", "not-ready"]
        );
        let four = names(get_pods_to_delete(&pods, 4));
        assert_eq!(&four[..2], ["unassigned", "not-ready"]);
        assert!(
            four[2].starts_with("ready-crowded")
                && four[3].starts_with("ready-crowded")
        );
    }
}
