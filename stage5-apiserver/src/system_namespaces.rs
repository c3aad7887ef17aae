//! The namespaces every cluster has: mirrors kube-apiserver's system namespaces
//! controller (`pkg/controlplane/controller/systemnamespaces`), which creates
//! `kube-system`, `kube-public`, `kube-node-lease` and `default` when they are
//! missing, at start and then every minute, so one deleted by mistake comes
//! back.
//!
//! A namespace is created as the namespace strategy's `PrepareForCreate` leaves
//! one: phase `Active`, and the `kubernetes` finalizer in its spec.

use std::time::Duration;

use serde_json::json;
use stage5_storage::{Object, ResourceInfo, StorageError, object_key};
use tokio_util::sync::CancellationToken;

use crate::registry::Registry;
use crate::validation;

/// The namespaces the controller keeps, in its order.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["kube-system", "kube-public", "kube-node-lease", "default"];

/// How often the controller looks again (upstream: every minute).
pub const RESYNC: Duration = Duration::from_secs(60);

/// Mirrors the namespace strategy's `PrepareForCreate`: phase `Active`, and the
/// `kubernetes` finalizer unless the spec names finalizers already.
pub fn prepare_for_create(namespace: &mut Object) {
    namespace.data["status"] = json!({ "phase": "Active" });
    let spec = &mut namespace.data["spec"];
    if spec
        .get("finalizers")
        .is_none_or(|f| f.as_array().is_none_or(Vec::is_empty))
    {
        spec["finalizers"] = json!(["kubernetes"]);
    }
}

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
        namespace.metadata.uid = Some(validation::new_uid());
        namespace.metadata.creation_timestamp = Some(validation::now());
        namespace.metadata.generation = Some(1);
        prepare_for_create(&mut namespace);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
        let mut namespace = Object::new(&ResourceInfo::NAMESPACES, None, "team-a");
        prepare_for_create(&mut namespace);
        assert_eq!(namespace.data["status"], json!({"phase": "Active"}));
        assert_eq!(namespace.data["spec"]["finalizers"], json!(["kubernetes"]));

        let mut own = Object::new(&ResourceInfo::NAMESPACES, None, "team-b")
            .with_data(json!({"spec": {"finalizers": ["example.com/keep"]}}));
        prepare_for_create(&mut own);
        assert_eq!(own.data["spec"]["finalizers"], json!(["example.com/keep"]));
    }
}
