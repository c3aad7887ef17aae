//! The Deployment controller: mirrors kubernetes'
//! [`pkg/controller/deployment/deployment_controller.go`]
//! (`DeploymentController`, `NewDeploymentController`, the event handlers
//! `addDeployment`/`updateDeployment`/`deleteDeployment`,
//! `addReplicaSet`/`updateReplicaSet`/`deleteReplicaSet`, `deletePod`,
//! `syncDeployment`, `getReplicaSetsForDeployment`, `getPodMapForDeployment`).
//!
//! A Deployment owns ReplicaSets, one per pod template it had (named
//! `<deployment>-<pod-template-hash>`); the ReplicaSet controller owns the pods.
//! This controller only resizes ReplicaSets: the new one up, the old ones down,
//! as the strategy allows, and reports the rollout in the Deployment's status.
//!
//! ```text
//!  Deployment informer ──add/update/deleteDeployment──┐
//!  ReplicaSet informer ──add/update/deleteReplicaSet──┼─► queue of Deployment keys
//!  Pod informer ──deletePod (Recreate: the last pod)──┘      │
//!                                                            ▼
//!  worker: syncDeployment(key)
//!     1. the Deployment from the lister (a copy: the cache is never changed)
//!     2. its ReplicaSets, claimed (adopt orphans, release strays)
//!     3. being deleted: status only; paused: sync (scale, no rollout)
//!     4. a scaling event (replicas changed): sync, proportionally
//!     5. otherwise roll out: rolloutRolling or rolloutRecreate
//!        (each ends in syncRolloutStatus: the Progressing/Available conditions)
//! ```
//!
//! Upstream's `rollback` (the deprecated `rollbackTo`, through an annotation)
//! is not here: `kubectl rollout undo` patches the template client-side, and
//! the controller then finds the older ReplicaSet as the new one.
//!
//! [`pkg/controller/deployment/deployment_controller.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/deployment_controller.go

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, PostParams};
use kube::core::Selector;
use stage4_shared_informer::{
    DeletedObject, KubeSource, Lister, ResourceEventHandlerFuncs,
    SharedInformerFactory,
};

use crate::controller::{
    Controller, Reconcile, SyncError, SyncResult, weak_handlers,
};
use crate::controller_ref_manager::ControllerRefManager;
use crate::controller_utils::{get_controller_of, key_of, new_controller_ref};
use crate::deployment::util::deployment_util::{
    DeploymentStrategyType, deployment_status, get_deployments_for_replica_set,
    strategy_name,
};
use crate::record::{EventRecorder, ObjectReference, WARNING};
use crate::workqueue::{
    RateLimitingQueue, RateLimitingQueueConfig, default_controller_rate_limiter,
};

/// `controllerKind`'s group version.
pub const API_VERSION: &str = "apps/v1";
/// `controllerKind`'s kind.
pub const KIND: &str = "Deployment";
/// The controller's name in logs, events and metrics.
pub const NAME: &str = "deployment-controller";
/// Mirrors `maxRetries`: a Deployment whose sync failed this many times in a
/// row is dropped from the queue (until its next event).
pub const MAX_RETRIES: usize = 15;

pub use super::error::DeploymentError;

// ANCHOR: deployment_controller
/// Mirrors `DeploymentController`.
pub struct DeploymentController {
    /// Writes ReplicaSets and the Deployments' status (`client`, `rsControl`).
    pub(super) client: kube::Client,
    /// Mirrors `eventRecorder` (`deployment-controller`).
    pub(super) event_recorder: EventRecorder,
    /// Mirrors `dLister`.
    pub(super) d_lister: Lister<Deployment>,
    /// Mirrors `rsLister`.
    pub(super) rs_lister: Lister<ReplicaSet>,
    /// Mirrors `podLister`.
    pub(super) pod_lister: Lister<Pod>,
    /// The Deployments to sync (`queue`).
    pub(super) queue: RateLimitingQueue<String>,
}
// ANCHOR_END: deployment_controller

impl std::fmt::Debug for DeploymentController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeploymentController")
            .finish_non_exhaustive()
    }
}

/// The pods of a Deployment by the uid of the ReplicaSet that owns them
/// (`map[types.UID][]*v1.Pod`).
pub type PodMap = HashMap<String, Vec<Arc<Pod>>>;

impl DeploymentController {
    /// Mirrors `NewDeploymentController`: the controller over `factory`'s
    /// Deployment, ReplicaSet and Pod informers (whose handlers it registers),
    /// writing through `client`. Start the factory, then run the returned
    /// [`Controller`] (`run(workers, caches_synced, shutdown)`), which retries
    /// a failing key up to [`MAX_RETRIES`] times.
    pub fn new(
        client: kube::Client,
        factory: &SharedInformerFactory<KubeSource>,
    ) -> Result<(Arc<Self>, Arc<Controller<Self>>), SyncError> {
        let queue = RateLimitingQueue::with_config(
            default_controller_rate_limiter(),
            RateLimitingQueueConfig::default().name("deployment"),
        );
        let deployments = factory.deployments();
        let rss = factory.for_resource::<ReplicaSet>();
        let pods = factory.pods();
        let controller = Arc::new(Self {
            event_recorder: EventRecorder::new(client.clone(), NAME),
            client,
            d_lister: deployments.lister(),
            rs_lister: rss.lister(),
            pod_lister: pods.lister(),
            queue: queue.clone(),
        });
        let weak = Arc::downgrade(&controller);
        deployments
            .informer()
            .add_event_handler(deployment_handlers(Weak::clone(&weak)))?;
        rss.informer()
            .add_event_handler(replica_set_handlers(Weak::clone(&weak)))?;
        pods.informer().add_event_handler(pod_handlers(weak))?;
        let runner = Arc::new(
            Controller::new("deployment", queue, Arc::clone(&controller))
                .max_retries(MAX_RETRIES),
        );
        Ok((controller, runner))
    }

    /// Mirrors `enqueue`.
    pub(super) fn enqueue(&self, deployment: &Deployment) {
        self.queue.add(key_of(&deployment.metadata));
    }

    /// Mirrors `enqueueRateLimited`.
    pub(super) fn enqueue_rate_limited(&self, deployment: &Deployment) {
        self.queue.add_rate_limited(key_of(&deployment.metadata));
    }

    /// Mirrors `enqueueAfter`.
    pub(super) fn enqueue_after(
        &self,
        deployment: &Deployment,
        after: std::time::Duration,
    ) {
        self.queue.add_after(key_of(&deployment.metadata), after);
    }

    /// Mirrors `addDeployment`.
    fn add_deployment(&self, d: &Deployment) {
        tracing::debug!(deployment = %key_of(&d.metadata), "adding deployment");
        self.enqueue(d);
    }

    /// Mirrors `updateDeployment`.
    fn update_deployment(&self, _old: &Deployment, cur: &Deployment) {
        tracing::debug!(deployment = %key_of(&cur.metadata), "updating deployment");
        self.enqueue(cur);
    }

    /// Mirrors `deleteDeployment`: the sync finds it gone and does nothing;
    /// the garbage collector removes its ReplicaSets.
    fn delete_deployment(&self, deleted: &DeletedObject<Deployment>) {
        match deleted {
            DeletedObject::Object(d) => self.enqueue(d),
            DeletedObject::Tombstone(tombstone) => {
                self.queue.add(tombstone.key.to_string());
            }
        }
    }

    /// Mirrors `addReplicaSet`: wakes the Deployment that owns the new
    /// ReplicaSet, or, for an orphan, every Deployment that may adopt it.
    fn add_replica_set(&self, rs: &Arc<ReplicaSet>) {
        if rs.metadata.deletion_timestamp.is_some() {
            // Already being deleted when first seen (a restart).
            self.delete_replica_set(&DeletedObject::Object(Arc::clone(rs)));
            return;
        }
        if let Some(owner) = get_controller_of(&rs.metadata) {
            if let Some(d) = self.resolve_controller_ref(
                rs.metadata.namespace.as_deref().unwrap_or_default(),
                owner,
            ) {
                tracing::debug!(replica_set = %key_of(&rs.metadata), "replica set added");
                self.enqueue(&d);
            }
            return;
        }
        for d in self.get_deployments_for_replica_set(rs) {
            self.enqueue(&d);
        }
    }

    /// Mirrors `getDeploymentsForReplicaSet`: more than one is a user error
    /// (overlapping selectors); controller references keep it harmless.
    fn get_deployments_for_replica_set(
        &self,
        rs: &ReplicaSet,
    ) -> Vec<Arc<Deployment>> {
        let deployments = get_deployments_for_replica_set(&self.d_lister, rs);
        if deployments.len() > 1 {
            tracing::debug!(
                replica_set = %key_of(&rs.metadata),
                "user error: more than one deployment selects the replica set"
            );
        }
        deployments
    }

    /// Mirrors `updateReplicaSet`: wakes the Deployment that owned it and the
    /// one that owns it now; for an orphan whose labels or owner changed, every
    /// Deployment that may adopt it.
    fn update_replica_set(&self, old: &ReplicaSet, cur: &ReplicaSet) {
        if cur.metadata.resource_version == old.metadata.resource_version {
            // A resync: nothing changed.
            return;
        }
        let namespace = cur.metadata.namespace.as_deref().unwrap_or_default();
        let cur_ref = get_controller_of(&cur.metadata);
        let old_ref = get_controller_of(&old.metadata);
        let ref_changed = cur_ref != old_ref;
        if ref_changed
            && let Some(old_ref) = old_ref
            && let Some(d) = self.resolve_controller_ref(namespace, old_ref)
        {
            self.enqueue(&d);
        }
        if let Some(cur_ref) = cur_ref {
            if let Some(d) = self.resolve_controller_ref(namespace, cur_ref) {
                tracing::debug!(replica_set = %key_of(&cur.metadata), "replica set updated");
                self.enqueue(&d);
            }
            return;
        }
        if ref_changed || cur.metadata.labels != old.metadata.labels {
            for d in self.get_deployments_for_replica_set(cur) {
                self.enqueue(&d);
            }
        }
    }

    /// Mirrors `deleteReplicaSet`: wakes its owner (an orphan's deletion
    /// concerns nobody).
    fn delete_replica_set(&self, deleted: &DeletedObject<ReplicaSet>) {
        let rs = match deleted {
            DeletedObject::Object(rs) => rs,
            DeletedObject::Tombstone(tombstone) => match &tombstone.obj {
                Some(rs) => rs,
                None => return,
            },
        };
        let Some(owner) = get_controller_of(&rs.metadata) else {
            return;
        };
        if let Some(d) = self.resolve_controller_ref(
            rs.metadata.namespace.as_deref().unwrap_or_default(),
            owner,
        ) {
            tracing::debug!(replica_set = %key_of(&rs.metadata), "replica set deleted");
            self.enqueue(&d);
        }
    }

    /// Mirrors `deletePod`: a Recreate Deployment waits for its old pods to
    /// be gone; the deletion of its last pod wakes it.
    fn delete_pod(&self, deleted: &DeletedObject<Pod>) {
        let pod = match deleted {
            DeletedObject::Object(pod) => pod,
            DeletedObject::Tombstone(tombstone) => match &tombstone.obj {
                Some(pod) => pod,
                None => return,
            },
        };
        let Some(d) = self.get_deployment_for_pod(pod) else {
            return;
        };
        if DeploymentStrategyType::of(&d) != Some(DeploymentStrategyType::Recreate) {
            return;
        }
        // Upstream lists the ReplicaSets through the client here; the
        // handler reads the lister instead, and never blocks on the network.
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        let rs_list: Vec<Arc<ReplicaSet>> = self
            .rs_lister
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|rs| {
                get_controller_of(&rs.metadata)
                    .is_some_and(|o| Some(&o.uid) == d.metadata.uid.as_ref())
            })
            .collect();
        let Ok(pod_map) = self.get_pod_map_for_deployment(&d, &rs_list) else {
            return;
        };
        if pod_map.values().all(Vec::is_empty) {
            self.enqueue(&d);
        }
    }

    /// Mirrors `getDeploymentForPod`: the Deployment that owns the ReplicaSet
    /// that owns the pod.
    fn get_deployment_for_pod(&self, pod: &Pod) -> Option<Arc<Deployment>> {
        let owner = get_controller_of(&pod.metadata)?;
        if owner.kind != "ReplicaSet" {
            return None;
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let rs = self.rs_lister.namespaced(namespace).get(&owner.name).ok()?;
        if rs.metadata.uid.as_deref() != Some(owner.uid.as_str()) {
            return None;
        }
        self.resolve_controller_ref(namespace, get_controller_of(&rs.metadata)?)
    }

    /// Mirrors `resolveControllerRef`: the Deployment a controller reference
    /// names, if it is a Deployment with that uid.
    fn resolve_controller_ref(
        &self,
        namespace: &str,
        controller_ref: &OwnerReference,
    ) -> Option<Arc<Deployment>> {
        if controller_ref.kind != KIND {
            return None;
        }
        let d = self
            .d_lister
            .namespaced(namespace)
            .get(&controller_ref.name)
            .ok()?;
        (d.metadata.uid.as_deref() == Some(controller_ref.uid.as_str())).then_some(d)
    }

    /// Mirrors `getReplicaSetsForDeployment`: the ReplicaSets of the
    /// namespace this Deployment owns, after adopting the matching orphans and
    /// releasing those it owns but no longer selects (a fresh read of the
    /// Deployment guards the first adoption).
    pub(super) async fn get_replica_sets_for_deployment(
        &self,
        d: &Deployment,
    ) -> Result<Vec<Arc<ReplicaSet>>, DeploymentError> {
        let namespace = d.metadata.namespace.clone().unwrap_or_default();
        let rs_list = self
            .rs_lister
            .namespaced(&namespace)
            .list(&Selector::default());
        let selector = deployment_selector(d)?;
        let name = d.metadata.name.clone().unwrap_or_default();
        let uid = d.metadata.uid.clone();
        let client = self.client.clone();
        let manager = ControllerRefManager::<ReplicaSet>::new(
            self.client.clone(),
            &d.metadata,
            new_controller_ref(&d.metadata, API_VERSION, KIND),
            &selector,
            move || {
                let api: Api<Deployment> =
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
        Ok(manager.claim(&rs_list).await?)
    }

    /// Mirrors `getPodMapForDeployment`: the Deployment's pods (the selected
    /// ones whose controller is one of `rs_list`), by ReplicaSet uid. Inactive
    /// pods count: a Recreate rollout waits for every old pod.
    pub(super) fn get_pod_map_for_deployment(
        &self,
        d: &Deployment,
        rs_list: &[Arc<ReplicaSet>],
    ) -> Result<PodMap, DeploymentError> {
        let selector = deployment_selector(d)?;
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        let mut pod_map: PodMap = rs_list
            .iter()
            .filter_map(|rs| rs.metadata.uid.clone())
            .map(|uid| (uid, Vec::new()))
            .collect();
        for pod in self.pod_lister.namespaced(namespace).list(&selector) {
            if let Some(owner) = get_controller_of(&pod.metadata)
                && let Some(pods) = pod_map.get_mut(&owner.uid)
            {
                pods.push(pod);
            }
        }
        Ok(pod_map)
    }

    // ANCHOR: sync_deployment
    /// Mirrors `syncDeployment`.
    async fn sync_deployment(
        &self,
        key: &str,
    ) -> Result<SyncResult, DeploymentError> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let deployment = match self.d_lister.namespaced(namespace).get(name) {
            Ok(d) => d,
            Err(error) if error.is_not_found() => {
                tracing::debug!(%key, "deployment has been deleted");
                return Ok(SyncResult::done());
            }
            Err(error) => return Err(error.into()),
        };
        // A copy: the informer's cache is never changed.
        let mut d = (*deployment).clone();
        d.status = Some(deployment_status(&d));

        if selects_everything(&d) {
            self.event_recorder.event(
                &self.reference(&d),
                WARNING,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            );
            let status = d.status.get_or_insert_default();
            if status.observed_generation.unwrap_or(0)
                < d.metadata.generation.unwrap_or(0)
            {
                status.observed_generation = d.metadata.generation;
                self.update_status(&mut d).await?;
            }
            return Ok(SyncResult::done());
        }

        let rs_list = self.get_replica_sets_for_deployment(&d).await?;
        // The pods by ReplicaSet: a Recreate rollout checks that no old pod
        // runs before it starts new ones.
        let pod_map = self.get_pod_map_for_deployment(&d, &rs_list)?;

        if d.metadata.deletion_timestamp.is_some() {
            self.sync_status_only(&mut d, &rs_list).await?;
            return Ok(SyncResult::done());
        }

        // ANCHOR: sync_deployment_dispatch
        // Pausing and resuming record an Unknown Progressing condition, so
        // a resumed Deployment does not time out at once.
        self.check_paused_conditions(&mut d).await?;

        if d.spec.paused == Some(true) {
            self.sync(&mut d, &rs_list).await?;
            return Ok(SyncResult::done());
        }

        if self.is_scaling_event(&mut d, &rs_list).await? {
            self.sync(&mut d, &rs_list).await?;
            return Ok(SyncResult::done());
        }

        match DeploymentStrategyType::of(&d) {
            Some(DeploymentStrategyType::Recreate) => {
                self.rollout_recreate(&mut d, &rs_list, &pod_map).await?;
            }
            Some(DeploymentStrategyType::RollingUpdate) => {
                self.rollout_rolling(&mut d, &rs_list).await?;
            }
            None => {
                return Err(DeploymentError::UnsupportedStrategy(strategy_name(&d)));
            }
        }
        Ok(SyncResult::done())
        // ANCHOR_END: sync_deployment_dispatch
    }
    // ANCHOR_END: sync_deployment

    /// `UpdateStatus` of the Deployment: writes `d`'s status through
    /// `…/status`. Upstream drops the answer; here the local copy takes its
    /// resourceVersion, so a second status write in the same sync does not
    /// conflict with the first.
    pub(super) async fn update_status(
        &self,
        d: &mut Deployment,
    ) -> Result<(), DeploymentError> {
        let api: Api<Deployment> = Api::namespaced(
            self.client.clone(),
            d.metadata.namespace.as_deref().unwrap_or_default(),
        );
        let stored = api
            .replace_status(
                d.metadata.name.as_deref().unwrap_or_default(),
                &PostParams::default(),
                &*d,
            )
            .await?;
        d.metadata.resource_version = stored.metadata.resource_version;
        Ok(())
    }

    /// The Deployment as an event's object.
    pub(super) fn reference(&self, d: &Deployment) -> ObjectReference {
        ObjectReference::of(API_VERSION, KIND, &d.metadata)
    }
}

/// The Deployment's selector (`metav1.LabelSelectorAsSelector`).
fn deployment_selector(d: &Deployment) -> Result<Selector, DeploymentError> {
    Selector::try_from(d.spec.selector.clone()).map_err(|error| {
        DeploymentError::InvalidSelector {
            key: key_of(&d.metadata),
            reason: error.to_string(),
        }
    })
}

/// Whether the Deployment's selector is empty (`reflect.DeepEqual(selector,
/// &metav1.LabelSelector{})`): it would select every pod.
fn selects_everything(d: &Deployment) -> bool {
    let selector = &d.spec.selector;
    selector.match_labels.as_ref().is_none_or(|l| l.is_empty())
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(|e| e.is_empty())
}

impl Reconcile for DeploymentController {
    fn sync(&self, key: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>> {
        let key = key.to_string();
        Box::pin(async move {
            self.sync_deployment(&key)
                .await
                .map_err(|error| -> SyncError { Box::new(error) })
        })
    }
}

/// The handlers on the Deployment informer: `addDeployment`,
/// `updateDeployment`, `deleteDeployment`.
fn deployment_handlers(
    controller: Weak<DeploymentController>,
) -> ResourceEventHandlerFuncs<Deployment> {
    weak_handlers(
        controller,
        |c, d| c.add_deployment(d),
        |c, old, cur| c.update_deployment(old, cur),
        DeploymentController::delete_deployment,
    )
}

/// The handlers on the ReplicaSet informer: `addReplicaSet`,
/// `updateReplicaSet`, `deleteReplicaSet`.
fn replica_set_handlers(
    controller: Weak<DeploymentController>,
) -> ResourceEventHandlerFuncs<ReplicaSet> {
    weak_handlers(
        controller,
        DeploymentController::add_replica_set,
        |c, old, cur| c.update_replica_set(old, cur),
        DeploymentController::delete_replica_set,
    )
}

/// The handler on the Pod informer: `deletePod` only.
fn pod_handlers(
    controller: Weak<DeploymentController>,
) -> ResourceEventHandlerFuncs<Pod> {
    ResourceEventHandlerFuncs::new().delete_func(move |deleted| {
        if let Some(c) = controller.upgrade() {
            c.delete_pod(deleted);
        }
    })
}
