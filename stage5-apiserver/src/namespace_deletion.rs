//! Deleting a namespace, as kube-apiserver and its namespace controller do it
//! together:
//!
//! - [`delete`] mirrors the namespace registry's `REST.Delete`
//!   (`pkg/registry/core/namespace/storage/storage.go`): a namespace whose spec
//!   still lists finalizers (every namespace starts with `kubernetes`) is not
//!   removed but marked: `deletionTimestamp` set, phase `Terminating`, and the
//!   answer is that namespace with 200. A second delete answers the same. A
//!   namespace without finalizers is removed at once.
//! - [`sync`] mirrors the namespace controller's deleter
//!   (`pkg/controller/namespace/deletion/namespaced_resources_deleter.go`,
//!   `namespacedResourcesDeleter.Delete`): for a terminating namespace, delete
//!   every object of every namespaced resource in it, then remove the
//!   `kubernetes` finalizer (`finalizeNamespace`), then delete the namespace
//!   (`deleteNamespace`, with its uid as the precondition).
//! - [`run`] mirrors `NamespaceController`: it syncs each terminating namespace
//!   [`DELETION_GRACE_PERIOD`] after a delete marks one
//!   ([`AppState::namespace_deletions`] is notified) and on every resync, so
//!   one left terminating by a restart is finished.
//!
//! NamespaceLifecycle admission ([`crate::namespace_lifecycle`]) refuses new
//! objects in a terminating namespace, so the content cannot grow while it is
//! deleted. Where upstream differs: its controller also writes the
//! `NamespaceContentRemaining`-style conditions into the status while it
//! works, waits for pods' graceful termination, and serves the `finalize`
//! subresource; neither is done here.

use std::sync::Arc;
use std::time::Duration;

use apimachinery::apis::meta::v1::ListOptions;
use serde_json::{Value, json};
use stage5_storage::{
    GetOptions, Object, Preconditions, ResourceInfo, SelectionPredicate,
    StorageError, list_prefix, object_key,
};
use tokio_util::sync::CancellationToken;

use crate::AppState;
use crate::namespace_lifecycle::TERMINATING;
use crate::registry::{RegisteredResource, Registry};

/// The finalizer kube-apiserver puts in every namespace's spec, which its
/// namespace controller removes once the namespace is empty.
pub const KUBERNETES_FINALIZER: &str = "kubernetes";

/// How long the controller waits after a namespace is marked before it deletes
/// anything: upstream's `namespaceDeletionGracePeriod`, which lets every
/// apiserver's admission see the namespace terminating first. It also lets
/// `kubectl delete -f` of a file with a namespace and its objects delete those
/// objects itself, as on a cluster, instead of finding them gone.
pub const DELETION_GRACE_PERIOD: Duration = Duration::from_secs(5);

/// How often the controller looks for terminating namespaces without being told
/// (upstream's namespace informer resyncs every five minutes).
pub const RESYNC: Duration = Duration::from_secs(60);

/// Mirrors the namespace `REST.Delete`: removes the namespace at once when its
/// spec has no finalizers, and otherwise marks it terminating and answers it.
/// A namespace already terminating is answered as it is.
pub async fn delete(
    namespaces: &RegisteredResource,
    name: &str,
    preconditions: Preconditions,
) -> Result<Arc<Object>, StorageError> {
    let key = object_key(&ResourceInfo::NAMESPACES, None, name);
    let current = namespaces.dyn_storage.get(key.clone()).await?;
    // The preconditions are checked before the namespace is marked (the store
    // checks them again on write).
    preconditions.check(&ResourceInfo::NAMESPACES, &current)?;
    if spec_finalizers(&current).is_empty() {
        return namespaces.dyn_storage.delete(key, preconditions).await;
    }
    if current.metadata.deletion_timestamp.is_some() {
        return Ok(current);
    }
    let update = Box::new(|current: &Object| {
        let mut next = current.clone();
        if next.metadata.deletion_timestamp.is_none() {
            next.metadata.deletion_timestamp = Some(crate::registry::rest::now());
            next.metadata.deletion_grace_period_seconds = Some(0);
        }
        next.data["status"]["phase"] = json!(TERMINATING);
        Ok(next)
    });
    namespaces
        .dyn_storage
        .guaranteed_update(key, preconditions, update)
        .await
}

fn spec_finalizers(namespace: &Object) -> Vec<&str> {
    namespace
        .data
        .get("spec")
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// What one [`sync`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Synced {
    /// Objects deleted from the namespace.
    pub deleted: usize,
    /// Whether the namespace itself is gone.
    pub removed: bool,
}

/// Mirrors `namespacedResourcesDeleter.Delete` for namespace `name`: nothing
/// unless it is terminating; then its content, its finalizer and itself.
pub async fn sync(registry: &Registry, name: &str) -> Result<Synced, StorageError> {
    let mut synced = Synced::default();
    let Some(namespaces) = registry.find("", "v1", "namespaces") else {
        return Ok(synced);
    };
    let key = object_key(&ResourceInfo::NAMESPACES, None, name);
    let Some(namespace) = namespaces
        .dyn_storage
        .get_with(
            key.clone(),
            GetOptions {
                ignore_not_found: true,
                ..Default::default()
            },
        )
        .await?
    else {
        return Ok(synced);
    };
    if namespace.metadata.deletion_timestamp.is_none() {
        return Ok(synced);
    }
    // `deleteAllContent`: every namespaced resource, every object in it.
    for resource in registry.resources().iter().filter(|r| r.info.namespaced) {
        synced.deleted += delete_collection(resource, name).await?;
    }
    // `finalizeNamespace`: the `kubernetes` finalizer comes off the spec.
    let preconditions = Preconditions {
        uid: namespace.metadata.uid.clone(),
        resource_version: None,
    };
    let finalized = namespaces
        .dyn_storage
        .guaranteed_update(
            key.clone(),
            preconditions.clone(),
            Box::new(|current: &Object| {
                let mut next = current.clone();
                if let Some(finalizers) = next
                    .data
                    .get_mut("spec")
                    .and_then(|s| s.get_mut("finalizers"))
                    .and_then(Value::as_array_mut)
                {
                    finalizers.retain(|f| f != KUBERNETES_FINALIZER);
                }
                Ok(next)
            }),
        )
        .await?;
    // `deleteNamespace`, once no finalizer is left (another finalizer keeps it
    // terminating until its owner removes it).
    let metadata_finalizers = finalized
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| !f.is_empty());
    if spec_finalizers(&finalized).is_empty() && !metadata_finalizers {
        match namespaces.dyn_storage.delete(key, preconditions).await {
            Ok(_) | Err(StorageError::NotFound { .. }) => synced.removed = true,
            Err(error) => return Err(error),
        }
    }
    Ok(synced)
}

/// Deletes every object of `resource` in `namespace`; one deleted meanwhile by
/// someone else is fine.
async fn delete_collection(
    resource: &RegisteredResource,
    namespace: &str,
) -> Result<usize, StorageError> {
    let storage = &resource.dyn_storage;
    let list = storage
        .get_list(
            list_prefix(&resource.info, Some(namespace)),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await?;
    let mut deleted = 0;
    for object in list.items {
        let Some(name) = object.metadata.name.as_deref() else {
            continue;
        };
        let key = object_key(&resource.info, Some(namespace), name);
        match storage.delete(key, Preconditions::default()).await {
            Ok(_) => deleted += 1,
            Err(StorageError::NotFound { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(deleted)
}

/// Every terminating namespace, synced once; errors are logged and the
/// namespace is tried again on the next round.
pub async fn sync_all(registry: &Registry) {
    let Some(namespaces) = registry.find("", "v1", "namespaces") else {
        return;
    };
    let list = match namespaces
        .dyn_storage
        .get_list(
            list_prefix(&ResourceInfo::NAMESPACES, None),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
    {
        Ok(list) => list,
        Err(error) => {
            tracing::warn!(%error, "cannot list namespaces to finish their deletion");
            return;
        }
    };
    for namespace in list.items {
        if namespace.metadata.deletion_timestamp.is_none() {
            continue;
        }
        let name = namespace.metadata.name.as_deref().unwrap_or_default();
        if let Err(error) = sync(registry, name).await {
            tracing::warn!(namespace = name, %error, "cannot finish deleting a namespace");
        }
    }
}

/// Mirrors `NamespaceController.Run`: syncs terminating namespaces
/// [`DELETION_GRACE_PERIOD`] after a delete marks one, and every [`RESYNC`],
/// until `shutdown`.
pub async fn run(state: Arc<AppState>, shutdown: CancellationToken) {
    loop {
        sync_all(&state.registry).await;
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = state.namespace_deletions.notified() => {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(DELETION_GRACE_PERIOD) => {}
                }
            }
            () = tokio::time::sleep(RESYNC) => {}
        }
    }
}
