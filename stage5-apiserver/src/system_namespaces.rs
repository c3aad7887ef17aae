//! The namespaces every cluster has: mirrors kube-apiserver's system namespaces
//! controller (`pkg/controlplane/controller/systemnamespaces`), which creates
//! `kube-system`, `kube-public`, `kube-node-lease` and `default` when they are
//! missing, at start and then every minute, so one deleted by mistake comes
//! back.
//!
//! A namespace is created as the namespace strategy's `PrepareForCreate` leaves
//! one ([`crate::registry::core::namespace::strategy`]): phase `Active`, and the
//! `kubernetes` finalizer in its spec.

use std::time::Duration;

use stage5_storage::{Object, ResourceInfo, StorageError, object_key};
use tokio_util::sync::CancellationToken;

use crate::registry::{Registry, rest};

/// The namespaces the controller keeps, in its order.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["kube-system", "kube-public", "kube-node-lease", "default"];

/// How often the controller looks again (upstream: every minute).
pub const RESYNC: Duration = Duration::from_secs(60);

/// One round (`Controller.sync`): creates each system namespace that is missing.
/// Returns how many it created; a storage error is returned after trying the
/// rest.
pub async fn ensure(registry: &Registry) -> Result<usize, StorageError> {
    let Some(namespaces) = registry.find("", "v1", "namespaces") else {
        return Ok(0);
    };
    let info = &ResourceInfo::NAMESPACES;
    let mut created = 0;
    let mut failure = None;
    for name in SYSTEM_NAMESPACES {
        let mut namespace = Object::new(info, None, name);
        rest::fill_object_meta_system_fields(&mut namespace);
        namespaces.strategy.prepare_for_create(&mut namespace);
        let key = object_key(info, None, name);
        match namespaces.dyn_storage.create(key, namespace).await {
            Ok(_) => created += 1,
            Err(StorageError::AlreadyExists { .. }) => {}
            Err(error) => {
                tracing::warn!(namespace = name, %error, "cannot create a system namespace");
                failure = Some(error);
            }
        }
    }
    failure.map_or(Ok(created), Err)
}

/// Runs [`ensure`] every [`RESYNC`] until `shutdown` (the controller's
/// `wait.Until`).
pub async fn run(
    registry: std::sync::Arc<crate::AppState>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(RESYNC) => {}
        }
        let _ = ensure(&registry.registry).await;
    }
}
