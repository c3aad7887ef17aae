//! The garbage collector: mirrors kubernetes' [`pkg/controller/garbagecollector`]
//! (`GarbageCollector` in `garbagecollector.go`: `attemptToDeleteItem`,
//! `classifyReferences`, `processDeletingDependentsItem`,
//! `attemptToOrphanWorker`, `orphanDependents`, `removeFinalizer`; and
//! `GraphBuilder` in `graph_builder.go`: `processGraphChanges`, `insertNode`,
//! `addDependentToOwners`, `removeNode`, `processTransitions`).
//!
//! Every object that names an owner is a dependent. When its owners are all
//! gone, the collector deletes it (in the background, or as its own finalizers
//! say); that is how deleting a Deployment deletes its ReplicaSets, and they
//! their pods. An owner deleted with `propagationPolicy=Orphan` carries the
//! `orphan` finalizer: the collector removes its reference from every
//! dependent, then the finalizer, and the owner goes while its dependents stay.
//! With `Foreground` (the `foregroundDeletion` finalizer) it deletes the
//! dependents that block their owner's deletion first, and removes the
//! finalizer once none is left.
//!
//! ```text
//!  monitors (informers of every kind the collector follows)
//!      │ add / update / delete
//!      ▼
//!  GraphBuilder: the uid graph (owners ⇄ dependents, virtual owners) ──► attemptToDelete queue
//!      │ an owner starts orphaning                                        (dependents whose owners
//!      ▼                                                                    may be gone, owners that
//!  attemptToOrphan queue                                                    wait for their dependents)
//! ```
//!
//! Where it differs: upstream follows every resource the API serves, through
//! metadata informers from discovery, and resolves kinds with a REST mapper;
//! here the monitors are typed informers of the kinds a workshop creates
//! (Deployments, ReplicaSets, Pods, ConfigMaps, Secrets), and an owner's
//! resource is named from its kind (`Deployment` → `deployments`).
//!
//! [`pkg/controller/garbagecollector`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/garbagecollector/garbagecollector.go

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{
    Api, DeleteParams, DynamicObject, Patch, PatchParams, Preconditions,
    PropagationPolicy,
};
use kube::core::{ApiResource, GroupVersionKind};
use parking_lot::Mutex;
use serde_json::json;
use stage4_shared_informer::{
    DeletedObject, FactoryResource, KubeSource, SharedInformerFactory,
};

pub mod graph;

use crate::controller::{
    Controller, Reconcile, SyncError, SyncResult, weak_handlers,
};
use crate::workqueue::{
    RateLimitingQueue, RateLimitingQueueConfig, default_controller_rate_limiter,
};
use graph::{Graph, Node, ObjectIdentity};

/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// One change the graph builder processes (`event`).
#[derive(Clone, Debug)]
enum GraphEvent {
    /// An object was added or updated (or seen at start).
    Upsert {
        identity: ObjectIdentity,
        owners: Vec<OwnerReference>,
        being_deleted: bool,
        finalizers: Vec<String>,
    },
    /// An object was deleted (or found gone: a virtual delete).
    Delete { identity: ObjectIdentity },
}

// ANCHOR: garbage_collector
/// Mirrors `GarbageCollector` with its `GraphBuilder`.
pub struct GarbageCollector {
    client: kube::Client,
    graph: Mutex<Graph>,
    attempt_to_delete: RateLimitingQueue<String>,
    attempt_to_orphan: RateLimitingQueue<String>,
}
// ANCHOR_END: garbage_collector

impl std::fmt::Debug for GarbageCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GarbageCollector")
            .field("nodes", &self.graph.lock().nodes.len())
            .finish_non_exhaustive()
    }
}

/// The two workers of the collector, each a controller over its queue.
pub struct GarbageCollectorWorkers {
    /// `attemptToDelete`.
    pub attempt_to_delete: Arc<Controller<AttemptToDelete>>,
    /// `attemptToOrphan`.
    pub attempt_to_orphan: Arc<Controller<AttemptToOrphan>>,
}

impl std::fmt::Debug for GarbageCollectorWorkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GarbageCollectorWorkers")
            .finish_non_exhaustive()
    }
}

/// A kind the collector follows: its `apiVersion` and `kind`.
trait Monitored: FactoryResource {
    const API_VERSION: &'static str;
    const KIND: &'static str;
}

impl Monitored for Deployment {
    const API_VERSION: &'static str = "apps/v1";
    const KIND: &'static str = "Deployment";
}
impl Monitored for ReplicaSet {
    const API_VERSION: &'static str = "apps/v1";
    const KIND: &'static str = "ReplicaSet";
}
impl Monitored for Pod {
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "Pod";
}
impl Monitored for ConfigMap {
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "ConfigMap";
}
impl Monitored for Secret {
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "Secret";
}

impl GarbageCollector {
    /// Mirrors `NewGarbageCollector` with `GraphBuilder.syncMonitors`: the
    /// collector over `factory`'s informers of the followed kinds (whose
    /// handlers feed the graph), writing through `client`.
    pub fn new(
        client: kube::Client,
        factory: &SharedInformerFactory<KubeSource>,
    ) -> Result<(Arc<Self>, GarbageCollectorWorkers), SyncError> {
        let gc = Arc::new(Self {
            client,
            graph: Mutex::new(Graph::default()),
            attempt_to_delete: RateLimitingQueue::with_config(
                default_controller_rate_limiter(),
                RateLimitingQueueConfig::default()
                    .name("garbage_collector_attempt_to_delete"),
            ),
            attempt_to_orphan: RateLimitingQueue::with_config(
                default_controller_rate_limiter(),
                RateLimitingQueueConfig::default()
                    .name("garbage_collector_attempt_to_orphan"),
            ),
        });
        monitor::<Deployment>(factory, Arc::downgrade(&gc))?;
        monitor::<ReplicaSet>(factory, Arc::downgrade(&gc))?;
        monitor::<Pod>(factory, Arc::downgrade(&gc))?;
        monitor::<ConfigMap>(factory, Arc::downgrade(&gc))?;
        monitor::<Secret>(factory, Arc::downgrade(&gc))?;
        let workers = GarbageCollectorWorkers {
            attempt_to_delete: Arc::new(Controller::new(
                "garbagecollector-delete",
                gc.attempt_to_delete.clone(),
                Arc::new(AttemptToDelete(Arc::clone(&gc))),
            )),
            attempt_to_orphan: Arc::new(Controller::new(
                "garbagecollector-orphan",
                gc.attempt_to_orphan.clone(),
                Arc::new(AttemptToOrphan(Arc::clone(&gc))),
            )),
        };
        Ok((gc, workers))
    }

    /// A copy of the node of `uid`, if the graph has it.
    pub fn node(&self, uid: &str) -> Option<Node> {
        self.graph.lock().get(uid).cloned()
    }

    // ANCHOR: process_graph_changes
    /// Mirrors `processGraphChanges` for one event.
    fn process(&self, event: GraphEvent) {
        let mut graph = self.graph.lock();
        match event {
            GraphEvent::Upsert {
                identity,
                owners,
                being_deleted,
                finalizers,
            } => {
                let has = |f: &str| finalizers.iter().any(|x| x == f);
                let uid = identity.uid.clone();
                let old_owners = match graph.nodes.get_mut(&uid) {
                    Some(node) => {
                        // A virtual node becomes real, or a known one changes.
                        node.is_virtual = false;
                        node.identity = identity.clone();
                        let old =
                            std::mem::replace(&mut node.owners, owners.clone());
                        Some(old)
                    }
                    None => {
                        graph.nodes.insert(
                            uid.clone(),
                            Node {
                                identity: identity.clone(),
                                owners: owners.clone(),
                                ..Node::default()
                            },
                        );
                        None
                    }
                };
                let old_owners = old_owners.unwrap_or_default();
                let added: Vec<&OwnerReference> = owners
                    .iter()
                    .filter(|o| !old_owners.iter().any(|p| p.uid == o.uid))
                    .collect();
                let removed: Vec<OwnerReference> = old_owners
                    .iter()
                    .filter(|o| !owners.iter().any(|p| p.uid == o.uid))
                    .cloned()
                    .collect();
                for owner in added {
                    self.add_dependent_to_owner(
                        &mut graph,
                        &uid,
                        owner,
                        &identity.namespace,
                    );
                }
                for owner in &removed {
                    if let Some(owner_node) = graph.nodes.get_mut(&owner.uid) {
                        owner_node.dependents.remove(&uid);
                        // An owner waiting for its dependents may be done now.
                        if owner_node.deleting_dependents {
                            self.attempt_to_delete.add(owner.uid.clone());
                        }
                    }
                }
                let node = graph.nodes.get_mut(&uid).expect("inserted above");
                let was_orphaning = node.orphaning;
                let was_deleting_dependents = node.deleting_dependents;
                node.being_deleted = being_deleted;
                node.orphaning = being_deleted && has(FINALIZER_ORPHAN);
                node.deleting_dependents =
                    being_deleted && has(FINALIZER_DELETE_DEPENDENTS);
                // `processTransitions`.
                if node.orphaning && !was_orphaning {
                    self.attempt_to_orphan.add(uid.clone());
                } else if node.deleting_dependents && !was_deleting_dependents {
                    for dependent in &node.dependents {
                        self.attempt_to_delete.add(dependent.clone());
                    }
                    self.attempt_to_delete.add(uid.clone());
                }
            }
            GraphEvent::Delete { identity } => {
                let Some(node) = graph.nodes.remove(&identity.uid) else {
                    return;
                };
                // Its dependents may have lost their last owner.
                for dependent in &node.dependents {
                    self.attempt_to_delete.add(dependent.clone());
                }
                for owner in &node.owners {
                    if let Some(owner_node) = graph.nodes.get_mut(&owner.uid) {
                        owner_node.dependents.remove(&identity.uid);
                        if owner_node.deleting_dependents {
                            self.attempt_to_delete.add(owner.uid.clone());
                        }
                        if owner_node.is_virtual && owner_node.dependents.is_empty()
                        {
                            graph.nodes.remove(&owner.uid);
                        }
                    }
                }
            }
        }
    }
    // ANCHOR_END: process_graph_changes

    /// Mirrors `addDependentToOwners` for one owner: an owner not seen yet
    /// becomes a virtual node, whose existence `attemptToDelete` checks.
    fn add_dependent_to_owner(
        &self,
        graph: &mut Graph,
        dependent: &str,
        owner: &OwnerReference,
        namespace: &str,
    ) {
        let owner_node = graph.nodes.entry(owner.uid.clone()).or_insert_with(|| {
            self.attempt_to_delete.add(owner.uid.clone());
            Node {
                identity: ObjectIdentity::of_owner(
                    owner,
                    &owner_namespace(owner, namespace),
                ),
                is_virtual: true,
                ..Node::default()
            }
        });
        owner_node.dependents.insert(dependent.to_string());
    }

    /// The API of an object's kind (its resource named from the kind, as
    /// `kube` pluralizes it; the namespace left out for the cluster-scoped
    /// kinds).
    fn api(&self, identity: &ObjectIdentity) -> Api<DynamicObject> {
        let (group, version) = identity
            .api_version
            .split_once('/')
            .unwrap_or(("", identity.api_version.as_str()));
        let gvk = GroupVersionKind::gvk(group, version, &identity.kind);
        let resource = ApiResource::from_gvk(&gvk);
        if identity.namespace.is_empty() {
            Api::all_with(self.client.clone(), &resource)
        } else {
            Api::namespaced_with(self.client.clone(), &identity.namespace, &resource)
        }
    }

    /// Mirrors `getObject`: the object as stored, or `None` if it is gone (or
    /// another object with its name took its place).
    async fn get_object(
        &self,
        identity: &ObjectIdentity,
    ) -> Result<Option<DynamicObject>, kube::Error> {
        match self.api(identity).get(&identity.name).await {
            Ok(object)
                if object.metadata.uid.as_deref() == Some(identity.uid.as_str()) =>
            {
                Ok(Some(object))
            }
            Ok(_) => Ok(None),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(error) => Err(error),
        }
    }

    // ANCHOR: attempt_to_delete_item
    /// Mirrors `attemptToDeleteItem`.
    async fn attempt_to_delete_item(&self, item: Node) -> Result<(), SyncError> {
        if item.being_deleted && !item.deleting_dependents {
            return Ok(());
        }
        let Some(latest) = self.get_object(&item.identity).await? else {
            // Gone: a virtual delete event lets its dependents be checked.
            self.process(GraphEvent::Delete {
                identity: item.identity.clone(),
            });
            return Ok(());
        };
        if item.deleting_dependents {
            return self.process_deleting_dependents_item(&item).await;
        }
        let owners = latest.metadata.owner_references.clone().unwrap_or_default();
        if owners.is_empty() {
            return Ok(());
        }
        let (solid, dangling, waiting) =
            self.classify_references(&item, &owners).await?;
        if !solid.is_empty() {
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            // Owned by someone alive: drop only the references to the dead
            // and to the owners waiting for their dependents.
            let uids: Vec<&str> = dangling
                .iter()
                .chain(&waiting)
                .map(|o| o.uid.as_str())
                .collect();
            return self.delete_owner_refs(&item.identity, &uids).await;
        }
        if !waiting.is_empty() && !item.dependents.is_empty() {
            // An owner waits for this one, which has dependents of its own.
            return self
                .delete_object(&item.identity, PropagationPolicy::Foreground)
                .await;
        }
        let finalizers = latest.metadata.finalizers.clone().unwrap_or_default();
        let policy = if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            PropagationPolicy::Orphan
        } else if finalizers.iter().any(|f| f == FINALIZER_DELETE_DEPENDENTS) {
            PropagationPolicy::Foreground
        } else {
            PropagationPolicy::Background
        };
        self.delete_object(&item.identity, policy).await
    }
    // ANCHOR_END: attempt_to_delete_item

    // ANCHOR: classify_references
    /// Mirrors `classifyReferences`: the owners that exist (solid), are gone
    /// (dangling), or exist and wait for their blocking dependents to go.
    async fn classify_references(
        &self,
        item: &Node,
        owners: &[OwnerReference],
    ) -> Result<
        (
            Vec<OwnerReference>,
            Vec<OwnerReference>,
            Vec<OwnerReference>,
        ),
        SyncError,
    > {
        let (mut solid, mut dangling, mut waiting) =
            (Vec::new(), Vec::new(), Vec::new());
        for owner in owners {
            let identity = ObjectIdentity::of_owner(
                owner,
                &owner_namespace(owner, &item.identity.namespace),
            );
            match self.get_object(&identity).await? {
                None => dangling.push(owner.clone()),
                Some(found) => {
                    let finalizers = found.metadata.finalizers.unwrap_or_default();
                    let waits = owner.block_owner_deletion == Some(true)
                        && found.metadata.deletion_timestamp.is_some()
                        && finalizers
                            .iter()
                            .any(|f| f == FINALIZER_DELETE_DEPENDENTS);
                    if waits {
                        waiting.push(owner.clone());
                    } else {
                        solid.push(owner.clone());
                    }
                }
            }
        }
        Ok((solid, dangling, waiting))
    }
    // ANCHOR_END: classify_references

    // ANCHOR: process_deleting_dependents_item
    /// Mirrors `processDeletingDependentsItem`: an owner in foreground deletion
    /// loses its finalizer once no blocking dependent is left; until then its
    /// blocking dependents are deleted.
    async fn process_deleting_dependents_item(
        &self,
        item: &Node,
    ) -> Result<(), SyncError> {
        let blocking: Vec<String> = {
            let graph = self.graph.lock();
            item.blocking_dependents(&graph)
                .iter()
                .filter(|d| !d.deleting_dependents)
                .map(|d| d.identity.uid.clone())
                .collect()
        };
        let still_blocking = {
            let graph = self.graph.lock();
            !item.blocking_dependents(&graph).is_empty()
        };
        if !still_blocking {
            return self
                .remove_finalizer(&item.identity, FINALIZER_DELETE_DEPENDENTS)
                .await;
        }
        for uid in blocking {
            self.attempt_to_delete.add(uid);
        }
        Ok(())
    }
    // ANCHOR_END: process_deleting_dependents_item

    // ANCHOR: attempt_to_orphan
    /// Mirrors `attemptToOrphanWorker`: every dependent loses its reference to
    /// the owner, then the owner loses its `orphan` finalizer.
    async fn attempt_to_orphan(&self, owner: Node) -> Result<(), SyncError> {
        let dependents: Vec<ObjectIdentity> = {
            let graph = self.graph.lock();
            owner
                .dependents
                .iter()
                .filter_map(|uid| graph.get(uid))
                .map(|d| d.identity.clone())
                .collect()
        };
        for dependent in &dependents {
            self.delete_owner_refs(dependent, &[owner.identity.uid.as_str()])
                .await?;
        }
        self.remove_finalizer(&owner.identity, FINALIZER_ORPHAN)
            .await
    }
    // ANCHOR_END: attempt_to_orphan

    /// Mirrors `deleteObject`: deletes the object (its uid as the
    /// precondition) with `policy`; an object already gone is deleted.
    async fn delete_object(
        &self,
        identity: &ObjectIdentity,
        policy: PropagationPolicy,
    ) -> Result<(), SyncError> {
        tracing::info!(object = %identity, ?policy, "garbage collector: deleting");
        let params = DeleteParams {
            propagation_policy: Some(policy),
            preconditions: Some(Preconditions {
                uid: Some(identity.uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match self.api(identity).delete(&identity.name, &params).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status))
                if status.code == 404 || status.code == 409 =>
            {
                Ok(())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Mirrors `deleteOwnerRefStrategicMergePatch` and `patch` (patch.go): the
    /// references to `owner_uids` removed from the object (its uid as the
    /// precondition).
    async fn delete_owner_refs(
        &self,
        identity: &ObjectIdentity,
        owner_uids: &[&str],
    ) -> Result<(), SyncError> {
        let refs: Vec<serde_json::Value> = owner_uids
            .iter()
            .map(|uid| json!({"$patch": "delete", "uid": uid}))
            .collect();
        let patch =
            json!({"metadata": {"ownerReferences": refs, "uid": identity.uid}});
        match self
            .api(identity)
            .patch(
                &identity.name,
                &PatchParams::default(),
                &Patch::Strategic(patch),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Mirrors `removeFinalizer`: a merge patch of the object's finalizers
    /// without `finalizer`, its resourceVersion as the precondition (a
    /// conflict is retried by the queue).
    async fn remove_finalizer(
        &self,
        identity: &ObjectIdentity,
        finalizer: &str,
    ) -> Result<(), SyncError> {
        let Some(latest) = self.get_object(identity).await? else {
            return Ok(());
        };
        let finalizers = latest.metadata.finalizers.clone().unwrap_or_default();
        if !finalizers.iter().any(|f| f == finalizer) {
            return Ok(());
        }
        let rest: Vec<&String> =
            finalizers.iter().filter(|f| *f != finalizer).collect();
        let patch = json!({"metadata": {
            "finalizers": rest,
            "resourceVersion": latest.metadata.resource_version,
        }});
        match self
            .api(identity)
            .patch(
                &identity.name,
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}

/// An owner's namespace: its dependent's, unless its kind is cluster-scoped.
fn owner_namespace(owner: &OwnerReference, dependent_namespace: &str) -> String {
    const CLUSTER_SCOPED: &[&str] =
        &["Node", "Namespace", "PersistentVolume", "ClusterRole"];
    if CLUSTER_SCOPED.contains(&owner.kind.as_str()) {
        String::new()
    } else {
        dependent_namespace.to_string()
    }
}

/// The event of one object of kind `K`.
fn upsert<K: Monitored>(object: &K) -> GraphEvent {
    let meta: &ObjectMeta = object.meta();
    GraphEvent::Upsert {
        identity: ObjectIdentity::of(K::API_VERSION, K::KIND, meta),
        owners: meta.owner_references.clone().unwrap_or_default(),
        being_deleted: meta.deletion_timestamp.is_some(),
        finalizers: meta.finalizers.clone().unwrap_or_default(),
    }
}

/// Mirrors `GraphBuilder.controllerFor`: a monitor of kind `K` whose handlers
/// feed the graph.
fn monitor<K: Monitored>(
    factory: &SharedInformerFactory<KubeSource>,
    gc: Weak<GarbageCollector>,
) -> Result<(), SyncError> {
    let handlers = weak_handlers(
        gc,
        |gc: &GarbageCollector, object: &Arc<K>| gc.process(upsert(object.as_ref())),
        |gc, _, object| gc.process(upsert(object.as_ref())),
        |gc, deleted| {
            let identity = match deleted {
                DeletedObject::Object(object) => {
                    ObjectIdentity::of(K::API_VERSION, K::KIND, object.meta())
                }
                DeletedObject::Tombstone(tombstone) => match &tombstone.obj {
                    Some(object) => {
                        ObjectIdentity::of(K::API_VERSION, K::KIND, object.meta())
                    }
                    None => return,
                },
            };
            gc.process(GraphEvent::Delete { identity });
        },
    );
    factory
        .for_resource::<K>()
        .informer()
        .add_event_handler(handlers)?;
    Ok(())
}

/// The `attemptToDelete` worker's sync: one node by uid.
pub struct AttemptToDelete(Arc<GarbageCollector>);

impl Reconcile for AttemptToDelete {
    fn sync(&self, uid: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>> {
        let node = self.0.node(uid);
        Box::pin(async move {
            if let Some(node) = node {
                self.0.attempt_to_delete_item(node).await?;
            }
            Ok(SyncResult::done())
        })
    }
}

/// The `attemptToOrphan` worker's sync: one owner by uid.
pub struct AttemptToOrphan(Arc<GarbageCollector>);

impl Reconcile for AttemptToOrphan {
    fn sync(&self, uid: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>> {
        let node = self.0.node(uid);
        Box::pin(async move {
            if let Some(node) = node.filter(|n| n.orphaning) {
                self.0.attempt_to_orphan(node).await?;
            }
            Ok(SyncResult::done())
        })
    }
}

/// The uids of the dependents the graph knows for `uid` (for tests and the
/// debug pages).
pub fn dependents_of(gc: &GarbageCollector, uid: &str) -> HashSet<String> {
    gc.node(uid).map(|n| n.dependents).unwrap_or_default()
}
