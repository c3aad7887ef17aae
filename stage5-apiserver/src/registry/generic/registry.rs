//! A resource's storage: mirrors apiserver's `pkg/registry/generic/registry`
//! (`StorageWithCacher`, `NewRawStorage`), which puts either the Cacher
//! (`--watch-cache`, the default) or the bare etcd3 store behind each resource,
//! and the storage backend's choice (`storagebackend.Config`: etcd, or here the
//! embedded store).
//!
//! [`ResourceStorage`] keeps the concrete type next to the `Arc<dyn Storage>`
//! the handlers use, so the metrics and the debug page can read the watch
//! cache's figures.
//!
//! The generic `Store`'s deletion is here too ([`delete`]): graceful deletion,
//! finalizers, and the garbage collector's `orphan` and `foregroundDeletion`
//! finalizers, which every kind's delete and update go through.

use std::sync::Arc;

use crate::Backend;
use crate::ServerError;
use crate::registry::rest::Strategy;
use stage5_cacher::{CacherStats, WatcherInfo};
use stage5_storage::Storage;
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, Preconditions, ResourceInfo, StorageError};

/// One served resource type: its rules and its storage, as a resource of
/// upstream's generic registry (`registry.Store`) holds them.
#[derive(Clone)]
pub struct RegisteredResource {
    /// What it is.
    pub info: ResourceInfo,
    /// Its rules.
    pub strategy: &'static dyn Strategy,
    /// Where it lives, as its concrete type.
    pub storage: ResourceStorage,
    /// The same storage as the handlers call it.
    pub dyn_storage: Arc<dyn Storage>,
}

impl std::fmt::Debug for RegisteredResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredResource")
            .field("resource", &self.info.plural)
            .field("storage", &self.storage)
            .finish()
    }
}

/// One resource's storage: the etcd3 store itself (`--no-watch-cache`) or the Cacher
/// in front of it.
#[derive(Clone)]
pub enum ResourceStorage {
    /// Reads and watches straight from etcd: every watch is a new etcd watch.
    Direct(Arc<Etcd3Store>),
    /// Reads and watches served from the watch cache; writes go to etcd.
    Cached(Arc<stage5_cacher::Cacher>),
    /// Another resource's storage in another shape (`events.k8s.io/v1` over the
    /// core events): no cache of its own, nothing to stop.
    Converted(Arc<dyn Storage>),
}

impl std::fmt::Debug for ResourceStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceStorage::Direct(store) => {
                f.debug_tuple("Direct").field(store).finish()
            }
            ResourceStorage::Cached(_) => f.write_str("Cached(..)"),
            ResourceStorage::Converted(_) => f.write_str("Converted(..)"),
        }
    }
}

/// Mirrors `StorageWithCacher` / `NewRawStorage`: the storage of `info` over `kv`,
/// behind a watch cache of `capacity` events when `watch_cache` is on.
pub fn new_storage(
    kv: Arc<dyn Kv>,
    info: ResourceInfo,
    watch_cache: bool,
    capacity: usize,
    probe: &stage5_cacher::Probe,
) -> ResourceStorage {
    let store = Etcd3Store::new(kv, info);
    if watch_cache {
        let config = stage5_cacher::CacherConfig::default()
            .capacity(capacity)
            .probe(probe.clone());
        ResourceStorage::Cached(stage5_cacher::Cacher::new(store, config))
    } else {
        ResourceStorage::Direct(Arc::new(store))
    }
}

impl ResourceStorage {
    /// The storage the handlers call.
    pub fn storage(&self) -> Arc<dyn Storage> {
        match self {
            ResourceStorage::Direct(store) => Arc::clone(store) as Arc<dyn Storage>,
            ResourceStorage::Cached(cacher) => {
                Arc::clone(cacher) as Arc<dyn Storage>
            }
            ResourceStorage::Converted(storage) => Arc::clone(storage),
        }
    }

    /// The watch cache's figures; `None` without a cache.
    pub fn cache_stats(&self) -> Option<CacherStats> {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => None,
            ResourceStorage::Cached(cacher) => Some(cacher.stats()),
        }
    }

    /// The watch cache's live watchers; empty without a cache.
    pub fn cache_watchers(&self) -> Vec<WatcherInfo> {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => Vec::new(),
            ResourceStorage::Cached(cacher) => cacher.watchers_info(),
        }
    }

    /// Stops the watch cache (its reflector and every cache watcher) and waits for
    /// its tasks; nothing for etcd.
    pub async fn stop(&self) {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => {}
            ResourceStorage::Cached(cacher) => cacher.stop().await,
        }
    }
}

/// Opens the backend: a new embedded store, a caller's [`Kv`], or real etcd (feature
/// `etcd`).
pub async fn connect_backend(backend: &Backend) -> Result<Arc<dyn Kv>, ServerError> {
    match backend {
        Backend::Embedded => Ok(Arc::new(EmbeddedKv::new())),
        Backend::Kv(kv) => Ok(Arc::clone(kv)),
        #[cfg(feature = "etcd")]
        Backend::Etcd(urls) => stage5_storage::kv::EtcdKv::connect(urls)
            .await
            .map(|kv| Arc::new(kv) as Arc<dyn Kv>)
            .map_err(|error| {
                ServerError::Backend(format!(
                    "cannot connect to etcd at {}: {error}",
                    urls.join(",")
                ))
            }),
        #[cfg(not(feature = "etcd"))]
        Backend::Etcd(urls) => Err(ServerError::Backend(format!(
            "--etcd {}: this binary was built without real etcd support; rebuild with `--features etcd` (needs protoc), or leave --etcd out to use the embedded store",
            urls.join(",")
        ))),
    }
}

// ANCHOR: delete_options
/// The parts of `metav1.DeleteOptions` a delete honours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// `preconditions`: the stored uid and resourceVersion must be these.
    pub preconditions: Preconditions,
    /// `gracePeriodSeconds`: how long a graceful delete waits (pods).
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`: what happens to the object's dependents.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `orphanDependents` (deprecated): `true` is `Orphan`, `false`
    /// `Background`.
    pub orphan_dependents: Option<bool>,
}

/// Mirrors `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// `Orphan`: the dependents stay, without their owner reference (the
    /// `orphan` finalizer until the garbage collector has done it).
    Orphan,
    /// `Background`: the object goes at once; the garbage collector deletes
    /// its dependents afterwards.
    Background,
    /// `Foreground`: the object stays (`foregroundDeletion` finalizer) until the
    /// garbage collector has deleted its blocking dependents.
    Foreground,
}
// ANCHOR_END: delete_options

impl PropagationPolicy {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagationPolicy::Orphan => "Orphan",
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Foreground => "Foreground",
        }
    }

    /// Parses the wire value.
    pub fn parse(value: &str) -> Option<PropagationPolicy> {
        match value {
            "Orphan" => Some(PropagationPolicy::Orphan),
            "Background" => Some(PropagationPolicy::Background),
            "Foreground" => Some(PropagationPolicy::Foreground),
            _ => None,
        }
    }
}

/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// Mirrors `deletionFinalizersForGarbageCollection` (with
/// `shouldOrphanDependents` and `shouldDeleteDependents`): the finalizers an
/// object is left with by a delete with `options`, if they change. With no
/// policy in `options` and no GC finalizer on the object, the kind's default
/// decides: `default_orphan` for the kinds whose
/// `DefaultGarbageCollectionPolicy` is `OrphanDependents`.
pub fn deletion_finalizers(
    obj: &Object,
    options: &DeleteOptions,
    default_orphan: bool,
) -> Option<Vec<String>> {
    let current = obj.metadata.finalizers.clone().unwrap_or_default();
    let has = |f: &str| current.iter().any(|c| c == f);
    let (orphan, foreground) =
        match (options.orphan_dependents, options.propagation_policy) {
            (Some(orphan), _) => (orphan, false),
            (None, Some(PropagationPolicy::Orphan)) => (true, false),
            (None, Some(PropagationPolicy::Foreground)) => (false, true),
            (None, Some(PropagationPolicy::Background)) => (false, false),
            (None, None) if has(FINALIZER_ORPHAN_DEPENDENTS) => (true, false),
            (None, None) if has(FINALIZER_DELETE_DEPENDENTS) => (false, true),
            (None, None) => (default_orphan, false),
        };
    let mut next: Vec<String> = current
        .iter()
        .filter(|f| {
            *f != FINALIZER_ORPHAN_DEPENDENTS && *f != FINALIZER_DELETE_DEPENDENTS
        })
        .cloned()
        .collect();
    if orphan {
        next.push(FINALIZER_ORPHAN_DEPENDENTS.into());
    }
    if foreground {
        next.push(FINALIZER_DELETE_DEPENDENTS.into());
    }
    let same = next.len() == current.len() && next.iter().all(|f| has(f));
    (!same).then_some(next)
}

/// What `rest.BeforeDelete` decided for one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Graceful {
    /// No graceful deletion: delete now, unless finalizers hold it.
    No,
    /// Marked for a graceful deletion of this many seconds.
    Marked(i64),
    /// A graceful deletion is already under way and nothing shortens it.
    Pending,
}

/// Mirrors `rest.BeforeDelete`: for a kind with a graceful delete strategy
/// (pods), marks `obj` with a `deletionTimestamp` `grace` seconds from now, or
/// shortens a pending one; a second delete that shortens nothing is pending.
fn before_delete(
    strategy: &dyn Strategy,
    obj: &mut Object,
    options: &DeleteOptions,
) -> Graceful {
    let requested = options
        .grace_period_seconds
        .map(|g| if g < 0 { 1 } else { g });
    if obj.metadata.deletion_timestamp.is_some() {
        let Some(current) = obj
            .metadata
            .deletion_grace_period_seconds
            .filter(|g| *g > 0)
        else {
            return Graceful::No;
        };
        return match requested {
            Some(period) if period < current => {
                let since = obj
                    .metadata
                    .deletion_timestamp
                    .as_ref()
                    .map(|t| t.0)
                    .unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
                let at = since
                    .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(
                        period - current,
                    ))
                    .unwrap_or(since);
                obj.metadata.deletion_timestamp =
                    Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
                obj.metadata.deletion_grace_period_seconds = Some(period);
                Graceful::Marked(period)
            }
            _ => Graceful::Pending,
        };
    }
    let Some(period) = strategy.check_graceful_delete(obj, requested) else {
        return Graceful::No;
    };
    let now = super::super::rest::now().0;
    let at = now
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(period))
        .unwrap_or(now);
    obj.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
    obj.metadata.deletion_grace_period_seconds = Some(period);
    if let Some(generation) = obj.metadata.generation.filter(|g| *g > 0) {
        obj.metadata.generation = Some(generation + 1);
    }
    Graceful::Marked(period)
}

/// Whether an object marked for deletion may go: no finalizers left, and no
/// grace period running (`ShouldDeleteDuringUpdate`).
fn may_go(obj: &Object) -> bool {
    obj.metadata.deletion_timestamp.is_some()
        && obj.metadata.finalizers.as_ref().is_none_or(Vec::is_empty)
        && obj
            .metadata
            .deletion_grace_period_seconds
            .is_none_or(|g| g == 0)
}

// ANCHOR: store_delete
/// Mirrors `Store.Delete` (`registry/generic/registry/store.go`) with
/// `rest.BeforeDelete`, `deletionFinalizersForGarbageCollection` and
/// `updateForGracefulDeletionAndFinalizers`: an object without finalizers and
/// without a graceful deletion goes at once; otherwise it is marked
/// (`deletionTimestamp`, the grace period, the garbage collector's `orphan` or
/// `foregroundDeletion` finalizer) and stays until its finalizers are removed
/// and its grace period is over (a second delete with grace period 0, as a
/// kubelet sends). Answers the deleted object, or the marked one.
pub async fn delete(
    resource: &RegisteredResource,
    key: String,
    options: DeleteOptions,
) -> Result<Arc<Object>, StorageError> {
    let storage = &resource.dyn_storage;
    let current = storage.get(key.clone()).await?;
    options.preconditions.check(&resource.info, &current)?;
    let mut probe = (*current).clone();
    let graceful = before_delete(resource.strategy, &mut probe, &options);
    if graceful == Graceful::Pending {
        return Ok(current);
    }
    let finalizers = deletion_finalizers(
        &probe,
        &options,
        resource.strategy.orphans_dependents_by_default(),
    );
    let held = finalizers.as_ref().map_or_else(
        || {
            probe
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
        },
        |f| !f.is_empty(),
    );
    let marks = matches!(graceful, Graceful::Marked(period) if period > 0);
    if !held && !marks {
        return storage.delete(key, options.preconditions).await;
    }
    let strategy = resource.strategy;
    let default_orphan = strategy.orphans_dependents_by_default();
    let mark_options = options.clone();
    let marked = storage
        .guaranteed_update(
            key.clone(),
            options.preconditions.clone(),
            Box::new(move |existing: &Object| {
                let mut next = existing.clone();
                let graceful = before_delete(strategy, &mut next, &mark_options);
                if let Some(finalizers) =
                    deletion_finalizers(&next, &mark_options, default_orphan)
                {
                    next.metadata.finalizers =
                        (!finalizers.is_empty()).then_some(finalizers);
                }
                if graceful == Graceful::No
                    && next.metadata.deletion_timestamp.is_none()
                {
                    // `markAsDeleting`: held by finalizers, with no grace period.
                    next.metadata.deletion_timestamp =
                        Some(super::super::rest::now());
                    next.metadata.deletion_grace_period_seconds = Some(0);
                }
                next.metadata.resource_version = None;
                Ok(next)
            }),
        )
        .await?;
    delete_if_finalized(resource, key, marked).await
}
// ANCHOR_END: store_delete

/// Mirrors `Store.Update`'s `ShouldDeleteDuringUpdate` and
/// `deleteWithoutFinalizers`: after a write, an object marked for deletion
/// whose finalizers are all gone and whose grace period is over is deleted
/// (with its uid and resourceVersion as preconditions). Otherwise `stored` is
/// answered as it is.
pub async fn delete_if_finalized(
    resource: &RegisteredResource,
    key: String,
    stored: Arc<Object>,
) -> Result<Arc<Object>, StorageError> {
    if !may_go(&stored) || !resource.strategy.should_delete_during_update(&stored) {
        return Ok(stored);
    }
    let preconditions = Preconditions {
        uid: stored.metadata.uid.clone(),
        resource_version: Some(stored.resource_version().to_string()),
    };
    match resource.dyn_storage.delete(key, preconditions).await {
        Ok(deleted) => Ok(deleted),
        // Somebody else deleted or changed it in between: what was written
        // stands.
        Err(StorageError::NotFound { .. } | StorageError::Conflict { .. }) => {
            Ok(stored)
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_finalizers(finalizers: &[&str]) -> Object {
        let mut obj = Object::new(&ResourceInfo::REPLICASETS, Some("ns"), "rs");
        obj.metadata.finalizers = (!finalizers.is_empty())
            .then(|| finalizers.iter().map(|f| f.to_string()).collect());
        obj
    }

    fn policy(policy: PropagationPolicy) -> DeleteOptions {
        DeleteOptions {
            propagation_policy: Some(policy),
            ..DeleteOptions::default()
        }
    }

    #[test]
    fn the_propagation_policy_chooses_the_garbage_collectors_finalizer() {
        let plain = with_finalizers(&["example.com/keep"]);
        assert_eq!(
            deletion_finalizers(&plain, &policy(PropagationPolicy::Orphan), false),
            Some(vec!["example.com/keep".to_string(), "orphan".to_string()])
        );
        assert_eq!(
            deletion_finalizers(
                &plain,
                &policy(PropagationPolicy::Foreground),
                false
            ),
            Some(vec![
                "example.com/keep".to_string(),
                "foregroundDeletion".to_string()
            ])
        );
        assert_eq!(
            deletion_finalizers(
                &plain,
                &policy(PropagationPolicy::Background),
                false
            ),
            None
        );
        assert_eq!(
            deletion_finalizers(&plain, &DeleteOptions::default(), false),
            None
        );
        // An explicit policy replaces the other finalizer; none keeps it.
        let orphaning = with_finalizers(&["orphan"]);
        assert_eq!(
            deletion_finalizers(
                &orphaning,
                &policy(PropagationPolicy::Background),
                false
            ),
            Some(vec![])
        );
        assert_eq!(
            deletion_finalizers(&orphaning, &DeleteOptions::default(), false),
            None
        );
        let legacy = DeleteOptions {
            orphan_dependents: Some(true),
            ..DeleteOptions::default()
        };
        assert_eq!(
            deletion_finalizers(&with_finalizers(&[]), &legacy, false),
            Some(vec!["orphan".to_string()])
        );
        // A kind that orphans by default (a v1 ReplicationController, a Job):
        // a delete that names no policy adds `orphan`; one that does, or a
        // finalizer already there, wins.
        assert_eq!(
            deletion_finalizers(
                &with_finalizers(&[]),
                &DeleteOptions::default(),
                true
            ),
            Some(vec!["orphan".to_string()])
        );
        assert_eq!(
            deletion_finalizers(
                &with_finalizers(&[]),
                &policy(PropagationPolicy::Background),
                true
            ),
            None
        );
        assert_eq!(
            deletion_finalizers(
                &with_finalizers(&["foregroundDeletion"]),
                &DeleteOptions::default(),
                true
            ),
            None
        );
    }

    #[test]
    fn a_scheduled_pod_is_marked_for_its_grace_period() {
        let strategy = crate::registry::strategy_for(&ResourceInfo::PODS);
        let mut pod =
            Object::new(&ResourceInfo::PODS, Some("ns"), "p").with_data(json!({
                "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 30},
                "status": {"phase": "Running"},
            }));
        assert_eq!(
            before_delete(strategy, &mut pod, &DeleteOptions::default()),
            Graceful::Marked(30)
        );
        assert_eq!(pod.metadata.deletion_grace_period_seconds, Some(30));
        assert!(!may_go(&pod));
        // The same delete again changes nothing; a shorter one shortens it.
        assert_eq!(
            before_delete(strategy, &mut pod, &DeleteOptions::default()),
            Graceful::Pending
        );
        let now = DeleteOptions {
            grace_period_seconds: Some(0),
            ..DeleteOptions::default()
        };
        assert_eq!(before_delete(strategy, &mut pod, &now), Graceful::Marked(0));
        assert!(may_go(&pod));
        // An unscheduled pod, and a kind without a graceful strategy, go at
        // once.
        let mut pending = Object::new(&ResourceInfo::PODS, Some("ns"), "q")
            .with_data(json!({"spec": {}}));
        assert_eq!(
            before_delete(strategy, &mut pending, &DeleteOptions::default()),
            Graceful::Marked(0)
        );
        let mut rs = with_finalizers(&[]);
        assert_eq!(
            before_delete(
                crate::registry::strategy_for(&ResourceInfo::REPLICASETS),
                &mut rs,
                &DeleteOptions::default()
            ),
            Graceful::No
        );
    }
}
